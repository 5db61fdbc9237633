// GET /api/health: whether this deployment can serve. 503 when D1 does not answer or lacks a migration
// this build brings (a deploy that skipped `wrangler d1 migrations apply` shows up here, not as odd
// failures later), or when a key secret does not parse: without signing keys nobody can sign in, and
// push keys that are set but broken fail every subscription (unset push keys only mean no pushes).
// One D1 statement; the keys are the same per-isolate imports sign-in and push use, so a healthy relay
// parses nothing here. The build's own facts are read from files bundled with it.
import { Hono } from 'hono';
import type { Health, KeysHealth } from '../../contracts/index.ts';
import journal from '../../../migrations/meta/_journal.json' with { type: 'json' };
import pkg from '../../../package.json' with { type: 'json' };
import { keySetOf } from '../auth/keys.ts';
import { failureText } from '../db/failures.ts';
import { appliedMigrations } from '../db/health.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import { vapidKeysOf } from '../push/vapid.ts';

/** The migrations this build expects, oldest first (drizzle-kit's journal, bundled at build time). */
const EXPECTED = journal.entries.map((entry) => entry.tag);

async function dbHealth(d1: D1Database, expected: string): Promise<{ ok: boolean; facts: Pick<Health, 'db' | 'migrations'> }> {
  try {
    const applied = await appliedMigrations(d1);
    const pending = EXPECTED.filter((tag) => !applied.includes(tag));
    return { ok: pending.length === 0, facts: { db: 'ok', migrations: { applied: applied.at(-1) ?? null, expected, pending } } };
  } catch (error) {
    log.error('health: D1 unreachable', { error: failureText(error) });
    return { ok: false, facts: { db: 'unreachable', migrations: { applied: null, expected, pending: null } } };
  }
}

/** Whether the key secrets import; a log line names each one's problem, never its contents. */
async function keysHealth(env: Env): Promise<KeysHealth> {
  const vapid = vapidKeysOf(env);
  const [signing, push] = await Promise.all([
    env.TETHER_SIGNING_KEYS ? imports('TETHER_SIGNING_KEYS', keySetOf(env)) : ('missing' as const),
    vapid ? imports('TETHER_VAPID_KEYS', vapid) : ('off' as const),
  ]);
  if (signing === 'missing') log.error('health: TETHER_SIGNING_KEYS is not set: nobody can sign in');
  return { signing, push };
}

async function imports(secret: string, keys: Promise<unknown>): Promise<'ok' | 'invalid'> {
  try {
    await keys;
    return 'ok';
  } catch (error) {
    log.error(`health: ${secret} does not import`, { error: String(error) });
    return 'invalid';
  }
}

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const health = new Hono<{ Bindings: Env }>().get('/', async (c) => {
  const build = { version: pkg.version, commit: c.env.TETHER_COMMIT ?? null };
  const expected = EXPECTED.at(-1)!;
  const [db, keys] = await Promise.all([dbHealth(c.env.DB, expected), keysHealth(c.env)]);
  const answer: Health = { ok: db.ok && keys.signing === 'ok' && keys.push !== 'invalid', ...build, ...db.facts, keys };
  return c.json(answer, answer.ok ? 200 : 503);
});
