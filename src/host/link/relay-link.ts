// RelayLink: the host's one outbound WebSocket to the relay (`<relay>/v1/hosts/<hostId>/link`).
//
// What it owns: the socket, reconnecting with jittered exponential backoff (capped, reset once a
// connection has stayed up), the heartbeat (text `ping` every LINK_HEARTBEAT.intervalMs; a link that
// has not heard `pong` for ~3 intervals is taken for dead and replaced), and the order in which
// frames go out. Events always pass through the Outbox first and are sent again after every
// reconnect until the relay acknowledges them; on open the link says `{link:'hello'}` and resends the
// backlog in order before any new event goes out live. Replies to the relay's requests go straight to
// the socket: a reply lost with a socket is one the relay has already given up on.
//
// What it never does: decide anything about chats. Requests from the relay are handed to `onRequest`
// (the host runtime, which serves the link as a client attached to every chat) and its reply is sent.
// What survives a restart: nothing here; the Outbox keeps the unacknowledged events.
import { WebSocket } from 'ws';
import type { RawData } from 'ws';
import { LINK_BATCH_BYTES, LINK_HEARTBEAT, LINK_MAX_FRAME_BYTES, LinkAckSchema } from '../../contracts/link.ts';
import type { LinkHello } from '../../contracts/link.ts';
import { Backoff } from '../../contracts/backoff.ts';
import type { Outbox } from './outbox.ts';

export type LinkState = 'connecting' | 'open' | 'closed';

/**
 * permessage-deflate, offered to the relay (workerd accepts it at the compatibility date in wrangler.toml).
 * ws compresses only messages of 1 KiB and more by default; a streamed delta is a frame of ~150 bytes
 * that deflates to a fraction of that with the context kept between messages, so every message but
 * the heartbeat is compressed. maxPayload still bounds what a message inflates to.
 */
export const LINK_DEFLATE = { threshold: 16 };

/** How much resent backlog may sit in the socket's buffer before the link waits for it to drain. */
const BACKLOG_BUFFER_BYTES = 8 * 1024 * 1024;

export interface RelayLinkLog {
  info(message: string): void;
  warn(message: string): void;
  /** Frame-level tracing (`--verbose`). */
  debug?(message: string): void;
}

export interface RelayLinkOptions {
  /** Base URL of the relay, http(s) or ws(s). */
  relayUrl: string;
  hostId: string;
  /** Where the bearer token comes from; asked again on every connection (tokens may be short-lived). */
  token: () => string | Promise<string>;
  outbox: Outbox;
  /** Serves one request frame from the relay (already JSON-parsed, or the raw text if it was not JSON) and answers the reply frame. */
  onRequest: (frame: unknown) => Promise<object>;
  /**
   * Takes the statements of a `{link:'trust'}` frame (LinkTrustSchema), each still unchecked: the
   * host's trust book checks them one by one, so one bad statement does not cost the others.
   */
  onTrust?: (statements: unknown[]) => void;
  version: string;
  /** The request types this host carries out unsigned, said in the hello (LinkHello.unsigned). */
  unsigned?: 'all' | string[];
  log?: RelayLinkLog;
  /** First reconnect delay ceiling (ms); doubles per failure. Default 500. */
  backoffBaseMs?: number;
  /** Largest reconnect delay (ms). Default 10 000. */
  backoffMaxMs?: number;
  /** A connection that stayed up this long resets the backoff. Default 10 000. */
  stableAfterMs?: number;
  /** Heartbeat period (ms). Default LINK_HEARTBEAT.intervalMs. */
  heartbeatMs?: number;
  /** Heartbeats without a pong before the link is taken for dead. Default 3. */
  missedPongs?: number;
  /** Called on every state change (for status files and tests). */
  onState?: (state: LinkState) => void;
}

export class RelayLink {
  private readonly options: RelayLinkOptions;
  private readonly log: RelayLinkLog;
  private socket: WebSocket | null = null;
  /** Event texts waiting for the end of this tick, to go out together. */
  private batch: string[] = [];
  /** True once the backlog is sent on the current socket: new events may then go out directly. */
  private live = false;
  private readonly backoff: Backoff;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private stableTimer: NodeJS.Timeout | null = null;
  private lastHeard = 0;
  private current: LinkState = 'closed';
  /** Times a socket opened; tests and status read it. */
  connections = 0;

  constructor(options: RelayLinkOptions) {
    this.options = options;
    this.log = options.log ?? { info: () => undefined, warn: () => undefined };
    // Hosts that lost the relay together do not come back together: the jitter is Backoff's.
    this.backoff = new Backoff({ baseMs: options.backoffBaseMs ?? 500, maxMs: options.backoffMaxMs ?? 10_000 });
  }

