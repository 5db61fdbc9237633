// `npm run deploy`: the relay on Cloudflare, in one command that is safe to run again. It checks the
// wrangler sign-in, finds or creates the D1 database (its id recorded in wrangler.toml and in the
// deploy's state file, so a wrangler.toml reset by a pull still finds it), applies new
// migrations, stores any missing secret (made here, sent to wrangler on stdin, never printed), builds
// the web app, deploys the [env.production] Worker, checks /api/health, and prints the URL, the owner's
// setup link while the owner is unclaimed (on a terminal only: a CI log must not keep it), and the
// line that pairs a machine at home.
//
// Re-running is the upgrade: wrangler applies only the migrations D1 has not recorded, every stored
// secret is kept (a new signing key would sign everyone out, a new VAPID key would orphan every push
// subscription), and the setup secret is put back only while the owner account is unclaimed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { buildWeb } from './build-web.ts';
import { assetsDirectory, DB_BINDING, DEPLOY_ENV, productionDatabase, productionWorkerName, withProductionDatabase } from './deploy/config-file.ts';
import { checkHealth, healthProblem, ownerClaimed, relayUrlFrom, setupLink } from './deploy/relay-checks.ts';
import { KEY_SECRETS, newSecretValue, readState, SETUP_SECRET, stateFile, writeState, type DeployState } from './deploy/relay-secrets.ts';
import { configPath as configOption, findDatabase, listDatabases, runMain, shown, step, Stopped, type D1Database } from './self-host-cli.ts';
import { jsonIn, migrationsAppliedIn, outputTail, runWrangler, runWranglerWithOutput, type WranglerOptions, type WranglerResult } from './wrangler.ts';

const root = path.resolve(import.meta.dirname, '..');

interface Options {
  config?: string;
  database?: string;
  account?: string;
  newSetupLink: boolean;
  showSetupLink: boolean;
  skipBuild: boolean;
  verbose: boolean;
}

const program = new Command('npm run deploy')
  .description('Deploy the Tether relay to your Cloudflare account (safe to run again: that is how you upgrade)')
  .option('--config <file>', "the wrangler config to deploy (default: this repository's wrangler.toml)")
  .option('--database <name-or-id>', 'use this existing D1 database (by name or id) instead of the one wrangler.toml names')
  .option('--account <id>', 'the Cloudflare account to deploy to, when you have several (or set CLOUDFLARE_ACCOUNT_ID)')
  .option('--new-setup-link', 'replace the owner setup secret and print a new setup link (only while no owner has signed up)', false)
  .option('--show-setup-link', 'print the setup link even when the output is not a terminal (a CI log would keep it)', false)
  .option('--skip-build', 'deploy the web app already built in the assets folder (dist/web)', false)
  .option('--verbose', "show wrangler's own output", false)
  .showHelpAfterError();

const options = program.parse(process.argv).opts<Options>();
const configPath = configOption(options.config);
const accountEnv: Record<string, string> = options.account ? { CLOUDFLARE_ACCOUNT_ID: options.account } : {};

function wrangler(args: string[], extra: WranglerOptions = {}): Promise<WranglerResult> {
  return runWrangler(args, { echo: options.verbose, ...extra, env: { ...accountEnv, ...extra.env } });
}

function stopOn(result: WranglerResult, what: string): void {
  if (result.status !== 0) throw new Stopped(`${what} failed (wrangler exited ${result.status}):\n${outputTail(result)}`);
}

const cfg = ['--config', configPath];
const env = ['--env', DEPLOY_ENV];

