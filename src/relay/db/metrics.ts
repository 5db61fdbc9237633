// The relay's counters and what is connected, in D1 (relay_counters, relay_sockets): written by the
// flushes of src/relay/metrics, read for the owner's route. Plain D1 statements: the counters' upsert
// reads its rows from a JSON object, which drizzle's builders do not express.
import type { relaySockets } from './schema.ts';

/** Counters are kept per hour: HOUR_MS long, starting at hourOf(t). */
export const HOUR_MS = 3_600_000;

/** The start (ms) of the hour holding `t`. */
export function hourOf(t: number): number {
  return Math.floor(t / HOUR_MS) * HOUR_MS;
}

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
  const statements: D1PreparedStatement[] = [];
  if (write.counts && write.counts.size > 0) {
    // Every name in one statement however many there are (D1 binds at most 100 parameters to one): the
    // counts go as one JSON object that json_each reads back into rows. `WHERE true` keeps SQLite from
    // reading the upsert's ON as a join's.
    statements.push(
      d1
        .prepare(`INSERT INTO relay_counters (hour, name, value)
      SELECT ?, key, value FROM json_each(?) WHERE true
      ON CONFLICT (hour, name) DO UPDATE SET value = relay_counters.value + excluded.value`)
        .bind(write.hour, JSON.stringify(Object.fromEntries(write.counts))),
    );
  }
  const row = write.sockets;
  if (row && row.sockets > 0) {
    statements.push(
      d1
        .prepare(`INSERT INTO relay_sockets (object_id, kind, sockets, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (object_id) DO UPDATE SET kind = excluded.kind, sockets = excluded.sockets, expires_at = excluded.expires_at`)
        .bind(row.objectId, row.kind, row.sockets, row.expiresAt),
    );
  } else if (row) {
    statements.push(d1.prepare('DELETE FROM relay_sockets WHERE object_id = ?').bind(row.objectId));
  }
  if (statements.length === 1) await statements[0]!.run();
  else if (statements.length > 1) await d1.batch(statements);
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
  const thisHour = hourOf(now);
  const cutoff = thisHour - KEEP_HOURS * HOUR_MS;
  const [, , , sockets, recent, totals] = await d1.batch([
    d1
      .prepare(`INSERT INTO relay_counters (hour, name, value)
      SELECT 0, name, SUM(value) FROM relay_counters WHERE hour > 0 AND hour < ? GROUP BY name
      ON CONFLICT (hour, name) DO UPDATE SET value = relay_counters.value + excluded.value`)
      .bind(cutoff),
    d1.prepare('DELETE FROM relay_counters WHERE hour > 0 AND hour < ?').bind(cutoff),
    d1.prepare('DELETE FROM relay_sockets WHERE expires_at <= ?').bind(now),
    d1.prepare('SELECT kind, SUM(sockets) AS sockets FROM relay_sockets GROUP BY kind'),
    d1.prepare('SELECT hour, name, value FROM relay_counters WHERE hour >= ?').bind(thisHour - (RECENT_HOURS - 1) * HOUR_MS),
    d1.prepare('SELECT name, SUM(value) AS value FROM relay_counters GROUP BY name'),
  ]);
  const connected: Record<ObjectKind, number> = { host: 0, lobby: 0, chat: 0 };
  for (const { kind, sockets: n } of sockets!.results as { kind: ObjectKind; sockets: number }[]) connected[kind] = n;
  return {
    connected,
    recent: recent!.results as StoredMetrics['recent'],
    totals: totals!.results as StoredMetrics['totals'],
  };
}
