// The host's side of a ChatRoom: how the room keeps its copy of the host's thread.
//
// The room is one client of the host, attached for good. HostLink hands it the chat's events in
// order, each with the host's `seq` (ingest); the room drops what it already applied, fills a gap by
// attaching again with `since` (sync), and takes a thread too large for one link frame a page at a
// time (attachPaged). Each event it keeps is applied to the thread, logged under the room's own
// `seq` and published to the attached clients as one frame (commit). Streamed deltas only mark their
// item dirty; the items are written at most once a second (flush), and the log covers what a crash
// in between loses.
//
// It knows nothing of sockets, people or access: it is handed its storage, the way to ask the host
// and the way to publish a frame, so a test drives it without either (test/relay/replication.test.ts).
// What survives a restart is what RoomStore keeps; the dirty set and the last flush do not (after a
// restart the logged deltas are applied again on load).
import {
  AGENT_EVENT_SCHEMAS,
  AGENT_REQUEST_SCHEMAS,
  CHAT_PAGE_LIMITS,
  ProtocolError,
  Thread,
  type ChatEvent,
  type ChatEventEnvelope,
  type ChatInfo,
  type ChatItem,
  type LinkEventFrame,
  type Reply,
} from '../../../contracts/index.ts';
import { isRequestItem, type RequestItem } from '../../db/requests.ts';
import { failureText } from '../../db/failures.ts';
import { log } from '../../log.ts';
import { eventFrame } from '../client-sockets.ts';
import type { LinkRequestInput } from '../host-link.ts';
import { LOG_KEEP, type RoomStore } from './room-store.ts';

/** Streamed items are written at most this often. */
export const FLUSH_EVERY_MS = 1_000;

/** What the room hands its replication: storage, the host, the clients, and the few facts it adds. */
export interface ReplicationDeps {
  store: RoomStore;
  /** One synchronous storage transaction (the object's `transactionSync`). */
  transaction<T>(step: () => T): T;
  /** A request to the host, through its HostLink. */
  ask(input: LinkRequestInput): Promise<Reply>;
  /** One frame, serialized once, to every attached client. */
  publish(text: string): void;
  /** The info as clients see it (the relay's kept sends shown in its queue). */
  decorate(info: ChatInfo): ChatInfo;
  /** Request items the host raised, recorded (D1) before anything of the room changes. */
  observeRequests(items: RequestItem[]): Promise<void>;
  /** An item was committed and published; `before` is the version held until then. */
  itemCommitted(item: ChatItem, before: ChatItem | undefined): void;
  /** The host made a new chat under this id: the relay's own records of the old one go. */
  recreated(): Promise<void>;
  /** A host frame that is not a chat.event (visuals, visual pages, subagents). */
  hostFrame(frame: LinkEventFrame): Promise<void>;
  /** A chat.event that does not parse: counted and logged by the room. */
  dropped(error: string | undefined): void;
  /**
   * Wake this room no later than `at` (its 'flush' alarm, alarms.ts), to flush; asked once per flush,
   * never per delta. Answers the storage call if one was made (rejected when refused, and logged).
   */
  wakeBy(at: number): Promise<void> | null;
  now?: () => number;
}

export class Replication {
  readonly store: RoomStore;
  private readonly deps: ReplicationDeps;
  private readonly now: () => number;
  private thread: Thread | null | undefined;
  private readonly dirty = new Set<string>();
  private lastFlush = 0;
  /** The flush time a wake-up was last asked for (flushSoon): asked once per flush, not once per delta. */
  private wakeFor: number | null = null;
  private syncing: Promise<void> | null = null;

  constructor(deps: ReplicationDeps) {
    this.deps = deps;
    this.store = deps.store;
    this.now = deps.now ?? Date.now;
  }

  /** The thread as the room holds it; null before the chat's info arrived. */
  loaded(): Thread | null {
    if (this.thread === undefined) this.thread = this.store.loadThread();
    return this.thread;
  }

  /** The room's own position: the seq of the last event it logged or sent. */
  get seq(): number {
    return this.store.state.seq;
  }
  /** The host's seq of the last event applied; -1 before the first attach on the host. */
  get hostSeq(): number {
    return this.store.state.hostSeq;
  }

  private chatId(): string {
    const { chatId } = this.store.state;
    if (chatId === null) throw new ProtocolError('internal', 'room has no identity');
    return chatId;
  }

