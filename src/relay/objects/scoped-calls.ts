// How a request id reaches a Durable Object, so the lines an object logs carry the id of the work that
// asked it (log.ts). An RPC call carries no context of its own: every stub the relay uses (stubs.ts)
// is wrapped so that a method call arrives as `scopedCall(rid, method, args)` and a `fetch` carries
// the id in a header; the object runs the call inside that id's scope. For the work an object starts
// itself, each frame on a socket gets an id derived from the id of the request that opened the socket
// (kept in the socket's attachment, which survives hibernation), and each alarm a fresh one.
//
// The same base gives each object its one alarm scheduler (alarms.ts): the object names its concerns
// (alarmConcerns) and never overrides `alarm()` itself. And its name, set once: the runtime's id
// carries the name the stub was made from (stubs.ts), and each object keeps it in its own SQLite the
// first time, so a wake whose id carries none (an alarm after eviction) still knows who it is.
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.ts';
import { childRid, currentRid, inScope, newRid } from '../log.ts';
import { Alarms } from './alarms.ts';

/** Set by the relay on every fetch it makes to an object; a client's own header of that name is overwritten. */
const RID_HEADER = 'X-Tether-Request-Id';

/** What a socket's attachment holds for its log lines (beside each object's own fields). */
export interface SocketScope {
  /** The id of the request that opened the socket. */
  rid?: string;
  connectedAt: number;
}

// The entry points the runtime calls itself, never reached through scopedCall.
const NOT_CALLABLE = new Set(['fetch', 'alarm', 'webSocketMessage', 'webSocketClose', 'webSocketError', 'scopedCall', 'constructor']);

export abstract class ScopedObject extends DurableObject<Env> {
  /** Each socket's opening id, read from its attachment once per life of this object rather than per frame. */
  private readonly socketRids = new WeakMap<WebSocket, string>();
  /** The object's one alarm, shared by its concerns (the meter, a flush, the presence check). */
  protected readonly alarms = new Alarms<string>(this.ctx.storage);

  /**
   * The name the Worker's stub reached this object by (stubs.ts), as the runtime's id carries it;
   * undefined on a wake that carries none. Read it once, in the constructor, and keep it.
   */
  protected get stubName(): string | undefined {
    return this.ctx.id.name;
  }

  /** What each of this object's concerns does when its time comes, in the order they run. */
  protected abstract alarmConcerns(): Record<string, () => unknown>;

  override alarm(): Promise<void> {
    return this.inOwnScope(() => this.alarms.run(this.alarmConcerns()));
  }

  /** Every stub call of the relay's arrives here: the method, run under its caller's id. */
  async scopedCall(rid: string, method: string, args: unknown[]): Promise<unknown> {
    const target = (this as unknown as Record<string, unknown>)[method];
    if (NOT_CALLABLE.has(method) || typeof target !== 'function') throw new Error(`No such method: ${method}`);
    return inScope(rid, () => (target as (...a: unknown[]) => unknown).apply(this, args));
  }

  /** Runs a fetch from the Worker under the id it handed on. */
  protected inRequestScope<T>(request: Request, work: () => T): T {
    return inScope(request.headers.get(RID_HEADER) ?? newRid(), work);
  }

  /** Runs the work of one socket event under an id of its own, derived from the socket's. */
  protected inSocketScope<T>(ws: WebSocket, work: () => T): T {
    let rid = this.socketRids.get(ws);
    if (rid === undefined) {
      rid = (ws.deserializeAttachment() as SocketScope | null)?.rid ?? newRid();
      this.socketRids.set(ws, rid);
    }
    return inScope(childRid(rid), work);
  }

  /** Runs work this object started on its own (an alarm) under a fresh id. */
  protected inOwnScope<T>(work: () => T): T {
    return inScope(newRid(), work);
  }
}

/** A stub whose calls carry the caller's request id into the object. */
export function scoped<T extends DurableObjectStub<ScopedObject>>(stub: T): T {
  const target = stub as unknown as Record<string | symbol, unknown> & { scopedCall(rid: string, method: string, args: unknown[]): unknown };
  return new Proxy(stub, {
    get(_, prop) {
      if (prop === 'fetch') {
        return (input: Request, init?: RequestInit) => {
          const request = new Request(input, init);
          request.headers.set(RID_HEADER, currentRid());
          return stub.fetch(request);
        };
      }
      // A stub answers any name with a remote method; only its own plain fields (id, name) are not.
      if (typeof prop !== 'string' || prop === 'id' || prop === 'name') return Reflect.get(stub, prop, stub);
      if (prop === 'then') return undefined; // a stub is not a promise: awaiting one must not call it
      return (...args: unknown[]) => target.scopedCall(currentRid(), prop, args);
    },
  });
}
