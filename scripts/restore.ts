// `npm run restore -- <file> [--database <name>]`: a `wrangler d1 export` (from `npm run backup`, or
// made by hand, full or --no-schema) loaded into an empty D1. A full export cannot simply be executed:
// wrangler writes each table's rows right after its CREATE, so `chats` rows name `hosts` before it
// exists ("no such table: main.hosts", cloudflare/workers-sdk#5683). So the schema comes from the
// migrations and only the rows from the file:
//   1. the target must hold no rows, and no migration the backup had not reached;
//   2. the migrations the backup had recorded are applied (its schema, recorded in d1_migrations by
//      wrangler itself, so each is listed once; the backup's own d1_migrations rows are not loaded);
//   3. the rows, parents before the tables that reference them, and the AUTOINCREMENT counters, in one
//      `wrangler d1 execute --file` (D1 loads a file whole or not at all);
//   4. the migrations newer than the backup are applied to the restored rows, as an upgrade would;
//   5. every table's row count is checked against the backup.
// wrangler's migrations folder is a staged copy holding only the backup's migrations for step 2, so the
// config wrangler reads is a copy beside it (its database set to the target).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { DB_BINDING, DEPLOY_ENV, productionDatabase, withProductionDatabase } from './deploy/config-file.ts';
import { APP_TABLES, localStateOf, query, quoted, whereFlags, wranglerStep, type Row, type Where } from './backup/d1-target.ts';
import { configPath, findDatabase, listDatabases, runMain, shown, step, Stopped } from './self-host-cli.ts';
import { migrationsAppliedIn } from './wrangler.ts';
import { migrationRange, MIGRATIONS_TABLE, readExport, rowTotal, type D1Export } from './backup/export-file.ts';
import { loadSql, parentsFirst, type TableSchema } from './backup/load-file.ts';

const root = path.resolve(import.meta.dirname, '..');
const migrationsDir = path.join(root, 'migrations');

interface Options {
  database?: string;
  config?: string;
  local: boolean;
  verbose: boolean;
}

const program = new Command('npm run restore --')
  .description('Load a D1 export (npm run backup) into an empty D1 database: migrations first, then the rows')
  .argument('<file>', "the export: backups/<name>-<time>.sql, or any `wrangler d1 export` of the relay's database")
  .option('--database <name-or-id>', `restore into this D1 database instead of the [env.${DEPLOY_ENV}] one wrangler.toml names`)
  .option('--config <file>', "the wrangler config (default: this repository's wrangler.toml)")
  .option('--local', 'restore into the local D1 kept beside the config (.wrangler/state) instead of a remote one', false)
  .option('--verbose', "show wrangler's own output", false)
  .showHelpAfterError();

program.parse(process.argv);
const options = program.opts<Options>();
const file = path.resolve(program.args[0]!);

function readBackup(): D1Export {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Stopped(`Cannot read ${file}: ${(error as Error).message}`);
  }
  let backup: D1Export;
  try {
    backup = readExport(text);
  } catch (error) {
    throw new Stopped(`${file} is not a D1 export that can be restored: ${(error as Error).message}. Nothing was changed.`);
  }
  if (backup.migrations.length === 0) {
    throw new Stopped(
      `${file} records no migrations (no d1_migrations rows), so it is not an export of a Tether relay's database (or it was made with --table). Nothing was changed.`,
    );
  }
  return backup;
}

/** The backup's migrations must be the first ones this checkout has, in the same order. */
function checkMigrations(backup: D1Export, shipped: string[]): void {
  const differ = backup.migrations.findIndex((name, i) => shipped[i] !== name);
  if (differ < 0) return;
  const name = backup.migrations[differ]!;
  throw new Stopped(
    shipped.includes(name)
      ? `The backup recorded its migrations in another order than migrations/ has them (${name} at position ${differ + 1}); it was not made by this project's wrangler d1 migrations apply. Nothing was changed.`
      : `The backup was made by a newer Tether: its migration ${name} is not in migrations/. Update this checkout (git pull) and run the restore again. Nothing was changed.`,
  );
}

