// One chat's socket, kept current across drops and relay restarts. On every new socket it attaches
// with `since` = the relay seq of the last event its thread applied: the relay answers with the
// events missed meanwhile (applied in order) or, when it no longer has them, a snapshot that REPLACES
// the thread. Events whose seq is not past the thread's are ignored (already had); one past a gap
// means something was lost on the way, so the socket is dropped and the next attach fills it.
//
// Sends go through the Outbox (outbox.ts): kept on this device first, then sent in order, one at a
// time, whenever the link is up, each under the id it was kept with. Each send's PendingSend tells
// where it is: kept here, sent, queued by the relay for an offline host (the relay shows those in
// `info.queue` as `relay:<request id>`, see src/contracts/relay.ts), delivered, or failed. A queued one
// is delivered when it leaves that queue, unless the relay said first that the host refused it: the
// relay tells that to whoever is attached then, and to its sender's next attach (before the answer,
// so before the queue in it is read) if they were away.
import {
  CHAT_PAGE_LIMITS,
  ChatSendPayloadSchema,
  KEPT_SEND_PREFIX,
  ProtocolError,
  type AgentRequestType,
  type ChatQueuePayload,
  type ChatSendPayload,
  type ChatSendResult,
  type RequestPayload,
  type RequestResult,
  type SettledRequest,
  type WireError,
} from '../contracts/index.ts';
import type { RelayApi } from './api.ts';
import { settledAmong } from './device-key.ts';
import { LiveSocket, type EventFrame, type LiveSocketOptions } from './live-socket.ts';
import { PendingSend, defaultOutboxStore, nextOrder, type OutboxEntry, type OutboxScope, type OutboxStore } from './outbox.ts';
import { type RelaySocket, SocketClosedError, relayPaths } from './socket.ts';
import { ThreadModel } from './thread.ts';

export interface ChatChannelOptions extends LiveSocketOptions {
  /** How many of the newest items a snapshot carries (at most the protocol's page, 100); older pages come by `thread.loadOlder()`. Default 100. */
  historyLimit?: number;
  /** Where sends wait for the link. Default: IndexedDB in a browser, memory elsewhere. */
  outbox?: OutboxStore;
}

/** Answers after which a send stays kept and goes again (same id) a moment later. */
const TRY_AGAIN = new Set(['host-timeout', 'rate-limited']);
const TRY_AGAIN_MS = 2_000;

/** What a send carries besides the chat it goes to. */
export type ChatMessage = Omit<ChatSendPayload, 'chatId'>;

export class ChatChannel extends LiveSocket {
  readonly chatId: string;
  readonly thread: ThreadModel;
  private readonly historyLimit: number;
  private readonly outbox: OutboxStore;
  private readonly sends = new Map<string, PendingSend>();
  private readonly writes = new Map<string, Promise<void>>();
  /** Sends being taken back from the relay's queue (see request). */
  private readonly withdrawing = new Set<string>();
  private readonly sendListeners = new Set<(send: PendingSend) => void>();
  private readonly restored: Promise<void>;
  /** Events that came while an attach was in flight; applied after its answer. */
  private early: EventFrame[] | null = null;
  private pumping = false;
  private pumpTimer: ReturnType<typeof setTimeout> | null = null;

  /** An approval or answer is signed over the waiting request as this thread shows it. */
  protected override shownRequest(type: string, payload: unknown): SettledRequest | null {
    return settledAmong(type, payload, this.thread.items);
  }

  constructor(api: RelayApi, hostId: string, chatId: string, options: ChatChannelOptions = {}) {
    super(api, hostId, relayPaths.chat(api.baseUrl, hostId, chatId), options);
    this.chatId = chatId;
    this.historyLimit = Math.min(options.historyLimit ?? CHAT_PAGE_LIMITS.pageMax, CHAT_PAGE_LIMITS.pageMax);
    this.outbox = options.outbox ?? defaultOutboxStore();
    this.thread = new ThreadModel(chatId, (cursor) => this.request('chat.history', { chatId, cursor }));
    this.restored = this.restore();
    this.onState((state) => {
      if (state === 'closed') this.refuseKept();
    });
    this.start();
  }

  // ---- sending ----

  /** Every send not yet settled (and those settled since), oldest first. */
  get pendingSends(): PendingSend[] {
    return [...this.sends.values()];
  }

  /** Called when a send is added or moves on. */
  onSend(listener: (send: PendingSend) => void): () => void {
    this.sendListeners.add(listener);
    return () => this.sendListeners.delete(listener);
  }

