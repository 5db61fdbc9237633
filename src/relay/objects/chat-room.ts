// ChatRoom: one per chat, named by host id and chat id.
//
// Toward the host it is one client, attached for good: HostLink hands it the chat's events in order,
// each with the host's `seq`. It drops what it already applied, fills a gap by attaching again with
// `since`, materializes the thread and logs every event under its own `seq`.
// Toward people it is the host: it answers `chat.attach` itself (a snapshot, or the missed events when
// `since` is still in the log), pages history, and sends every event to every attached client as one
// frame serialized once. It owns bookmarks and visual records (room-records.ts) and approval state
// (in D1), answering those requests whether the host is online or not, and keeps `chat.send`s made
// while the host is offline, delivering them in order, once, when it returns (kept-sends.ts), each
// only while its sender may still send here. Every other request about this chat goes to the host;
// it serves no request about the whole host (the registry's `scope`, src/contracts/requests.ts), nor
// one naming another chat.
//
// What survives a restart: everything in RoomStore (thread, log, kept sends, visual pages) and the
// reply journal. What does not: which sockets attached (they re-attach; the socket list itself
// survives hibernation through its attachment).
import {
  AGENT_EVENT_SCHEMAS, AGENT_REQUEST_SCHEMAS, CHAT_PAGE_LIMITS, KEPT_SEND_PREFIX, LINK_ATTACHMENT_READ, ProtocolError, RELAY_COUNTERS, REQUEST_RULES, ROUTE_VISUAL_PAGE, Thread,
  LINK_MAX_FRAME_BYTES, isChatRequest, overFrameLimit, switchesAccount, toWireError, utf8Bytes,
  type ChatAttachResult, type ChatRequestType, type RequestPayload, type ChatEvent, type ChatEventEnvelope, type ChatInfo, type ChatItem, type LinkEventFrame, type Reply,
} from '../../contracts/index.ts';
import { readPrincipalView, refusalIn, roleIn, standingIn } from '../auth/access.ts';
import { principalOf, type Identity } from '../auth/tokens.ts';
import { record } from '../db/audit.ts';
import { forgetChat } from '../db/chats.ts';
import { RequestLedger, isPending, isRequestItem, type RequestItem } from '../db/requests.ts';
import type { Env } from '../env.ts';
import {
  ClientSockets, eventFrame, identityOf, presenceFrame, relabel, replyOk, send, toHost,
  type ClientRequest, type Place, type ServedRequest, type ServedTable,
} from './client-sockets.ts';
import { askHost, type LinkRequestInput } from './host-link.ts';
import { ANSWERED_ONCE, REPLY_TABLES_V1, ReplyJournal } from './reply-journal.ts';
import { migrateStorage, type StorageMigration } from './storage-migrations.ts';
import { hostLinkOf } from './stubs.ts';
import { KeptSends } from './kept-sends.ts';
import { RoomRecords } from './room-records.ts';
import { readAttachment, type AttachmentAnswer } from './room-attachments.ts';
import { LOG_KEEP, ROOM_TABLES_V1, RoomStore } from './room-store.ts';
import { failureText } from '../db/failures.ts';
import { log } from '../log.ts';
import { LIMITS } from '../auth/rate-limit.ts';
import { DropLog } from './drop-log.ts';
import { Meter } from '../metrics/meter.ts';
import { noticeOf } from '../push/notices.ts';
import { pushConfigured, queueNotice } from '../push/send.ts';

const FLUSH_EVERY_MS = 1_000;

/** What the room adds to each request it serves: the socket it came on (none when the Lobby passed it on). */
interface RoomExtra {
  ws?: WebSocket;
}
type RoomCall<T extends ChatRequestType> = ServedRequest<T> & RoomExtra;

/** The room's own SQLite, by version (storage-migrations.ts): never edit a released version, add one. */
const CHAT_ROOM_STORAGE: readonly StorageMigration[] = [
  { version: 1, sql: ROOM_TABLES_V1 + REPLY_TABLES_V1 },
];