/** Signed in, and to one account: otherwise wrangler would stop halfway (it asks which account, and cannot). */
async function checkSignIn(): Promise<void> {
  const result = await wrangler(['whoami', '--json']);
  const who = jsonIn<{ loggedIn?: boolean; email?: string; accounts?: { id: string; name: string }[] }>(result.stdout, '{');
  if (!who || who.loggedIn !== true) {
    if (who?.loggedIn === false) {
      throw new Stopped(
        [
          'You are not signed in to Cloudflare, so nothing was deployed. Either:',
          '  - on this machine: npx wrangler login   (opens a browser), then npm run deploy again;',
          '  - in CI or without a browser: set CLOUDFLARE_API_TOKEN (an API token that may edit Workers',
          '    Scripts and D1 on your account) and CLOUDFLARE_ACCOUNT_ID, then npm run deploy.',
        ].join('\n'),
      );
    }
    throw new Stopped(`Could not ask wrangler who is signed in (wrangler whoami):\n${outputTail(result)}`);
  }
  const accounts = who.accounts ?? [];
  const chosen = options.account ?? process.env.CLOUDFLARE_ACCOUNT_ID;
  if (chosen && accounts.length > 0 && !accounts.some((account) => account.id === chosen)) {
    throw new Stopped(`The account ${chosen} is not one this sign-in can use. Yours:\n${accounts.map((a) => `    ${a.id}  ${a.name}`).join('\n')}`);
  }
  if (!chosen && accounts.length > 1) {
    throw new Stopped(
      [
        'You can reach several Cloudflare accounts; say which one to deploy to, and nothing was deployed yet:',
        ...accounts.map((a) => `    ${a.id}  ${a.name}`),
        '  npm run deploy -- --account <id>   (or set CLOUDFLARE_ACCOUNT_ID)',
      ].join('\n'),
    );
  }
  const account = accounts.find((a) => a.id === chosen) ?? accounts[0];
  step('signed in', `${who.email ?? 'with an API token'}${account ? `, account ${account.name} (${account.id})` : ''}`);
}

const databases = () => listDatabases(configPath, { echo: options.verbose, env: accountEnv });

/**
 * The production database: the one named by --database, else the one wrangler.toml records, else
 * (wrangler.toml holding the placeholder id, as a fresh checkout or pull leaves it) the one this
 * machine's last deploy used, else the one wrangler.toml names, made now when missing.
 */
async function ensureDatabase(kept: DeployState['database']): Promise<D1Database> {
  const text = readFileSync(configPath, 'utf8');
  const configured = productionDatabase(text);
  const listed = await databases();
  let database: D1Database | undefined;
  let how: string;
  if (options.database) {
    database = findDatabase(listed, options.database);
    if (!database) {
      throw new Stopped(
        `This Cloudflare account has no D1 database "${options.database}" (npx wrangler d1 list shows them). Leave --database out to use the one wrangler.toml names ("${configured.name}"; it is created when missing).`,
      );
    }
    how = 'the one you named';
  } else if (configured.id) {
    database = findDatabase(listed, configured.id);
    if (!database) {
      throw new Stopped(
        `wrangler.toml records the D1 database ${configured.id} ("${configured.name}"), which this Cloudflare account does not have. Sign in to the account that has it, or pick one: npm run deploy -- --database <name or id>.`,
      );
    }
    how = 'kept';
  } else if (kept) {
    database = findDatabase(listed, kept.id);
    if (!database) {
      throw new Stopped(
        `This machine last deployed on the D1 database ${kept.id} ("${kept.name}"), which this Cloudflare account does not have. Sign in to the account that has it, or pick one: npm run deploy -- --database <name or id>.`,
      );
    }
    how = 'the one this machine deployed on last';
  } else {
    database = listed.find((db) => db.name === configured.name);
    how = 'found by name';
    if (!database) {
      const created = await wrangler(['d1', 'create', configured.name, ...cfg]);
      stopOn(created, `Creating the D1 database "${configured.name}" (wrangler d1 create)`);
      const id = /database_id\s*[=:]\s*"([0-9a-f-]{36})"/.exec(created.stdout)?.[1];
      database = id ? { uuid: id, name: configured.name } : (await databases()).find((db) => db.name === configured.name);
      if (!database) throw new Stopped(`wrangler d1 create said nothing of the new database's id:\n${outputTail(created)}`);
      how = 'created';
    }
  }
  if (database.uuid !== configured.id || database.name !== configured.name) {
    writeFileSync(configPath, withProductionDatabase(text, { name: database.name, id: database.uuid }));
    how += `; id recorded in ${shown(configPath)}`;
  }
  step('database', `D1 "${database.name}" (${database.uuid}), ${how}`);
  return database;
}

