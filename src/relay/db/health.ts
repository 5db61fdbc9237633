// What D1 says about itself for the health check: whether it answers, and which migrations it has.
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { failureText } from './failures.ts';

/**
 * The tags of the migrations applied to D1, oldest first, in one statement that also proves D1
 * answers. `wrangler d1 migrations apply` and the test pool's applyD1Migrations both record each
 * applied file in `d1_migrations` (name `0003_push_origin.sql`); a database never migrated has no
 * such table and answers none. Rejects when D1 cannot be reached.
 */
export async function appliedMigrations(d1: D1Database): Promise<string[]> {
  try {
    const rows = await drizzle(d1).all<{ name: string }>(sql`SELECT name FROM d1_migrations ORDER BY id`);
    return rows.map((row) => row.name.replace(/\.sql$/, ''));
  } catch (error) {
    if (failureText(error).includes('no such table')) return [];
    throw error;
  }
}
