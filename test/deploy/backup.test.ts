// Backing up and restoring the relay's D1 as docs/self-hosting.md tells a self-hoster to: `npm run backup` and
// `npm run restore` (scripts/backup.ts, scripts/restore.ts) run for real, with the real wrangler, on
// local D1s: the scripts' `--local` flag is their only difference from the commands there (wrangler
// gets `--local` where they would pass `--remote`; no Cloudflare account is reachable from a test).
// Each database lives beside its own copy of wrangler.toml (`<dir>/.wrangler/state`), since
// `wrangler d1 export --local` reads only the state folder beside its config. The source is the
// previous release's D1 (test/deploy/fixtures) upgraded to the current migrations, with rows added in
// the newest tables; databases are read straight from their files once wrangler has exited.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStateOf as stateOf } from '../../scripts/backup/d1-target.ts';
import { readExport } from '../../scripts/backup/export-file.ts';
import { loadSql, parentsFirst } from '../../scripts/backup/load-file.ts';
import { appliedMigrations, localD1File, rowCounts, rowsOf, schemaOf, type Row } from './local-d1.ts';
import { RELEASE_FIXTURE, RELEASE_MIGRATIONS } from './release-fixture.ts';
import { wrangler } from './wrangler.ts';

const root = path.resolve(import.meta.dirname, '../..');
const migrations = readdirSync(path.join(root, 'migrations'))
  .filter((name) => name.endsWith('.sql'))
  .sort();
const work = mkdtempSync(path.join(tmpdir(), 'tether-backup-'));

