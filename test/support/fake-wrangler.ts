// A stand-in for wrangler's Cloudflare commands, for the deploy test (test/deploy/deploy.test.ts).
// No Cloudflare account can be reached from a test, so `npm run deploy` runs this script instead of
// wrangler (TETHER_WRANGLER points at it). It answers the commands the deploy uses as wrangler 4
// does (same flags, same JSON, the same exit codes and messages where the deploy reads them) and keeps
// the "account" in FAKE_WRANGLER_STATE/state.json: the sign-in, D1 databases, and each environment's
// secrets. Every call is appended to calls.jsonl (argv, stdin, the environment the deploy set) so the
// test can say what was and was not done.
//
// Two commands are handed to the real wrangler, for what it can check without an account: `d1
// migrations apply --remote` runs as `--local` against a D1 kept in the state folder (real SQLite,
// wrangler's own bookkeeping of applied migrations), and `deploy` runs as `deploy --dry-run` (the
// config is read, the Worker bundled, every binding resolved) before the stand-in reports the URL
// the test gave it (FAKE_WRANGLER_URL) the way wrangler does: in WRANGLER_OUTPUT_FILE_PATH. Each costs
// seconds, so a run whose test is about something else may name the ones it needs in FAKE_WRANGLER_REAL
// ("migrations", "deploy", comma-separated; unset: both). Without the real one, the migrations answer
// "No migrations to apply" (true when none were added since the last real run) and the deploy is not
// bundled.
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { productionWorkerName } from '../../scripts/deploy/config-file.ts';
import { runWranglerSync } from '../../scripts/wrangler.ts';
import type { FakeAccountState, FakeCall } from './fake-wrangler-account.ts';

const stateDir = process.env.FAKE_WRANGLER_STATE;
if (!stateDir) {
  process.stderr.write('fake-wrangler: FAKE_WRANGLER_STATE is not set\n');
  process.exit(2);
}
const stateFile = path.join(stateDir, 'state.json');

const args = process.argv.slice(2);
const stdin = process.stdin.isTTY ? '' : readFileSync(0, 'utf8');
appendFileSync(
  path.join(stateDir, 'calls.jsonl'),
  `${JSON.stringify({
    args,
    stdin,
    env: { WRANGLER_SEND_METRICS: process.env.WRANGLER_SEND_METRICS, CLOUDFLARE_ACCOUNT_ID: process.env.CLOUDFLARE_ACCOUNT_ID },
  } satisfies FakeCall)}\n`,
);

const state = JSON.parse(readFileSync(stateFile, 'utf8')) as FakeAccountState;
const save = () => writeFileSync(stateFile, JSON.stringify(state, null, 2));
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const has = (name: string) => args.includes(name);
const positional = args.filter(
  (arg, i) => !arg.startsWith('--') && !(i > 0 && args[i - 1]!.startsWith('--') && !['--json', '--remote', '--local'].includes(args[i - 1]!)),
);
const command = positional.slice(0, 3).join(' ');

// A failure the test arranged (an expired token, a network error): wrangler's way, message and exit 1.
const failure = Object.entries(state.failures ?? {}).find(([prefix]) => command.startsWith(prefix))?.[1];
if (failure) fail(failure);

function fail(message: string): never {
  process.stderr.write(`\n✘ [ERROR] ${message}\n\n`);
  process.exit(1);
}

function requireAuth(): void {
  if (!state.signedIn) fail("In a non-interactive environment, it's necessary to set a CLOUDFLARE_API_TOKEN environment variable for wrangler to work.");
  if (state.accounts.length > 1 && !process.env.CLOUDFLARE_ACCOUNT_ID)
    fail('More than one account available but unable to select one in non-interactive mode.');
}

function environment(): string {
  const env = flag('--env');
  if (!env) fail('this stand-in expects --env on every Worker command (wrangler would act on the top-level Worker)');
  return env;
}

/** Runs the real wrangler (the caller's own flags in `realArgs`), passing its output through. */
function real(realArgs: string[], otherwise: string): void {
  const wanted = process.env.FAKE_WRANGLER_REAL?.split(',') ?? ['migrations', 'deploy'];
  if (!wanted.includes(realArgs[0] === 'deploy' ? 'deploy' : 'migrations')) {
    process.stdout.write(otherwise);
    return;
  }
  const run = runWranglerSync(realArgs, { real: true, env: { WRANGLER_OUTPUT_FILE_PATH: undefined } });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  if (run.status !== 0) process.exit(run.status ?? 1);
}