interface Target {
  name: string;
  id: string;
}

/** The database to restore into: --database, else the one wrangler.toml records, else the one it names. */
async function findTarget(config: string): Promise<Target> {
  const configured = productionDatabase(readFileSync(config, 'utf8'));
  if (options.local) {
    if (options.database) throw new Stopped('--database names a database on Cloudflare; with --local the restore goes into the local D1 of the config.');
    return { name: configured.name, id: configured.id ?? 'local' };
  }
  const databases = await listDatabases(config, { echo: options.verbose });
  const wanted = options.database ?? configured.id ?? configured.name;
  const found = findDatabase(databases, wanted);
  if (!found) {
    throw new Stopped(
      `This Cloudflare account has no D1 database "${wanted}". Make one for the restore: npx wrangler d1 create ${configured.name}-restored, then npm run restore -- ${shown(file)} --database ${configured.name}-restored`,
    );
  }
  return { name: found.name, id: found.uuid };
}

async function tablesOf(where: Where, what: string): Promise<TableSchema[]> {
  const [rows] = await query(DB_BINDING, APP_TABLES, where, what);
  return (rows ?? []).map((row) => ({ name: String(row.name), sql: String(row.sql) }));
}

/** Each table's row count and the applied migrations (one wrangler call). */
async function contentsOf(tables: string[], where: Where, what: string): Promise<{ counts: Map<string, number>; applied: string[] | null }> {
  const counted = tables.filter((name) => name !== MIGRATIONS_TABLE);
  const statements = counted.map((name) => `SELECT count(*) AS n FROM ${quoted(name)}`);
  const hasMigrations = tables.includes(MIGRATIONS_TABLE);
  if (hasMigrations) statements.push(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY id`);
  if (statements.length === 0) return { counts: new Map(), applied: null };
  const results = await query(DB_BINDING, statements.join('; '), where, what);
  const counts = new Map(counted.map((name, i) => [name, Number((results[i]?.[0] as Row | undefined)?.n ?? NaN)]));
  const applied = hasMigrations ? (results[counted.length] ?? []).map((row) => String(row.name)) : null;
  return { counts, applied };
}

/** Refuses a target that holds any row, or migrations the backup had not reached, before anything is changed. */
async function checkEmpty(target: Target, backup: D1Export, where: Where): Promise<void> {
  const tables = (await tablesOf(where, "Reading the target database's tables")).map((table) => table.name);
  const { counts, applied } = await contentsOf(tables, where, "Counting the target database's rows");
  const holding = [...counts].filter(([, n]) => n !== 0);
  const label = `The D1 database "${target.name}"`;
  if (holding.length > 0) {
    throw new Stopped(
      `${label} already holds data (${holding.map(([name, n]) => `${name}: ${n}`).join(', ')}), so nothing was restored and nothing was changed. A restore only fills an empty database; make a new one (npx wrangler d1 create <name>) and pass --database <name>.`,
    );
  }
  if (!applied && tables.length > 0) {
    throw new Stopped(
      `${label} has tables (${tables.join(', ')}) but no record of migrations, so the migrations could not be applied to it. Nothing was changed; restore into a new database (npx wrangler d1 create <name>, then --database <name>).`,
    );
  }
  const recorded = applied ?? [];
  if (recorded.some((name, i) => backup.migrations[i] !== name)) {
    throw new Stopped(
      `${label} is empty but already has migrations the backup had not reached (it has ${migrationRange(recorded)}, the backup ${migrationRange(backup.migrations)}): the backup's rows would miss what those migrations do to existing rows. Nothing was changed. Restore into a new database (npx wrangler d1 create <name>, then --database <name>); npm run deploy applies the newer migrations after.`,
    );
  }
  step('target', `D1 "${target.name}" (${options.local ? 'local' : target.id}) holds no rows; migrations applied so far: ${migrationRange(recorded)}`);
}

