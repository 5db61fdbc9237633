// Lobby: one per host, the host-level socket every client keeps open.
//
// It serves the requests about the whole host (the registry's `host` scope: `chat.list`, `chat.create`,
// `provider.list`, `accounts.*`, `usage.*`, `chat.setPreferences`), checked against the role on the
// whole host, by passing them to the host; answers `chat.list` from the relay's chat index while the
// host is offline; and sends every client the host's `chat.status`, `accounts.*` and `usage.*` events
// and the host's presence. A request about one chat that arrives here is served by that chat's
// ChatRoom, under the chat's own rule, except attaching, which needs the chat's own socket.
//
// Terminal sessions push like chats (push/notices.ts): the Lobby keeps each session's waiting
// approvals as the host last listed them, in its own storage, and diffs every `session.approvals`
// against it, so a new approval pushes once and a settled one replaces its notification once, across
// restarts of this object too. A notification's answer (`/api/push/act`) comes back in through
// `serveForRoute`, checked and audited as the same request on a socket.
//
// It keeps nothing else of its own but the reply journal; the chat index is in D1.
import {
  AGENT_EVENT_SCHEMAS,
  AGENT_REQUEST_SCHEMAS,
  ProtocolError,
  RELAY_COUNTERS,
  REQUEST_RULES,
  isHostRequest,
  toWireError,
  withRequestLimit,
  type ChatInfo,
  type EventPayload,
  type HostRequestType,
  type LinkEventFrame,
  type Reply,
  type SessionApprovalsEvent,
} from '../../contracts/index.ts';
import { reachesHost, roleIn, standingIn, type AccessView } from '../auth/access.ts';
import { roleAllows, roleToHear } from '../auth/roles.ts';
import { principalOf, type Identity } from '../auth/tokens.ts';
import { indexChats, indexedChatInfos } from '../db/chats.ts';
import { failureText } from '../db/failures.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import { LIMITS } from '../auth/rate-limit.ts';
import { DropLog } from './drop-log.ts';
import { Meter } from '../metrics/meter.ts';
import { sessionNoticesOf, type KeptApproval, type Notice } from '../push/notices.ts';
import { SESSION_PUSH_TITLE, pushConfigured, queueNotice } from '../push/send.ts';
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
} from './client-sockets.ts';
import { askHost, type LinkRequestInput } from './host-link.ts';
import { ANSWERED_ONCE, REPLY_TABLES_V1, ReplyJournal } from './reply-journal.ts';
import { migrateStorage, type StorageMigration } from './storage-migrations.ts';
import { hostLinkOf, roomOf } from './stubs.ts';

/** What the Lobby adds to each request it serves: who asks, on which host. */
interface LobbyExtra {
  identity: Identity;
  hostId: string;
}
type LobbyCall<T extends HostRequestType> = ServedRequest<T> & LobbyExtra;

const HOST_WIDE_EVENTS = [
  'chat.status',
  'accounts.changed',
  'usage.changed',
  'usage.limitsChanged',
  'session.status',
  'session.approvals',
  'session.items',
] as const;

/** The event that carries terminal sessions' approvals: not sent to a socket that asked not to get them. */
const APPROVALS_EVENT = 'session.approvals';

/** A terminal approval gone from the host's lists this long past its expiry is forgotten (the host was restarted meanwhile). */
const KEPT_APPROVAL_MS = 24 * 60 * 60 * 1000;

/** One pushed event, serialized once; a chat's status names its chat, for whom may see it. */
interface Push {
  event: string;
  text: string;
  chatId?: string;
}

/** The lobby's own SQLite, by version (storage-migrations.ts): never edit a released version, add one. */
const LOBBY_STORAGE: readonly StorageMigration[] = [
  {
    version: 1,
    // session_approvals: each terminal session's waiting approvals as the host last listed them, what its next list is diffed against.
    sql: `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS session_approvals (
        session_id TEXT NOT NULL, request_id TEXT NOT NULL, tool_name TEXT NOT NULL, expires_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, request_id));
      ${REPLY_TABLES_V1}`,
  },
];