/** A folder holding a copy of the repository's wrangler.toml; answers the config's path. */
function configIn(name: string, withMigrations = false): string {
  const dir = path.join(work, name);
  mkdirSync(dir);
  cpSync(path.join(root, 'wrangler.toml'), path.join(dir, 'wrangler.toml'));
  if (withMigrations) cpSync(path.join(root, 'migrations'), path.join(dir, 'migrations'), { recursive: true });
  return path.join(dir, 'wrangler.toml');
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run <script> -- <args>`, i.e. `node scripts/<script>.ts <args>`, from `work` (so a default backups/ lands there). */
function script(name: 'backup' | 'restore', args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts', `${name}.ts`), ...args], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Every table's every column, by table (wrangler's d1_migrations left to appliedMigrations). */
function allColumns(state: string): Record<string, string[]> {
  const { d1_migrations: _wranglers, ...tables } = schemaOf(state);
  return Object.fromEntries(Object.entries(tables).map(([name, table]) => [name, table.columns.map((c) => String(c.name))]));
}

/** sqlite_sequence: each AUTOINCREMENT table's counter. */
function counters(state: string): Record<string, number> {
  const db = new DatabaseSync(localD1File(state), { readOnly: true });
  try {
    return Object.fromEntries(
      db
        .prepare('SELECT name, seq FROM sqlite_sequence ORDER BY name')
        .all()
        .map((row) => [String(row.name), Number(row.seq)]),
    );
  } finally {
    db.close();
  }
}

/** Everything a restore could change in a database: rows, migrations, counters. */
function snapshot(state: string): { rows: Record<string, Row[]>; migrations: string[]; counters: Record<string, number> } {
  return { rows: rowsOf(state, allColumns(state)), migrations: appliedMigrations(state), counters: counters(state) };
}

const source = configIn('source', true);
let releaseColumns: Record<string, string[]>;
let releaseRows: Record<string, Row[]>;
let backupFile: string;

beforeAll(() => {
  const local = ['--local', '--env', 'production', '--config', source];
  wrangler(['d1', 'execute', 'DB', ...local, '--file', RELEASE_FIXTURE]);
  releaseColumns = allColumns(stateOf(source));
  releaseRows = rowsOf(stateOf(source), releaseColumns);
  wrangler(['d1', 'migrations', 'apply', 'DB', ...local]);
  // Rows in the tables newer than the release, an audit line whose text needs escaping (quotes, a
  // semicolon, a newline), and an AUTOINCREMENT counter ahead of the largest id (its row deleted):
  // a restore must not hand that id out again.
  const db = new DatabaseSync(localD1File(stateOf(source)));
  try {
    db.exec(`
      INSERT INTO relay_counters (hour, name, value) VALUES (493000, 'events.in', 42), (493000, 'errors.forbidden', 1);
      INSERT INTO relay_sockets (object_id, kind, sockets, expires_at) VALUES ('0a1b2c', 'host', 1, 1790000000000);
      INSERT INTO devices (id, user_id, name, public_key, created_at)
        SELECT 'restore-test-device', id, 'laptop', '{"kty":"OKP","crv":"Ed25519","x":"AAAA"}', 1790000000000 FROM users LIMIT 1;
      INSERT INTO link_tokens (host_id, jti, expires_at) SELECT id, 'restore-test-jti', 1790000000000 FROM hosts LIMIT 1;
      INSERT INTO trust_revocations (id, host_id, user_id, target_kind, target_id, statement, created_at)
        SELECT 'restore-test-sig', NULL, id, 'device', 'restore-test-device', '{}', 1790000000000 FROM users LIMIT 1;
      INSERT INTO audit (id, at, action, detail) VALUES (1000, 1790000000000, 'restore.test', 'it''s "quoted"; and
      on two lines');
      INSERT INTO audit (id, at, action) VALUES (1001, 1790000000001, 'restore.test');
      DELETE FROM audit WHERE id = 1001;
    `);
  } finally {
    db.close();
  }
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm run backup', () => {
  let run: Run;

  beforeAll(async () => {
    run = await script('backup', ['--local', '--config', source]);
  });

  it('writes a whole export, readable only by its owner, to backups/<database>-<time>.sql', () => {
    expect(run.status, run.stderr).toBe(0);
    const files = readdirSync(path.join(work, 'backups'));
    expect(files).toEqual([expect.stringMatching(/^tether-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.sql$/)]);
    backupFile = path.join(work, 'backups', files[0]!);
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);
    const sql = readFileSync(backupFile, 'utf8');
    expect(sql).toMatch(/^CREATE TABLE `hosts`/m);
    for (const name of migrations) expect(sql).toContain(`'${name}'`);
  });

  it('says what it holds and how to restore it', () => {
    const counts = rowCounts(stateOf(source));
    const total = Object.entries(counts)
      .filter(([table]) => table !== 'd1_migrations')
      .reduce((sum, [, n]) => sum + n, 0);
    expect(run.stdout).toContain(`${total} rows in ${Object.keys(counts).length - 1} tables`);
    expect(run.stdout).toContain(`migrations ${migrations[0]} … ${migrations.at(-1)} (${migrations.length})`);
    expect(run.stdout).toContain(`npm run restore -- backups/${path.basename(backupFile)} --database tether-restored`);
  });
});

describe('npm run restore', () => {
  const restored = configIn('restored');

  it('loads a backup into an empty database: every row of every table, the same values, each migration recorded once', async () => {
    const from = snapshot(stateOf(source));
    // The source has rows everywhere, or "every row back" would prove less.
    expect(
      Object.entries(from.rows)
        .filter(([, rows]) => rows.length === 0)
        .map(([table]) => table),
    ).toEqual([]);

    const run = await script('restore', [backupFile, '--local', '--config', restored]);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('each recorded once');

    const to = snapshot(stateOf(restored));
    expect(Object.keys(to.rows)).toEqual(Object.keys(from.rows));
    for (const table of Object.keys(from.rows)) expect(to.rows[table], table).toEqual(from.rows[table]);
    expect(to.migrations).toEqual(migrations);
    const { d1_migrations: _fromOwn, ...fromCounters } = from.counters;
    const { d1_migrations: _toOwn, ...toCounters } = to.counters;
    expect(fromCounters.audit).toBe(1001);
    // The fixture's load left only audit's counter (see the report); the restore keeps every one the source has.
    expect(toCounters).toMatchObject(fromCounters);
    expect(schemaOf(stateOf(restored))).toEqual(schemaOf(stateOf(source)));
  });

  it('refuses a database that already holds data, says so, and changes nothing', async () => {
    const before = snapshot(stateOf(restored));
    const run = await script('restore', [backupFile, '--local', '--config', restored]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /The D1 database "tether" already holds data \(audit: \d+, [^)]*users: 4, visuals: 1\), so nothing was restored and nothing was changed/,
    );
    expect(snapshot(stateOf(restored))).toEqual(before);
  });

  it('restores a backup the previous release made, then applies the newer migrations to its rows', async () => {
    const previous = configIn('previous');
    const run = await script('restore', [RELEASE_FIXTURE, '--local', '--config', previous]);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`applied ${RELEASE_MIGRATIONS.join(', ')} (the backup's level)`);
    expect(appliedMigrations(stateOf(previous))).toEqual(migrations);
    expect(rowsOf(stateOf(previous), releaseColumns)).toEqual(releaseRows);
  });

  it("refuses an empty database already past the backup's migrations, and changes nothing", async () => {
    const ahead = configIn('ahead', true);
    wrangler(['d1', 'migrations', 'apply', 'DB', '--local', '--env', 'production', '--config', ahead]);
    const before = snapshot(stateOf(ahead));
    const run = await script('restore', [RELEASE_FIXTURE, '--local', '--config', ahead]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('is empty but already has migrations the backup had not reached');
    expect(snapshot(stateOf(ahead))).toEqual(before);
  });

  it('refuses a backup from a newer Tether, and a file that is no export, before touching any database', async () => {
    const untouched = configIn('untouched');
    const newer = path.join(work, 'newer.sql');
    writeFileSync(
      newer,
      `${readFileSync(backupFile, 'utf8')}\nINSERT INTO "d1_migrations" ("id","name","applied_at") VALUES(99,'9999_future.sql','2030-01-01 00:00:00');\n`,
    );
    const fromNewer = await script('restore', [newer, '--local', '--config', untouched]);
    expect(fromNewer.status).toBe(1);
    expect(fromNewer.stderr).toContain('made by a newer Tether: its migration 9999_future.sql is not in migrations/');

    const notExport = path.join(work, 'notes.sql');
    writeFileSync(notExport, "SELECT 'not a backup");
    const fromNotes = await script('restore', [notExport, '--local', '--config', untouched]);
    expect(fromNotes.status).toBe(1);
    expect(fromNotes.stderr).toContain('is not a D1 export that can be restored');
    // No wrangler ran: it would have made the local state folder.
    expect(readdirSync(path.dirname(untouched))).toEqual(['wrangler.toml']);
  });
});

