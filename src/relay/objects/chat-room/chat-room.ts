// ChatRoom: one per chat, named by host id and chat id (stubs.ts), learnt from that name once.
//
// Toward the host it is one client, attached for good: HostLink hands it the chat's events in order,
// each with the host's `seq`. It drops what it already applied, fills a gap by attaching again with
// `since`, materializes the thread and logs every event under its own `seq`: that is the
// replication (replication.ts), handed this room's storage and its fan-out.
// Toward people it is the host: it answers `chat.attach` itself (a snapshot, or the missed events when
// `since` is still in the log), pages history (both cut to fit a frame by room-pages.ts), and sends
// every event to every attached client as one frame serialized once. It owns bookmarks and visual records (room-records.ts) and approval state
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
  AGENT_EVENT_SCHEMAS,
  KEPT_SEND_PREFIX,
  LINK_ATTACHMENT_READ,
  ProtocolError,
  RELAY_COUNTERS,
  REQUEST_RULES,
  ROUTE_VISUAL_PAGE,
  isChatRequest,
  switchesAccount,
  toWireError,
  type ChatAttachResult,
  type ChatRequestType,
  type RequestPayload,
  type ChatInfo,
  type ChatItem,
  type LinkEventFrame,
  type Reply,
  type Thread,
} from '../../../contracts/index.ts';
import { readPrincipalView, refusalIn, roleIn, standingIn } from '../../auth/access.ts';
import { principalOf, type Identity } from '../../auth/tokens.ts';
import { record } from '../../db/audit.ts';
import { forgetChat } from '../../db/chats.ts';
import { RequestLedger, isPending, isRequestItem, type RequestItem } from '../../db/requests.ts';
import type { Env } from '../../env.ts';
import {
  ClientSockets,
  eventFrame,
  identityOf,
  presenceFrame,
  relabel,
  replyOk,
  send,
  toHost,
  type ClientRequest,
  type Place,
  type ServedRequest,
  type ServedTable,
} from '../client-sockets.ts';
import { askHost, type LinkRequestInput } from '../host-link.ts';
import { ANSWERED_ONCE, REPLY_TABLES_V1, ReplyJournal } from '../reply-journal.ts';
import { migrateStorage, type StorageMigration } from '../storage-migrations.ts';
import { hostLinkOf, roomKeyOf } from '../stubs.ts';
import { KeptSends } from './kept-sends.ts';
import { RoomPages } from './room-pages.ts';
import { RoomRecords } from './room-records.ts';
import { readAttachment, type AttachmentAnswer } from './room-attachments.ts';
import { Replication } from './replication.ts';
import { ROOM_TABLES_V1, RoomStore } from './room-store.ts';
import { failureText } from '../../db/failures.ts';
import { log } from '../../log.ts';
import { LIMITS } from '../../auth/rate-limit.ts';
import { DropLog } from '../drop-log.ts';
import { Meter } from '../../metrics/meter.ts';
import { noticeOf } from '../../push/notices.ts';
import { pushConfigured, queueNotice } from '../../push/send.ts';

/** What the room adds to each request it serves: the socket it came on (none when the Lobby passed it on). */
interface RoomExtra {
  ws?: WebSocket;
}
type RoomCall<T extends ChatRequestType> = ServedRequest<T> & RoomExtra;

/** The room's own SQLite, by version (storage-migrations.ts): never edit a released version, add one. */
const CHAT_ROOM_STORAGE: readonly StorageMigration[] = [{ version: 1, sql: ROOM_TABLES_V1 + REPLY_TABLES_V1 }];