  get state(): LinkState {
    return this.current;
  }

  get url(): string {
    const base = new URL(this.options.relayUrl);
    if (base.protocol === 'http:') base.protocol = 'ws:';
    else if (base.protocol === 'https:') base.protocol = 'wss:';
    const prefix = base.pathname.replace(/\/+$/, '');
    base.pathname = `${prefix}/v1/hosts/${encodeURIComponent(this.options.hostId)}/link`;
    return base.toString();
  }

  start(): void {
    this.stopped = false;
    if (!this.socket && !this.retryTimer) void this.connect();
  }

  /**
   * Sends one event frame to the relay: appended to the outbox first (a position `n`), then sent now if
   * the link is live, else with the backlog after the next connect. Throws `frame-too-large`.
   */
  sendEvent(frame: { type: 'event'; event: string; payload: unknown }): number {
    const entry = this.options.outbox.push(frame);
    if (this.live && this.socket?.readyState === WebSocket.OPEN) {
      this.trace('→', entry.text);
      this.batch.push(entry.text);
      if (this.batch.length === 1) setImmediate(() => this.flushBatch());
    }
    return entry.n;
  }

  /** Sends the events produced in this tick as few link messages as their size allows (see LINK_BATCH_BYTES). */
  private flushBatch(): void {
    const socket = this.socket;
    const texts = this.batch;
    this.batch = [];
    // A socket that closed meanwhile loses nothing: every text is in the outbox, resent after the reconnect.
    if (!socket || !this.live || socket.readyState !== WebSocket.OPEN) return;
    for (const message of linkMessages(texts)) socket.send(message);
  }