describe('reading an export', () => {
  it('takes rows, migrations and counters from INSERTs with or without a column list, quotes and semicolons inside values kept', () => {
    const backup = readExport(
      [
        'PRAGMA defer_foreign_keys=TRUE;',
        "INSERT INTO d1_migrations VALUES(1,'0000_init.sql','2026-01-01 00:00:00');",
        'CREATE TABLE `chats` (`host_id` text NOT NULL, FOREIGN KEY (`host_id`) REFERENCES `hosts`(`id`));',
        `INSERT INTO "chats" ("host_id","title") VALUES('h1',replace('it''s; done\\nnext','\\n',char(10)));`,
        'INSERT INTO "hosts" ("id") VALUES(\'h1\');',
        "INSERT INTO `sqlite_sequence` VALUES('audit',9);",
        `INSERT INTO "sqlite_sequence" ("name","seq") VALUES('d1_migrations',1);`,
      ].join('\n'),
    );
    expect(backup.migrations).toEqual(['0000_init.sql']);
    expect([...backup.rows.keys()]).toEqual(['chats', 'hosts']);
    expect(backup.rows.get('chats')![0]).toContain("'it''s; done");
    expect([...backup.sequences.keys()]).toEqual(['audit']);
    const order = parentsFirst([
      { name: 'chats', sql: 'CREATE TABLE `chats` (`host_id` text, FOREIGN KEY (`host_id`) REFERENCES `hosts`(`id`))' },
      { name: 'hosts', sql: 'CREATE TABLE `hosts` (`id` text, `owner_id` text REFERENCES "users"("id"))' },
      { name: 'users', sql: 'CREATE TABLE `users` (`id` text)' },
    ]);
    expect(order).toEqual(['users', 'hosts', 'chats']);
    expect(
      loadSql(backup, order)
        .split('\n')
        .filter((line) => line.startsWith('INSERT'))
        .map((line) => line.slice(0, 20)),
    ).toEqual(['INSERT INTO "hosts" ', 'INSERT INTO "chats" ', 'INSERT INTO `sqlite_']);
  });
});