  /**
   * Sends a message, now or when the link returns; never twice. A message the contract refuses
   * (no text and no attachment, too many attachments, …) fails at once with `bad-request`.
   */
  send(message: ChatMessage): PendingSend {
    const payload = { ...message, chatId: this.chatId } as ChatSendPayload;
    const entry: OutboxEntry = { ...this.scope(), id: this.newId(), payload, createdAt: Date.now(), order: nextOrder() };
    const send = this.track(new PendingSend(entry));
    const checked = ChatSendPayloadSchema.safeParse(payload);
    if (!checked.success) {
      send.advance('failed', { error: { code: 'bad-request', message: checked.error.issues[0]?.message ?? 'Invalid message' } });
      return send;
    }
    if (this.ended?.code === 'forbidden') {
      send.advance('failed', { error: this.ended });
      return send;
    }
    void this.store(entry.id, () => this.outbox.put(entry)).catch(() => undefined);
    void this.pump();
    return send;
  }

  /**
   * As LiveSocket's, and taking one of this channel's sends back from the relay's queue
   * (`chat.unqueue` of `relay:<id>`) removes it from `pendingSends`: it is no longer on its way. Marked
   * before the request goes, since the relay's new info (without it) arrives before the answer.
   */
  override async request<T extends AgentRequestType>(type: T, payload: RequestPayload<T>, id?: string): Promise<RequestResult<T>> {
    const messageId = type === 'chat.unqueue' ? (payload as ChatQueuePayload).messageId : '';
    const withdrawn = messageId.startsWith(KEPT_SEND_PREFIX) ? this.sends.get(messageId.slice(KEPT_SEND_PREFIX.length)) : undefined;
    if (withdrawn) this.withdrawing.add(withdrawn.id);
    try {
      const result = await super.request(type, payload, id);
      if (withdrawn && this.sends.delete(withdrawn.id)) {
        void this.store(withdrawn.id, () => this.outbox.remove(withdrawn.id)).catch(() => undefined);
        for (const listener of this.sendListeners) listener(withdrawn);
      }
      return result;
    } finally {
      if (withdrawn) {
        this.withdrawing.delete(withdrawn.id);
        this.queueChanged();
      }
    }
  }

  /** Forgets the settled sends (a view that has shown their outcome). */
  clearSettled(): void {
    for (const [id, send] of this.sends) if (send.done) this.sends.delete(id);
  }

  private track(send: PendingSend): PendingSend {
    this.sends.set(send.id, send);
    send.onChange((changed) => {
      for (const listener of this.sendListeners) listener(changed);
    });
    for (const listener of this.sendListeners) listener(send);
    return send;
  }

  /** This person's sends to this chat (the signed-in user; '' for a session whose sign-in did not name one). */
  private scope(): OutboxScope {
    return { userId: this.api.userId ?? '', hostId: this.hostId, chatId: this.chatId };
  }

  /** The sends an earlier page (or an earlier channel) kept and never got answered. */
  private async restore(): Promise<void> {
    let kept: OutboxEntry[] = [];
    try {
      kept = await this.outbox.list(this.scope());
    } catch {
      return; // an unreadable store holds nothing we can send
    }
    for (const entry of kept) if (!this.sends.has(entry.id)) this.track(new PendingSend(entry, entry.state === 'queued' ? 'queued' : 'kept'));
    // Kept ones are older than anything sent since this channel opened: they go first.
    const fresh = [...this.sends.entries()].filter(([id]) => !kept.some((e) => e.id === id));
    for (const [id, send] of fresh) {
      this.sends.delete(id);
      this.sends.set(id, send);
    }
  }