export class ChatRoom extends ClientSockets {
  private readonly store: RoomStore;
  private readonly journal: ReplyJournal;
  private thread: Thread | null | undefined;
  private readonly dirty = new Set<string>();
  private lastFlush = 0;
  /** The flush time an alarm was last asked for (flushSoon): asked once per flush, not once per delta. */
  private flushAlarmFor: number | null = null;
  /** Sockets that attached, rebuilt from their attachments after hibernation. */
  private attached: Set<WebSocket> | null = null;
  private readonly records: RoomRecords;
  private readonly kept: KeptSends;
  private syncing: Promise<void> | null = null;
  private reconciling: Promise<void> | null = null;
  /**
   * The winning answer of each request on its way to the host, by request id: what a losing answer
   * waits for, to be told the truth (settled, or open again after the winner failed).
   */
  private readonly answering = new Map<string, Promise<Reply>>();
  readonly meter = new Meter(this.ctx, this.env, 'chat', () => this.openClients());
  /** Unreadable host events: counted each, logged within the link's frame budget. */
  private readonly drops = new DropLog(() => LIMITS.linkFrames(this.env));

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrateStorage(ctx.storage, 'ChatRoom', CHAT_ROOM_STORAGE);
    this.store = new RoomStore(ctx.storage.sql);
    this.journal = new ReplyJournal(ctx.storage.sql);
    this.records = new RoomRecords(env.DB, this.store, { key: () => this.key(), fanOut: (text) => this.fanOut(text) });
    this.kept = new KeptSends(this.store, {
      chatId: () => this.key().chatId,
      ask: (input) => this.ask(input),
      isOnline: () => this.hostLink().isOnline(),
      hostTakesUnsigned: (type) => this.hostLink().takesUnsigned(type),
      waitForHost: () => this.hostLink().waitForHost(this.key().chatId),
      queueChanged: () => this.queueChanged(),
      seq: () => this.seq,
      fanOut: (text) => this.fanOut(text),
      senderRefusal: async (userId) => {
        const { hostId, chatId } = this.key();
        return refusalIn(await readPrincipalView(this.env.DB, userId, hostId), 'chat.send', chatId)?.toWire() ?? null;
      },
      hostQueue: () => this.loaded()?.info.queue ?? [],
      auditTakenBack: (userId, requestId, messageId) => {
        // The relay acted on the machine here, for a person who no longer may: said so, with whom it was for.
        const { hostId, chatId } = this.key();
        this.ctx.waitUntil(record(this.env.DB, {
          actor: userId, action: 'chat.unqueue', hostId, chatId, detail: { requestId, messageId, by: 'relay', reason: 'sender lost access' },
        }));
      },
    });
  }

  // ---- identity of the room ----

  private key(): { hostId: string; chatId: string } {
    const { hostId, chatId } = this.store.state;
    if (!hostId || chatId === null) throw new ProtocolError('internal', 'room has no identity');
    return { hostId, chatId };
  }

  private name(hostId: string, chatId: string): void {
    this.store.name(hostId, chatId);
  }

  protected override place(): Place | null {
    const { hostId, chatId } = this.store.state;
    return hostId && chatId !== null ? { hostId, chatId } : null;
  }

  private ask(input: LinkRequestInput): Promise<Reply> {
    return askHost(this.env, this.key().hostId, input);
  }

  private hostLink() {
    return hostLinkOf(this.env, this.key().hostId);
  }

  private loaded(): Thread | null {
    if (this.thread === undefined) this.thread = this.store.loadThread();
    return this.thread;
  }

  private get seq(): number { return this.store.state.seq; }
  private get hostSeq(): number { return this.store.state.hostSeq; }

  // ---- clients connect ----

  override async fetch(request: Request): Promise<Response> {
    const identity = identityOf(request);
    const hostId = request.headers.get('X-Tether-Host');
    const chatId = request.headers.get('X-Tether-Chat');
    if (!hostId || chatId === null) return new Response('missing chat', { status: 400 });
    this.name(hostId, chatId);
    return this.acceptClient(request, identity);
  }

  protected override onConnect(ws: WebSocket): void {
    // Presence first, so a client knows at once whether what it sends will wait; the first socket
    // asks HostLink for later changes too.
    const first = this.clients().length === 1;
    const online = first ? this.hostLink().watch(this.key().chatId, true) : this.hostLink().isOnline();
    void online.then((up) => send(ws, presenceFrame(this.key().hostId, up)))
      .catch(() => undefined);
  }

  protected override onDisconnect(ws: WebSocket): void {
    this.attachedSockets().delete(ws);
    const open = this.clients().filter((other) => other !== ws && other.readyState === WebSocket.OPEN);
    if (open.length === 0) void this.hostLink().watch(this.key().chatId, false).catch(() => undefined);
  }

  /**
   * HostLink tells every chat with people connected that the host came or went. Answers whether
   * anyone is still here: sockets that ended without a close (a restart) never said they left.
   */
  async presence(hostId: string, chatId: string, online: boolean, at: number): Promise<boolean> {
    this.name(hostId, chatId);
    const sockets = this.clients();
    const text = presenceFrame(hostId, online, at);
    // Only to whom may read the chat: a socket may have opened before its host was known to the relay,
    // and one whose person may not read it (now that the host is known) is closed.
    const standings = await Promise.all(sockets.map((ws) => this.access.view(this.attachmentOf(ws).identity, hostId)
      .then((view) => ({ standing: standingIn(view, chatId), reads: roleIn(view, chatId) !== null }), () => null)));
    let told = 0;
    sockets.forEach((ws, i) => {
      const seen = standings[i];
      if (seen && seen.standing !== 'keep') this.expel(ws, seen.standing);
      else if (seen?.reads) {
        send(ws, text);
        told += 1;
      }
    });
    this.meter.count(RELAY_COUNTERS.eventsDelivered, told);
    return sockets.length > 0;
  }

  private attachedSockets(): Set<WebSocket> {
    if (this.attached === null) {
      this.attached = new Set(this.clients().filter((ws) => (ws.deserializeAttachment() as { attached?: boolean }).attached));
    }
    return this.attached;
  }

  private markAttached(ws: WebSocket, attached: boolean): void {
    ws.serializeAttachment({ ...(ws.deserializeAttachment() as object), attached });
    if (attached) this.attachedSockets().add(ws);
    else this.attachedSockets().delete(ws);
  }

  /** Sends one frame to every attached socket whose person may still read this chat. */
  private fanOut(text: string): void {
    const sockets = this.attachedSockets();
    if (sockets.size === 0) return;
    const place = this.key();
    let sent = 0;
    for (const ws of sockets) {
      if (!this.mayHear(ws, place)) continue;
      send(ws, text);
      sent += 1;
    }
    this.meter.count(RELAY_COUNTERS.eventsDelivered, sent);
  }

  /** recheckHosts: closes the sockets of people who may no longer read this chat; the others keep their (new) role. */
  async recheck(hostId: string, chatId: string): Promise<void> {
    // A room nobody ever used has neither sockets nor sends: it is not named (nor stored) for this.
    if (!this.place()) return;
    if (this.clients().length > 0) await this.recheckSockets({ hostId, chatId });
    // After the sockets: a sender who keeps a socket (now a viewer) hears why their message went.
    await this.kept.recheckSenders();
  }

  // ---- requests from clients ----

  protected override async onRequest(ws: WebSocket, request: ClientRequest, identity: Identity): Promise<string> {
    return this.serve(identity, request, ws);
  }

  /** A chat request that arrived on the host's Lobby; the room may never have been named before. */
  async serveForLobby(hostId: string, chatId: string, identity: Identity, request: ClientRequest): Promise<string> {
    this.name(hostId, chatId);
    return this.serve(identity, request);
  }

  /** Serves one client request. Never throws: a failure is the reply (an error crossing RPC loses its code). */
  private async serve(identity: Identity, request: ClientRequest, ws?: WebSocket): Promise<string> {
    try {
      return await this.serveChecked(identity, request, ws);
    } catch (error) {
      if (!(error instanceof ProtocolError)) log.error('request failed', { chatId: this.store.state.chatId, type: request.type, error: failureText(error) });
      return this.refuse(request.id, toWireError(error));
    }
  }

  private async serveChecked(identity: Identity, request: ClientRequest, ws?: WebSocket): Promise<string> {
    const { hostId, chatId } = this.key();
    const { type } = request;
    // Only requests about this chat: a host-wide one on a chat's socket would answer with the whole
    // host (its list, usage, accounts) to someone whose grant is this one chat.
    if (!isChatRequest(type)) {
      return this.refuse(request.id, { code: 'bad-request', message: `${type} is about the whole host; it is served on the host's lobby socket` });
    }
    const payload = request.payload as RequestPayload<ChatRequestType>;
    if (payload.chatId !== chatId) {
      return this.refuse(request.id, { code: 'bad-request', message: `This socket serves chat ${chatId}` });
    }
    const switches = REQUEST_RULES[type].switchesAccount && switchesAccount(payload as { account?: string; provider?: string }, this.loaded()?.info ?? null);
    await this.access.check(identity, hostId, type, chatId, switches);
    this.audit(identity, request, { hostId, chatId });
    const call = { id: request.id, type, payload, userId: principalOf(identity), ws, ...(request.signed ? { signed: request.signed } : {}) } as RoomCall<ChatRequestType>;
    if (REQUEST_RULES[type].settles) await this.reconcileRequests();
    const run = () => (this.handlers[type] as (call: RoomCall<ChatRequestType>) => Promise<string>)(call);
    if (!ANSWERED_ONCE.has(type)) return run();
    return this.journal.once(call.userId, request.id, () => run().catch((error: unknown) => {
      if (error instanceof ProtocolError) return this.refuse(request.id, error.toWire());
      throw error;
    }));
  }

  /** How this room serves each request about its chat: the relay's own answers, or on to the host. */
  private readonly handlers: ServedTable<ChatRequestType, RoomExtra> = {
    // Open and read: from the room's copy of the thread.
    'chat.attach': async ({ id, payload, ws, userId }) => {
      const text = await this.attach(id, payload, ws && { ws, userId });
      if (ws) this.markAttached(ws, true);
      return text;
    },
    'chat.detach': async ({ id, ws }) => {
      if (ws) this.markAttached(ws, false);
      return replyOk(id, {});
    },
    'chat.history': async ({ id, payload }) => {
      const { items, history } = this.history(payload.cursor, payload.limit);
      return this.replyWithItems(id, { history }, items);
    },
    // Send and control: a send waits here while the host is away (kept-sends.ts).
    'chat.send': ({ userId, id, payload, signed }) => this.kept.send(userId, id, payload, signed),
    'chat.uiChoice': (call) => this.forward(call),
    'ui.query': (call) => this.forward(call),
    'chat.unqueue': (call) => this.queueRequest(call),
    'chat.sendNow': (call) => this.queueRequest(call),
    'chat.cancel': (call) => this.forward(call),
    'chat.kill': (call) => this.forwardThenForget(call, true),
    // Answer: the first answer wins (RequestLedger).
    'chat.approve': (call) => this.settle(call),
    'chat.answer': (call) => this.settle(call),
    'chat.dismiss': (call) => this.settle(call),
    // Configure, turns and forks, delegated work: the host's.
    'chat.configure': (call) => this.forward(call),
    'chat.compact': (call) => this.forward(call),
    'chat.clear': (call) => this.forwardThenForget(call, false),
    'chat.turnDiff': (call) => this.forward(call),
    'chat.fork': (call) => this.forward(call),
    'chat.continueOn': (call) => this.forward(call),
    'chat.forkInfo': (call) => this.forward(call),
    'chat.summarize': (call) => this.forward(call),
    'chat.subagent': (call) => this.forward(call),
    'chat.stopSubagent': (call) => this.forward(call),
    'chat.stopTask': (call) => this.forward(call),
    'skills.list': (call) => this.forward(call),
    // Bookmarks and visual records: the relay's own (room-records.ts).
    'chat.addBookmark': async ({ id, payload }) => {
      const item = (this.loaded() ?? await this.ready()).get(payload.itemId);
      return replyOk(id, { bookmarks: await this.records.addBookmark(item, payload.itemId, payload.name) });
    },
    'chat.renameBookmark': async ({ id, payload }) => replyOk(id, { bookmarks: await this.records.renameBookmark(payload.itemId, payload.name) }),
    'chat.removeBookmark': async ({ id, payload }) => replyOk(id, { bookmarks: await this.records.removeBookmark(payload.itemId) }),
    'chat.removeVisual': async ({ id, payload }) => replyOk(id, { visuals: await this.records.removeVisual(payload.visualId) }),
  };

  private async forward(call: ServedRequest<ChatRequestType>): Promise<string> {
    const reply = await this.ask(toHost(call));
    return relabel(reply, call.id);
  }

  /** A queued message the relay keeps is the relay's to take back; one on the host, the host's. */
  private async queueRequest(call: ServedRequest<'chat.unqueue' | 'chat.sendNow'>): Promise<string> {
    const { messageId } = call.payload;
    if (!messageId.startsWith(KEPT_SEND_PREFIX)) return this.forward(call);
    return this.kept.queueRequest(call.type, call.id, messageId.slice(KEPT_SEND_PREFIX.length));
  }

  /** After a clear the relay's own records of the chat go too; after a kill, the whole room. */
  private async forwardThenForget(call: ServedRequest<'chat.clear' | 'chat.kill'>, everything: boolean): Promise<string> {
    const reply = await this.ask(toHost(call));
    if (reply.ok) await this.forget(everything);
    return relabel(reply, call.id);
  }

  // ---- attach, replay, history ----

  /** Makes sure the room holds the chat; attaches it on the host the first time. */
  private async ready(): Promise<Thread> {
    const thread = this.loaded();
    if (thread && this.hostSeq >= 0) return thread;
    await this.sync(undefined);
    const synced = this.loaded();
    if (!synced) throw new ProtocolError('chat-not-found', 'No such chat on this host');
    return synced;
  }

  /** `to`: the socket the answer goes to, which first gets the refusals of its person's kept sends it may have missed. */
  private async attach(id: string, p: { historyLimit?: number; since?: number }, to?: { ws: WebSocket; userId: string }): Promise<string> {
    let thread: Thread;
    try {
      thread = await this.ready();
    } catch (error) {
      if (error instanceof ProtocolError && error.code === 'host-offline') {
        throw new ProtocolError('host-offline', 'This chat has not reached the relay yet and its host is offline');
      }
      throw error;
    }
    const [bookmarks, visuals] = await Promise.all([this.records.bookmarks(), this.records.visuals()]);
    // From here on nothing awaits: the snapshot, its seq and the socket joining the fan-out are one
    // step, so an event is either in what this answers or sent after it, never both, never neither.
    thread = this.loaded() ?? thread;
    const seq = this.seq;
    const info = this.decorate(thread.info);
    const floor = this.store.state.logFloor;
    const since = p.since !== undefined && p.since >= floor && p.since <= seq ? p.since : undefined;
    if (to) for (const frame of this.kept.refusalsFor(to.userId, since)) send(to.ws, frame);
    if (since !== undefined) {
      // Replay: the logged events as they were sent, joined without parsing them again.
      const events = this.store.logAfter(since);
      const head = JSON.stringify({ id, ok: true, result: { info, items: [], seq, bookmarks, visuals } });
      const replay = `${head.slice(0, -2)},"events":[${events.join(',')}]}}`;
      // Past what a client's frame holds (in bytes), a snapshot is answered instead, cut to fit below.
      if (!overFrameLimit(replay, LINK_MAX_FRAME_BYTES)) return replay;
    }
    const result: Omit<ChatAttachResult, 'items'> = { info, seq, bookmarks, visuals };
    let items = thread.items;
    if (p.historyLimit !== undefined && thread.items.length > p.historyLimit) {
      const start = thread.items.length - p.historyLimit;
      items = thread.items.slice(start);
      result.history = { start, cursor: this.cursor(start) };
      result.pending = thread.items.filter((item) => isRequestItem(item) && isPending(item));
    }
    const text = this.replyWithItems(id, result, items);
    if (!overFrameLimit(text, LINK_MAX_FRAME_BYTES)) return text;
    // A chat of large items would answer one frame no client accepts: the newest items that fit, the
    // rest left to chat.history, as historyLimit cuts it.
    const all = thread.items;
    result.pending = all.filter((item) => isRequestItem(item) && isPending(item));
    result.history = { start: all.length, cursor: this.cursor(all.length) };
    const room = LINK_MAX_FRAME_BYTES - utf8Bytes(this.replyWithItems(id, result, []));
    const start = this.newestThatFit(all, all.length - items.length, all.length, room);
    result.history = { start, cursor: this.cursor(start) };
    return this.replyWithItems(id, result, all.slice(start));
  }

  /**
   * Where the newest items of `[floor, end)` that fit `room` bytes (their stored JSON, comma-joined)
   * begin; at least one, so paging always moves on. A length settles most pages (a unit is at most
   * three bytes); only a page that may not fit has its characters counted.
   */
  private newestThatFit(items: readonly ChatItem[], floor: number, end: number, room: number): number {
    let units = 0;
    for (let i = floor; i < end; i++) units += this.store.jsonOf(items[i]!).length + 1;
    if (units * 3 <= room) return floor;
    let start = end;
    while (start > floor) {
      const cost = utf8Bytes(this.store.jsonOf(items[start - 1]!), room) + 1;
      if (cost > room && start < end) break;
      room -= cost;
      start -= 1;
    }
    return start;
  }

  /** A reply whose result ends with `items`, each item's JSON joined as stored rather than serialized again. */
  private replyWithItems(id: string, result: object, items: readonly ChatItem[]): string {
    const head = JSON.stringify({ id, ok: true, result: { ...result, items: [] } });
    return `${head.slice(0, -4)}[${items.map((item) => this.store.jsonOf(item)).join(',')}]}}`;
  }

  private cursor(start: number): string {
    return `h1.${this.store.state.epoch}.${start}`;
  }

  private history(cursor: string, limit = 50) {
    const thread = this.loaded();
    const match = /^h1\.(\d+)\.(\d+)$/.exec(cursor);
    if (!thread || !match || Number(match[1]) !== this.store.state.epoch || Number(match[2]) > thread.items.length) {
      throw new ProtocolError('history-expired', 'That history cursor is no longer valid; attach again');
    }
    const end = Number(match[2]);
    // A page of large items is cut to what a client's frame holds (in bytes); the next goes on from there.
    const start = this.newestThatFit(thread.items, Math.max(0, end - limit), end, LINK_MAX_FRAME_BYTES - HISTORY_REPLY_ROOM);
    return { items: thread.items.slice(start, end), history: { start, cursor: start > 0 ? this.cursor(start) : null } };
  }

  // ---- events from the host (RPC from HostLink) ----

  /**
   * Stores the host's frames in order; answers how many of them (from the first) it stored, and why it
   * stopped if it did. HostLink acknowledges only those: the rest come again after the host reconnects.
   */
  async ingest(hostId: string, chatId: string, frames: LinkEventFrame[]): Promise<{ stored: number; error?: string }> {
    this.name(hostId, chatId);
    let stored = 0;
    try {
      // Each chat.event is read once, here; a run of them may become one (see coalesce).
      const events = frames.map((frame) => (frame.event === 'chat.event' ? this.readChatEvent(frame.payload) : undefined));
      for (let i = 0; i < frames.length;) {
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
        } else {
          switch (frame.event) {
            case 'chat.event': break; // unreadable: counted and dropped by readChatEvent
            case 'chat.visuals': await this.records.hostVisuals(frame.payload); break;
            case 'visual.page': this.records.hostVisualPage(frame.payload); break;
            case 'chat.subagentChanged': this.onSubagentChanged(frame.payload); break;
          }
        }
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

  private onSubagentChanged(raw: unknown): void {
    const parsed = AGENT_EVENT_SCHEMAS['chat.subagentChanged'].safeParse(raw);
    if (parsed.success) this.fanOut(eventFrame('chat.subagentChanged', parsed.data));
  }

  /** A host's chat.event payload as the protocol reads it; null (counted) when it does not parse. */
  private readChatEvent(raw: unknown): ChatEventEnvelope | null {
    const parsed = AGENT_EVENT_SCHEMAS['chat.event'].safeParse(raw);
    if (parsed.success) return parsed.data;
    this.drops.warn('bad chat.event from host', { chatId: this.store.state.chatId, error: parsed.error.issues[0]?.message });
    this.meter.count(RELAY_COUNTERS.hostFramesDropped);
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
      this.fanOut(eventFrame('chat.event', { chatId: this.key().chatId, event }));
      return;
    }
    const known = this.loaded();
    if (event.type === 'info' && known && seq <= this.hostSeq && event.info.createdAt !== known.info.createdAt) {
      // The host made a new chat under this id (killed and created again, or its data was wiped): its
      // seq starts over, so what this room holds says nothing about it any more.
      await this.forget(false);
      this.thread = null;
      this.store.forgetThread();
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

  /** Attaches on the host to catch up: missed events after `since`, or a whole new snapshot. One at a time. */
  private sync(since: number | undefined): Promise<void> {
    this.syncing ??= this.syncOnce(since).finally(() => { this.syncing = null; });
    return this.syncing;
  }

  private async syncOnce(since: number | undefined): Promise<void> {
    const { chatId } = this.key();
    let reply = await this.ask({ type: 'chat.attach', payload: since === undefined ? { chatId } : { chatId, since } });
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
      for (const event of events.slice(logged)) this.fanOut(eventFrame('chat.event', { chatId, event }));
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
    const first = await this.ask({ type: 'chat.attach', payload: { chatId, historyLimit: page } });
    if (!first.ok) return first;
    const head = AGENT_REQUEST_SCHEMAS['chat.attach'].result.safeParse(first.result);
    if (!head.success) return first;
    const items = head.data.items;
    let cursor = head.data.history?.cursor ?? null;
    let start = head.data.history?.start ?? 0;
    while (cursor !== null) {
      const older = await this.ask({ type: 'chat.history', payload: { chatId, cursor, limit: page } });
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

  /**
   * Applies one event to the thread, logs it under the next room seq and sends it to attached clients.
   * `hostSeq` is the host's position after it, for events that came from the host.
   *
   * The ledger is written first: it is D1, a call out during which this object serves other requests,
   * and nothing of the room may have changed yet while one runs (an attach then would answer a seq
   * whose event is neither in its answer nor sent after it). Everything else is one synchronous step.
   */
  private async commit(event: ChatEvent, hostSeq?: number): Promise<void> {
    const raised = event.type === 'reset' ? event.items.filter(isRequestItem) : event.type === 'item' && isRequestItem(event.item) ? [event.item] : [];
    if (raised.length > 0) await this.ledger().observe(raised);
    // A push when this item starts waiting or ends a turn (push/notices.ts), judged against the version held now.
    const notice = event.type === 'item' && pushConfigured(this.env) ? noticeOf(event.item, this.loaded()?.get(event.item.id)) : null;
    let frame: string | null;
    try {
      frame = this.ctx.storage.transactionSync(() => this.record(event, this.seq + 1, hostSeq));
    } catch (error) {
      // The storage step was rolled back: what memory holds is read again from what was kept.
      this.thread = undefined;
      this.store.reload();
      throw error;
    }
    if (frame !== null) this.fanOut(frame);
    if (frame !== null && notice) this.ctx.waitUntil(queueNotice(this.env, this.key(), notice, this.loaded()?.info.suggestedTitle));
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
      return this.chatEventFrame({ ...event, info: this.decorate(event.info) }, seq);
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
      const shown = this.decorate(event.info);
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
    return chatEventText(this.key().chatId, json, seq);
  }

  private chatEventFrame(event: ChatEvent, seq: number): string {
    return chatEventText(this.key().chatId, JSON.stringify(event), seq);
  }

  /** Writes streamed items at most once a second; the log covers what a crash in between loses. */
  private flushSoon(): void {
    if (this.dirty.size === 0) return;
    const now = Date.now();
    if (now - this.lastFlush >= FLUSH_EVERY_MS) this.flush();
    else {
      // Sooner than an alarm the meter set for its own write: items must not wait for the counters.
      // Asked once per flush: until the next flush moves `due`, an alarm no later than it is set (this
      // object only ever moves its alarm earlier, and any alarm that fires flushes). The profile had
      // this storage call on every streamed delta.
      const due = this.lastFlush + FLUSH_EVERY_MS;
      if (this.flushAlarmFor === due) return;
      this.flushAlarmFor = due;
      void this.ctx.storage.getAlarm().then(
        (at) => at === null || at > due ? this.ctx.storage.setAlarm(due) : undefined,
      ).catch((error: unknown) => {
        // Asked again at the next delta, as before; the failure stays unhandled, as before.
        if (this.flushAlarmFor === due) this.flushAlarmFor = null;
        throw error;
      });
    }
  }

  private flush(): void {
    const thread = this.loaded();
    this.lastFlush = Date.now();
    if (!thread) return;
    const seq = this.seq;
    for (const id of this.dirty) {
      const item = thread.get(id);
      if (item) this.store.writeItem(thread, item, seq);
    }
    this.dirty.clear();
  }

  override async alarm(): Promise<void> {
    this.flush();
    await super.alarm();
  }

  // ---- visual pages (records in room-records.ts) ----

  /** The page of a visual, for its own sandboxed route: `forbidden` for someone who may not read the chat. */
  async visualPage(hostId: string, chatId: string, visualId: string, identity: Identity): Promise<{ html: string | null } | 'forbidden'> {
    this.name(hostId, chatId);
    try {
      await this.access.check(identity, hostId, ROUTE_VISUAL_PAGE, chatId);
    } catch {
      return 'forbidden';
    }
    return { html: this.records.page(visualId) };
  }

  /** One attachment of this chat with its bytes from the host, for its own route: `forbidden` for someone who may not read the chat. */
  async attachmentFile(hostId: string, chatId: string, attachmentId: string, identity: Identity): Promise<AttachmentAnswer | 'forbidden'> {
    this.name(hostId, chatId);
    try {
      await this.access.check(identity, hostId, LINK_ATTACHMENT_READ, chatId);
    } catch {
      return 'forbidden';
    }
    try {
      const thread = await this.ready();
      return await readAttachment((input) => this.ask(input), chatId, thread.items, attachmentId);
    } catch (error) {
      return { error: toWireError(error) };
    }
  }

  // ---- approvals and questions: the first answer wins ----

  /** Once per life of this object, before it settles anything: see RequestLedger.reopenUndelivered. */
  private async reconcileRequests(): Promise<void> {
    this.reconciling ??= (async () => {
      const thread = this.loaded();
      if (!thread) return;
      const waiting = thread.items.filter((item): item is RequestItem => isRequestItem(item) && isPending(item));
      await this.ledger().reopenUndelivered(waiting.map((item) => item.requestId));
    })().catch((error: unknown) => {
      this.reconciling = null; // tried again by the next answer, rather than failing every answer from now on
      throw error;
    });
    return this.reconciling;
  }

  private async settle(call: ServedRequest<'chat.approve' | 'chat.answer' | 'chat.dismiss'>, round = 0): Promise<string> {
    const { id, type, payload, userId } = call;
    const requestId = 'itemId' in payload ? await this.ledger().byItem(payload.itemId) : payload.requestId;
    if (!requestId) return this.refuse(id, { code: 'request-not-found', message: 'No such request in this chat' });
    if (!(await this.ledger().settle(requestId, userId, type, payload, id))) {
      // Another answer won. While it is on its way to the host the request may yet open again (the
      // host was away, it timed out): the loser hears the winner's outcome, never "settled" for a
      // request that still waits. Reopened, the loser's own answer goes next, as if it came just after.
      const winner = this.answering.get(requestId);
      const outcome = winner ? await winner : null;
      // With no winner in flight here, it may have failed and reopened the request just now.
      const open = outcome ? !outcome.ok && this.stillWaiting(requestId) : (await this.ledger().get(requestId))?.state === 'pending';
      if (open) {
        if (round < LOSER_ROUNDS) return this.settle(call, round + 1);
        const why = outcome && !outcome.ok ? outcome.error : { code: 'host-offline' as const, message: 'Another answer could not be delivered' };
        return this.refuse(id, { code: why.code, message: `${why.message}; the request still waits, answer again` });
      }
      return this.refuse(id, { code: 'request-not-found', message: 'That request was already settled' });
    }
    const outcome = (async () => {
      const reply = await this.ask(toHost(call));
      // Whatever the host refused (it was away, it timed out, it found the answer malformed), the request
      // stays open for the next answer, unless the host's thread shows it settled meanwhile.
      if (!reply.ok && this.stillWaiting(requestId)) await this.ledger().reopen(requestId, userId);
      return reply;
    })();
    this.answering.set(requestId, outcome);
    try {
      return relabel(await outcome, id);
    } finally {
      if (this.answering.get(requestId) === outcome) this.answering.delete(requestId);
    }
  }

  private stillWaiting(requestId: string): boolean {
    const item = this.loaded()?.items.find((one) => isRequestItem(one) && one.requestId === requestId);
    return item !== undefined && isPending(item as RequestItem);
  }

  // ---- sends, kept while the host is away (kept-sends.ts) ----

  /** HostLink calls this when the host is back: the kept sends go out in order, each once. */
  async hostReturned(hostId: string, chatId: string): Promise<void> {
    this.name(hostId, chatId);
    await this.kept.deliver();
  }

  private decorate(info: ChatInfo): ChatInfo {
    return this.kept.decorate(info);
  }

  private async queueChanged(): Promise<void> {
    const thread = this.loaded();
    if (thread) await this.commit({ type: 'info', info: thread.info });
  }

  /** After a clear the relay's own records of the chat go too; after a kill, the whole room. */
  private async forget(everything: boolean): Promise<void> {
    await this.records.forget();
    if (!everything) return;
    const { hostId, chatId } = this.key();
    await forgetChat(this.env.DB, hostId, chatId);
    this.thread = null;
    this.store.forgetThread();
  }

  private ledger() { return new RequestLedger(this.env.DB, this.key()); }
}

/** How many times a losing answer goes next after a winner that failed, before it is told to answer again. */
const LOSER_ROUNDS = 3;

/** A logged delta that only appends text (no UI preview fields): one that may join its neighbours. */
function isPlainDelta(event: ChatEvent): event is Extract<ChatEvent, { type: 'delta' }> {
  return event.type === 'delta' && event.ui === undefined && event.uiQueries === undefined && event.textLength === undefined;
}

/** One `chat.event` frame around an event already serialized: built by joining, not by a second stringify. */
function chatEventText(chatId: string, eventJson: string, seq: number): string {
  return `{"type":"event","event":"chat.event","payload":{"chatId":${JSON.stringify(chatId)},"event":${eventJson},"seq":${seq}}}`;
}

/** Room kept in a history reply's frame for its id and wrapping. */
const HISTORY_REPLY_ROOM = 4 * 1024;
