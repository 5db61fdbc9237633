// Which D1 `npm run backup` and `npm run restore` work on, and how they ask wrangler about it: the
// production database of a wrangler config (`--remote --env production`, as `npm run deploy` uses it),
// or with --local the local one wrangler keeps beside that config in `.wrangler/state` (the test's
// way in, since no Cloudflare account can be reached from a test; also a way to copy a local relay).
import path from 'node:path';
import { DEPLOY_ENV } from '../deploy/config-file.ts';
import { Stopped } from '../self-host-cli.ts';
import { jsonIn, outputTail, runWrangler, type WranglerResult } from '../wrangler.ts';

export interface Where {
  /** The wrangler config wrangler reads. */
  config: string;
  local: boolean;
  /** The local state folder, when the config read is not the one beside it (a restore's staged copy). */
  persistTo?: string;
  verbose: boolean;
}

/** The local D1 state wrangler keeps for a config: `.wrangler/state` in the config's folder. */
export function localStateOf(config: string): string {
  return path.join(path.dirname(config), '.wrangler', 'state');
}

/** `--remote` or `--local` (with its state folder), the environment and the config. */
export function whereFlags(where: Where): string[] {
  const location = where.local ? ['--local', ...(where.persistTo ? ['--persist-to', where.persistTo] : [])] : ['--remote'];
  return [...location, '--env', DEPLOY_ENV, '--config', where.config];
}

/** One wrangler command that must succeed; its output, or a Stopped naming the step. */
export async function wranglerStep(args: string[], where: Where, what: string): Promise<WranglerResult> {
  const result = await runWrangler(args, { echo: where.verbose });
  if (result.status !== 0) throw new Stopped(`${what} failed (wrangler exited ${result.status}):\n${outputTail(result)}`);
  return result;
}

export type Row = Record<string, unknown>;

/** The rows of each statement of `sql`, run on `database` (`wrangler d1 execute --command --json`). */
export async function query(database: string, sql: string, where: Where, what: string): Promise<Row[][]> {
  const result = await wranglerStep(['d1', 'execute', database, '--command', sql, '--json', ...whereFlags(where)], where, what);
  const answer = jsonIn<{ results?: Row[] }[]>(result.stdout, '[');
  if (!answer) throw new Stopped(`${what}: wrangler answered no JSON:\n${outputTail(result)}`);
  return answer.map((statement) => statement.results ?? []);
}

/** An identifier for SQL text. */
export function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The app's tables and their CREATE statements: SQLite's own and D1's `_cf_*` left out, `d1_migrations` kept. */
export const APP_TABLES =
  "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY name";
