// HostLink: one per host. It owns the host's single outbound socket and nothing else.
//
// - Requests from the host's ChatRooms and Lobby go out over the socket; the host's Reply comes back
//   here and settles the waiting call, or `host-timeout` does. With no socket the answer is
//   `host-offline` at once. The waiting is LinkReplies (link-replies.ts).
// - Events from the host are routed to the chat they name (or to the Lobby for host-wide events) in
//   the order they came, batched per target, and acknowledged to the host only once that target has
//   stored them. The host keeps every unacknowledged event in its outbox and sends it again after a
//   reconnect; the ChatRoom drops what it already has by `seq`. The routing is LinkRoutes
//   (link-routes.ts); this object hands it the call to the target's object and the ack sending.
// - Presence: a socket is the host's once the host said `hello` on it (a connection that reset while
//   it was being accepted stays open here with nobody behind it, and must not count). The host pings
//   every two seconds and the socket answers `pong` without waking this object; an alarm every two
//   seconds closes a socket that went silent (or never spoke), so clients see a host go offline
//   within five seconds of its socket closing or falling silent.
//
// It never interprets a chat: it keeps no thread, and what survives a restart is only its host id,
// the set of chats waiting for the host to return, and the socket itself (hibernation keeps it).
// The hosts table (revoked, version, last seen) is read and written through db/hosts.ts.
import {
  LINK_HEARTBEAT,
  LINK_MAX_FRAME_BYTES,
  LinkHelloSchema,
  overFrameLimit,
  RELAY_COUNTERS,
  TRUST_STATEMENTS_PER_FRAME,
  errorCounter,
  type LinkEventFrame,
  type LinkTrust,
  type Reply,
  type SignedTrustStatement,
} from '../../contracts/index.ts';
import { LIMITS } from '../auth/rate-limit.ts';
import { DropLog } from './drop-log.ts';
import { failureText } from '../db/failures.ts';
import { hostRevokedAt, markHostSeen } from '../db/hosts.ts';
import { trustStatementsFor } from '../db/trust.ts';
import type { Env } from '../env.ts';
import { currentRid, log } from '../log.ts';
import { Meter } from '../metrics/meter.ts';
import { identityOf } from './client-sockets.ts';
import { LinkReplies } from './link-replies.ts';
import { LinkRoutes, type RouteTarget } from './link-routes.ts';
import { ScopedObject, type SocketScope } from './scoped-calls.ts';
import { hostLinkOf, lobbyOf, roomOf } from './stubs.ts';
import { migrateStorage, type StorageMigration } from './storage-migrations.ts';

const CHECK_EVERY_MS = 2_000;

interface HostSocketAttachment extends SocketScope {
  hostId: string;
  /** When the host said hello on this socket; until then nobody is known to be there. */
  helloAt?: number;
}

export interface LinkRequestInput {
  type: string;
  payload: unknown;
  /** A stable id makes a retry land on the host's own journal instead of running twice. */
  id?: string;
  by?: string;
  /** The client's device signature, carried beside the frame as it came (the host checks it). */
  signature?: unknown;
}

/** The link's own SQLite, by version (storage-migrations.ts): never edit a released version, add one. */
const HOST_LINK_STORAGE: readonly StorageMigration[] = [
  {
    version: 1,
    sql: `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS waiting (chat_id TEXT PRIMARY KEY);
      CREATE TABLE IF NOT EXISTS watching (chat_id TEXT PRIMARY KEY);`,
  },
];