async function applyMigrations(where: Where, what: string): Promise<string[]> {
  const result = await wranglerStep(['d1', 'migrations', 'apply', DB_BINDING, ...whereFlags(where)], where, what);
  return migrationsAppliedIn(result.stdout);
}

async function main(): Promise<void> {
  const config = configPath(options.config);
  const backup = readBackup();
  const shipped = readdirSync(migrationsDir)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  checkMigrations(backup, shipped);
  console.log(`Restoring ${shown(file)}: ${rowTotal(backup)} rows in ${backup.rows.size} tables, migrations ${migrationRange(backup.migrations)}`);
  const target = await findTarget(config);

  const stage = mkdtempSync(path.join(tmpdir(), 'tether-restore-'));
  try {
    const text = readFileSync(config, 'utf8');
    const staged = path.join(stage, 'wrangler.toml');
    writeFileSync(staged, options.local ? text : withProductionDatabase(text, target));
    mkdirSync(path.join(stage, 'migrations'));
    const stageMigrations = (names: string[]) => {
      for (const name of names) copyFileSync(path.join(migrationsDir, name), path.join(stage, 'migrations', name));
    };
    const where: Where = { config: staged, local: options.local, persistTo: options.local ? localStateOf(config) : undefined, verbose: options.verbose };

    await checkEmpty(target, backup, where);
    stageMigrations(backup.migrations);
    const upToBackup = await applyMigrations(where, "Applying the backup's migrations (wrangler d1 migrations apply)");
    step('schema', upToBackup.length ? `applied ${upToBackup.join(', ')} (the backup's level)` : "already at the backup's level");

    const tables = await tablesOf(where, 'Reading the restored schema');
    const unknown = [...backup.rows.keys()].filter((name) => !tables.some((table) => table.name === name));
    if (unknown.length > 0) {
      throw new Stopped(
        `The backup has rows for tables its migrations do not make (${unknown.join(', ')}), so no rows were loaded; the database "${target.name}" now has the schema of ${migrationRange(backup.migrations)} and no rows.`,
      );
    }
    const load = path.join(stage, 'load.sql');
    writeFileSync(load, loadSql(backup, parentsFirst(tables)));
    await wranglerStep(['d1', 'execute', DB_BINDING, '--file', load, '--yes', ...whereFlags(where)], where, 'Loading the rows (wrangler d1 execute --file)');
    step('rows', `loaded ${rowTotal(backup)} rows into ${backup.rows.size} tables, parents first`);

    const later = shipped.slice(backup.migrations.length);
    if (later.length > 0) {
      stageMigrations(later);
      const newer = await applyMigrations(where, 'Applying the migrations newer than the backup (wrangler d1 migrations apply)');
      step('migrations', `applied ${newer.join(', ')} (newer than the backup)`);
    }

    const after = await contentsOf([MIGRATIONS_TABLE, ...backup.rows.keys()], where, 'Counting the restored rows');
    const short = [...backup.rows]
      .filter(([name, rows]) => after.counts.get(name) !== rows.length)
      .map(([name, rows]) => `${name}: ${after.counts.get(name)} of ${rows.length}`);
    if (short.length > 0) throw new Stopped(`The restored database does not hold the backup's rows (${short.join(', ')}).`);
    if (after.applied?.join() !== shipped.join()) {
      throw new Stopped(`The restored database records the migrations ${migrationRange(after.applied ?? [])}, not ${migrationRange(shipped)}.`);
    }
    step('checked', `every table holds the backup's rows; migrations ${migrationRange(shipped)}, each recorded once`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  console.log(
    options.local
      ? '\nRestored.'
      : `
Restored into D1 "${target.name}" (${target.id}). To run the relay on it:
  npm run deploy -- --database ${target.name}
(The chats' threads live in the relay's Durable Objects and on each host, not in D1: a restore leaves them as they are.)`,
  );
}

runMain(main);
