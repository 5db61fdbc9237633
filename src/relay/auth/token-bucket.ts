// A token bucket: `max` tokens, refilled evenly so that `max` are back after `perSeconds`. It lets a
// burst of `max` through at once and then the configured rate, which suits both people (a few quick
// retries) and sockets (a page of requests at attach). Time is passed in, so the owner of the bucket
// decides which clock counts (and a test can hold it still).

export interface RateLimit {
  max: number;
  perSeconds: number;
}

export interface BucketState {
  tokens: number;
  at: number;
}

export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(limit: RateLimit, now: number, state?: BucketState) {
    this.tokens = state?.tokens ?? limit.max;
    this.at = state?.at ?? now;
  }

  /** Takes one token: answers 0, or how many ms until one is there (nothing is taken then). */
  take(limit: RateLimit, now: number): number {
    const perMs = limit.max / (limit.perSeconds * 1000);
    // A clock that stepped back refills nothing rather than draining the bucket.
    this.tokens = Math.min(limit.max, this.tokens + Math.max(0, now - this.at) * perMs);
    this.at = Math.max(this.at, now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / perMs));
  }

  /** When the bucket is full again; from then on it is the same as a fresh one and need not be kept. */
  fullAt(limit: RateLimit): number {
    return this.at + Math.ceil(((limit.max - this.tokens) * (limit.perSeconds * 1000)) / limit.max);
  }

  get state(): BucketState {
    return { tokens: this.tokens, at: this.at };
  }
}