  /** Makes sure the room holds the chat; attaches it on the host the first time. */
  async ready(): Promise<Thread> {
    const thread = this.loaded();
    if (thread && this.hostSeq >= 0) return thread;
    await this.sync(undefined);
    const synced = this.loaded();
    if (!synced) throw new ProtocolError('chat-not-found', 'No such chat on this host');
    return synced;
  }

  /** Forgets the thread and its log (a kill, or a chat made anew); the room's seq goes on. */
  forgetThread(): void {
    this.thread = null;
    this.store.forgetThread();
  }

  // ---- events from the host ----

  /**
   * Stores the host's frames in order; answers how many of them (from the first) it stored, and why it
   * stopped if it did. HostLink acknowledges only those: the rest come again after the host reconnects.
   */
  async ingest(frames: LinkEventFrame[]): Promise<{ stored: number; error?: string }> {
    let stored = 0;
    try {
      // Each chat.event is read once, here; a run of them may become one (see coalesce).
      const events = frames.map((frame) => (frame.event === 'chat.event' ? this.readChatEvent(frame.payload) : undefined));
      for (let i = 0; i < frames.length; ) {
        const frame = frames[i]!;
        const event = events[i];
        if (event) {
          const run = this.coalesce(events, i);
          if (run) {
            await this.commit(run.event, run.seq);
            stored += run.count;
            i += run.count;
            continue;
          }
          await this.onChatEvent(event);
        } else if (frame.event !== 'chat.event') {
          await this.deps.hostFrame(frame);
        } // else unreadable: counted and dropped by readChatEvent
        stored += 1;
        i += 1;
      }
      return { stored };
    } catch (error) {
      return { stored, error: failureText(error) };
    } finally {
      this.flushSoon();
    }
  }

  /** A host's chat.event payload as the protocol reads it; null (counted) when it does not parse. */
  private readChatEvent(raw: unknown): ChatEventEnvelope | null {
    const parsed = AGENT_EVENT_SCHEMAS['chat.event'].safeParse(raw);
    if (parsed.success) return parsed.data;
    this.deps.dropped(parsed.error.issues[0]?.message);
    return null;
  }

  /**
   * Under a backlog HostLink hands over many events at once, and a streamed reply is mostly deltas of
   * one item: the consecutive text deltas of one item, from `events[at]` on, become one delta before
   * the room gives it a seq, so clients get (and the log keeps) one fuller event instead of many.
   * Applying it is applying them one after the other, so the thread is the same; the room's log and
   * `since` replay are exact in the room's own seqs, which are all a client ever sees. Only what came
   * in this one call is joined (nothing waits for more: at an idle pace a call holds one event), and
   * only a run that follows the host's last applied seq without a gap or a repeat, into a thread the
   * room holds; anything else takes the one-at-a-time path with its catch-up. Answers null when fewer
   * than two events would join.
   */
  private coalesce(events: (ChatEventEnvelope | null | undefined)[], at: number): { event: ChatEvent; seq: number; count: number } | null {
    const first = events[at];
    if (!first || !isPlainDelta(first.event) || first.seq !== this.hostSeq + 1 || this.hostSeq < 0 || !this.loaded()) return null;
    const { itemId } = first.event;
    const texts = [first.event.text];
    let seq = first.seq;
    for (let i = at + 1; i < events.length; i++) {
      const next = events[i];
      if (!next || !isPlainDelta(next.event) || next.event.itemId !== itemId || next.seq !== seq + 1) break;
      texts.push(next.event.text);
      seq = next.seq;
    }
    if (texts.length < 2) return null;
    return { event: { type: 'delta', itemId, text: texts.join('') }, seq, count: texts.length };
  }

  private async onChatEvent(envelope: ChatEventEnvelope): Promise<void> {
    const { event, seq } = envelope;
    if (seq === undefined) {
      // A preview the host does not log (UI streaming): passed on, never stored.
      this.deps.publish(eventFrame('chat.event', { chatId: this.chatId(), event }));
      return;
    }
    const known = this.loaded();
    if (event.type === 'info' && known && seq <= this.hostSeq && event.info.createdAt !== known.info.createdAt) {
      // The host made a new chat under this id (killed and created again, or its data was wiped): its
      // seq starts over, so what this room holds says nothing about it any more.
      await this.deps.recreated();
      this.forgetThread();
    }
    // Catch up first when this room never attached or a seq is missing (at most twice: a host that
    // keeps answering with a gap gets its event applied anyway rather than a stuck chat).
    for (let tries = 0; this.hostSeq < 0 || this.loaded() === null || seq > this.hostSeq + 1; tries++) {
      if (tries === 2) {
        log.warn('host seq gap persists', { chatId: this.store.state.chatId, hostSeq: this.hostSeq, seq });
        break;
      }
      try {
        await this.sync(this.hostSeq < 0 || this.loaded() === null ? undefined : this.hostSeq);
      } catch (error) {
        // An event for a chat the host no longer has: nothing to keep.
        if (error instanceof ProtocolError && error.code === 'chat-not-found') return;
        throw error;
      }
    }
    if (seq <= this.hostSeq) return; // already applied: a resend after a reconnect, or in the snapshot
    await this.commit(event, seq);
  }

