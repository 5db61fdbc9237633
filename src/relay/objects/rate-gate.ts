// RateGate: one token bucket, one object per bucket key (`signin:ip:1.2.3.4`, `tickets:session:…`),
// so every Worker isolate in the world counts against the same bucket. The bucket lives in memory and
// is written to storage on each take, so an evicted gate does not hand out a fresh burst; once the
// bucket would be full again an alarm deletes it, leaving no row behind for keys that went quiet.
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.ts';
import { TokenBucket, type BucketState, type RateLimit } from '../auth/token-bucket.ts';

const STATE_KEY = 'bucket';

interface StoredBucket extends BucketState {
  /** When the bucket is full again, and may be forgotten. */
  fullAt: number;
}

export interface GateAnswer {
  ok: boolean;
  retryAfterMs: number;
}

export class RateGate extends DurableObject<Env> {
  private bucket: TokenBucket | null = null;
  private stored: StoredBucket | undefined;
  /** The clock the bucket runs on; a field so a test can hold time still or move it on. */
  now: () => number = () => Date.now();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      this.stored = await ctx.storage.get<StoredBucket>(STATE_KEY);
    });
  }

  async take(limit: RateLimit): Promise<GateAnswer> {
    const now = this.now();
    this.bucket ??= new TokenBucket(limit, now, this.stored);
    const retryAfterMs = this.bucket.take(limit, now);
    this.stored = { ...this.bucket.state, fullAt: this.bucket.fullAt(limit) };
    await this.ctx.storage.put(STATE_KEY, this.stored);
    await this.ctx.storage.setAlarm(this.stored.fullAt);
    return { ok: retryAfterMs === 0, retryAfterMs };
  }

  override async alarm(): Promise<void> {
    // Full again: a fresh bucket is the same thing, so keep nothing. (A take since the alarm was set
    // moved it later; that take set a new alarm.)
    if (!this.stored || this.now() < this.stored.fullAt) return;
    this.bucket = null;
    this.stored = undefined;
    await this.ctx.storage.deleteAll();
  }
}
