// Lobby: one per host, the host-level socket every client keeps open.
//
// It serves the host-wide requests (`chat.list`, `chat.create`, `provider.list`, `accounts.*`,
// `usage.*`, `skills.list`) by passing them to the host, answers `chat.list` from the relay's chat
// index while the host is offline, and sends every client the host's `chat.status`, `accounts.*` and
// `usage.*` events and the host's presence. A chat request that arrives here is served by that chat's
// ChatRoom, except attaching, which needs the chat's own socket.
//
// It keeps nothing of its own but the reply journal; the chat index is in D1.
import {
  AGENT_EVENT_SCHEMAS, AGENT_REQUEST_SCHEMAS, ProtocolError, withRequestLimit,
  type ChatInfo, type EventPayload, type LinkEventFrame, type Reply,
} from '../../contracts/index.ts';
import { roleAllows, roleToHear } from '../auth/roles.ts';
import { principalOf, type Identity } from '../auth/tokens.ts';
import type { Env } from '../env.ts';
import {
  ClientSockets, eventFrame, identityOf, linkId, presenceFrame, relabel, replyError, replyOk, send, type ClientRequest,
} from './client-sockets.ts';
import { askHost, type LinkRequestInput } from './host-link.ts';
import { ANSWERED_ONCE, ReplyJournal } from './reply-journal.ts';
import { hostLinkOf, roomOf } from './stubs.ts';

const HOST_LEVEL = new Set([
  'chat.list', 'chat.create', 'chat.setPreferences', 'provider.list', 'skills.list',
  'accounts.list', 'accounts.refresh', 'accounts.save', 'accounts.create', 'accounts.watchLogin',
  'usage.summary', 'usage.subscribe', 'usage.unsubscribe', 'usage.limits', 'usage.refreshLimits',
]);
const ROOM_ONLY = new Set(['chat.attach', 'chat.detach', 'chat.history']);
const HOST_WIDE_EVENTS = ['chat.status', 'accounts.changed', 'usage.changed', 'usage.limitsChanged'] as const;

export class Lobby extends ClientSockets {
  private readonly journal: ReplyJournal;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.journal = new ReplyJournal(ctx.storage.sql);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  }

  private hostId(): string {
    const [row] = this.ctx.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'hostId'").toArray();
    if (!row) throw new ProtocolError('internal', 'lobby has no host');
    return row.value;
  }

  private name(hostId: string): void {
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('hostId', ?)", hostId);
  }

  private ask(input: LinkRequestInput): Promise<Reply> {
    return askHost(this.env, this.hostId(), input);
  }

  private hostLink() {
    return hostLinkOf(this.env, this.hostId());
  }

  override async fetch(request: Request): Promise<Response> {
    const identity = identityOf(request);
    const hostId = request.headers.get('X-Tether-Host');
    if (!hostId) return new Response('missing host', { status: 400 });
    this.name(hostId);
    return this.acceptClient(identity);
  }

  protected override onConnect(ws: WebSocket): void {
    void this.hostLink().isOnline().then((online) => {
      send(ws, presenceFrame(this.hostId(), online));
    }).catch(() => undefined);
  }

  protected override async onRequest(_ws: WebSocket, request: ClientRequest, identity: Identity): Promise<string> {
    const hostId = this.hostId();
    await this.access.check(identity, hostId, request.type);
    const userId = principalOf(identity);
    if (!HOST_LEVEL.has(request.type)) return this.viaRoom(hostId, identity, request);
    if (!ANSWERED_ONCE.has(request.type)) return this.answer(hostId, userId, request);
    return this.journal.once(userId, request.id, () => this.answer(hostId, userId, request));
  }

  private async answer(hostId: string, userId: string, request: ClientRequest): Promise<string> {
    const reply = await this.ask({ type: request.type, payload: request.payload, id: linkId(userId, request.id), by: userId });
    if (request.type === 'chat.list' && !reply.ok && reply.error.code === 'host-offline') {
      return replyOk(request.id, { chats: await this.indexedChats(hostId) });
    }
    if (request.type === 'chat.create' && reply.ok) {
      const info = AGENT_REQUEST_SCHEMAS['chat.create'].result.safeParse(reply.result);
      if (info.success) await this.index(hostId, [info.data]);
    }
    return relabel(reply, request.id);
  }

  private async viaRoom(hostId: string, identity: Identity, request: ClientRequest): Promise<string> {
    if (ROOM_ONLY.has(request.type)) {
      return replyError(request.id, { code: 'bad-request', message: `${request.type} is served on the chat's own socket` });
    }
    const chatId = (request.payload as { chatId?: string }).chatId;
    if (typeof chatId !== 'string') return replyError(request.id, { code: 'bad-request', message: 'Invalid payload: chatId' });
    return roomOf(this.env, hostId, chatId).serveForLobby(hostId, chatId, identity, request);
  }

  // ---- from HostLink ----

  async ingest(hostId: string, frames: LinkEventFrame[]): Promise<void> {
    this.name(hostId);
    const statuses: ChatInfo[] = [];
    const pushes: { event: string; text: string }[] = [];
    for (const frame of frames) {
      // Only the protocol's host-wide events, as its schemas read them: a host's other frames (a
      // relay-owned `chat.bookmarks`, a name no client knows, a payload that does not parse) stop here.
      const event = HOST_WIDE_EVENTS.find((name) => name === frame.event);
      const parsed = event && AGENT_EVENT_SCHEMAS[event].safeParse(frame.payload);
      if (!event || !parsed?.success) {
        console.warn(JSON.stringify({ msg: 'host event dropped', hostId, event: frame.event }));
        continue;
      }
      let payload = parsed.data;
      if (event === 'chat.status') {
        const status = payload as EventPayload<'chat.status'>;
        payload = { chatId: status.chatId, info: withRequestLimit(status.info) };
        statuses.push(payload.info);
      }
      pushes.push({ event, text: eventFrame(event, payload) });
    }
    if (pushes.length > 0) await this.push(hostId, pushes);
    if (statuses.length > 0) await this.index(hostId, statuses);
  }

  /** Sends each event to the sockets whose person may read it now (an account snapshot only to owners). */
  private async push(hostId: string, pushes: { event: string; text: string }[]): Promise<void> {
    const sockets = this.clients();
    const roles = await Promise.all(sockets.map((ws) => this.access.roleOf(this.attachmentOf(ws).identity, hostId)));
    for (const { event, text } of pushes) {
      const needed = roleToHear(event);
      sockets.forEach((ws, i) => {
        const role = roles[i];
        if (role && roleAllows(role, needed)) send(ws, text);
      });
    }
  }

  async presence(hostId: string, online: boolean, at: number): Promise<void> {
    this.name(hostId);
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
      await this.env.DB.batch([...latest.values()].map((info) => this.env.DB.prepare(
        `INSERT INTO chats (host_id, chat_id, title, status, provider, info, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (host_id, chat_id) DO UPDATE SET title = excluded.title, status = excluded.status,
           provider = excluded.provider, info = excluded.info, updated_at = excluded.updated_at`,
      ).bind(hostId, info.chatId, info.suggestedTitle ?? null, info.status, info.provider, JSON.stringify(info), now)));
    } catch (error) {
      console.error(JSON.stringify({ msg: 'chat index not written', hostId, error: String(error) }));
    }
  }

  private async indexedChats(hostId: string): Promise<ChatInfo[]> {
    const { results } = await this.env.DB.prepare('SELECT info FROM chats WHERE host_id = ? ORDER BY updated_at DESC').bind(hostId).all<{ info: string }>();
    return results.map((row) => JSON.parse(row.info) as ChatInfo);
  }
}

