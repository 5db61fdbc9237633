// A relay socket that stays up: it connects (a fresh single-use ticket each time, see socket.ts),
// reconnects with backoff when the socket drops or the relay restarts, and gives up only when told to
// (close()) or when the relay says it is over: 4401 (the session ended) and 4403 (access revoked) are
// answers, not failures, and trying again would only be refused again.
//
// Requests ride whichever socket is open now. One whose socket closed before its answer came is sent
// again on the next socket under the same id: the relay answers a repeated id once per person and never
// runs it twice, so a retry after a reconnect is safe. HostConnection (the lobby) and ChatChannel (one
// chat) are built on this; each says what to do once a new socket is open (`opened`).
import {
  CLIENT_HEARTBEAT,
  ProtocolError,
  type AgentRequestType,
  type HostPresenceEvent,
  type Request,
  type RequestPayload,
  type RequestResult,
  type SettledRequest,
  type WireError,
} from '../contracts/index.ts';
import type { RelayApi } from './api.ts';
import { Backoff, type BackoffOptions } from '../contracts/backoff.ts';
import { requestSigner, type DeviceKey } from './device-key.ts';
import { RelaySocket, SocketClosedError, type RequestSigner } from './socket.ts';

export type LinkState = 'connecting' | 'open' | 'offline' | 'closed';

export interface LiveSocketOptions {
  backoff?: BackoffOptions;
  /** How long a request may wait for its answer, across reconnects. Default 30 s. */
  timeoutMs?: number;
  /** Request ids; unique per person (the relay answers a repeated id once). Default: random UUIDs. */
  newId?: () => string;
  /** The heartbeat's timing (tests shorten it). Default CLIENT_HEARTBEAT's. */
  heartbeat?: { intervalMs: number; silenceMs: number };
  /**
   * This device's key: requests that act on the machine are signed with it (device-key.ts). Without
   * one every request goes unsigned, as before; a host that requires signatures refuses those. A
   * promise (a browser's key loading from IndexedDB) is waited for by the first signed request only;
   * frames keep the order they were asked in either way.
   */
  deviceKey?: DeviceKey | PromiseLike<DeviceKey | null>;
}

/** The close codes after which the relay will not take this socket back. */
const FINAL_CLOSES: Record<number, WireError> = {
  4401: { code: 'unauthorized', message: 'Your session has ended; sign in again' },
  4403: { code: 'forbidden', message: 'Your access to this host was revoked' },
};

/** An event frame as the relay sends it. */
export interface EventFrame {
  type: 'event';
  event: string;
  payload: any;
}

/**
 * The frame as an event, or null for a reply. Only the envelope is looked at: the relay checked every
 * payload against its schema before sending it, and a stream's deltas should not be parsed twice.
 */
function eventOf(raw: unknown): EventFrame | null {
  return typeof raw === 'object' &&
    raw !== null &&
    (raw as EventFrame).type === 'event' &&
    typeof (raw as EventFrame).event === 'string' &&
    typeof (raw as EventFrame).payload === 'object' &&
    (raw as EventFrame).payload !== null
    ? (raw as EventFrame)
    : null;
}

/** Failures worth trying again after a while. */
const PASSING = new Set<string>(['host-offline', 'host-timeout', 'rate-limited', 'internal']);

interface OpenWaiter {
  resolve(socket: RelaySocket): void;
  reject(error: Error): void;
}

export abstract class LiveSocket {
  readonly hostId: string;
  protected readonly api: RelayApi;
  protected readonly newId: () => string;
  private readonly url: string;
  private readonly timeoutMs: number;
  private readonly backoff: Backoff;
  private currentState: LinkState = 'connecting';
  private endedWith: WireError | null = null;
  private hostOnline: boolean | null = null;
  private socket: RelaySocket | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private heartbeatTimer: ReturnType<typeof setInterval> | null = null;
  private readonly heartbeat: { intervalMs: number; silenceMs: number };
  private readonly signer: RequestSigner | undefined;
  private waiters: OpenWaiter[] = [];
  private readonly stateListeners = new Set<(state: LinkState) => void>();
  private readonly frameListeners = new Set<(frame: unknown) => void>();
  private readonly presenceListeners = new Set<(online: boolean) => void>();
  private readonly wakeUp = () => this.retryNow();
  /**
   * The browser says the network is gone: the socket is given up now (rather than after the
   * heartbeat's silence) and tried again when the browser is back online.
   */
  private readonly networkLost = () => {
    const socket = this.socket;
    if (!socket) return;
    socket.close();
    this.dropped(socket, 1006, 'the network went away');
  };