  /** Stops reconnecting and closes the socket; the outbox keeps what is unacknowledged. */
  async close(): Promise<void> {
    this.stopped = true;
    this.clearTimers();
    const socket = this.socket;
    this.socket = null;
    this.live = false;
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        const done = setTimeout(() => {
          socket.terminate();
          resolve();
        }, 1_000);
        socket.once('close', () => {
          clearTimeout(done);
          resolve();
        });
        socket.close(1000, 'host shutting down');
      });
    }
    this.setState('closed');
  }

  private async connect(): Promise<void> {
    this.retryTimer = null;
    if (this.stopped) return;
    this.setState('connecting');
    let token: string;
    try {
      token = await this.options.token();
    } catch (error) {
      this.log.warn(`link: no token (${describe(error)}); retrying`);
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) return;
    const socket = new WebSocket(this.url, {
      headers: { authorization: `Bearer ${token}` },
      maxPayload: LINK_MAX_FRAME_BYTES,
      handshakeTimeout: 10_000,
      perMessageDeflate: LINK_DEFLATE,
    });
    this.socket = socket;
    socket.on('open', () => this.opened(socket));
    socket.on('message', (data, isBinary) => this.received(socket, data, isBinary));
    socket.on('unexpected-response', (_request, response) => {
      this.log.warn(`link: relay answered ${response.statusCode} ${response.statusMessage ?? ''}`.trim());
      socket.terminate();
    });
    socket.on('error', (error) => {
      this.log.warn(`link: ${describe(error)}`);
    });
    socket.on('close', (code, reason) => this.dropped(socket, code, reason.toString()));
  }

  private opened(socket: WebSocket): void {
    if (socket !== this.socket) return;
    this.connections += 1;
    this.lastHeard = Date.now();
    this.setState('open');
    this.log.info(`link: connected to ${this.url}`);
    const hello: LinkHello = {
      link: 'hello',
      version: this.options.version,
      pending: this.options.outbox.pendingCount,
      ...(this.options.unsigned === undefined ? {} : { unsigned: this.options.unsigned }),
    };
    this.sendRaw(socket, JSON.stringify(hello));
    this.startHeartbeat(socket);
    this.stableTimer = setTimeout(() => {
      this.backoff.reset();
    }, this.options.stableAfterMs ?? 10_000);
    void this.sendBacklog(socket);
  }

  /** Resends every unacknowledged event in order, then switches to live sending (in the same tick as the last check). */
  private async sendBacklog(socket: WebSocket): Promise<void> {
    const outbox = this.options.outbox;
    let after = 0;
    try {
      for (;;) {
        if (socket !== this.socket || socket.readyState !== WebSocket.OPEN) return;
        if (!outbox.hasPendingAfter(after)) {
          this.live = true;
          return;
        }
        if (socket.bufferedAmount > BACKLOG_BUFFER_BYTES) {
          // Let the socket drain before reading more from disk: memory stays bounded however long the backlog.
          await new Promise((resolve) => setTimeout(resolve, 10));
          continue;
        }
        const texts: string[] = [];
        for (const entry of outbox.readAfter(after)) {
          this.trace('→', entry.text);
          texts.push(entry.text);
          after = entry.n;
        }
        for (const message of linkMessages(texts)) socket.send(message);
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      this.log.warn(`link: could not resend the backlog (${describe(error)}); reconnecting`);
      socket.terminate();
    }
  }

  private received(socket: WebSocket, data: RawData, isBinary: boolean): void {
    if (socket !== this.socket) return;
    this.lastHeard = Date.now();
    const text = isBinary ? '' : rawText(data);
    if (text === LINK_HEARTBEAT.pong) return;
    if (text === LINK_HEARTBEAT.ping) {
      this.sendRaw(socket, LINK_HEARTBEAT.pong);
      return;
    }
    this.trace('←', text);
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      frame = text; // the runtime answers bad-request with a null id
    }
    if (typeof frame === 'object' && frame !== null && 'link' in frame) {
      const { link, statements } = frame as { link?: unknown; statements?: unknown };
      if (link === 'trust') {
        if (Array.isArray(statements)) this.options.onTrust?.(statements);
        else this.log.warn('link: a trust frame without statements');
        return;
      }
      const ack = LinkAckSchema.safeParse(frame);
      if (!ack.success) {
        this.log.warn(`link: unknown control frame ${text.slice(0, 200)}`);
        return;
      }
      try {
        this.options.outbox.ack(ack.data.n);
      } catch (error) {
        // Thrown here it would leave the socket's handler and end the process. An ack not recorded
        // only means those events are sent again, and the relay drops what it already holds.
        this.log.warn(`link: could not record an acknowledgement (${describe(error)})`);
      }
      return;
    }
    void this.options.onRequest(frame).then(
      (reply) => {
        if (socket.readyState !== WebSocket.OPEN) return;
        let out = JSON.stringify(reply);
        if (Buffer.byteLength(out) > LINK_MAX_FRAME_BYTES) {
          const id = (reply as { id?: unknown }).id ?? null;
          out = JSON.stringify({ id, ok: false, error: { code: 'frame-too-large', message: 'The reply is larger than the link allows' } });
        }
        this.sendRaw(socket, out);
      },
      (error: unknown) => this.log.warn(`link: request failed outside the runtime (${describe(error)})`),
    );
  }

  private dropped(socket: WebSocket, code: number, reason: string): void {
    if (socket !== this.socket) return;
    this.socket = null;
    this.live = false;
    this.clearTimers();
    if (this.stopped) return;
    this.log.warn(`link: closed (${code}${reason ? ` ${reason}` : ''}); reconnecting`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    this.setState('connecting');
    this.retryTimer = setTimeout(() => void this.connect(), this.backoff.next());
  }

  private startHeartbeat(socket: WebSocket): void {
    const every = this.options.heartbeatMs ?? LINK_HEARTBEAT.intervalMs;
    const missed = this.options.missedPongs ?? 3;
    this.heartbeatTimer = setInterval(() => {
      if (socket !== this.socket) return;
      if (Date.now() - this.lastHeard > every * missed) {
        this.log.warn('link: no pong from the relay; reconnecting');
        socket.terminate();
        return;
      }
      this.sendRaw(socket, LINK_HEARTBEAT.ping);
    }, every);
  }

  private sendRaw(socket: WebSocket, text: string): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (text !== LINK_HEARTBEAT.ping && text !== LINK_HEARTBEAT.pong) this.trace('→', text);
    socket.send(text);
  }

  private clearTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.stableTimer) clearTimeout(this.stableTimer);
    this.retryTimer = null;
    this.heartbeatTimer = null;
    this.stableTimer = null;
  }

  private setState(state: LinkState): void {
    if (state === this.current) return;
    this.current = state;
    this.options.onState?.(state);
  }

  private trace(direction: string, text: string): void {
    if (!this.log.debug) return;
    this.log.debug(`link ${direction} ${text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} chars)` : text}`);
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Joins frame texts into link messages: one frame alone, several as a JSON array, none past LINK_BATCH_BYTES. */
export function linkMessages(texts: string[]): string[] {
  const out: string[] = [];
  let group: string[] = [];
  let bytes = 0;
  const close = () => {
    if (group.length === 1) out.push(group[0]!);
    else if (group.length > 1) out.push(`[${group.join(',')}]`);
    group = [];
    bytes = 0;
  };
  for (const text of texts) {
    if (group.length > 0 && bytes + text.length > LINK_BATCH_BYTES) close();
    group.push(text);
    bytes += text.length + 1;
  }
  close();
  return out;
}