export class ChatRoom extends ClientSockets {
  private readonly store: RoomStore;
  /** The host's thread as this room keeps it (replication.ts). */
  private readonly replica: Replication;
  private readonly journal: ReplyJournal;
  /** Sockets that attached, rebuilt from their attachments after hibernation. */
  private attached: Set<WebSocket> | null = null;
  private readonly records: RoomRecords;
  private readonly kept: KeptSends;
  private readonly pages: RoomPages;
  private reconciling: Promise<void> | null = null;
  /**
   * The winning answer of each request on its way to the host, by request id: what a losing answer
   * waits for, to be told the truth (settled, or open again after the winner failed).
   */
  private readonly answering = new Map<string, Promise<Reply>>();
  readonly meter = new Meter(this.ctx, this.env, 'chat', () => this.openClients(), this.alarms);
  /** Unreadable host events: counted each, logged within the link's frame budget. */
  private readonly drops = new DropLog(() => LIMITS.linkFrames(this.env));

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrateStorage(ctx.storage, 'ChatRoom', CHAT_ROOM_STORAGE);
    this.store = new RoomStore(ctx.storage.sql);
    // Named once: kept in the room row, so a wake that carries no name (an alarm) still knows its chat.
    const key = roomKeyOf(this.stubName);
    if (key) this.store.name(key.hostId, key.chatId);
    this.journal = new ReplyJournal(ctx.storage.sql);
    this.replica = new Replication({
      store: this.store,
      transaction: (step) => ctx.storage.transactionSync(step),
      ask: (input) => this.ask(input),
      publish: (text) => this.fanOut(text),
      decorate: (info) => this.decorate(info),
      observeRequests: (items) => this.ledger().observe(items),
      itemCommitted: (item, before) => this.itemCommitted(item, before),
      recreated: () => this.forget(false),
      hostFrame: (frame) => this.hostFrame(frame),
      dropped: (error) => {
        this.drops.warn('bad chat.event from host', { chatId: this.store.state.chatId, error });
        this.meter.count(RELAY_COUNTERS.hostFramesDropped);
      },
      // Its own concern of the alarm, sooner than the meter's write: items must not wait for the counters.
      wakeBy: (due) => this.alarms.want('flush', due),
    });
    this.records = new RoomRecords(env.DB, this.store, { key: () => this.key(), fanOut: (text) => this.fanOut(text) });
    this.pages = new RoomPages(this.store);
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
        this.ctx.waitUntil(
          record(this.env.DB, {
            actor: userId,
            action: 'chat.unqueue',
            hostId,
            chatId,
            detail: { requestId, messageId, by: 'relay', reason: 'sender lost access' },
          }),
        );
      },
    });
  }

  // ---- identity of the room ----

  private key(): { hostId: string; chatId: string } {
    const { hostId, chatId } = this.store.state;
    if (!hostId || chatId === null) throw new ProtocolError('internal', 'room has no identity');
    return { hostId, chatId };
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
    return this.replica.loaded();
  }

  private get seq(): number {
    return this.store.state.seq;
  }

  // ---- clients connect ----

  override async fetch(request: Request): Promise<Response> {
    const identity = identityOf(request);
    if (!this.place()) return new Response('a room is reached by its name (stubs.ts)', { status: 400 });
    return this.acceptClient(request, identity);
  }

  protected override onConnect(ws: WebSocket): void {
    // Presence first, so a client knows at once whether what it sends will wait; the first socket
    // asks HostLink for later changes too.
    const first = this.clients().length === 1;
    const online = first ? this.hostLink().watch(this.key().chatId, true) : this.hostLink().isOnline();
    void online.then((up) => send(ws, presenceFrame(this.key().hostId, up))).catch(() => undefined);
  }

  protected override onDisconnect(ws: WebSocket): void {
    this.attachedSockets().delete(ws);
    const open = this.clients().filter((other) => other !== ws && other.readyState === WebSocket.OPEN);
    if (open.length === 0)
      void this.hostLink()
        .watch(this.key().chatId, false)
        .catch(() => undefined);
  }

  /**
   * HostLink tells every chat with people connected that the host came or went. Answers whether
   * anyone is still here: sockets that ended without a close (a restart) never said they left.
   */
  async presence(online: boolean, at: number): Promise<boolean> {
    const { hostId, chatId } = this.key();
    const sockets = this.clients();
    const text = presenceFrame(hostId, online, at);
    // Only to whom may read the chat: a socket may have opened before its host was known to the relay,
    // and one whose person may not read it (now that the host is known) is closed.
    const standings = await Promise.all(
      sockets.map((ws) =>
        this.access.view(this.attachmentOf(ws).identity, hostId).then(
          (view) => ({ standing: standingIn(view, chatId), reads: roleIn(view, chatId) !== null }),
          () => null,
        ),
      ),
    );
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
  async recheck(): Promise<void> {
    const place = this.place();
    if (!place) return;
    if (this.clients().length > 0) await this.recheckSockets(place);
    // After the sockets: a sender who keeps a socket (now a viewer) hears why their message went.
    await this.kept.recheckSenders();
  }

  // ---- requests from clients ----

  protected override async onRequest(ws: WebSocket, request: ClientRequest, identity: Identity): Promise<string> {
    return this.serve(identity, request, ws);
  }

  /** A chat request that arrived on the host's Lobby (or a push notification's action). */
  async serveForLobby(identity: Identity, request: ClientRequest): Promise<string> {
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
    const call = {
      id: request.id,
      type,
      payload,
      userId: principalOf(identity),
      ws,
      ...(request.signed ? { signed: request.signed } : {}),
    } as RoomCall<ChatRequestType>;
    if (REQUEST_RULES[type].settles) await this.reconcileRequests();
    const run = () => (this.handlers[type] as (call: RoomCall<ChatRequestType>) => Promise<string>)(call);
    if (!ANSWERED_ONCE.has(type)) return run();
    return this.journal.once(call.userId, request.id, () =>
      run().catch((error: unknown) => {
        if (error instanceof ProtocolError) return this.refuse(request.id, error.toWire());
        throw error;
      }),
    );
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
      return this.pages.history(id, payload.cursor, this.loaded()?.items ?? null, payload.limit);
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
      const item = (this.loaded() ?? (await this.replica.ready())).get(payload.itemId);
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

  /** `to`: the socket the answer goes to, which first gets the refusals of its person's kept sends it may have missed. */
  private async attach(id: string, p: { historyLimit?: number; since?: number }, to?: { ws: WebSocket; userId: string }): Promise<string> {
    let thread: Thread;
    try {
      thread = await this.replica.ready();
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
    const result: Omit<ChatAttachResult, 'items'> = { info, seq, bookmarks, visuals };
    // Replay: the logged events as they were sent, joined without parsing them again; past what a
    // client's frame holds, a snapshot instead (room-pages.ts cuts it to fit).
    const replay = since !== undefined ? this.pages.replay(id, result, this.store.logAfter(since)) : null;
    return replay ?? this.pages.snapshot(id, result, thread.items, p.historyLimit);
  }

  // ---- events from the host (RPC from HostLink; the replication in replication.ts) ----

  /**
   * Stores the host's frames in order; answers how many of them (from the first) it stored, and why it
   * stopped if it did. HostLink acknowledges only those: the rest come again after the host reconnects.
   */
  async ingest(frames: LinkEventFrame[]): Promise<{ stored: number; error?: string }> {
    return this.replica.ingest(frames);
  }

  /** The host's frames about this chat that are not its thread's events. */
  private async hostFrame(frame: LinkEventFrame): Promise<void> {
    switch (frame.event) {
      case 'chat.visuals':
        await this.records.hostVisuals(frame.payload);
        break;
      case 'visual.page':
        this.records.hostVisualPage(frame.payload);
        break;
      case 'chat.subagentChanged':
        this.onSubagentChanged(frame.payload);
        break;
    }
  }

  private onSubagentChanged(raw: unknown): void {
    const parsed = AGENT_EVENT_SCHEMAS['chat.subagentChanged'].safeParse(raw);
    if (parsed.success) this.fanOut(eventFrame('chat.subagentChanged', parsed.data));
  }

  /** A push when this item starts waiting or ends a turn (push/notices.ts), judged against the version held before. */
  private itemCommitted(item: ChatItem, before: ChatItem | undefined): void {
    if (!pushConfigured(this.env)) return;
    const notice = noticeOf(item, before);
    if (notice) this.ctx.waitUntil(queueNotice(this.env, this.key(), notice, this.loaded()?.info.suggestedTitle));
  }

  protected override alarmConcerns() {
    return { flush: () => this.replica.flush(), meter: () => this.meter.alarm() };
  }

  // ---- visual pages (records in room-records.ts) ----

  /** The page of a visual, for its own sandboxed route: `forbidden` for someone who may not read the chat. */
  async visualPage(visualId: string, identity: Identity): Promise<{ html: string | null } | 'forbidden'> {
    const { hostId, chatId } = this.key();
    try {
      await this.access.check(identity, hostId, ROUTE_VISUAL_PAGE, chatId);
    } catch {
      return 'forbidden';
    }
    return { html: this.records.page(visualId) };
  }

  /** One attachment of this chat with its bytes from the host, for its own route: `forbidden` for someone who may not read the chat. */
  async attachmentFile(attachmentId: string, identity: Identity): Promise<AttachmentAnswer | 'forbidden'> {
    const { hostId, chatId } = this.key();
    try {
      await this.access.check(identity, hostId, LINK_ATTACHMENT_READ, chatId);
    } catch {
      return 'forbidden';
    }
    try {
      const thread = await this.replica.ready();
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
  async hostReturned(): Promise<void> {
    await this.kept.deliver();
  }

  private decorate(info: ChatInfo): ChatInfo {
    return this.kept.decorate(info);
  }

  private async queueChanged(): Promise<void> {
    const thread = this.loaded();
    if (thread) await this.replica.commit({ type: 'info', info: thread.info });
  }

  /** After a clear the relay's own records of the chat go too; after a kill, the whole room. */
  private async forget(everything: boolean): Promise<void> {
    await this.records.forget();
    if (!everything) return;
    const { hostId, chatId } = this.key();
    await forgetChat(this.env.DB, hostId, chatId);
    this.replica.forgetThread();
  }

  private ledger() {
    return new RequestLedger(this.env.DB, this.key());
  }
}

/** How many times a losing answer goes next after a winner that failed, before it is told to answer again. */
const LOSER_ROUNDS = 3;