  protected constructor(api: RelayApi, hostId: string, url: string, options: LiveSocketOptions = {}) {
    this.api = api;
    this.hostId = hostId;
    this.url = url;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.newId = options.newId ?? (() => crypto.randomUUID());
    this.backoff = new Backoff(options.backoff);
    this.heartbeat = options.heartbeat ?? CLIENT_HEARTBEAT;
    this.signer = options.deviceKey && requestSigner(options.deviceKey, hostId, (frame) => this.shownRequest(frame.type, frame.payload));
  }

  /** The waiting approval or question a settling request names, as this client shows it (ChatChannel knows its thread). */
  protected shownRequest(_type: string, _payload: unknown): SettledRequest | null {
    return null;
  }

  /** Subclasses call this once their own fields are set. */
  protected start(): void {
    // A browser that comes back online is worth trying at once, whatever the backoff said.
    const events = globalThis as { addEventListener?: (type: string, fn: () => void) => void };
    events.addEventListener?.('online', this.wakeUp);
    events.addEventListener?.('offline', this.networkLost);
    void this.connect();
  }

  // ---- what the app reads ----

  get state(): LinkState {
    return this.currentState;
  }

  /** Why the socket closed for good (`unauthorized`, `forbidden`), or null. Set with state `closed`. */
  get ended(): WireError | null {
    return this.endedWith;
  }

  /** Whether the host is linked to the relay, as the relay last said; null before it said. */
  get online(): boolean | null {
    return this.hostOnline;
  }

  onState(listener: (state: LinkState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Every frame from the relay, unparsed (the FramePort shape). */
  onFrame(listener: (frame: unknown) => void): () => void {
    this.frameListeners.add(listener);
    return () => this.frameListeners.delete(listener);
  }

  onPresence(listener: (online: boolean) => void): () => void {
    this.presenceListeners.add(listener);
    return () => this.presenceListeners.delete(listener);
  }

  /**
   * Sends a request and answers its result, or throws its ProtocolError. Waits for a socket when none
   * is open; resent under the same id when the socket closes before the answer (see the header).
   */
  async request<T extends AgentRequestType>(type: T, payload: RequestPayload<T>, id = this.newId()): Promise<RequestResult<T>> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const socket = await this.whenOpen(deadline, type);
      try {
        return await socket.request(type, payload, id, Math.max(1, deadline - Date.now()));
      } catch (error) {
        if (!(error instanceof SocketClosedError) || this.currentState === 'closed') throw error;
      }
    }
  }

  /** Sends a frame on the open socket as it is; `host-offline` when none is open. */
  sendFrame(frame: Request): void {
    if (this.currentState !== 'open' || !this.socket) throw new ProtocolError('host-offline', 'Not connected to the relay');
    this.socket.send(frame);
  }

  /** Closes for good. */
  close(): void {
    this.end(null);
  }

  // ---- for subclasses ----

  /** Runs on every new socket before the state turns `open` (attach, say). A throw drops this socket. */
  protected abstract opened(socket: RelaySocket): Promise<void>;

  /** Runs after the state turned `open`. */
  protected afterOpen(): void {}

  /** Each event frame, before the app's listeners see it raw. */
  protected abstract take(event: EventFrame): void;

  /** The socket open now, for requests that must go on this very socket. */
  protected get current(): RelaySocket | null {
    return this.socket;
  }

  /** Drops the current socket and connects again (a gap the relay should have filled, say). */
  protected reconnect(): void {
    this.socket?.close();
  }

  // ---- the loop ----

  private async connect(): Promise<void> {
    this.retryTimer = null;
    if (this.currentState === 'closed') return;
    this.setState('connecting');
    let socket: RelaySocket;
    try {
      socket = await this.openSocket();
    } catch (error) {
      if (error instanceof ProtocolError && error.code === 'unauthorized') return this.end(error.toWire());
      return this.retryLater();
    }
    if (this.isClosed()) return socket.close();
    this.socket = socket;
    this.beat(socket);
    socket.onFrame((raw) => this.onRaw(raw));
    socket.onClose((closed) => this.dropped(socket, closed.code, closed.reason));
    try {
      await this.opened(socket);
    } catch (error) {
      if (this.socket !== socket) return; // it closed meanwhile; dropped() took over
      // A refusal that another try would only meet again (no access, no such chat, a bad request)
      // ends the socket with its reason; the rest (host away or slow, rate limits) is tried again.
      if (error instanceof ProtocolError && !(error instanceof SocketClosedError) && !PASSING.has(error.code)) return this.end(error.toWire());
      socket.close();
      return;
    }
    if (this.socket !== socket || this.isClosed()) return;
    this.backoff.reset();
    this.setState('open');
    for (const waiter of this.waiters.splice(0)) waiter.resolve(socket);
    this.afterOpen();
  }