  /** Sends the kept messages in order, one at a time, while the link is up. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      await this.restored;
      for (;;) {
        const socket = this.state === 'open' ? this.current : null;
        const next = [...this.sends.values()].find((send) => send.state === 'kept');
        if (!socket || !next) return;
        await this.writes.get(next.id)?.catch(() => undefined);
        next.advance('sent');
        let result: ChatSendResult;
        try {
          result = await socket.request('chat.send', next.payload, next.id);
        } catch (error) {
          if (error instanceof SocketClosedError) {
            next.advance('kept'); // goes again, same id, on the next socket
            return;
          }
          const wire = error instanceof ProtocolError ? error.toWire() : { code: 'internal', message: String(error) };
          if (TRY_AGAIN.has(wire.code)) {
            next.advance('kept');
            this.pumpLater();
            return;
          }
          await this.settle(next, 'failed', { error: wire });
          continue;
        }
        const keptByRelay = result.queued && this.thread.info?.queue?.some((q) => q.id === `${KEPT_SEND_PREFIX}${next.id}`) === true;
        await this.settle(next, keptByRelay ? 'queued' : 'delivered', { result });
      }
    } finally {
      this.pumping = false;
    }
  }

  private pumpLater(): void {
    if (this.pumpTimer) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null;
      void this.pump();
    }, TRY_AGAIN_MS);
  }

  /**
   * The relay answered it: it leaves the outbox (a resend would only get the same answer), except a
   * send the relay keeps for the offline host, which stays as `queued` (never sent again) until it is
   * delivered or refused, so that a reload still learns how it ended.
   */
  private async settle(
    send: PendingSend,
    state: 'queued' | 'delivered' | 'failed',
    detail: { error?: WireError; result?: ChatSendResult } = {},
  ): Promise<void> {
    send.advance(state, detail);
    if (send.state !== state) return; // settled otherwise already (a refusal heard before the answer): that was stored
    const write =
      state === 'queued'
        ? () => this.outbox.put({ ...this.scope(), id: send.id, payload: send.payload, createdAt: send.createdAt, order: send.order, state })
        : () => this.outbox.remove(send.id);
    await this.store(send.id, write).catch(() => undefined);
  }

  /** Outbox writes of one send, one after another in the order asked: a removal is never overtaken by an earlier put. */
  private store(id: string, write: () => Promise<void>): Promise<void> {
    // The first write starts at once: a send is on the device by the time `send()` answers (as far as the store is synchronous).
    const previous = this.writes.get(id);
    const next = previous ? previous.catch(() => undefined).then(write) : write();
    this.writes.set(id, next);
    void next
      .catch(() => undefined)
      .finally(() => {
        if (this.writes.get(id) === next) this.writes.delete(id);
      });
    return next;
  }

  /**
   * Access to the host was revoked: what is kept here can never go, so it fails (and leaves the
   * outbox). Any other end (signed out, close()) leaves it kept, for the next channel of this chat.
   */
  private refuseKept(): void {
    const why = this.ended;
    if (why?.code !== 'forbidden') return;
    for (const send of this.sends.values()) if (send.state === 'kept' || send.state === 'sent') void this.settle(send, 'failed', { error: why });
  }

  /** Sends the relay kept for the offline host are delivered once they leave `info.queue` (unless refused first). */
  private queueChanged(): void {
    const queue = this.thread.info?.queue ?? [];
    for (const send of this.sends.values()) {
      if (send.state !== 'queued' || this.withdrawing.has(send.id)) continue;
      if (!queue.some((q) => q.id === `${KEPT_SEND_PREFIX}${send.id}`)) void this.settle(send, 'delivered');
    }
  }

  // ---- the socket ----

  protected override async opened(socket: RelaySocket): Promise<void> {
    // The sends a reload kept must be known before the attach, whose answer may settle them.
    await this.restored;
    const since = this.thread.attached ? this.thread.seq : undefined;
    this.early = [];
    try {
      const result = await socket.request('chat.attach', {
        chatId: this.chatId,
        historyLimit: this.historyLimit,
        ...(since === undefined ? {} : { since }),
      });
      this.thread.applyAttach(result, since);
      for (const frame of this.early.splice(0)) this.takeNow(frame);
    } finally {
      this.early = null;
    }
    this.queueChanged();
  }

  protected override afterOpen(): void {
    void this.pump();
  }

  protected override take(frame: EventFrame): void {
    if (frame.payload.chatId !== this.chatId) return;
    if (this.early) this.early.push(frame);
    else this.takeNow(frame);
  }

  private takeNow(frame: EventFrame): void {
    const payload = frame.payload;
    switch (frame.event) {
      case 'chat.event': {
        const outcome = this.thread.applyEnvelope(payload);
        if (outcome === 'gap')
          this.reconnect(); // the next attach (since = what we have) fills it
        else if (outcome === 'applied' && payload.event.type !== 'delta') this.queueChanged();
        return;
      }
      case 'chat.bookmarks':
        return this.thread.applyBookmarks(payload.bookmarks);
      case 'chat.visuals':
        return this.thread.applyVisuals(payload.visuals);
      case 'chat.sendRefused': {
        // Heard live, or again on attaching (the relay cannot know this device heard it): once is enough.
        const send = this.sends.get(payload.requestId);
        if (send && !send.done) void this.settle(send, 'failed', { error: payload.error });
        return;
      }
    }
  }

  override close(): void {
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    super.close();
  }
}
