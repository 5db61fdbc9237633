// The D1 migrations as a self-hoster meets them: `wrangler d1 migrations apply` on a fresh local D1,
// and on one holding the previous release's schema and data (test/deploy/fixtures/release-0.1.0.sql,
// made by scripts/release-snapshot.ts from that release's own relay). Nothing may be lost, only the
// newer migrations may run, and the upgraded database must be the one a fresh install gets. Every
// wrangler call is real (local D1 on miniflare); the databases are read straight from their files.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations as apply, LOCAL_ENV, startLocalRelay } from '../../scripts/local-relay.ts';
import { generateSigningKey } from '../../src/relay/auth/keys.ts';
import { databaseShape, drizzleShape } from './drizzle-shape.ts';
import { appliedMigrations, rowsOf, schemaOf, tableNames, type Row, type TableShape } from './local-d1.ts';
import { wrangler } from './wrangler.ts';
import { FIXTURE_DISABLED, FIXTURE_HOST, FIXTURE_MEMBER, FIXTURE_OWNER, RELEASE_FIXTURE, RELEASE_MIGRATIONS } from './release-fixture.ts';

const root = path.resolve(import.meta.dirname, '../..');
const migrations = readdirSync(path.join(root, 'migrations'))
  .filter((name) => name.endsWith('.sql'))
  .sort();
const newer = migrations.filter((name) => !RELEASE_MIGRATIONS.includes(name));
const work = mkdtempSync(path.join(tmpdir(), 'tether-migrations-'));
const fresh = path.join(work, 'fresh');
const upgraded = path.join(work, 'upgraded');

let freshSchema: Record<string, TableShape>;

