// Counts kept in memory between flushes: a name → number map, and the time of its first count, which
// picks the hour the counts are written under and when they must be written at the latest.
import { HOUR_MS, hourOf } from '../db/metrics.ts';

export interface Taken {
  /** The hour they are written under: that of the first count. */
  hour: number;
  since: number;
  counts: Map<string, number>;
}

export class Tally {
  private counts = new Map<string, number>();
  /** When the first count since the last take came (ms); null when there is none. */
  since: number | null = null;

  get empty(): boolean {
    return this.counts.size === 0;
  }

  /** Adds `n` to `name`; `now` is read only for the first count since the last take. */
  add(name: string, n: number, now: () => number): void {
    if (n <= 0) return;
    if (this.since === null) this.since = now();
    this.counts.set(name, (this.counts.get(name) ?? 0) + n);
  }

  /**
   * When these counts are to be written: `every` after the first, and no later than the end of its hour,
   * so an hour's row holds that hour's counts (up to the moments an alarm takes to fire).
   */
  dueAt(every: number): number | null {
    return this.since === null ? null : Math.min(this.since + every, hourOf(this.since) + HOUR_MS);
  }

  /** Takes the counts (and their hour) out, leaving the tally empty. */
  take(): Taken | null {
    if (this.since === null) return null;
    const taken = { hour: hourOf(this.since), since: this.since, counts: this.counts };
    this.counts = new Map();
    this.since = null;
    return taken;
  }

  /** Puts back counts whose write failed, to go with the next one (under the hour of whichever came first). */
  restore(taken: Taken): void {
    for (const [name, n] of taken.counts) this.counts.set(name, (this.counts.get(name) ?? 0) + n);
    this.since = this.since === null ? taken.since : Math.min(this.since, taken.since);
  }
}