export class HostLink extends ScopedObject {
  /** The requests out to the host, each waiting on its Reply (link-replies.ts). */
  private readonly replies = new LinkReplies((error) => this.meter.count(errorCounter(error.code)));
  /** The host's events on their way to the objects that store them, and the acks (link-routes.ts). */
  private readonly routes = new LinkRoutes({
    ingest: (hostId, target, frames) => this.ingest(hostId, target, frames),
    // On the host's socket of the moment: a host that reconnected while its frames were stored must hear of them.
    ack: (n) => {
      try {
        this.newestOpen()?.send(JSON.stringify({ link: 'ack', n }));
      } catch {
        /* closed: the host resends, the rooms dedupe */
      }
    },
    drop: (why, size) => this.complain(why, size),
    count: (counter) => this.meter.count(counter),
  });
  private lastHeard = 0;
  /** The link's frame budget for frames the relay drops (complain); in memory, like a client socket's. */
  private readonly drops = new DropLog(() => LIMITS.linkFrames(this.env));
  /** Drops since the last one logged, told with the next that is. */
  /** Chats that asked to watch presence since the last announcement began; see announce. */
  private readonly rewatched = new Set<string>();
  /** Counts events and errors; its socket count is 1 while the host is here (said hello, not silent). */
  readonly meter = new Meter(this.ctx, this.env, 'host', () => (this.hostSocket() ? 1 : 0), this.alarms);
  /**
   * How long a request waits for the host's reply before `host-timeout` (HOST_TIMEOUT_MS). Not
   * settable from outside: the relay's tests lengthen it on the one link that moves 10 MiB frames,
   * so the short timeout the other tests wait out never races a busy machine's big transfer.
   */
  replyTimeoutMs = Number(this.env.HOST_TIMEOUT_MS ?? 30_000);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(LINK_HEARTBEAT.ping, LINK_HEARTBEAT.pong));
    migrateStorage(ctx.storage, 'HostLink', HOST_LINK_STORAGE);
    // Named once (stubs.ts): kept in meta, so a wake that carries no name (an alarm) still knows its host.
    if (this.stubName && this.getMeta('hostId') === null) this.setMeta('hostId', this.stubName);
  }

  // ---- the host connects ----------------------------------------------------------------------

  override fetch(request: Request): Promise<Response> {
    return this.inRequestScope(request, () => this.open(request));
  }

  private async open(request: Request): Promise<Response> {
    const identity = identityOf(request);
    if (identity.kind !== 'host') return new Response('host token required', { status: 403 });
    // Asked again here, not only at the door: a revocation that lands between the two still wins.
    const revokedAt = await hostRevokedAt(this.env.DB, identity.hostId);
    if (revokedAt === undefined) return new Response('unknown host', { status: 403 });
    if (revokedAt !== null) return new Response('host revoked', { status: 403 });
    for (const old of this.ctx.getWebSockets('host')) this.closeLink(old, 4000, 'replaced by a newer connection');
    // A host answers on the socket a request came by: what the old one carried will not be answered.
    this.replies.failAll('The host reconnected before it answered');
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1], ['host']);
    pair[1].serializeAttachment({ hostId: identity.hostId, connectedAt: Date.now(), rid: currentRid() } satisfies HostSocketAttachment);
    log.info('host link open', { hostId: identity.hostId });
    this.lastHeard = Date.now();
    this.setMeta('hostId', identity.hostId);
    // Online is announced at the host's hello; a socket that never says it is closed by the alarm.
    await this.alarms.want('presence', Date.now() + CHECK_EVERY_MS);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  // ---- frames from the host -------------------------------------------------------------------

  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    return this.inSocketScope(ws, () => this.onMessage(ws, message));
  }

  private async onMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.lastHeard = Date.now();
    // `size` weighs the frame in its ingest batch (a length will do); the limit counts bytes.
    const size = typeof message === 'string' ? message.length : message.byteLength;
    if (overFrameLimit(message, LINK_MAX_FRAME_BYTES)) return this.complain('frame-too-large', size);
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof message === 'string' ? message : new TextDecoder().decode(message));
    } catch {
      return this.complain('not JSON', size);
    }
    // A host joins what one tick produced into an array; its frames are taken in order.
    const frames = Array.isArray(parsed) ? parsed : [parsed];
    for (const frame of frames) await this.onFrame(ws, frame, size / Math.max(1, frames.length));
  }

  private async onFrame(ws: WebSocket, frame: unknown, size: number): Promise<void> {
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return this.complain('not an object', size);
    const f = frame as Record<string, unknown>;
    if ('link' in f) return this.onControl(ws, f);
    if ('ok' in f) return this.replies.settle(f as unknown as Reply);
    if (f.type === 'event' && typeof f.event === 'string') return this.onEvent(ws, f as unknown as LinkEventFrame, size);
    this.complain('unknown frame', size);
  }

  private async onControl(ws: WebSocket, frame: Record<string, unknown>): Promise<void> {
    const hello = LinkHelloSchema.safeParse(frame);
    if (!hello.success) return this.complain('bad control frame', 0);
    // A hello is what makes the host present on its socket, once: another on the same socket changes
    // nothing, and answering each with a presence broadcast, a D1 write and a pass over the waiting
    // chats would let a host (or whoever holds its key) make every client's work out of a flood of them.
    if ((ws.deserializeAttachment() as HostSocketAttachment).helloAt !== undefined) return this.complain('hello again', 0);
    // Marked before any await: the frames the host sends next on this socket may be handled meanwhile.
    ws.serializeAttachment({ ...(ws.deserializeAttachment() as HostSocketAttachment), helloAt: Date.now() } satisfies HostSocketAttachment);
    // Kept past this socket: a room asks it while the host may be between connections.
    this.setMeta('unsigned', JSON.stringify(hello.data.unsigned ?? 'all'));
    if (this.newestOpen() !== ws) return; // replaced while this frame waited
    // What the host must know before it is asked anything: every signed statement about it. Sent
    // before presence is announced and before kept sends go out, so a request a grant allows does not
    // reach the host ahead of the grant. A failure here must not keep the host offline: it is logged
    // and the host goes on with what it kept from before.
    await this.sendAllTrust(ws);
    await this.announce(true);
    const hostId = this.getMeta('hostId');
    if (hostId) await markHostSeen(this.env.DB, hostId, Date.now(), hello.data.version);
    await this.wakeWaiting();
  }

  private onEvent(ws: WebSocket, frame: LinkEventFrame, size: number): void {
    this.routes.event((ws.deserializeAttachment() as HostSocketAttachment).hostId, frame, size);
  }

  /** Hands a batch of the host's events to the object that stores them (LinkRoutes decides which and when). */
  private async ingest(hostId: string, target: RouteTarget, frames: LinkEventFrame[]): Promise<{ stored: number; error?: string }> {
    if (target === 'lobby') {
      await lobbyOf(this.env, hostId).ingest(frames);
      return { stored: frames.length };
    }
    const chatId = target.slice('chat:'.length);
    return roomOf(this.env, hostId, chatId).ingest(frames);
  }

  /**
   * A frame the relay drops: always counted, logged within the link's frame budget (RATE_LINK_FRAMES):
   * a host sending garbage in a loop must not turn into a log line and a storage read per frame.
   * Only what the relay drops is limited: a first hello makes presence (refusing one would keep a
   * host whose network flaps offline), and events are the host's job, bounded by its outbox and
   * acknowledged once stored (refusing one would stall the outbox until the next reconnect).
   */
  private complain(why: string, size: number): void {
    this.meter.count(RELAY_COUNTERS.hostFramesDropped);
    this.drops.warn('host frame dropped', { why, size, hostId: this.getMeta('hostId') });
  }

  // ---- requests to the host (RPC from ChatRoom and Lobby) --------------------------------------

  async request(input: LinkRequestInput): Promise<Reply> {
    const ws = this.newestOpen();
    const id = input.id ?? crypto.randomUUID();
    if (!ws) return this.replies.fail(id, { code: 'host-offline', message: 'The host is offline' });
    const existing = this.replies.pending(id);
    if (existing) return existing;
    // What is sent is larger than what a client sent (the relay adds the sender to the id and `by`):
    // past the host's frame limit (in bytes) its socket would refuse it (1009) and drop the link, and a
    // kept send would do it again on every reconnect. Refused here, before it is sent.
    const frame = JSON.stringify({
      id,
      type: input.type,
      payload: input.payload,
      ...(input.by ? { by: input.by } : {}),
      ...(input.signature !== undefined ? { signature: input.signature } : {}),
    });
    if (overFrameLimit(frame, LINK_MAX_FRAME_BYTES)) {
      return this.replies.fail(id, { code: 'frame-too-large', message: `With its sender this request is over the host's ${LINK_MAX_FRAME_BYTES} bytes` });
    }
    const promise = this.replies.wait(id, this.replyTimeoutMs);
    try {
      ws.send(frame);
    } catch {
      this.replies.cancel(id);
      return this.replies.fail(id, { code: 'host-offline', message: 'The host is offline' });
    }
    return promise;
  }

  async isOnline(): Promise<boolean> {
    return this.hostSocket() !== undefined;
  }

  /**
   * Whether the host said (at its last hello) that it carries out `type` unsigned. A host that said
   * nothing is taken to (an older host, which checked no signatures). Only for sparing the host
   * requests of the relay's own that it would refuse: it grants nothing.
   */
  async takesUnsigned(type: string): Promise<boolean> {
    const said = this.getMeta('unsigned');
    if (said === null) return true;
    try {
      const unsigned = JSON.parse(said) as 'all' | string[];
      return unsigned === 'all' || unsigned.includes(type);
    } catch {
      return true;
    }
  }

  /** A chat with sends kept for the host asks to be told when the host is back. */
  async waitForHost(chatId: string): Promise<boolean> {
    this.ctx.storage.sql.exec('INSERT OR IGNORE INTO waiting (chat_id) VALUES (?)', chatId);
    return this.isOnline();
  }

  /** A chat with people connected asks to hear the host's presence (and says when the last one left). */
  async watch(chatId: string, watching: boolean): Promise<boolean> {
    if (watching) {
      this.ctx.storage.sql.exec('INSERT OR IGNORE INTO watching (chat_id) VALUES (?)', chatId);
      this.rewatched.add(chatId);
    } else this.ctx.storage.sql.exec('DELETE FROM watching WHERE chat_id = ?', chatId);
    return this.isOnline();
  }

  // ---- signed trust statements (src/contracts/trust.ts) ------------------------------------------

  /** Every current statement about this host, in frames of at most TRUST_STATEMENTS_PER_FRAME. */
  private async sendAllTrust(ws: WebSocket): Promise<void> {
    const hostId = this.getMeta('hostId');
    if (!hostId) return;
    try {
      this.sendTrustFrames(ws, await trustStatementsFor(this.env.DB, hostId), true);
    } catch (error) {
      log.error('trust statements not sent', { hostId, error: failureText(error) });
    }
  }

  /**
   * A new statement for this host, sent now if its link is up; a host that is away gets it with all
   * the others when it connects. Answers whether it went out.
   */
  async sendTrust(statements: SignedTrustStatement[]): Promise<boolean> {
    const ws = this.newestOpen();
    if (!ws || statements.length === 0) return false;
    return this.sendTrustFrames(ws, statements, false);
  }

  private sendTrustFrames(ws: WebSocket, statements: SignedTrustStatement[], all: boolean): boolean {
    try {
      for (let i = 0; i < statements.length; i += TRUST_STATEMENTS_PER_FRAME) {
        const frame: LinkTrust = { link: 'trust', all, statements: statements.slice(i, i + TRUST_STATEMENTS_PER_FRAME) };
        ws.send(JSON.stringify(frame));
      }
      return true;
    } catch {
      return false; // closed: the host gets them all when it connects again
    }
  }

  // ---- access changes (recheckHosts in objects/revocations.ts) --------------------------------------

  /**
   * Closes the host's link when its host was revoked (it cannot come back: the door refuses it), and
   * answers the chats with people connected, whose rooms are checked next.
   */
  async recheck(): Promise<string[]> {
    const hostId = this.getMeta('hostId');
    if (hostId) {
      if ((await hostRevokedAt(this.env.DB, hostId)) != null) {
        for (const ws of this.ctx.getWebSockets('host')) this.closeLink(ws, 4403, 'host revoked');
        this.replies.failAll('The host was revoked');
        await this.announce(false);
      }
    }
    return this.ctx.storage.sql
      .exec<{ chat_id: string }>('SELECT chat_id FROM watching')
      .toArray()
      .map((row) => row.chat_id);
  }

  // ---- revocation -----------------------------------------------------------------------------

  /**
   * The host was revoked (its row says so already, so the door refuses its key from now on): its
   * link closes at once with 4401, and whatever it was asked fails `host-offline`.
   */
  async revoke(): Promise<void> {
    for (const ws of this.ctx.getWebSockets('host')) this.closeLink(ws, 4401, 'host revoked');
    this.replies.failAll('The host was revoked');
    await this.announce(false);
  }

  // ---- presence -------------------------------------------------------------------------------

  protected override alarmConcerns() {
    return { presence: () => this.check(), meter: () => this.meter.alarm() };
  }

  /** The silence check, every two seconds while a host socket is open. */
  private async check(): Promise<void> {
    const ws = this.newestOpen();
    if (!ws) return;
    if (this.silent(ws)) {
      this.closeLink(ws, 4001, 'heartbeat missed');
      await this.lost();
      return;
    }
    await this.alarms.want('presence', Date.now() + CHECK_EVERY_MS);
    // A room whose delivery gave up while the host stayed (it timed out, or a reconnect failed the
    // send) asked to wait again; with the host here, no hello would come to tell it. Not awaited: a
    // slow delivery must not hold back the next silence check.
    if (this.hostSocket() === ws) void this.wakeWaiting();
  }

  override webSocketClose(ws: WebSocket, code: number): Promise<void> {
    return this.inSocketScope(ws, () => {
      this.logClosed(ws, 'host link close', code);
      try {
        ws.close(code === 1005 || code === 1006 ? 1000 : code, 'closing');
      } catch {
        /* gone */
      }
      return this.lost();
    });
  }

  override webSocketError(ws: WebSocket): Promise<void> {
    return this.inSocketScope(ws, () => {
      this.logClosed(ws, 'host link error', null);
      return this.lost();
    });
  }

  private logClosed(ws: WebSocket, msg: string, code: number | null): void {
    const { hostId, connectedAt } = ws.deserializeAttachment() as HostSocketAttachment;
    log.info(msg, { hostId, code, seconds: Math.round((Date.now() - connectedAt) / 1000) });
  }

  /** The relay ends a host's socket (replaced, silent, revoked). */
  private closeLink(ws: WebSocket, code: number, reason: string): void {
    if (ws.readyState === WebSocket.OPEN) log.info('host link closed by relay', { hostId: this.getMeta('hostId'), code });
    try {
      ws.close(code, reason);
    } catch {
      /* gone */
    }
  }

  private async lost(): Promise<void> {
    if (this.ctx.getWebSockets('host').some((ws) => ws.readyState === WebSocket.OPEN)) return; // a newer socket took over
    this.replies.failAll('The host went offline before it answered');
    await this.announce(false);
  }

  private async announce(online: boolean): Promise<void> {
    this.meter.socketsChanged();
    const hostId = this.getMeta('hostId');
    if (!hostId) return;
    const at = Date.now();
    await markHostSeen(this.env.DB, hostId, at);
    const rooms = this.ctx.storage.sql.exec<{ chat_id: string }>('SELECT chat_id FROM watching').toArray();
    this.rewatched.clear();
    await Promise.all(
      [
        lobbyOf(this.env, hostId).presence(online, at),
        ...rooms.map(async ({ chat_id }) => {
          const anyone = await roomOf(this.env, hostId, chat_id).presence(online, at);
          // Unless someone connected there while it answered: their room asked to watch again meanwhile.
          if (!anyone && !this.rewatched.has(chat_id)) this.ctx.storage.sql.exec('DELETE FROM watching WHERE chat_id = ?', chat_id);
        }),
      ].map((p) => p.catch((error: unknown) => log.error('presence not delivered', { hostId, error: String(error) }))),
    );
  }

  private async wakeWaiting(): Promise<void> {
    const hostId = this.getMeta('hostId');
    if (!hostId) return;
    const chats = this.ctx.storage.sql.exec<{ chat_id: string }>('SELECT chat_id FROM waiting').toArray();
    this.ctx.storage.sql.exec('DELETE FROM waiting');
    // Each room delivers its own kept sends in order; rooms do not wait on one another.
    await Promise.all(
      chats.map(({ chat_id }) =>
        roomOf(this.env, hostId, chat_id)
          .hostReturned()
          .catch((error: unknown) => {
            // Still waiting: the room is told again on the next hello rather than never.
            this.ctx.storage.sql.exec('INSERT OR IGNORE INTO waiting (chat_id) VALUES (?)', chat_id);
            log.error('deliver kept sends failed', { hostId, chatId: chat_id, error: String(error) });
          }),
      ),
    );
  }

  // ---- plumbing -------------------------------------------------------------------------------

  /**
   * The newest open socket when the host is known to be behind it: it said hello there and is not
   * silent. Not yet hello: the connection may have reset while it was accepted, leaving a socket open
   * here with nobody behind it. Silent: the alarm is about to close it. This is presence, and what
   * decides whether a send is kept; requests and acks still go out on the newest open socket, so a
   * host that just reconnected is reached before its hello is through (a dead one fails them when the
   * alarm closes it).
   */
  private hostSocket(): WebSocket | undefined {
    const ws = this.newestOpen();
    if (!ws || (ws.deserializeAttachment() as HostSocketAttachment).helloAt === undefined || this.silent(ws)) return undefined;
    return ws;
  }

  /**
   * The newest open host socket. A socket replaced by a reconnect whose host vanished without a word
   * (its connection reset) is closed but never hears the close answered, so it stays in the list as
   * CLOSING, possibly first.
   */
  private newestOpen(): WebSocket | undefined {
    let newest: WebSocket | undefined;
    let newestAt = -Infinity;
    for (const ws of this.ctx.getWebSockets('host')) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      const { connectedAt } = ws.deserializeAttachment() as HostSocketAttachment;
      if (connectedAt >= newestAt) [newest, newestAt] = [ws, connectedAt];
    }
    return newest;
  }

  /** Nothing heard on the socket (not even a ping, answered without waking this object) for the silence window. */
  private silent(ws: WebSocket): boolean {
    const { connectedAt } = ws.deserializeAttachment() as HostSocketAttachment;
    const pinged = this.ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? 0;
    return Date.now() - Math.max(pinged, connectedAt, this.lastHeard) > LINK_HEARTBEAT.silenceMs;
  }

  private getMeta(key: string): string | null {
    const [row] = this.ctx.storage.sql.exec<{ value: string }>('SELECT value FROM meta WHERE key = ?', key).toArray();
    return row?.value ?? null;
  }

  private setMeta(key: string, value: string): void {
    this.ctx.storage.sql.exec('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', key, value);
  }
}

