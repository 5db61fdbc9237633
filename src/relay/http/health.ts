// GET /api/health: whether this deployment can serve. 503 when D1 does not answer or lacks a migration
// this build brings (a deploy that skipped `wrangler d1 migrations apply` shows up here, not as odd
// failures later). One D1 statement; the build's own facts are read from files bundled with it.
import { Hono } from 'hono';
import type { Health } from '../../contracts/index.ts';
import journal from '../../../migrations/meta/_journal.json' with { type: 'json' };
import pkg from '../../../package.json' with { type: 'json' };
import { failureText } from '../db/failures.ts';
import { appliedMigrations } from '../db/health.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';

/** The migrations this build expects, oldest first (drizzle-kit's journal, bundled at build time). */
const EXPECTED = journal.entries.map((entry) => entry.tag);

export const health = new Hono<{ Bindings: Env }>();

health.get('/', async (c) => {
  const build = { version: pkg.version, commit: c.env.TETHER_COMMIT ?? null };
  const expected = EXPECTED.at(-1)!;
  let answer: Health;
  try {
    const applied = await appliedMigrations(c.env.DB);
    const pending = EXPECTED.filter((tag) => !applied.includes(tag));
    answer = { ok: pending.length === 0, ...build, db: 'ok', migrations: { applied: applied.at(-1) ?? null, expected, pending } };
  } catch (error) {
    log.error('health: D1 unreachable', { error: failureText(error) });
    answer = { ok: false, ...build, db: 'unreachable', migrations: { applied: null, expected, pending: null } };
  }
  return c.json(answer, answer.ok ? 200 : 503);
});
