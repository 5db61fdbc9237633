// One agent-contracts connection over one relay socket (a host's lobby, or one chat), in the
// `FramePort` shape, plus request/reply correlation. Works wherever a standard WebSocket and fetch
// exist (browsers, Node 22+). It trades the access token for a single-use socket ticket first
// (`POST /api/auth/tickets`) and opens the socket with `?ticket=`: a token never rides in a URL.
// Reconnect, replay and offline sends are layered on top of this, not in it.
import {
  CLIENT_HEARTBEAT,
  ProtocolError,
  parseServerFrame,
  type AgentRequestType,
  type FramePort,
  type Request,
  type RequestPayload,
  type RequestResult,
  type RequestSignature,
  type ServerFrame,
  type WireErrorCode,
} from '../contracts/index.ts';

/**
 * Signs requests before they go (device-key.ts `requestSigner`). `signs` says at once, without any
 * work, whether a type is signed (only what acts on the machine is), so a read is sent as it is;
 * `sign` answers the signature to send beside the frame (undefined: this one goes unsigned after all,
 * e.g. no key could be had).
 */
export interface RequestSigner {
  signs(type: string): boolean;
  sign(frame: { id: string; type: string; payload: unknown }): Promise<RequestSignature | undefined>;
}

export interface RelaySocketOptions {
  /** How long a request may wait for its reply before it fails with `host-timeout`. */
  timeoutMs?: number;
  /** Makes request ids; they must be unique per person, since the relay answers a repeated id once. */
  newId?: () => string;
  /** Signs machine-acting requests with this device's key; without one, every request goes unsigned as before. */
  signer?: RequestSigner;
}

/**
 * A request that got no answer because its socket closed (or never opened). Unlike a `host-offline`
 * reply from the relay, the request may not have arrived: resending it under the same id is safe.
 */