beforeAll(() => {
  apply(fresh);
  freshSchema = schemaOf(fresh);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a fresh local D1', () => {
  it('takes every migration in order, and a second run applies none', () => {
    expect(appliedMigrations(fresh)).toEqual(migrations);
    expect(apply(fresh)).toMatch(/No migrations to apply/);
    expect(appliedMigrations(fresh)).toEqual(migrations);
  });

  it("has exactly the tables, columns, keys and indexes drizzle's schema declares", () => {
    const { d1_migrations: _wranglers, ...tables } = freshSchema;
    expect(databaseShape(tables)).toEqual(drizzleShape());
  });

  it('leaves drizzle-kit nothing to generate: the migrations are up to date with the schema', () => {
    // Into a copy of migrations/, so a pending change shows up there and not in the tree.
    const copy = path.join(work, 'drizzle');
    cpSync(path.join(root, 'migrations'), path.join(copy, 'migrations'), { recursive: true });
    // drizzle-kit joins its paths onto './': relative ones from the copy's folder.
    const run = spawnSync(
      process.execPath,
      [
        path.join(root, 'node_modules', 'drizzle-kit', 'bin.cjs'),
        'generate',
        '--dialect',
        'sqlite',
        '--schema',
        path.relative(copy, path.join(root, 'src', 'relay', 'db', 'schema.ts')),
        '--out',
        'migrations',
      ],
      { cwd: copy, encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/No schema changes/);
    expect(
      readdirSync(path.join(copy, 'migrations'))
        .filter((name) => name.endsWith('.sql'))
        .sort(),
    ).toEqual(migrations);
  });
});

describe("the previous release's D1, upgraded", () => {
  let before: { schema: Record<string, TableShape>; migrations: string[] };
  let beforeRows: Record<string, Row[]>;
  let applyOutput: string;
  /** Each table of the release with its columns then: later migrations may add columns, never drop one. */
  let releaseColumns: Record<string, string[]>;

  beforeAll(() => {
    wrangler(['d1', 'execute', 'tether', '--local', '--persist-to', upgraded, '--file', RELEASE_FIXTURE, ...LOCAL_ENV]);
    const schema = schemaOf(upgraded);
    before = { schema, migrations: appliedMigrations(upgraded) };
    const { d1_migrations: _applied, ...tables } = schema;
    releaseColumns = Object.fromEntries(Object.entries(tables).map(([name, table]) => [name, table.columns.map((c) => String(c.name))]));
    beforeRows = rowsOf(upgraded, releaseColumns);
    applyOutput = apply(upgraded);
  });

  it('starts as the release left it: migrations 0000-0003 applied and rows in every table', () => {
    expect(before.migrations).toEqual(RELEASE_MIGRATIONS);
    const empty = Object.entries(beforeRows)
      .filter(([, rows]) => rows.length === 0)
      .map(([table]) => table);
    expect(empty).toEqual([]);
    // Every table the release's migrations make (released migrations are never edited).
    const releaseTables = RELEASE_MIGRATIONS.flatMap((name) =>
      [...readFileSync(path.join(root, 'migrations', name), 'utf8').matchAll(/CREATE TABLE `(\w+)`/g)].map((m) => m[1]!),
    );
    expect(Object.keys(beforeRows).sort()).toEqual(releaseTables.sort());
  });

  it('runs only the migrations newer than the release, once', () => {
    expect(appliedMigrations(upgraded)).toEqual([...RELEASE_MIGRATIONS, ...newer]);
    for (const name of RELEASE_MIGRATIONS) expect(applyOutput).not.toContain(name);
    for (const name of newer) expect(applyOutput).toContain(name);
    if (newer.length === 0) expect(applyOutput).toMatch(/No migrations to apply/);
  });

  it('keeps every row of every table with the same values', () => {
    const after = rowsOf(upgraded, releaseColumns);
    for (const table of Object.keys(releaseColumns)) {
      expect(after[table], table).toEqual(beforeRows[table]);
    }
  });

  it('ends with the schema a fresh install gets', () => {
    expect(tableNames(upgraded)).toEqual(Object.keys(freshSchema).sort());
    expect(schemaOf(upgraded)).toEqual(freshSchema);
  });

  it("serves the release's data: its people sign in with their passwords and find their host and chats", async () => {
    const assets = path.join(work, 'web');
    mkdirSync(assets);
    writeFileSync(path.join(assets, 'index.html'), '<!doctype html><title>Tether</title>');
    const relay = await startLocalRelay({
      persistTo: upgraded,
      assets,
      quiet: true,
      vars: { TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('upgrade')]) },
    });
    try {
      const call = async (method: string, route: string, body?: unknown, token?: string) => {
        const res = await fetch(`${relay.url}${route}`, {
          method,
          headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      const owner = await call('POST', '/api/auth/signin', { email: FIXTURE_OWNER.email, password: FIXTURE_OWNER.password });
      expect(owner.status).toBe(200);
      const hosts = await call('GET', '/api/hosts', undefined, owner.body.accessToken);
      expect(hosts.body.hosts.map((h: { name: string }) => h.name)).toContain(FIXTURE_HOST.name);
      const chats = await call('GET', '/api/chats', undefined, owner.body.accessToken);
      expect(chats.body.chats.map((c: { info: { chatId: string } }) => c.info.chatId).sort()).toEqual([...FIXTURE_HOST.chats].sort());

      const member = await call('POST', '/api/auth/signin', { email: FIXTURE_MEMBER.email, password: FIXTURE_MEMBER.password });
      expect(member.status).toBe(200);
      const teams = await call('GET', '/api/teams', undefined, member.body.accessToken);
      expect(teams.body.teams.map((t: { name: string }) => t.name)).toEqual(['Platform']);
      // Disabled in the release, still disabled.
      const disabled = await call('POST', '/api/auth/signin', { email: FIXTURE_DISABLED.email, password: FIXTURE_DISABLED.password });
      expect(disabled).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    } finally {
      await relay.stop();
    }
    // The relay's own start applied migrations again: nothing new, nothing lost.
    expect(appliedMigrations(upgraded)).toEqual(migrations);
  });
});
