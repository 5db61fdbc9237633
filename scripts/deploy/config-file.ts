// What `npm run deploy` reads from wrangler.toml and the one thing it writes back: the production
// D1 database's name and id. The file is edited as text, line by line, so every comment and every
// other setting stays exactly as the self-hoster left it (a TOML library would re-serialize the file
// and drop the comments that document each setting). Only the keys the deploy needs are read, and
// only double-quoted single-line strings, which is how wrangler.toml writes them.

/** The environment `npm run deploy` deploys. */
export const DEPLOY_ENV = 'production';
/** The D1 binding the relay reads (`Env.DB`). */
export const DB_BINDING = 'DB';
/** wrangler.toml's stand-in id until a deploy records the real one (any id works locally). */
const PLACEHOLDER_DATABASE_ID = '00000000-0000-0000-0000-000000000000';

export interface ProductionDatabase {
  name: string;
  /** null while the placeholder id is there: no deploy has recorded one yet. */
  id: string | null;
}

interface Block {
  /** Index of the header line. */
  start: number;
  /** Index one past the block's last line (the next header, or the end). */
  end: number;
}

const HEADER = /^\s*\[/;

/** The blocks whose header is exactly `header` (`[name]` or `[[name]]`), in file order. */
function blocks(lines: string[], header: string): Block[] {
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.replace(/#.*$/, '').trim() !== header) continue;
    let end = i + 1;
    while (end < lines.length && !HEADER.test(lines[end]!)) end++;
    found.push({ start: i, end });
  }
  return found;
}

const keyLine = (key: string) => new RegExp(`^(\\s*${key}\\s*=\\s*)"([^"]*)"(.*)$`);

/** The value of `key = "…"` inside a block, or null. */
function valueIn(lines: string[], block: Block, key: string): string | null {
  for (let i = block.start + 1; i < block.end; i++) {
    const match = keyLine(key).exec(lines[i]!);
    if (match) return match[2]!;
  }
  return null;
}

function productionDatabaseBlock(lines: string[]): Block {
  const block = blocks(lines, `[[env.${DEPLOY_ENV}.d1_databases]]`).find((b) => valueIn(lines, b, 'binding') === DB_BINDING);
  if (!block) {
    throw new Error(
      `wrangler.toml has no [[env.${DEPLOY_ENV}.d1_databases]] block with binding = "${DB_BINDING}" (the relay's database); restore it from the repository's wrangler.toml`,
    );
  }
  return block;
}

/** The production D1 database named in the config. */
export function productionDatabase(text: string): ProductionDatabase {
  const lines = text.split('\n');
  const block = productionDatabaseBlock(lines);
  const name = valueIn(lines, block, 'database_name');
  if (!name) throw new Error(`wrangler.toml: the [[env.${DEPLOY_ENV}.d1_databases]] block has no database_name`);
  const id = valueIn(lines, block, 'database_id');
  return { name, id: id && id !== PLACEHOLDER_DATABASE_ID ? id : null };
}

/**
 * The config with the production database's name and id set: the two values are replaced in their
 * own lines (their comments kept); a missing `database_id` line is added after `database_name`.
 */
export function withProductionDatabase(text: string, database: { name: string; id: string }): string {
  const lines = text.split('\n');
  const block = productionDatabaseBlock(lines);
  let idSet = false;
  let nameLine = -1;
  for (let i = block.start + 1; i < block.end; i++) {
    const name = keyLine('database_name').exec(lines[i]!);
    if (name) {
      lines[i] = `${name[1]}"${database.name}"${name[3]}`;
      nameLine = i;
    }
    const id = keyLine('database_id').exec(lines[i]!);
    if (id) {
      lines[i] = `${id[1]}"${database.id}"${id[3]}`;
      idSet = true;
    }
  }
  if (!idSet) lines.splice(nameLine + 1, 0, `database_id = "${database.id}"`);
  return lines.join('\n');
}

/** The Worker's name in production: [env.production]'s own `name` (the top level is no Worker). */
export function productionWorkerName(text: string): string {
  const lines = text.split('\n');
  const own = blocks(lines, `[env.${DEPLOY_ENV}]`)[0];
  const name = own && valueIn(lines, own, 'name');
  if (!name) throw new Error(`wrangler.toml has no name in [env.${DEPLOY_ENV}]; restore it from the repository's wrangler.toml`);
  return name;
}

/** The folder of the web app's static assets as written in [env.production.assets] (relative to the config), or null. */
export function assetsDirectory(text: string): string | null {
  const lines = text.split('\n');
  const block = blocks(lines, `[env.${DEPLOY_ENV}.assets]`)[0];
  return block ? valueIn(lines, block, 'directory') : null;
}
