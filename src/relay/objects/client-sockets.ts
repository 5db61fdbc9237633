// The socket plumbing the client-facing objects (ChatRoom, Lobby) share: accepting a hibernatable
// socket with the caller's identity in its attachment, reading a frame once, answering bad input
// with the protocol's codes, and broadcasting one serialized frame to many sockets.
import {
  linkRequestId,
  RequestSignatureSchema,
  AGENT_REQUEST_SCHEMAS,
  CLIENT_HEARTBEAT,
  LINK_MAX_FRAME_BYTES,
  ProtocolError,
  overFrameLimit,
  errorCounter,
  isAgentRequestType,
  parseRequest,
  toWireError,
  type AgentRequestType,
  type Reply,
  type RequestPayload,
  type WireError,
} from '../../contracts/index.ts';
import { CLOSE_FOR, HostAccess, standingIn, type Standing } from '../auth/access.ts';
import { FrameBudget } from '../auth/rate-limit.ts';
import { principalOf, type Identity } from '../auth/tokens.ts';
import { AUDITED, record } from '../db/audit.ts';
import type { Env } from '../env.ts';
import { failureText } from '../db/failures.ts';
import { currentRid, log } from '../log.ts';
import type { Meter } from '../metrics/meter.ts';
import { ScopedObject, type SocketScope } from './scoped-calls.ts';

export interface SocketAttachment extends SocketScope {
  identity: Identity;
}

/** The header the Worker uses to hand a verified identity to an object; never taken from a client. */
const IDENTITY_HEADER = 'X-Tether-Identity';

export function withIdentity(request: Request, identity: Identity): Request {
  const headers = new Headers(request.headers);
  headers.set(IDENTITY_HEADER, JSON.stringify(identity));
  return new Request(request.url, { method: request.method, headers });
}

export function identityOf(request: Request): Identity {
  const raw = request.headers.get(IDENTITY_HEADER);
  if (!raw) throw new ProtocolError('unauthorized', 'no identity');
  return JSON.parse(raw) as Identity;
}

export function replyOk(id: string, result: unknown): string {
  return JSON.stringify({ id, ok: true, result });
}

export function replyError(id: string | null, error: WireError): string {
  return JSON.stringify({ id, ok: false, error });
}

/** The host's reply under the client's own request id. */
export function relabel(reply: Reply, id: string): string {
  return reply.ok ? replyOk(id, reply.result) : replyError(id, reply.error);
}

/** The id the relay uses toward the host: stable for a person's retry, distinct between people. */
export function linkId(userId: string, requestId: string): string {
  return linkRequestId(userId, requestId);
}

export function eventFrame(event: string, payload: unknown): string {
  return JSON.stringify({ type: 'event', event, payload });
}

/** The relay's own `host.presence` event (src/contracts/relay.ts). */
export function presenceFrame(hostId: string, online: boolean, at = Date.now()): string {
  return eventFrame('host.presence', { hostId, online, at });
}

/**
 * What a signed request takes to the host untouched: the device's signature (it travels beside the
 * frame, never inside the payload) and the payload exactly as the client sent it. The relay serves
 * from the parsed payload (defaults added, unknown keys dropped) but forwards this one, since the
 * signature is over its canonical digest: the parsed one would no longer be what was signed.
 */
export interface SignedParts {
  payload: unknown;
  signature: unknown;
}

/** A request that passed the envelope, the table and its payload schema. */
export interface ClientRequest<T extends AgentRequestType = AgentRequestType> {
  id: string;
  type: T;
  payload: unknown;
  /** Present when the client signed the request. */
  signed?: SignedParts;
}

/** One request an object serves, by whom, its payload typed by the protocol's table for its type. */
export interface ServedRequest<T extends AgentRequestType> {
  id: string;
  type: T;
  payload: RequestPayload<T>;
  userId: string;
  signed?: SignedParts;
}

/**
 * A served request as it goes to the host: under the person's link id, and, when it was signed, with
 * the client's own payload and its signature beside it.
 */
