// JsonRpcPeer: one side of a JSON-RPC 2.0 conversation carried as one JSON message per line, the
// way `codex app-server` (and ACP agents) speak over stdio. It allocates request ids, keeps the
// pending map, tells requests the other side makes from its notifications, and matches replies.
//
// It knows nothing of the process or of any method: the owner feeds it lines (`receive`) and gives
// it a `write` for outgoing lines. A line that is not a JSON-RPC message is reported through
// `onMalformed` and otherwise ignored: a CLI printing junk must never take the chat down.

export type RpcId = number | string;

export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

/** A request the other side answered with an error (or that could not be answered). */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(body: RpcErrorBody) {
    super(body.message);
    this.name = 'RpcError';
    this.code = body.code;
    this.data = body.data;
  }
}

/** The JSON-RPC code for "the peer went away before answering": outside the reserved range. */
export const RPC_CLOSED = -32099;

export interface JsonRpcPeerOptions {
  /** Sends one line (without its line ending). */
  write(line: string): void;
  /** A notification from the other side. */
  onNotification(method: string, params: unknown): void;
  /** A request from the other side; answer it with `respond` or `respondError`. */
  onRequest(id: RpcId, method: string, params: unknown): void;
  /** A line that is not JSON or not a JSON-RPC message, or a reply nobody waits for. */
  onMalformed?(line: string, reason: string): void;
  /** Adds `"jsonrpc": "2.0"` to every message (Codex omits it; ACP wants it). */
  jsonrpcField?: boolean;
}

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: RpcError): void;
}

export class JsonRpcPeer {
  private readonly options: JsonRpcPeerOptions;
  private readonly pending = new Map<RpcId, Pending>();
  private nextId = 0;
  private closed: RpcErrorBody | null = null;

  constructor(options: JsonRpcPeerOptions) {
    this.options = options;
  }

  /** Requests still waiting for their reply. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Sends a request; resolves with its `result`, rejects with an RpcError. */
  request<T = unknown>(method: string, params?: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new RpcError(this.closed));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (result: unknown) => void, reject });
      this.send({ method, id, ...(params === undefined ? {} : { params }) });
    });
  }

  notify(method: string, params?: unknown): void {
    if (this.closed) return;
    this.send({ method, ...(params === undefined ? {} : { params }) });
  }

  respond(id: RpcId, result: unknown): void {
    if (this.closed) return;
    this.send({ id, result });
  }

  respondError(id: RpcId, error: RpcErrorBody): void {
    if (this.closed) return;
    this.send({ id, error });
  }

  /** One line from the other side. */
  receive(line: string): void {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.malformed(line, 'not JSON');
      return;
    }
    if (!isRecord(message)) {
      this.malformed(line, 'not a JSON-RPC message');
      return;
    }
    const { id, method } = message;
    const hasId = typeof id === 'number' || typeof id === 'string';
    if (typeof method === 'string') {
      if (hasId) this.options.onRequest(id, method, message.params);
      else this.options.onNotification(method, message.params);
      return;
    }
    if (!hasId || (!('result' in message) && !('error' in message))) {
      this.malformed(line, 'not a JSON-RPC message');
      return;
    }
    const waiter = this.pending.get(id);
    if (!waiter) {
      this.malformed(line, `a reply to ${JSON.stringify(id)}, which nothing waits for`);
      return;
    }
    this.pending.delete(id);
    if ('error' in message) waiter.reject(new RpcError(errorBody(message.error)));
    else waiter.resolve(message.result);
  }

  /** The other side is gone: every waiting request fails, and nothing more is sent. */
  close(message = 'The other side closed the connection'): void {
    if (this.closed) return;
    this.closed = { code: RPC_CLOSED, message };
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const waiter of pending) waiter.reject(new RpcError({ code: RPC_CLOSED, message: `${waiter.method}: ${message}` }));
  }

  private send(message: Record<string, unknown>): void {
    this.options.write(JSON.stringify(this.options.jsonrpcField ? { jsonrpc: '2.0', ...message } : message));
  }

  private malformed(line: string, reason: string): void {
    this.options.onMalformed?.(line, reason);
  }
}

function errorBody(error: unknown): RpcErrorBody {
  if (isRecord(error) && typeof error.message === 'string') {
    return { code: typeof error.code === 'number' ? error.code : -32603, message: error.message, ...('data' in error ? { data: error.data } : {}) };
  }
  return { code: -32603, message: `The reply carried an unreadable error: ${JSON.stringify(error)}` };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