  // ---- catching up with the host ----

  /** Attaches on the host to catch up: missed events after `since`, or a whole new snapshot. One at a time. */
  private sync(since: number | undefined): Promise<void> {
    this.syncing ??= this.syncOnce(since).finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async syncOnce(since: number | undefined): Promise<void> {
    const chatId = this.chatId();
    let reply = await this.deps.ask({ type: 'chat.attach', payload: since === undefined ? { chatId } : { chatId, since } });
    // A thread too large for one link frame comes a page at a time instead.
    if (!reply.ok && reply.error.code === 'frame-too-large') reply = await this.attachPaged(chatId);
    if (!reply.ok) throw new ProtocolError(reply.error.code as never, reply.error.message);
    const result = AGENT_REQUEST_SCHEMAS['chat.attach'].result.safeParse(reply.result);
    if (!result.success) throw new ProtocolError('internal', 'The host answered chat.attach with an unreadable result');
    const { info, items, events, seq } = result.data;
    if (events && since !== undefined && this.loaded()) {
      // The logged events after `since` come first; what follows them (UI previews) has no seq.
      const logged = seq === undefined ? events.length : Math.min(events.length, Math.max(0, seq - since));
      let at = since;
      for (const event of events.slice(0, logged)) await this.commit(event, ++at);
      for (const event of events.slice(logged)) this.deps.publish(eventFrame('chat.event', { chatId, event }));
      if (seq !== undefined && seq !== at) this.store.advance(this.seq, seq);
    } else {
      await this.commit({ type: 'reset', info, items }, seq ?? 0);
    }
  }

  /**
   * The newest page by `chat.attach`, then older pages by `chat.history`, joined into one snapshot at
   * the attach's seq. Pages read later may already hold changes after that seq; the events that made
   * them arrive next and upsert the same items again.
   */
  private async attachPaged(chatId: string): Promise<Reply> {
    const page = CHAT_PAGE_LIMITS.pageMax;
    const first = await this.deps.ask({ type: 'chat.attach', payload: { chatId, historyLimit: page } });
    if (!first.ok) return first;
    const head = AGENT_REQUEST_SCHEMAS['chat.attach'].result.safeParse(first.result);
    if (!head.success) return first;
    const items = head.data.items;
    let cursor = head.data.history?.cursor ?? null;
    let start = head.data.history?.start ?? 0;
    while (cursor !== null) {
      const older = await this.deps.ask({ type: 'chat.history', payload: { chatId, cursor, limit: page } });
      if (!older.ok) return older;
      const parsed = AGENT_REQUEST_SCHEMAS['chat.history'].result.safeParse(older.result);
      // Every older page starts earlier: a host answering the same page again would keep this room paging for ever.
      if (!parsed.success || parsed.data.history.start >= start) {
        return { id: older.id, ok: false, error: { code: 'internal', message: 'The host answered an unreadable history page' } };
      }
      items.unshift(...parsed.data.items);
      cursor = parsed.data.history.cursor;
      start = parsed.data.history.start;
    }
    return { id: first.id, ok: true, result: { info: head.data.info, items, seq: head.data.seq } };
  }

  // ---- keeping an event ----

  /**
   * Applies one event to the thread, logs it under the next room seq and publishes it to attached clients.
   * `hostSeq` is the host's position after it, for events that came from the host.
   *
   * The ledger is written first: it is D1, a call out during which this object serves other requests,
   * and nothing of the room may have changed yet while one runs (an attach then would answer a seq
   * whose event is neither in its answer nor sent after it). Everything else is one synchronous step.
   */
  async commit(event: ChatEvent, hostSeq?: number): Promise<void> {
    const raised = event.type === 'reset' ? event.items.filter(isRequestItem) : event.type === 'item' && isRequestItem(event.item) ? [event.item] : [];
    if (raised.length > 0) await this.deps.observeRequests(raised);
    // The version held now, for the room to judge (a push when an item starts waiting or ends a turn).
    const before = event.type === 'item' ? this.loaded()?.get(event.item.id) : undefined;
    let frame: string | null;
    try {
      frame = this.deps.transaction(() => this.record(event, this.seq + 1, hostSeq));
    } catch (error) {
      // The storage step was rolled back: what memory holds is read again from what was kept.
      this.thread = undefined;
      this.store.reload();
      throw error;
    }
    if (frame === null) return;
    this.deps.publish(frame);
    if (event.type === 'item') this.deps.itemCommitted(event.item, before);
  }

  /** Stores one event under `seq`; answers the frame for attached clients, or null when it applied to nothing. */
  private record(event: ChatEvent, seq: number, hostSeq?: number): string | null {
    if (event.type === 'reset') {
      // A whole thread is no log entry: clients from before it get a snapshot, old cursors expire.
      this.store.advance(seq, hostSeq);
      this.thread = new Thread(event.info, event.items);
      this.store.replaceThread(this.thread, seq);
      this.store.restart(seq, this.hostSeq);
      this.dirty.clear();
      return chatEventText(this.chatId(), JSON.stringify({ ...event, info: this.deps.decorate(event.info) }), seq);
    }
    let thread = this.loaded();
    if (!thread) {
      if (event.type !== 'info') return null; // nothing to apply an item to before the chat's info arrives
      thread = this.thread = new Thread(event.info, []);
    }
    this.store.advance(seq, hostSeq);
    const item = thread.apply(event);
    // What is stored is serialized once and the event's JSON built around it: items and infos can be large.
    let json: string;
    if (event.type === 'info') {
      const infoJson = JSON.stringify(event.info);
      this.store.writeInfo(event.info, infoJson);
      const shown = this.deps.decorate(event.info);
      json = `{"type":"info","info":${shown === event.info ? infoJson : JSON.stringify(shown)}}`;
    } else if (event.type === 'item' && item) {
      const itemJson = JSON.stringify(item);
      this.store.writeItem(thread, item, seq, itemJson);
      this.dirty.delete(item.id);
      json = `{"type":"item","item":${itemJson}${event.historyIndex === undefined ? '' : `,"historyIndex":${event.historyIndex}`}}`;
    } else {
      if (event.type === 'delta' && item) this.dirty.add(item.id);
      json = JSON.stringify(event);
    }
    this.store.appendLog(seq, json);
    // The log keeps the last LOG_KEEP events; trimmed now and then rather than on every event. Streamed
    // items are written first: the deltas trimmed away may be all that holds their newest text.
    if (seq % 256 === 0 && seq - LOG_KEEP > this.store.state.logFloor) {
      this.flush();
      this.store.trimLog(seq - LOG_KEEP);
    }
    return chatEventText(this.chatId(), json, seq);
  }

  // ---- writing streamed items ----

  /** Writes streamed items at most once a second; the log covers what a crash in between loses. */
  private flushSoon(): void {
    if (this.dirty.size === 0) return;
    if (this.now() - this.lastFlush >= FLUSH_EVERY_MS) this.flush();
    else {
      // Asked once per flush: until the next flush moves `due`, a wake-up no later than it stands
      // (and any that fires flushes). The profile had a storage call on every streamed delta.
      const due = this.lastFlush + FLUSH_EVERY_MS;
      if (this.wakeFor === due) return;
      this.wakeFor = due;
      void this.deps.wakeBy(due)?.catch(() => {
        // Asked again at the next delta (the scheduler logged the refusal).
        if (this.wakeFor === due) this.wakeFor = null;
      });
    }
  }

  /** Writes every dirty item now (the room's alarm calls this). */
  flush(): void {
    const thread = this.loaded();
    this.lastFlush = this.now();
    if (!thread) return;
    const seq = this.seq;
    for (const id of this.dirty) {
      const item = thread.get(id);
      if (item) this.store.writeItem(thread, item, seq);
    }
    this.dirty.clear();
  }
}

/** A logged delta that only appends text (no UI preview fields): one that may join its neighbours. */
function isPlainDelta(event: ChatEvent): event is Extract<ChatEvent, { type: 'delta' }> {
  return event.type === 'delta' && event.ui === undefined && event.uiQueries === undefined && event.textLength === undefined;
}

/** One `chat.event` frame around an event already serialized: built by joining, not by a second stringify. */
export function chatEventText(chatId: string, eventJson: string, seq: number): string {
  return `{"type":"event","event":"chat.event","payload":{"chatId":${JSON.stringify(chatId)},"event":${eventJson},"seq":${seq}}}`;
}