export class SocketClosedError extends ProtocolError {
  constructor(message: string) {
    super('host-offline', message);
    this.name = 'SocketClosedError';
  }
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export class RelaySocket implements FramePort {
  readonly opened: Promise<void>;
  private ws: WebSocket | null = null;
  private closeAsked = false;
  private readonly listeners = new Set<(frame: unknown) => void>();
  private readonly closeListeners = new Set<(closed: { code: number; reason: string }) => void>();
  private readonly pending = new Map<string, Pending>();
  private readonly options: Required<Omit<RelaySocketOptions, 'signer'>> & Pick<RelaySocketOptions, 'signer'>;
  private closedWith: { code: number; reason: string } | null = null;
  private heardAt = Date.now();
  /**
   * The frames asked for but not yet sent, in the order asked: signing is asynchronous (WebCrypto,
   * a key still loading from IndexedDB), and a request asked after a signed one must not overtake it
   * (a send, then its stop). Empty almost always, so a read goes out at once.
   */
  private readonly outgoing: Array<{
    frame: Request | ServerFrame;
    signing: Promise<RequestSignature | undefined> | null;
    sent: () => void;
    failed: (error: Error) => void;
  }> = [];

  constructor(url: string, token: string, options: RelaySocketOptions = {}) {
    this.options = { timeoutMs: options.timeoutMs ?? 30_000, newId: options.newId ?? (() => crypto.randomUUID()), signer: options.signer };
    this.opened = this.connect(url, token);
    this.opened.catch(() => undefined);
  }

  private async connect(url: string, token: string): Promise<void> {
    const target = new URL(url);
    target.protocol = target.protocol === 'https:' ? 'wss:' : target.protocol === 'http:' ? 'ws:' : target.protocol;
    target.searchParams.set('ticket', await mintTicket(target, token));
    if (this.closeAsked) throw new SocketClosedError('The socket was closed before it opened');
    const ws = (this.ws = new WebSocket(target));
    ws.addEventListener('message', (event) => this.onMessage(event.data));
    ws.addEventListener('close', (event) => {
      this.closedWith = { code: event.code, reason: event.reason };
      for (const [, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new SocketClosedError('The connection to the relay closed'));
      }
      this.pending.clear();
      for (const listener of this.closeListeners) listener(this.closedWith);
    });
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)), { once: true });
    });
  }

  get closed(): { code: number; reason: string } | null {
    return this.closedWith;
  }

  /** Sends a frame as it is (never signed), after any request still waiting for its signature. */
  send(frame: Request | ServerFrame): void {
    if (!this.ws) throw new ProtocolError('host-offline', 'The socket is not open yet (await opened)');
    if (this.outgoing.length === 0) return this.write(frame);
    this.outgoing.push({ frame, signing: null, sent: () => undefined, failed: () => undefined });
  }

  private write(frame: Request | ServerFrame): void {
    this.ws!.send(JSON.stringify(frame));
  }

  onFrame(listener: (frame: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called once when an opened socket closes, with the close code (4401: session ended, 4403: access revoked). */
  onClose(listener: (closed: { code: number; reason: string }) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Sends a request and answers its result; a failure reply throws a ProtocolError with its code. */
  async request<T extends AgentRequestType>(
    type: T,
    payload: RequestPayload<T>,
    id = this.options.newId(),
    timeoutMs = this.options.timeoutMs,
  ): Promise<RequestResult<T>> {
    await this.opened;
    // A closed socket drops what it is given without a word: the request would only wait out its timeout.
    if (this.closedWith) throw new SocketClosedError('The connection to the relay is closed');
    const answered = new Promise<RequestResult<T>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ProtocolError('host-timeout', `${type} got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (r: unknown) => void, reject, timer });
    });
    // A close rejects the answer and the sending alike: the sending's error is the one thrown.
    answered.catch(() => undefined);
    await this.enqueue({ id, type, payload } as Request).catch((error: Error) => {
      const waiter = this.pending.get(id);
      if (waiter) {
        clearTimeout(waiter.timer);
        this.pending.delete(id);
      }
      throw error;
    });
    return answered;
  }

  /**
   * Sends `frame` after every frame asked before it, signed when the signer says so (beside the frame,
   * never inside the payload; a retry under the same id is signed again, with a fresh time: the host's
   * journal answers it once). Answers once it went.
   */
  private enqueue(frame: Request): Promise<void> {
    const signer = this.options.signer;
    const signing = signer?.signs(frame.type) ? signer.sign({ id: frame.id, type: frame.type, payload: frame.payload }) : null;
    signing?.catch(() => undefined); // awaited in turn by flush(); a failure then fails this request
    if (!signing && this.outgoing.length === 0) {
      this.write(frame);
      return Promise.resolve();
    }
    return new Promise<void>((sent, failed) => {
      this.outgoing.push({ frame, signing, sent, failed });
      if (this.outgoing.length === 1) void this.flush();
    });
  }

  /** Sends the queued frames in order, each once its signature is made. */
  private async flush(): Promise<void> {
    while (this.outgoing.length > 0) {
      const next = this.outgoing[0]!;
      try {
        const signature = next.signing ? await next.signing : undefined;
        if (this.closedWith) throw new SocketClosedError('The connection to the relay closed');
        this.write(signature ? ({ ...next.frame, signature } as unknown as Request) : next.frame);
        next.sent();
      } catch (error) {
        next.failed(error instanceof Error ? error : new Error(String(error)));
      }
      this.outgoing.shift();
    }
  }

  close(): void {
    this.closeAsked = true;
    this.ws?.close(1000, 'client closed');
  }

  /** When the relay last said anything on this socket (a frame or a heartbeat's pong). */
  get lastHeard(): number {
    return this.heardAt;
  }

  /** Sends the heartbeat's ping; the relay's runtime answers `pong` (CLIENT_HEARTBEAT). */
  ping(): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(CLIENT_HEARTBEAT.ping);
  }

  private onMessage(data: unknown): void {
    this.heardAt = Date.now();
    if (data === CLIENT_HEARTBEAT.pong) return;
    let raw: unknown;
    try {
      raw = JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data as ArrayBuffer));
    } catch {
      return;
    }
    // Only replies are read here (events go to the listeners as they are): a stream is mostly events,
    // and checking each one's envelope would be work for nothing.
    const reply = typeof raw === 'object' && raw !== null && 'ok' in raw;
    const parsed = reply ? parseServerFrame(raw) : null;
    if (parsed?.ok && 'ok' in parsed.value && parsed.value.id !== null) {
      const waiter = this.pending.get(parsed.value.id);
      if (waiter) {
        this.pending.delete(parsed.value.id);
        clearTimeout(waiter.timer);
        if (parsed.value.ok) waiter.resolve(parsed.value.result);
        else waiter.reject(new ProtocolError(parsed.value.error.code as WireErrorCode, parsed.value.error.message));
      }
    }
    for (const listener of this.listeners) listener(raw);
  }
}

/**
 * A single-use socket ticket for this access token, from the relay the socket URL points at. A refusal
 * throws the relay's own `{ code, message }` (an expired token is `unauthorized`: refresh, then retry).
 */
async function mintTicket(socketUrl: URL, token: string): Promise<string> {
  const api = new URL('/api/auth/tickets', socketUrl);
  api.protocol = api.protocol === 'wss:' ? 'https:' : api.protocol === 'ws:' ? 'http:' : api.protocol;
  let res: Response;
  try {
    res = await fetch(api, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  } catch (error) {
    // Say why (refused, reset, a closed keep-alive socket…): "cannot reach" alone hid a test's cause once.
    const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    throw new ProtocolError('host-offline', `cannot reach the relay at ${api.origin}: ${cause}`);
  }
  const body = (await res.json().catch(() => null)) as { ticket?: unknown; code?: unknown; message?: unknown } | null;
  if (res.ok && typeof body?.ticket === 'string') return body.ticket;
  const code = typeof body?.code === 'string' ? (body.code as WireErrorCode) : res.status === 401 ? 'unauthorized' : 'internal';
  throw new ProtocolError(code, typeof body?.message === 'string' ? body.message : `ticket refused (${res.status})`);
}

/** The socket URLs of a relay. */
export const relayPaths = {
  lobby: (relayUrl: string, hostId: string) => new URL(`/v1/hosts/${encodeURIComponent(hostId)}/lobby`, relayUrl).toString(),
  chat: (relayUrl: string, hostId: string, chatId: string) =>
    new URL(`/v1/hosts/${encodeURIComponent(hostId)}/chats/${encodeURIComponent(chatId)}`, relayUrl).toString(),
};
