// The relay's counters and what is connected, in D1 (relay_counters, relay_sockets): written by the
// flushes of src/relay/metrics, read for the owner's route.
import { eq, gt, gte, lte, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { HOUR_MS, hourOf } from '../metrics/tally.ts';
import { relayCounters, relaySockets } from './schema.ts';

export type ObjectKind = (typeof relaySockets.kind.enumValues)[number];

/** Hours kept one by one; older ones are rolled up into hour 0 (totals stay whole, the table small). */
export const KEEP_HOURS = 30 * 24;
/** The hours the owner's route answers one by one, the current one included. */
export const RECENT_HOURS = 24;

/** One object's socket count; a count of 0 removes its row. */
export interface SocketsRow {
  objectId: string;
  kind: ObjectKind;
  sockets: number;
  expiresAt: number;
}

export interface FlushWrite {
  hour: number;
  counts: ReadonlyMap<string, number> | null;
  sockets: SocketsRow | null;
}

/** What one flush writes: counts added to their hour's rows, and the object's socket row. One round trip. */
export async function writeFlush(d1: D1Database, write: FlushWrite): Promise<void> {
  const db = drizzle(d1);
  const statements = [];
  if (write.counts && write.counts.size > 0) {
    // Every name in one statement however many there are (D1 binds at most 100 parameters to one): the
    // counts go as one JSON object that json_each reads back into rows. `WHERE true` keeps SQLite from
    // reading the upsert's ON as a join's.
    const counts = JSON.stringify(Object.fromEntries(write.counts));
    statements.push(db.run(sql`INSERT INTO relay_counters (hour, name, value)
      SELECT ${write.hour}, key, value FROM json_each(${counts}) WHERE true
      ON CONFLICT (hour, name) DO UPDATE SET value = relay_counters.value + excluded.value`));
  }
  const row = write.sockets;
  if (row && row.sockets > 0) {
    statements.push(db.insert(relaySockets).values(row).onConflictDoUpdate({
      target: relaySockets.objectId,
      set: { kind: row.kind, sockets: row.sockets, expiresAt: row.expiresAt },
    }));
  } else if (row) {
    statements.push(db.delete(relaySockets).where(eq(relaySockets.objectId, row.objectId)));
  }
  const [first, ...rest] = statements;
  if (first) await db.batch([first, ...rest]);
}

export interface StoredMetrics {
  connected: Record<ObjectKind, number>;
  recent: { hour: number; name: string; value: number }[];
  totals: { name: string; value: number }[];
}

/**
 * What is connected now and what was counted, for the owner. Tidies as it reads (one transaction):
 * hours past the kept window are rolled up into hour 0, and socket rows whose object stopped renewing
 * them (it died with its sockets, as on a deploy) are dropped.
 */
export async function readMetrics(d1: D1Database, now: number): Promise<StoredMetrics> {
  const db = drizzle(d1);
  const thisHour = hourOf(now);
  const cutoff = thisHour - KEEP_HOURS * HOUR_MS;
  const [, , , sockets, recent, totals] = await db.batch([
    db.run(sql`INSERT INTO relay_counters (hour, name, value)
      SELECT 0, name, SUM(value) FROM relay_counters WHERE hour > 0 AND hour < ${cutoff} GROUP BY name
      ON CONFLICT (hour, name) DO UPDATE SET value = relay_counters.value + excluded.value`),
    db.run(sql`DELETE FROM relay_counters WHERE hour > 0 AND hour < ${cutoff}`),
    db.delete(relaySockets).where(lte(relaySockets.expiresAt, now)),
    db.select({ kind: relaySockets.kind, sockets: sql<number>`SUM(${relaySockets.sockets})` }).from(relaySockets)
      .where(gt(relaySockets.expiresAt, now)).groupBy(relaySockets.kind),
    db.select().from(relayCounters).where(gte(relayCounters.hour, thisHour - (RECENT_HOURS - 1) * HOUR_MS)),
    db.select({ name: relayCounters.name, value: sql<number>`SUM(${relayCounters.value})` }).from(relayCounters).groupBy(relayCounters.name),
  ]);
  const connected: Record<ObjectKind, number> = { host: 0, lobby: 0, chat: 0 };
  for (const { kind, sockets: n } of sockets) connected[kind] = Number(n);
  return { connected, recent, totals: totals.map(({ name, value }) => ({ name, value: Number(value) })) };
}
