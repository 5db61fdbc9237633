// How long a client or a host waits before connecting again: the one reconnect delay of the project,
// used by the SDK's sockets and token refresh (src/client) and by the host's link to the relay
// (src/host/link/relay-link.ts). It lives in contracts because it is the one layer both of them
// import and it needs nothing of either: no DOM, no Node, no timers (the caller sets its own), only
// arithmetic. Written here rather than taken from a retry library: those wrap one promise-returning
// call, while a reconnect loop needs only the next delay (it decides itself when to give up: a
// 4401/4403 close, close(), stop()), and this is a few lines.
//
// Exponential and capped, and jittered (half fixed, half random) so that the phones, tabs and hosts
// that lost a relay together do not all come back in the same millisecond when it restarts.

export interface BackoffOptions {
  /** The first delay's ceiling. Default 250 ms. */
  baseMs?: number;
  /** No delay is longer. Default 15 000 ms. */
  maxMs?: number;
  /** Where the random half comes from (tests pin it). */
  random?: () => number;
}

export class Backoff {
  private attempt = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 250;
    this.maxMs = options.maxMs ?? 15_000;
    this.random = options.random ?? Math.random;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(ceiling / 2 + this.random() * (ceiling / 2));
  }

  /** A connection that worked: the next failure starts from the base again. */
  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}
