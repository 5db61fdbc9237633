// The log of frames an object drops from a host: each one is counted by its caller, but logged only
// within the link's frame budget (RATE_LINK_FRAMES), so a host sending garbage in a loop does not
// become a log line per frame. The next line logged says how many went unlogged before it.
import { TokenBucket, type RateLimit } from '../auth/token-bucket.ts';
import { log, type LogFields } from '../log.ts';

export class DropLog {
  private readonly limit: () => RateLimit;
  private readonly budget: TokenBucket;
  private unlogged = 0;

  constructor(limit: () => RateLimit, now = Date.now()) {
    this.limit = limit;
    this.budget = new TokenBucket(limit(), now);
  }

  warn(msg: string, fields: LogFields, now = Date.now()): void {
    if (this.budget.take(this.limit(), now) > 0) {
      this.unlogged += 1;
      return;
    }
    const unlogged = this.unlogged;
    this.unlogged = 0;
    log.warn(msg, unlogged > 0 ? { ...fields, unlogged } : fields);
  }
}