export class Lobby extends ClientSockets {
  private readonly journal: ReplyJournal;
  readonly meter = new Meter(this.ctx, this.env, 'lobby', () => this.openClients(), this.alarms);
  /** Host frames this lobby drops: counted each, logged within the link's frame budget. */
  private readonly drops = new DropLog(() => LIMITS.linkFrames(this.env));
  /** The host this lobby serves, once stored: read from storage once, not per frame. */
  private named: Place | null = null;
  /** session_approvals as stored, by session, read once per session: what each new list is diffed against. */
  private readonly keptApprovals = new Map<string, KeptApproval[]>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrateStorage(ctx.storage, 'Lobby', LOBBY_STORAGE);
    this.journal = new ReplyJournal(ctx.storage.sql);
    // Named once: kept in meta, so a wake that carries no name (an alarm) still knows its host.
    if (!this.place() && this.stubName) this.name(this.stubName);
  }

  private hostId(): string {
    const place = this.place();
    if (!place) throw new ProtocolError('internal', 'lobby has no host');
    return place.hostId;
  }

  protected override place(): Place | null {
    if (this.named) return this.named;
    const [row] = this.ctx.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'hostId'").toArray();
    return (this.named = row ? { hostId: row.value } : null);
  }

  private name(hostId: string): void {
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('hostId', ?)", hostId);
    this.place();
  }

  private ask(input: LinkRequestInput): Promise<Reply> {
    return askHost(this.env, this.hostId(), input);
  }

  private hostLink() {
    return hostLinkOf(this.env, this.hostId());
  }

  override async fetch(request: Request): Promise<Response> {
    const identity = identityOf(request);
    if (!this.place()) return new Response('a lobby is reached by its name (stubs.ts)', { status: 400 });
    return this.acceptClient(request, identity);
  }

  protected override onConnect(ws: WebSocket): void {
    void this.hostLink()
      .isOnline()
      .then((online) => {
        send(ws, presenceFrame(this.hostId(), online));
      })
      .catch(() => undefined);
  }

  protected override async onRequest(ws: WebSocket, request: ClientRequest, identity: Identity): Promise<string> {
    if (request.type !== 'session.approvalPreference') return this.serveRequest(request, identity);
    this.sockets.set(request.id, ws);
    try {
      return await this.serveRequest(request, identity);
    } finally {
      this.sockets.delete(request.id);
    }
  }

  /**
   * A host request one of the relay's own routes makes for a person (a notification's answer), served
   * as the same request on this host's socket: role, audit and reply journal alike. Never throws: a
   * failure is the reply (an error crossing RPC loses its code).
   */
  async serveForRoute(identity: Identity, request: ClientRequest): Promise<string> {
    const hostId = this.hostId();
    try {
      return await this.serveRequest(request, identity);
    } catch (error) {
      if (!(error instanceof ProtocolError)) log.error('request failed', { hostId, type: request.type, error: failureText(error) });
      return this.refuse(request.id, toWireError(error));
    }
  }

  private async serveRequest(request: ClientRequest, identity: Identity): Promise<string> {
    const hostId = this.hostId();
    const { type } = request;
    // A chat's request is served by its room, checked there against the role on that chat.
    if (!isHostRequest(type)) return this.viaRoom(hostId, identity, request);
    await this.access.check(identity, hostId, type);
    const userId = principalOf(identity);
    this.audit(identity, request, { hostId, chatId: (request.payload as { chatId?: string }).chatId });
    const call = {
      id: request.id,
      type,
      payload: request.payload,
      userId,
      identity,
      hostId,
      ...(request.signed ? { signed: request.signed } : {}),
    } as LobbyCall<HostRequestType>;
    const run = () => (this.handlers[type] as (call: LobbyCall<HostRequestType>) => Promise<string>)(call);
    if (!ANSWERED_ONCE.has(type)) return run();
    return this.journal.once(userId, request.id, run);
  }

  /** How the Lobby serves each request about the whole host: all go to the host; a list and a new chat are also read here. */
  private readonly handlers: ServedTable<HostRequestType, LobbyExtra> = {
    'chat.list': (call) => this.list(call),
    'chat.create': (call) => this.create(call),
    'chat.setPreferences': (call) => this.forward(call),
    'provider.list': (call) => this.forward(call),
    'accounts.list': (call) => this.forward(call),
    'accounts.save': (call) => this.forward(call),
    'accounts.refresh': (call) => this.forward(call),
    'accounts.create': (call) => this.forward(call),
    'accounts.watchLogin': (call) => this.forward(call),
    'usage.summary': (call) => this.forward(call),
    'usage.subscribe': (call) => this.forward(call),
    'usage.unsubscribe': (call) => this.forward(call),
    'usage.limits': (call) => this.forward(call),
    'usage.refreshLimits': (call) => this.forward(call),
    'session.list': (call) => this.forward(call),
    'session.history': (call) => this.forward(call),
    'session.approve': (call) => this.forward(call),
    'session.approvalPreference': (call) => this.approvalPreference(call),
    'session.resume': (call) => this.create(call),
    'hooks.status': (call) => this.forward(call),
    'hooks.set': (call) => this.forward(call),
    'folders.list': (call) => this.forward(call),
  };

  /** Kept on the socket itself (its attachment survives hibernation); a socket that never said gets them. */
  private async approvalPreference(call: LobbyCall<'session.approvalPreference'>): Promise<string> {
    const ws = this.sockets.get(call.id);
    if (ws) ws.serializeAttachment({ ...(ws.deserializeAttachment() as object), approvals: call.payload.enabled });
    return replyOk(call.id, {});
  }

  /** The socket each request being served arrived on (only for as long as it is served). */
  private readonly sockets = new Map<string, WebSocket>();

  private askFor(call: ServedRequest<HostRequestType>): Promise<Reply> {
    return this.ask(toHost(call));
  }

  private async forward(call: ServedRequest<HostRequestType>): Promise<string> {
    return relabel(await this.askFor(call), call.id);
  }

  /** The host's list (the relay's index while it is away), cut to the chats this person may see. */
  private async list(call: LobbyCall<'chat.list'>): Promise<string> {
    const { id, identity, hostId } = call;
    const reply = await this.askFor(call);
    if (!reply.ok && reply.error.code === 'host-offline') {
      return replyOk(id, { chats: await this.visible(identity, hostId, await indexedChatInfos(this.env.DB, hostId)) });
    }
    if (!reply.ok) return relabel(reply, id);
    const { chats } = reply.result as { chats: { chatId: string }[] };
    return replyOk(id, { ...(reply.result as object), chats: await this.visible(identity, hostId, chats) });
  }

  /** A new chat (`chat.create`, or a terminal session continued as one): indexed at once for lists. */
  private async create(call: LobbyCall<'chat.create' | 'session.resume'>): Promise<string> {
    const reply = await this.askFor(call);
    if (reply.ok) {
      const info = AGENT_REQUEST_SCHEMAS[call.type].result.safeParse(reply.result);
      if (info.success) await this.index(call.hostId, [info.data]);
    }
    return relabel(reply, call.id);
  }

  /** The chats of a list this person may see: all of them with a role on the host, else only those granted. */
  private async visible<T extends { chatId: string }>(identity: Identity, hostId: string, chats: T[]): Promise<T[]> {
    const view = await this.access.view(identity, hostId);
    if (view.hostRole) return chats;
    return chats.filter((chat) => roleIn(view, chat.chatId) !== null);
  }

  private async viaRoom(hostId: string, identity: Identity, request: ClientRequest): Promise<string> {
    if (REQUEST_RULES[request.type].socketBound) {
      return this.refuse(request.id, { code: 'bad-request', message: `${request.type} is served on the chat's own socket` });
    }
    const chatId = (request.payload as { chatId?: string }).chatId;
    if (typeof chatId !== 'string') return this.refuse(request.id, { code: 'bad-request', message: 'Invalid payload: chatId' });
    return roomOf(this.env, hostId, chatId).serveForLobby(identity, request);
  }

  // ---- from HostLink ----

  async ingest(frames: LinkEventFrame[]): Promise<void> {
    const hostId = this.hostId();
    const statuses: ChatInfo[] = [];
    const pushes: Push[] = [];
    const notify = pushConfigured(this.env);
    for (const frame of frames) {
      // Only the protocol's host-wide events, as its schemas read them: a host's other frames (a
      // relay-owned `chat.bookmarks`, a name no client knows, a payload that does not parse) stop here.
      const event = HOST_WIDE_EVENTS.find((name) => name === frame.event);
      const parsed = event && AGENT_EVENT_SCHEMAS[event].safeParse(frame.payload);
      if (!event || !parsed?.success) {
        this.drops.warn('host event dropped', { hostId, event: frame.event });
        this.meter.count(RELAY_COUNTERS.hostFramesDropped);
        continue;
      }
      let payload = parsed.data;
      if (event === 'chat.status') {
        const status = payload as EventPayload<'chat.status'>;
        payload = { chatId: status.chatId, info: withRequestLimit(status.info) };
        statuses.push(payload.info);
      }
      if (event === APPROVALS_EVENT && notify) this.notifyApprovals(hostId, payload as SessionApprovalsEvent);
      pushes.push({ event, text: eventFrame(event, payload), chatId: event === 'chat.status' ? (payload as { chatId: string }).chatId : undefined });
    }
    if (pushes.length > 0) await this.push(hostId, pushes);
    if (statuses.length > 0) await this.index(hostId, statuses);
  }

  /**
   * Sends each event to the sockets whose person may read it now: a chat's status to whoever may see
   * that chat, presence to anyone with a role here, the rest by the host-wide role (an account
   * snapshot only to owners). A socket whose person lost all access here is closed instead.
   */
  private async push(hostId: string, pushes: Push[]): Promise<void> {
    const sockets = this.clients();
    const views = await Promise.all(sockets.map((ws) => this.access.view(this.attachmentOf(ws).identity, hostId).catch(() => null)));
    const open: [WebSocket, AccessView][] = [];
    sockets.forEach((ws, i) => {
      const view = views[i];
      if (!view) return; // unreadable now: this push is skipped for it, the next read decides
      const standing = standingIn(view);
      if (standing === 'keep') open.push([ws, view]);
      else this.expel(ws, standing);
    });
    let sent = 0;
    for (const { event, text, chatId } of pushes) {
      const needed = roleToHear(event);
      for (const [ws, view] of open) {
        if (event === APPROVALS_EVENT && (ws.deserializeAttachment() as { approvals?: boolean }).approvals === false) continue;
        const role = chatId !== undefined ? roleIn(view, chatId) : event === 'host.presence' && reachesHost(view) ? 'viewer' : roleIn(view);
        if (!role || !roleAllows(role, needed)) continue;
        send(ws, text);
        sent += 1;
      }
    }
    this.meter.count(RELAY_COUNTERS.eventsDelivered, sent);
  }

  /**
   * Diffs a session's approvals list against the one kept, keeps the new one, and sends the pushes it
   * makes (a new approval, a settled one) off the event's path. Kept before the pushes leave: a restart
   * of this object between the two loses a push, never sends one twice.
   */
  private notifyApprovals(hostId: string, { sessionId, approvals }: SessionApprovalsEvent): void {
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    let kept = this.keptApprovals.get(sessionId);
    if (!kept) {
      kept = sql
        .exec<{ request_id: string; tool_name: string; expires_at: number }>(
          'SELECT request_id, tool_name, expires_at FROM session_approvals WHERE session_id = ?',
          sessionId,
        )
        .toArray()
        .map((row): KeptApproval => ({ requestId: row.request_id, toolName: row.tool_name, expiresAt: row.expires_at }));
      this.keptApprovals.set(sessionId, kept);
    }
    const notices: Notice[] = sessionNoticesOf(sessionId, kept, approvals, now);
    if (notices.length === 0) return;
    const floor = now - KEPT_APPROVAL_MS;
    this.ctx.storage.transactionSync(() => {
      sql.exec('DELETE FROM session_approvals WHERE session_id = ? OR expires_at < ?', sessionId, floor);
      for (const approval of approvals) {
        sql.exec(
          'INSERT OR REPLACE INTO session_approvals (session_id, request_id, tool_name, expires_at) VALUES (?, ?, ?, ?)',
          sessionId,
          approval.requestId,
          approval.toolName,
          approval.expiresAt,
        );
      }
    });
    // Memory follows what was stored (after the step, so a failed one leaves both as they were).
    for (const [id, list] of this.keptApprovals) {
      const left = list.filter((one) => one.expiresAt >= floor);
      if (left.length === 0) this.keptApprovals.delete(id);
      else if (left.length < list.length) this.keptApprovals.set(id, left);
    }
    this.keptApprovals.set(
      sessionId,
      approvals.map((a): KeptApproval => ({ requestId: a.requestId, toolName: a.toolName, expiresAt: a.expiresAt })),
    );
    for (const notice of notices) this.ctx.waitUntil(queueNotice(this.env, { hostId, chatId: '', sessionId }, notice, SESSION_PUSH_TITLE));
  }

  /** recheckHosts: closes the sockets of people who lost all access to this host. */
  async recheck(): Promise<void> {
    await this.recheckSockets({ hostId: this.hostId() });
  }

  async presence(online: boolean, at: number): Promise<void> {
    const hostId = this.hostId();
    await this.push(hostId, [{ event: 'host.presence', text: presenceFrame(hostId, online, at) }]);
  }

  // ---- the chat index ----

  /**
   * Records the latest info of each chat for lists while the host is away. Best effort: the next
   * status corrects a miss, and a failure here must not hold back the acknowledgement of the pushes.
   */
  private async index(hostId: string, infos: ChatInfo[]): Promise<void> {
    const now = Date.now();
    const latest = new Map(infos.map((info) => [info.chatId, info]));
    try {
      await indexChats(this.env.DB, hostId, [...latest.values()], now);
    } catch (error) {
      log.error('chat index not written', { hostId, error: failureText(error) });
    }
  }
}
