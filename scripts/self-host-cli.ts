// What `npm run deploy`, `npm run backup` and `npm run restore` share as command-line programs: a stop
// whose message is the whole story, paths shown as typed, one line per step, the config they default
// to, and the account's D1 databases as wrangler lists them.
import path from 'node:path';
import { jsonIn, outputTail, runWrangler, type WranglerOptions } from './wrangler.ts';

const root = path.resolve(import.meta.dirname, '..');

/** A step that cannot go on: its message is the whole story for the person running the script. */
export class Stopped extends Error {}

/** Runs a script's main, printing a Stopped as its message alone and exiting 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof Stopped) console.error(`\n${error.message}`);
    else console.error(error);
    process.exit(1);
  });
}

/** The config a script was pointed at: --config, else this repository's wrangler.toml. */
export function configPath(option: string | undefined): string {
  return option ? path.resolve(option) : path.join(root, 'wrangler.toml');
}

/** A path as the person running the script would type it: relative when it is under the current folder. */
export function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') ? relative : file;
}

/** One line of a script's account of what it did: `  <label>  <detail>`. */
export function step(label: string, detail: string): void {
  console.log(`  ${label.padEnd(10)} ${detail}`);
}

export interface D1Database {
  uuid: string;
  name: string;
}

/** The account's D1 databases (`wrangler d1 list --json`). */
export async function listDatabases(config: string, options: WranglerOptions): Promise<D1Database[]> {
  const result = await runWrangler(['d1', 'list', '--json', '--config', config], options);
  if (result.status !== 0) {
    throw new Stopped(
      `Listing your D1 databases (wrangler d1 list) failed (wrangler exited ${result.status}); are you signed in (npx wrangler login)?\n${outputTail(result)}`,
    );
  }
  const list = jsonIn<D1Database[]>(result.stdout, '[');
  if (!list) throw new Stopped(`wrangler d1 list answered no list:\n${outputTail(result)}`);
  return list;
}

/** The database with this id or name. */
export function findDatabase(databases: D1Database[], nameOrId: string): D1Database | undefined {
  return databases.find((db) => db.uuid === nameOrId || db.name === nameOrId);
}