async function applyMigrations(): Promise<void> {
  const result = await wrangler(['d1', 'migrations', 'apply', DB_BINDING, '--remote', ...env, ...cfg]);
  stopOn(result, 'Applying the D1 migrations (wrangler d1 migrations apply --remote)');
  const applied = migrationsAppliedIn(result.stdout);
  step('migrations', /No migrations to apply/i.test(result.stdout) || applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`);
}

interface SecretsOutcome {
  /** Whether the Worker existed before this deploy (secret list found it). */
  workerExisted: boolean;
  /** Names stored on Cloudflare now. */
  stored: Set<string>;
  /** The setup secret, when this run made it. */
  setupSecret?: string;
}

async function putSecret(name: string, value: string): Promise<void> {
  const result = await wrangler(['secret', 'put', name, ...env, ...cfg], { input: value });
  stopOn(result, `Storing the secret ${name} (wrangler secret put)`);
}

/**
 * Every missing key is made and stored; the setup secret too, on a first deploy (no owner can exist yet).
 * Only wrangler's own "Worker not found" makes this a first deploy: taking any other failure for one
 * would put new keys on a live relay, signing everyone out and orphaning every push subscription.
 */
async function ensureSecrets(worker: string): Promise<SecretsOutcome> {
  const listed = await wrangler(['secret', 'list', '--format', 'json', ...env, ...cfg]);
  let workerExisted = true;
  let names: string[] = [];
  if (listed.status !== 0) {
    // wrangler 4.164's words (secretListCommand) for a Worker that is not there yet, so has no secrets (`secret put` makes it).
    const notFound = `Worker "${worker}" (env: ${DEPLOY_ENV}) not found.`;
    if (!`${listed.stdout}${listed.stderr}`.includes(notFound)) stopOn(listed, "Listing the relay's secrets (wrangler secret list); nothing was stored");
    workerExisted = false;
  } else {
    const list = jsonIn<{ name: string }[]>(listed.stdout, '[');
    if (!list) throw new Stopped(`wrangler secret list answered no list:\n${outputTail(listed)}`);
    names = list.map((secret) => secret.name);
  }
  const stored = new Set(names);
  const missing: string[] = KEY_SECRETS.filter((name) => !stored.has(name));
  if (!workerExisted && !stored.has(SETUP_SECRET)) missing.push(SETUP_SECRET);
  let setupSecret: string | undefined;
  for (const name of missing) {
    const value = await newSecretValue(name);
    await putSecret(name, value);
    stored.add(name);
    if (name === SETUP_SECRET) setupSecret = value;
  }
  const kept = names.filter((name) => !missing.includes(name)).sort();
  step('secrets', [missing.length ? `stored ${missing.join(', ')}` : '', kept.length ? `kept ${kept.join(', ')}` : ''].filter(Boolean).join('; ') || 'none');
  return { workerExisted, stored, setupSecret };
}

function buildWebApp(): void {
  const configured = assetsDirectory(readFileSync(configPath, 'utf8'));
  if (!configured) return;
  const dir = path.resolve(path.dirname(configPath), configured);
  if (options.skipBuild) {
    if (!existsSync(path.join(dir, 'index.html'))) throw new Stopped(`--skip-build, but there is no built web app in ${dir}; leave --skip-build out.`);
    step('web app', `as built in ${shown(dir)}`);
    return;
  }
  try {
    buildWeb({ quiet: !options.verbose, outDir: dir });
  } catch (error) {
    throw new Stopped(error instanceof Error ? error.message : String(error));
  }
  step('web app', `built into ${shown(dir)}`);
}

/** The commit being deployed (GET /api/health answers it as `commit`), or null outside a git checkout. */
function gitCommit(): string | null {
  const run = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' });
  return run.status === 0 && /^[0-9a-f]{4,40}$/.test(run.stdout.trim()) ? run.stdout.trim() : null;
}

async function deployWorker(): Promise<string> {
  const commit = gitCommit();
  const vars = commit ? ['--var', `TETHER_COMMIT:${commit}`] : [];
  const result = await runWranglerWithOutput(['deploy', ...env, ...cfg, ...vars], { echo: options.verbose, env: accountEnv });
  stopOn(result, 'Deploying the Worker (wrangler deploy)');
  const deployed = result.entries.find((entry) => entry.type === 'deploy');
  const targets = Array.isArray(deployed?.targets) ? deployed.targets.filter((t): t is string => typeof t === 'string') : [];
  const url = relayUrlFrom(targets);
  if (!url) {
    throw new Stopped(
      `The Worker is deployed, but wrangler reported no address for it (${targets.join(', ') || 'no targets'}). Give it one in wrangler.toml: workers_dev = true, or a custom domain in [env.${DEPLOY_ENV}] routes.`,
    );
  }
  step('deployed', url);
  return url;
}

const INDENT = '\n               ';

/**
 * The owner's line of the summary, and the setup secret to keep: a link while the owner is unclaimed
 * (the secret made anew when asked, or when Cloudflare has none), nothing once claimed.
 */
async function settleOwner(url: string, secrets: SecretsOutcome, kept: string | undefined, statePath: string): Promise<{ line: string; setupSecret?: string }> {
  const claimed = await ownerClaimed(url);
  if (claimed === true) {
    let line = 'signed up; sign in at the URL above';
    if (options.newSetupLink) line += ' (no new setup link: the owner account exists)';
    if (secrets.stored.has(SETUP_SECRET)) {
      line += `${INDENT}The setup secret still lets whoever holds it add hosts under the owner; once you need it no more:`;
      line += `${INDENT}npx wrangler secret delete ${SETUP_SECRET} --env ${DEPLOY_ENV}   (a later deploy does not put it back)`;
    }
    return { line };
  }
  let setupSecret = secrets.setupSecret ?? kept;
  if (claimed === false && (options.newSetupLink || !secrets.stored.has(SETUP_SECRET))) {
    setupSecret = await newSecretValue(SETUP_SECRET);
    await putSecret(SETUP_SECRET, setupSecret);
    step('secrets', `stored a new ${SETUP_SECRET}`);
  }
  if (setupSecret) {
    const lead = claimed === null ? 'not known (the relay did not answer); if nobody has signed up yet, open' : 'not set up yet. Open';
    if (options.showSetupLink || process.stdout.isTTY) {
      return { line: `${lead} this one-time link to create the owner account:${INDENT}${setupLink(url, setupSecret)}`, setupSecret };
    }
    return {
      line: [
        `${claimed === null ? 'not known (the relay did not answer)' : 'not set up yet'}. The one-time setup link was not printed: this output is not a terminal, and a log would keep it.`,
        `To see it: npm run deploy -- --show-setup-link on this machine, or read setupSecret in ${shown(statePath)} here`,
        `(the link is ${url}/setup#secret=<setupSecret>); from your own machine: npm run deploy -- --new-setup-link`,
      ].join(INDENT),
      setupSecret,
    };
  }
  if (claimed === null) return { line: 'not known (the relay did not answer); run npm run deploy again once it does' };
  return {
    line: `not set up yet, and this machine does not hold the setup secret (another machine deployed it).${INDENT}npm run deploy -- --new-setup-link   replaces it and prints a new link.`,
  };
}

