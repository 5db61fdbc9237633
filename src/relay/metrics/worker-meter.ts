// The Worker's own counts (the errors its routes answer), one tally per isolate. Like an object's they
// are kept in memory and written at most once a minute; with no alarm to wake it, the isolate checks
// after each request whether a write is due (one comparison) and hands the write to waitUntil.
// What can be lost: counts made in the minute after a write by an isolate that serves no request
// after that minute before it is evicted.
import type { Context, MiddlewareHandler } from 'hono';
import { errorCounter } from '../../contracts/index.ts';
import { failureText } from '../db/failures.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import { FLUSH_EVERY_MS } from './meter.ts';
import { recordFlush } from './record.ts';
import { Tally } from './tally.ts';

export class IsolateMeter {
  /** The clock; a field so a test can move time on without waiting for it. */
  now: () => number = () => Date.now();
  private readonly tally = new Tally();
  private lastWrite = -Infinity;
  /** Writes under way. Not chained: a promise of one request is not awaited by another's. */
  private writing = 0;

  count(name: string, n = 1): void {
    this.tally.add(name, n, this.now);
  }

  /** Whether a write is due: something counted, and a minute since the last write (the first one at once). */
  due(): boolean {
    return !this.tally.empty && this.writing === 0 && this.now() >= this.lastWrite + FLUSH_EVERY_MS;
  }

  /** Writes what was counted. Never throws: counts D1 refused go with the next write. */
  async flush(env: Env): Promise<void> {
    this.lastWrite = this.now();
    const taken = this.tally.take();
    if (!taken) return;
    this.writing += 1;
    try {
      await recordFlush(env, 'worker', { hour: taken.hour, counts: taken.counts, sockets: null });
    } catch (error) {
      this.tally.restore(taken);
      log.warn('metrics not written', { kind: 'worker', error: failureText(error) });
    } finally {
      this.writing -= 1;
    }
  }
}

export const workerMeter = new IsolateMeter();

/** Counts an error the Worker answered, by its code. */
export function countError(code: string): void {
  workerMeter.count(errorCounter(code));
}

/** After each request: writes this isolate's counts when due, without holding the response. */
export const writeDueCounts: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  await next();
  if (workerMeter.due()) waitUntil(c, workerMeter.flush(c.env));
};

function waitUntil(c: Context, work: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(work);
  } catch {
    // No execution context (a test calling the app directly): the write runs on unwatched.
  }
}
