// The replies a host link waits on: a request goes out to the host with an id, and the host's Reply
// with that id settles it. It knows no socket: the link sends, and hands every Reply it reads here.
//
// - Each waiting request is answered exactly once: by the host's Reply, by `host-timeout` when the
//   host is silent too long, or by `host-offline` when the link is lost (`failAll`).
// - A Reply nobody waits for (late, after its timeout; unknown; without an id) is dropped.
// - The same id asked again while it waits gets the same answer, not a second send.
// Nothing survives a restart: the socket a request went out on does not either.
import type { Reply, WireError } from '../../contracts/index.ts';

interface Waiter {
  resolve(reply: Reply): void;
  timer: ReturnType<typeof setTimeout>;
  promise: Promise<Reply>;
}

export class LinkReplies {
  private readonly waiters = new Map<string, Waiter>();
  private readonly counted: (error: WireError) => void;

  /** `counted` hears every answer the relay gives for the host (HostLink counts them by code). */
  constructor(counted: (error: WireError) => void) {
    this.counted = counted;
  }

  /** An answer the relay gives for the host (offline, timed out, refused), counted by its code. */
  fail(id: string, error: WireError): Reply {
    this.counted(error);
    return { id, ok: false, error };
  }

  /** The answer already awaited for this id, if a request with it is still out. */
  pending(id: string): Promise<Reply> | undefined {
    return this.waiters.get(id)?.promise;
  }

  /** Waits for the host's Reply to `id`; after `timeoutMs` without one, answers `host-timeout`. */
  wait(id: string, timeoutMs: number): Promise<Reply> {
    let resolve!: (reply: Reply) => void;
    const promise = new Promise<Reply>((r) => {
      resolve = r;
    });
    const timer = setTimeout(() => {
      this.waiters.delete(id);
      resolve(this.fail(id, { code: 'host-timeout', message: `The host did not answer within ${timeoutMs} ms` }));
    }, timeoutMs);
    this.waiters.set(id, { resolve, timer, promise });
    return promise;
  }

  /** Stops waiting on `id` without answering it: the request never went out (its send failed). */
  cancel(id: string): void {
    const waiter = this.waiters.get(id);
    if (!waiter) return;
    this.waiters.delete(id);
    clearTimeout(waiter.timer);
  }

  /** A Reply from the host: it settles the request with its id, or is dropped when none waits. */
  settle(reply: Reply): void {
    if (typeof reply.id !== 'string') return; // the host could not read one of our frames; nothing to settle
    const waiter = this.waiters.get(reply.id);
    if (!waiter) return;
    this.waiters.delete(reply.id);
    clearTimeout(waiter.timer);
    waiter.resolve(reply);
  }

  /** Answers every waiting request `host-offline` with `message`: what they went out on will not answer. */
  failAll(message: string): void {
    for (const [id, waiter] of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(this.fail(id, { code: 'host-offline', message }));
    }
    this.waiters.clear();
  }
}