if (command.startsWith('whoami')) {
  if (!state.signedIn) {
    // As wrangler 4 does with --json: this line on stdout, exit 1.
    process.stdout.write('{"loggedIn":false}\n');
    process.exit(1);
  }
  process.stdout.write(
    `${JSON.stringify({ loggedIn: true, authType: 'OAuth Token', email: state.email, accounts: state.accounts, tokenPermissions: [] }, null, 2)}\n`,
  );
} else if (command.startsWith('d1 list')) {
  requireAuth();
  process.stdout.write(`${JSON.stringify(state.databases, null, 2)}\n`);
} else if (command.startsWith('d1 create')) {
  requireAuth();
  const name = positional[2];
  if (!name) fail('Not enough non-option arguments: got 0, need at least 1');
  if (state.databases.some((db) => db.name === name)) fail(`A database with that name already exists [code: 7502]`);
  const db = { uuid: randomUUID(), name, created_at: new Date().toISOString() };
  state.databases.push(db);
  save();
  process.stdout.write(
    `✅ Successfully created DB '${name}'\nCreated your new D1 database.\n\nTo access your new D1 Database in your Worker, add the following snippet to your configuration file:\n[[d1_databases]]\nbinding = "${name}"\ndatabase_name = "${name}"\ndatabase_id = "${db.uuid}"\n`,
  );
} else if (command.startsWith('d1 migrations apply')) {
  requireAuth();
  if (!has('--remote')) fail("this stand-in only answers --remote (the deploy's own use)");
  const config = flag('--config');
  if (!config) fail('this stand-in expects --config');
  mkdirSync(path.join(stateDir, 'd1'), { recursive: true });
  real(
    ['d1', 'migrations', 'apply', positional[3]!, '--local', '--persist-to', path.join(stateDir, 'd1'), '--env', environment(), '--config', config],
    '✅ No migrations to apply!\n',
  );
} else if (command.startsWith('secret list')) {
  requireAuth();
  const worker = state.workers[environment()];
  if (!worker) {
    // wrangler 4.164's words (secretListCommand), the Worker named as the config names it.
    const name = productionWorkerName(readFileSync(flag('--config') ?? fail('this stand-in expects --config'), 'utf8'));
    fail(
      `Worker "${name}" (env: ${environment()}) not found.\n\nIf this is a new Worker, run \`wrangler deploy\` first to create it.\nOtherwise, check that the Worker name is correct and you're logged into the right account.`,
    );
  }
  process.stdout.write(
    `${JSON.stringify(
      Object.keys(worker.secrets).map((name) => ({ name, type: 'secret_text' })),
      null,
      '  ',
    )}\n`,
  );
} else if (command.startsWith('secret put')) {
  requireAuth();
  const name = positional[2];
  if (!name) fail('Not enough non-option arguments: got 0, need at least 1');
  // wrangler reads the value from stdin when stdin is not a terminal, trailing whitespace trimmed.
  const env = environment();
  state.workers[env] ??= { secrets: {}, deploys: 0 };
  state.workers[env].secrets[name] = stdin.trimEnd();
  save();
  process.stdout.write(`🌀 Creating the secret for the Worker "tether"\n✨ Success! Uploaded secret ${name}\n`);
} else if (command.startsWith('deploy')) {
  requireAuth();
  const env = environment();
  const config = flag('--config');
  if (!config) fail('this stand-in expects --config');
  real(['deploy', '--dry-run', '--outdir', path.join(stateDir, 'bundle'), '--env', env, '--config', config], '');
  const url = process.env.FAKE_WRANGLER_URL ?? 'https://tether.example.workers.dev';
  state.workers[env] ??= { secrets: {}, deploys: 0 };
  state.workers[env].deploys += 1;
  save();
  const versionId = randomUUID();
  process.stdout.write(`Uploaded tether (1.00 sec)\nDeployed tether triggers (0.50 sec)\n  ${url}\nCurrent Version ID: ${versionId}\n`);
  const output = process.env.WRANGLER_OUTPUT_FILE_PATH;
  if (output) {
    appendFileSync(
      output,
      `${JSON.stringify({ type: 'deploy', version: 1, worker_name: 'tether', worker_tag: 'tag', version_id: versionId, targets: [url], wrangler_environment: env, timestamp: new Date().toISOString() })}\n`,
    );
  }
} else {
  fail(`this stand-in does not know "wrangler ${args.join(' ')}"`);
}