export function toHost(call: { id: string; type: string; payload: unknown; userId: string; signed?: SignedParts }): {
  type: string;
  payload: unknown;
  id: string;
  by: string;
  signature?: unknown;
} {
  const base = { type: call.type, id: linkId(call.userId, call.id), by: call.userId };
  return call.signed ? { ...base, payload: call.signed.payload, signature: call.signed.signature } : { ...base, payload: call.payload };
}

/**
 * An object's handlers, typed from the request registry the way the host's HandlerTable is: one for
 * each request type the object serves (`T`: its scope's types), so a type added to that scope does
 * not compile until the object says how it serves it. `Extra`: what the object adds to each call.
 */
export type ServedTable<T extends AgentRequestType, Extra = object> = {
  [K in T]: (call: ServedRequest<K> & Extra) => Promise<string>;
};

/**
 * Reads one client frame. Answers the frame's error reply (as text) when it is not a request we can
 * serve, or the parsed request. Never throws.
 */
export function readClientFrame(message: string | ArrayBuffer): ClientRequest | { reject: string; code: string } {
  if (overFrameLimit(message, LINK_MAX_FRAME_BYTES)) {
    return refusal(null, { code: 'frame-too-large', message: `Frames are limited to ${LINK_MAX_FRAME_BYTES} bytes` });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(typeof message === 'string' ? message : new TextDecoder().decode(message));
  } catch {
    return refusal(null, { code: 'bad-request', message: 'Frame is not JSON' });
  }
  const parsed = parseRequest(raw);
  if (!parsed.ok) {
    const id = typeof raw === 'object' && raw !== null && 'id' in raw && typeof raw.id === 'string' && raw.id.length > 0 ? raw.id : null;
    return refusal(id, { code: 'bad-request', message: parsed.message });
  }
  const { id, type, payload } = parsed.value;
  if (!isAgentRequestType(type)) {
    return refusal(id, { code: 'unknown-request', message: `Unknown request type: ${type}` });
  }
  const checked = AGENT_REQUEST_SCHEMAS[type].payload.safeParse(payload ?? {});
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const field = issue?.path.length ? issue.path.join('.') : 'payload';
    return refusal(id, { code: 'bad-request', message: `Invalid payload for ${type}: ${field}: ${issue?.message ?? 'invalid'}` });
  }
  const { signature } = raw as { signature?: unknown };
  if (signature === undefined) return { id, type, payload: checked.data };
  // Checked for its shape only (the host alone can tell whose it is and whether it holds), so a
  // malformed one is refused here with a clear code instead of being carried to the host.
  if (!RequestSignatureSchema.safeParse(signature).success) {
    return refusal(id, { code: 'bad-request', message: 'signature: not a signed request statement' });
  }
  return { id, type, payload: checked.data, signed: { payload: (raw as { payload?: unknown }).payload, signature } };
}

/** A frame's error reply, with its code (counted by the object that answers it). */
function refusal(id: string | null, error: WireError): { reject: string; code: string } {
  return { reject: replyError(id, error), code: error.code };
}

/** Where an object's sockets stand: a host (the Lobby) or one chat of it (a ChatRoom). */
export interface Place {
  hostId: string;
  chatId?: string;
}

