// `npm run backup`: the relay's D1 exported whole (`wrangler d1 export DB --remote --env production`)
// into a timestamped file under backups/, readable only by you (it holds emails, password hashes and
// session records). The one file is both the record and what `npm run restore` loads: the restore takes
// the schema from the migrations and only the rows from the file. The export is read back before the
// script says it is done, so a cut-short download or an export of the wrong database shows at once.
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { DB_BINDING, DEPLOY_ENV, productionDatabase } from './deploy/config-file.ts';
import { wranglerStep, whereFlags, type Where } from './backup/d1-target.ts';
import { configPath, runMain, shown, Stopped } from './self-host-cli.ts';
import { migrationRange, readExport, rowTotal } from './backup/export-file.ts';

interface Options {
  output?: string;
  database?: string;
  config?: string;
  local: boolean;
  verbose: boolean;
}

const program = new Command('npm run backup')
  .description(`Export the relay's D1 database (the [env.${DEPLOY_ENV}] one in wrangler.toml) to backups/<name>-<time>.sql`)
  .option('--output <file>', 'write the export here instead')
  .option('--database <name>', 'export this D1 database (by name) instead of the one wrangler.toml names')
  .option('--config <file>', "the wrangler config (default: this repository's wrangler.toml)")
  .option('--local', 'export the local D1 kept beside the config (.wrangler/state) instead of the remote one', false)
  .option('--verbose', "show wrangler's own output", false)
  .showHelpAfterError();

const options = program.parse(process.argv).opts<Options>();

/** 2026-11-30T14-25-07Z: sorts by time, and has no colon (not allowed in a Windows file name). */
function timestamp(now = new Date()): string {
  return now
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-');
}

async function main(): Promise<void> {
  const config = configPath(options.config);
  const where: Where = { config, local: options.local, verbose: options.verbose };
  const name = options.database ?? productionDatabase(readFileSync(config, 'utf8')).name;
  const output = path.resolve(options.output ?? path.join('backups', `${name}-${timestamp()}.sql`));
  mkdirSync(path.dirname(output), { recursive: true, mode: 0o700 });

  await wranglerStep(
    ['d1', 'export', options.database ?? DB_BINDING, ...whereFlags(where), '--output', output],
    where,
    `Exporting the D1 database "${name}" (wrangler d1 export)`,
  );
  chmodSync(output, 0o600);

  let contents;
  try {
    contents = readExport(readFileSync(output, 'utf8'));
  } catch (error) {
    throw new Stopped(`The export in ${output} cannot be read back (${(error as Error).message}); make it again.`);
  }
  if (contents.migrations.length === 0) {
    throw new Stopped(
      `The export in ${output} records no migrations (no d1_migrations rows): the database "${name}" is not one a Tether relay has used, or it was never migrated.`,
    );
  }
  console.log(`Backed up D1 "${name}" (${options.local ? 'local' : 'remote'}) to ${shown(output)}
  ${rowTotal(contents)} rows in ${contents.rows.size} tables; migrations ${migrationRange(contents.migrations)}

Restore it into a new, empty database with:
  npx wrangler d1 create ${name}-restored
  npm run restore -- ${shown(output)} --database ${name}-restored`);
}

runMain(main);