/** Sends a request to a host through its HostLink and answers the host's Reply (or the relay's). */
export async function askHost(env: Env, hostId: string, input: LinkRequestInput): Promise<Reply> {
  const link = hostLinkOf(env, hostId);
  try {
    // The RPC type machinery cannot express `unknown` results; the value is the Reply we built.
    return (await link.request(input)) as unknown as Reply;
  } catch (error) {
    // HostLink itself went away mid-request (restarted, evicted): whether the host acted is unknown,
    // as when its socket drops, and the request ids make a retry safe.
    log.warn('host link call failed', { hostId, type: input.type, error: String(error) });
    return { id: input.id ?? 'unknown', ok: false, error: { code: 'host-offline', message: 'The relay lost its link to the host; try again' } };
  }
}

/**
 * Carries new signed statements to the hosts they concern (each host's link sends them if it is up).
 * Never throws: a host that misses one hears it with all the others on its next connection.
 */
export async function deliverTrust(env: Env, hostIds: Iterable<string>, statements: SignedTrustStatement[]): Promise<void> {
  await Promise.all(
    [...new Set(hostIds)].map(async (hostId) => {
      try {
        await hostLinkOf(env, hostId).sendTrust(statements);
      } catch (error) {
        log.warn('trust statement not delivered', { hostId, error: failureText(error) });
      }
    }),
  );
}
