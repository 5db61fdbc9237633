// Whether D1 answers at all, for the health check.
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';

/** Resolves when D1 runs a trivial statement; rejects when it cannot. */
export async function probeDatabase(d1: D1Database): Promise<void> {
  await drizzle(d1).get(sql`SELECT 1`);
}
