// Where a flush of counts goes: D1 always (the owner's route and the app read it there), and Workers
// Analytics Engine as well when the METRICS binding is set.
import { writeFlush, type FlushWrite } from '../db/metrics.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import { writeDataPoints, type CountSource } from './analytics-engine.ts';

/** Rejects when D1 did not take the write (the caller keeps the counts for its next flush). */
export async function recordFlush(env: Env, source: CountSource, write: FlushWrite): Promise<void> {
  await writeFlush(env.DB, write);
  // After D1 took them, so a retried flush does not send the same points twice.
  if (!env.METRICS) return;
  try {
    writeDataPoints(env.METRICS, source, write);
  } catch (error) {
    log.warn('metrics: analytics engine refused data points', { source, error: String(error) });
  }
}