async function main(): Promise<void> {
  console.log(`Deploying Tether (${shown(configPath)}, environment ${DEPLOY_ENV})`);
  await checkSignIn();
  const worker = productionWorkerName(readFileSync(configPath, 'utf8'));
  const statePath = stateFile(configPath, worker);
  const state = readState(statePath);
  const d1 = await ensureDatabase(state.database);
  const database = { name: d1.name, id: d1.uuid };
  writeState(statePath, { ...state, database });
  await applyMigrations();
  const secrets = await ensureSecrets(worker);
  // Kept at once: the secret is on Cloudflare now, and this file is the only way to print its link again.
  if (secrets.setupSecret) writeState(statePath, { ...state, database, setupSecret: secrets.setupSecret });
  buildWebApp();
  const url = await deployWorker();
  const health = await checkHealth(url, 60_000);
  step('health', `GET ${url}/api/health: ${health.status ?? 'no answer'} ${health.detail}`);
  const problem = health.health && healthProblem(health.health);

  const owner = await settleOwner(url, secrets, state.setupSecret, statePath);
  writeState(statePath, { url, database, setupSecret: owner.setupSecret });

  console.log(`
Tether is deployed.

  relay        ${url}   (health: ${url}/api/health)
  owner        ${owner.line}

Pair each machine whose agents you want to reach (in a clone of this repository, after npm install):
  tether host pair ${url}
    i.e. node_modules/.bin/node bin/tether.js host pair ${url}
  then approve the code it shows (signed in, in the web app), and start it:
    node_modules/.bin/node bin/tether.js host start

Logs: npx wrangler tail --env ${DEPLOY_ENV}. Upgrade later: git pull --autostash, then npm run deploy again.`);
  if (problem)
    throw new Stopped(
      `The relay is deployed but not healthy: ${problem} (GET /api/health answered ${health.status}). Run npm run deploy again; if it stays so: npx wrangler tail --env ${DEPLOY_ENV}.`,
    );
  if (health.status !== null && health.status !== 200) throw new Stopped(`The relay answers /api/health with ${health.status}: ${health.detail}`);
}

runMain(main);
