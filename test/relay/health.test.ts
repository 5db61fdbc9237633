// GET /api/health inside workerd with real D1: the version, the migration level against the
// migrations this build brings, whether the key secrets import, and 503 when D1 lacks a migration or
// does not answer, when the signing keys are missing or broken, or when push keys are set but broken.
import { SELF, env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { HealthSchema } from '../../src/contracts/index.ts';
import app from '../../src/relay/index.ts';
import { generateSigningKey } from '../../src/relay/auth/keys.ts';
import pkg from '../../package.json' with { type: 'json' };

// The migrations directory as the test pool applied it (vitest.config.ts reads it with readD1Migrations).
const tags = env.TEST_MIGRATIONS.map((migration) => migration.name.replace(/\.sql$/, ''));
const newest = tags.at(-1)!;

async function health(): Promise<{ status: number; body: unknown; rid: string | null }> {
  const res = await SELF.fetch('http://relay.test/api/health');
  return { status: res.status, body: await res.json(), rid: res.headers.get('X-Request-Id') };
}

describe('GET /api/health', () => {
  it('answers ok with the version, D1 reachable and every migration of this build applied', async () => {
    const { status, body, rid } = await health();
    expect(status).toBe(200);
    expect(HealthSchema.parse(body)).toEqual({
      ok: true,
      version: pkg.version,
      commit: null,
      db: 'ok',
      migrations: { applied: newest, expected: newest, pending: [] },
      keys: { signing: 'ok', push: 'off' },
    });
    expect(rid).toMatch(/^[0-9a-f]{16}$/);
  });

  it('answers 503 naming the migration a deploy skipped', async () => {
    await env.DB.prepare('DELETE FROM d1_migrations WHERE name = ?').bind(`${newest}.sql`).run();
    try {
      const { status, body } = await health();
      expect(status).toBe(503);
      expect(HealthSchema.parse(body)).toMatchObject({
        ok: false,
        db: 'ok',
        migrations: { applied: tags.at(-2), expected: newest, pending: [newest] },
      });
    } finally {
      await env.DB.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(`${newest}.sql`).run();
    }
  });

  it('answers 503 with every migration pending on a D1 that was never migrated', async () => {
    await env.DB.prepare('ALTER TABLE d1_migrations RENAME TO d1_migrations_aside').run();
    try {
      const { status, body } = await health();
      expect(status).toBe(503);
      expect(HealthSchema.parse(body)).toMatchObject({ ok: false, db: 'ok', migrations: { applied: null, pending: tags } });
    } finally {
      await env.DB.prepare('ALTER TABLE d1_migrations_aside RENAME TO d1_migrations').run();
    }
  });

  it('answers 503 when D1 does not answer, and the commit the deployment recorded', async () => {
    // No D1 outage can be made on demand: this binding fails every statement as an unreachable one does.
    const unreachable = {
      prepare: () => {
        throw new Error('D1_ERROR: Network connection lost.');
      },
    } as unknown as D1Database;
    const res = await app.request('/api/health', {}, { ...env, DB: unreachable, TETHER_COMMIT: '4eb4aff' });
    expect(res.status).toBe(503);
    expect(HealthSchema.parse(await res.json())).toEqual({
      ok: false,
      version: pkg.version,
      commit: '4eb4aff',
      db: 'unreachable',
      migrations: { applied: null, expected: newest, pending: null },
      keys: { signing: 'ok', push: 'off' },
    });
  });

  /** The answer to a relay whose secrets are these, its body as text too (to look for key material in). */
  async function withSecrets(secrets: Partial<Record<'TETHER_SIGNING_KEYS' | 'TETHER_VAPID_KEYS', string | undefined>>) {
    const res = await app.request('/api/health', {}, { ...env, ...secrets });
    const text = await res.text();
    return { status: res.status, text, body: HealthSchema.parse(JSON.parse(text)) };
  }

  it('answers 503 when the signing keys are missing, so a deploy without them is not reported healthy', async () => {
    for (const missing of [undefined, '']) {
      const { status, body } = await withSecrets({ TETHER_SIGNING_KEYS: missing });
      expect(status).toBe(503);
      expect(body).toMatchObject({ ok: false, db: 'ok', migrations: { pending: [] }, keys: { signing: 'missing', push: 'off' } });
    }
  });

  it('answers 503 when the signing keys do not parse or import, without echoing them', async () => {
    const key = await generateSigningKey('bad');
    const broken = [
      'not json',
      JSON.stringify([{ ...key, crv: 'P-384' }]), // not the shape: the wrong curve
      JSON.stringify([{ ...key, x: key.y }]), // the shape, but no point on the curve: the import fails
    ];
    for (const source of broken) {
      const { status, text, body } = await withSecrets({ TETHER_SIGNING_KEYS: source });
      expect(status).toBe(503);
      expect(body.keys).toEqual({ signing: 'invalid', push: 'off' });
      expect(text).not.toContain(key.d);
    }
  });

  it('answers ok with push on when the push keys import, and 503 when they are set but broken', async () => {
    const vapid = await generateSigningKey('vapid');
    const on = await withSecrets({ TETHER_VAPID_KEYS: JSON.stringify([vapid]) });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ ok: true, keys: { signing: 'ok', push: 'ok' } });
    const broken = await withSecrets({ TETHER_VAPID_KEYS: JSON.stringify([{ ...vapid, d: undefined }]) });
    expect(broken.status).toBe(503);
    expect(broken.body).toMatchObject({ ok: false, keys: { signing: 'ok', push: 'invalid' } });
    expect(broken.text).not.toContain(vapid.x);
  });
});