export abstract class ClientSockets extends ScopedObject {
  /** Who may do what on the host; asked on every request. */
  protected readonly access = new HostAccess(this.env.DB);
  /** Frames per socket and per person (rate-limit.ts); over it a frame is answered `rate-limited` and not served. */
  private readonly frameBudget = new FrameBudget(this.env);
  /** Sockets whose access is being read again after their cached view went stale. */
  private readonly revalidating = new Set<WebSocket>();
  /** Each socket's identity, read from its attachment once per life of this object rather than per push. */
  private readonly identities = new WeakMap<WebSocket, Identity>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Clients' heartbeats are answered by the runtime: they never wake the object or count as frames.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(CLIENT_HEARTBEAT.ping, CLIENT_HEARTBEAT.pong));
  }

  /** The host (and chat) this object serves, or null before anyone named it. */
  protected abstract place(): Place | null;

  /** This object's counters and socket count (metrics/meter.ts); public for tests to flush. */
  abstract readonly meter: Meter;

  /** An error reply this object answers, counted by its code. */
  protected refuse(id: string | null, error: WireError): string {
    this.meter.count(errorCounter(error.code));
    return replyError(id, error);
  }

  /** The meter is every client object's concern of the alarm; a ChatRoom adds its flush. */
  protected override alarmConcerns(): Record<string, () => unknown> {
    return { meter: () => this.meter.alarm() };
  }

  /** Client sockets open here now; hibernation keeps them, so this holds after a wake too. */
  protected openClients(): number {
    return this.clients().filter((ws) => ws.readyState === WebSocket.OPEN).length;
  }

  /**
   * Accepts a client socket for this object, remembering who it is across hibernation, and the id of
   * the request that opened it (its frames' log lines derive theirs from it).
   */
  protected acceptClient(request: Request, identity: Identity, tags: string[] = []): Response {
    return this.inRequestScope(request, () => {
      const pair = new WebSocketPair();
      const [client, server] = [pair[0], pair[1]];
      this.ctx.acceptWebSocket(server, ['client', ...tags]);
      server.serializeAttachment({ identity, connectedAt: Date.now(), rid: currentRid() } satisfies SocketAttachment);
      log.info('socket open', this.logPlace());
      this.onConnect(server, identity);
      this.meter.socketsChanged();
      return new Response(null, { status: 101, webSocket: client });
    });
  }

  protected attachmentOf(ws: WebSocket): SocketAttachment {
    return ws.deserializeAttachment() as SocketAttachment;
  }

  protected clients(tag = 'client'): WebSocket[] {
    return this.ctx.getWebSockets(tag);
  }

  /** Sends one already-serialized frame to every socket that passes the filter. */
  protected broadcast(text: string, tag = 'client', filter?: (ws: WebSocket) => boolean): void {
    for (const ws of this.ctx.getWebSockets(tag)) {
      if (filter && !filter(ws)) continue;
      send(ws, text);
    }
  }

  /** Called once a socket is accepted (not again after hibernation). */
  protected onConnect(_ws: WebSocket, _identity: Identity): void {}

  /** Serves one request that passed every check but authorization; answers the reply text. */
  protected abstract onRequest(ws: WebSocket, request: ClientRequest, identity: Identity): Promise<string>;

  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    return this.inSocketScope(ws, () => this.onFrame(ws, message));
  }

  private async onFrame(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const { identity } = this.attachmentOf(ws);
    // Counted before anything else is spent on it; parsed only to answer under its id.
    const overBudget = this.frameBudget.take(ws, principalOf(identity));
    const frame = readClientFrame(message);
    if ('reject' in frame) {
      this.meter.count(errorCounter(frame.code));
      return send(ws, frame.reject);
    }
    if (overBudget) return send(ws, this.refuse(frame.id, overBudget.toWire()));
    // A socket whose person lost all access here (or whose session ended) is answered and closed, not
    // just refused frame by frame: it would otherwise keep hearing pushes.
    const place = this.place();
    let standing: Standing = place ? await this.access.standing(identity, place.hostId, place.chatId).catch(() => 'keep' as const) : 'keep';
    if (standing !== 'keep' && place) {
      // Read again before closing: a cached view may predate a grant given since (grants that add
      // access recheck nothing), and the socket passed a fresh check at the door.
      standing = await this.access.reread(identity, place.hostId).then(
        (view) => standingIn(view, place.chatId),
        () => 'keep' as const,
      );
    }
    if (standing !== 'keep') {
      const code = standing === 'ended' ? 'unauthorized' : 'forbidden';
      send(ws, this.refuse(frame.id, { code, message: standing === 'ended' ? 'Your session has ended; sign in again' : 'Your access was revoked' }));
      return this.expel(ws, standing);
    }
    let reply: string;
    try {
      reply = await this.onRequest(ws, frame, identity);
    } catch (error) {
      if (!(error instanceof ProtocolError)) log.error('request failed', { ...this.logPlace(), type: frame.type, error: failureText(error) });
      reply = this.refuse(frame.id, toWireError(error));
    }
    send(ws, reply);
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    this.inSocketScope(ws, () => {
      this.logClosed(ws, 'socket close', code);
      this.onDisconnect(ws);
      this.meter.socketsChanged();
    });
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, 'closing');
    } catch {
      /* already closed */
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.inSocketScope(ws, () => {
      this.logClosed(ws, 'socket error', null);
      this.onDisconnect(ws);
      this.meter.socketsChanged();
    });
  }

  private logClosed(ws: WebSocket, msg: string, code: number | null): void {
    log.info(msg, { ...this.logPlace(), code, seconds: Math.round((Date.now() - this.attachmentOf(ws).connectedAt) / 1000) });
  }

  /** Where this object's lines happened: ids only. */
  private logPlace() {
    const place = this.place();
    return { socket: place?.chatId === undefined ? 'lobby' : 'chat', hostId: place?.hostId, chatId: place?.chatId };
  }

  protected onDisconnect(_ws: WebSocket): void {}

  // ---- access changes reaching open sockets ----

  /**
   * Drops every cached view and reads each socket's access again: sockets whose person lost access
   * here close with 4403, those whose session ended with 4401; the others keep going, and their next
   * frames are checked against the new role. Called by recheckHosts (revocations.ts).
   */
  protected async recheckSockets(place: Place): Promise<void> {
    this.access.forget();
    const sockets = this.clients();
    const standings = await Promise.all(sockets.map((ws) => this.access.standing(this.attachmentOf(ws).identity, place.hostId, place.chatId)));
    sockets.forEach((ws, i) => {
      if (standings[i] !== 'keep') this.expel(ws, standings[i]!);
    });
  }

  /** Closes a socket that lost its standing here. */
  protected expel(ws: WebSocket, standing: Exclude<Standing, 'keep'>): void {
    const { code, reason } = CLOSE_FOR[standing];
    log.info('socket expelled', { ...this.logPlace(), code });
    try {
      ws.close(code, reason);
    } catch {
      /* already closed */
    }
    this.onDisconnect(ws);
    this.meter.socketsChanged();
  }

  /**
   * Whether a socket may hear a push now, without waiting (pushes are serialized once and sent in one
   * synchronous step). Answers from the cached view; one that went stale is read again in the
   * background, and a socket that lost access then is closed. A socket whose view was never read has
   * passed the door moments ago.
   */
  protected mayHear(ws: WebSocket, place: Place): boolean {
    let identity = this.identities.get(ws);
    if (!identity) this.identities.set(ws, (identity = this.attachmentOf(ws).identity));
    const seen = this.access.peek(identity, place.hostId);
    if (!seen?.fresh) this.revalidate(ws, identity, place);
    if (!seen) return true;
    const standing = standingIn(seen.view, place.chatId);
    if (standing === 'keep') return true;
    this.expel(ws, standing);
    return false;
  }

  private revalidate(ws: WebSocket, identity: Identity, place: Place): void {
    if (this.revalidating.has(ws)) return;
    this.revalidating.add(ws);
    void this.access
      .standing(identity, place.hostId, place.chatId)
      .then((standing) => {
        if (standing !== 'keep') this.expel(ws, standing);
      })
      .catch(() => undefined)
      .finally(() => this.revalidating.delete(ws));
  }

  /** Writes the audit line of a request that acts on the machine, off the frame's path. */
  protected audit(identity: Identity, request: ClientRequest, place: Place): void {
    if (!AUDITED.has(request.type)) return;
    this.ctx.waitUntil(
      record(this.env.DB, {
        actor: principalOf(identity),
        sessionId: identity.kind === 'user' ? identity.sessionId : null,
        action: request.type,
        hostId: place.hostId,
        chatId: place.chatId ?? null,
        detail: { requestId: request.id },
      }),
    );
  }
}

/** Sends without throwing on a socket that closed meanwhile. */
export function send(ws: WebSocket, text: string): void {
  try {
    ws.send(text);
  } catch {
    // The socket closed between the check and the send; its close handler tidies up.
  }
}