  /** A socket with a ticket from a token that works: an expired one is refreshed once. */
  private async openSocket(): Promise<RelaySocket> {
    for (let refreshed = false; ; refreshed = true) {
      const token = await this.api.accessToken();
      const socket = new RelaySocket(this.url, token, { newId: this.newId, timeoutMs: this.timeoutMs, ...(this.signer ? { signer: this.signer } : {}) });
      try {
        await socket.opened;
        return socket;
      } catch (error) {
        if (error instanceof ProtocolError && error.code === 'unauthorized' && !refreshed) {
          await this.api.refresh(token);
          continue;
        }
        throw error;
      }
    }
  }

  /** Read through a call: a field compared after an await would stay narrowed to what it was before. */
  private isClosed(): boolean {
    return this.currentState === 'closed';
  }

  /**
   * Pings the relay while this socket is the current one, and gives it up when the relay has said
   * nothing for a while: a half-open socket (a phone that changed networks) never closes by itself.
   */
  private beat(socket: RelaySocket): void {
    this.stopBeat();
    this.heartbeatTimer = setInterval(() => {
      if (socket !== this.socket) return this.stopBeat();
      if (Date.now() - socket.lastHeard > this.heartbeat.silenceMs) {
        socket.close();
        return this.dropped(socket, 1006, 'the relay went silent');
      }
      socket.ping();
    }, this.heartbeat.intervalMs);
    (this.heartbeatTimer as { unref?: () => void }).unref?.();
  }

  private stopBeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private dropped(socket: RelaySocket, code: number, reason: string): void {
    if (socket !== this.socket) return;
    this.socket = null;
    this.stopBeat();
    const final = FINAL_CLOSES[code];
    if (final) {
      // The session ended: a signed-in call finds that out and tells the app (RelayApi.onSignedOut).
      if (code === 4401) void this.api.me().catch(() => undefined);
      return this.end({ code: final.code, message: reason ? `${final.message} (${reason})` : final.message });
    }
    if (this.currentState === 'closed') return;
    this.retryLater();
  }

  private retryLater(): void {
    if (this.currentState === 'closed' || this.retryTimer) return;
    this.setState('offline');
    this.retryTimer = setTimeout(() => void this.connect(), this.backoff.next());
  }

  private retryNow(): void {
    if (this.currentState !== 'offline' || !this.retryTimer) return;
    clearTimeout(this.retryTimer);
    this.backoff.reset();
    void this.connect();
  }

  private end(why: WireError | null): void {
    if (this.currentState === 'closed') return;
    this.endedWith = why;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const events = globalThis as { removeEventListener?: (type: string, fn: () => void) => void };
    events.removeEventListener?.('online', this.wakeUp);
    events.removeEventListener?.('offline', this.networkLost);
    const socket = this.socket;
    this.socket = null;
    this.stopBeat();
    socket?.close();
    this.setState('closed');
    const error = why ? new ProtocolError(why.code as never, why.message) : new SocketClosedError('The connection was closed');
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  private whenOpen(deadline: number, what: string): Promise<RelaySocket> {
    if (this.currentState === 'open' && this.socket) return Promise.resolve(this.socket);
    if (this.currentState === 'closed') {
      const why = this.endedWith;
      return Promise.reject(why ? new ProtocolError(why.code as never, why.message) : new SocketClosedError('The connection was closed'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(new ProtocolError('host-timeout', `${what}: no connection to the relay within ${this.timeoutMs} ms`));
        },
        Math.max(1, deadline - Date.now()),
      );
      const waiter: OpenWaiter = {
        resolve: (socket) => {
          clearTimeout(timer);
          resolve(socket);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private onRaw(raw: unknown): void {
    const event = eventOf(raw);
    if (event?.event === 'host.presence') {
      const presence = event.payload as HostPresenceEvent;
      if (presence.hostId === this.hostId && presence.online !== this.hostOnline) {
        this.hostOnline = presence.online;
        for (const listener of this.presenceListeners) listener(presence.online);
      }
    }
    if (event) this.take(event);
    for (const listener of this.frameListeners) listener(raw);
  }

  private setState(state: LinkState): void {
    if (state === this.currentState) return;
    this.currentState = state;
    for (const listener of this.stateListeners) listener(state);
  }
}
