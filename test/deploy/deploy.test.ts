// `npm run deploy` (scripts/deploy.ts), run for real as a process, against a stand-in wrangler.
//
// Why a stand-in: no Cloudflare account can be reached from a test (or from this machine), and
// wrangler's cloud commands (whoami, d1 list/create, secret list/put, deploy) all need one. The
// stand-in (test/support/fake-wrangler.ts) answers those commands as wrangler 4 does and keeps the
// "account" in a folder; it hands the rest to the real wrangler: the migrations are applied to a real
// local D1 (wrangler's own bookkeeping decides what is new), and `deploy` runs as a real
// `deploy --dry-run` of the config the deploy wrote. The "deployed relay" is a small HTTP server here
// answering /api/health (the contract's Health) and /api/auth/setup. The deploy's output is no terminal
// here, so a run that should print the setup link asks with --show-setup-link. The not-signed-in check runs the real wrangler too (with
// no credentials it answers without the network).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { productionDatabase, productionWorkerName, withProductionDatabase } from '../../scripts/deploy/config-file.ts';
import { relayUrlFrom } from '../../scripts/deploy/relay-checks.ts';
import { HealthSchema, type Health } from '../../src/contracts/health.ts';
import { keySetOf } from '../../src/relay/auth/keys.ts';
import { vapidKeysOf } from '../../src/relay/push/vapid.ts';
import { clearFakeCalls, FAKE_WRANGLER, readFakeAccount, readFakeCalls, writeFakeAccount, type FakeCall } from '../support/fake-wrangler-account.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const SECRET_NAMES = ['TETHER_SIGNING_KEYS', 'TETHER_SETUP_SECRET', 'TETHER_VAPID_KEYS'];

/** The deployed relay, as far as the deploy asks it anything. */
class RelayStandIn {
  claimed = false;
  /** What GET /api/health answers (503 when not ok, as the relay does). */
  health: Health = HealthSchema.parse({
    ok: true,
    version: '0.0.0-test',
    commit: 'abc1234',
    db: 'ok',
    migrations: { applied: '0004_relay_metrics', expected: '0004_relay_metrics', pending: [] },
    keys: { signing: 'ok', push: 'ok' },
  } satisfies Health);
  asked: string[] = [];
  private server: Server;
  url = '';

  constructor() {
    this.server = createServer((req, res) => {
      this.asked.push(`${req.method} ${req.url}`);
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/health') {
        res.statusCode = this.health.ok ? 200 : 503;
        res.end(JSON.stringify(this.health));
      } else if (req.url === '/api/auth/setup') res.end(JSON.stringify({ claimed: this.claimed }));
      else {
        res.statusCode = 404;
        res.end(JSON.stringify({ code: 'not-found', message: 'not here' }));
      }
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A checkout to deploy from: the repository's wrangler.toml copied (never the repo's own), its migrations copied, src linked. */
function checkout(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tether-deploy-test-'));
  cpSync(path.join(root, 'wrangler.toml'), path.join(dir, 'wrangler.toml'));
  cpSync(path.join(root, 'migrations'), path.join(dir, 'migrations'), { recursive: true });
  symlinkSync(path.join(root, 'src'), path.join(dir, 'src'));
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** `npm run deploy -- <args>` for the checkout in `dir`, its wrangler being the stand-in (or the real one, `wrangler: 'real'`). */
function deploy(dir: string, args: string[], options: { account: string; relayUrl?: string; wrangler?: 'real'; env?: Record<string, string> }): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FAKE_WRANGLER_STATE: options.account,
    FAKE_WRANGLER_URL: options.relayUrl ?? 'http://127.0.0.1:9',
    ...options.env,
  };
  if (options.wrangler === 'real') delete env.TETHER_WRANGLER;
  else env.TETHER_WRANGLER = FAKE_WRANGLER;
  for (const name of ['CLOUDFLARE_API_TOKEN', 'CLOUDFLARE_ACCOUNT_ID', 'CLOUDFLARE_API_KEY', 'CLOUDFLARE_EMAIL']) delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'deploy.ts'), '--config', path.join(dir, 'wrangler.toml'), ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? 1, stdout, stderr }));
  });
}

/** The command's words before its first flag: `d1 create tether`, `secret put TETHER_SETUP_SECRET`. */
function commandOf(call: FakeCall): string {
  const firstFlag = call.args.findIndex((arg) => arg.startsWith('--'));
  return (firstFlag < 0 ? call.args : call.args.slice(0, firstFlag)).join(' ');
}
const isCommand = (call: FakeCall, ...words: string[]) => words.every((word, i) => call.args[i] === word);
const puts = (calls: FakeCall[]) => calls.filter((call) => isCommand(call, 'secret', 'put'));
// For runs about something else: the stand-in answers migrations and deploy without the real wrangler.
const quick = { FAKE_WRANGLER_REAL: '' };
const setupLinkIn = (stdout: string) => /\/setup#secret=([\w%-]+)/.exec(stdout)?.[1];

describe('npm run deploy against a stand-in wrangler (no Cloudflare account is reachable from a test)', () => {
  const relay = new RelayStandIn();
  const cleanup: string[] = [];
  beforeAll(() => relay.start());
  afterAll(async () => {
    await relay.stop();
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  });
  const fresh = () => {
    const dir = checkout();
    cleanup.push(dir);
    const account = path.join(dir, 'account');
    writeFakeAccount(account);
    return { dir, account };
  };

  test('not signed in (the real wrangler, no credentials): it says how to sign in, exits 1 and changes nothing', async () => {
    const { dir, account } = fresh();
    const before = readFileSync(path.join(dir, 'wrangler.toml'), 'utf8');
    const home = path.join(dir, 'home');
    const run = await deploy(dir, [], { account, wrangler: 'real', env: { HOME: home, XDG_CONFIG_HOME: home } });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('You are not signed in to Cloudflare, so nothing was deployed');
    expect(run.stderr).toContain('npx wrangler login');
    expect(run.stderr).toContain('CLOUDFLARE_API_TOKEN');
    expect(run.stderr).toContain('CLOUDFLARE_ACCOUNT_ID');
    expect(readFileSync(path.join(dir, 'wrangler.toml'), 'utf8')).toBe(before);
    expect(existsSync(path.join(dir, '.tether'))).toBe(false);
  });

  test('not signed in (stand-in): wrangler whoami is the only command run', async () => {
    const { dir, account } = fresh();
    writeFakeAccount(account, { signedIn: false });
    const run = await deploy(dir, [], { account });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('npx wrangler login');
    expect(readFakeCalls(account).map(commandOf)).toEqual(['whoami']);
    expect(readFakeAccount(account).databases).toEqual([]);
  });

  test('several accounts and none chosen: it lists them and stops before making anything', async () => {
    const { dir, account } = fresh();
    writeFakeAccount(account, {
      accounts: [
        { id: 'acc-1', name: 'Home' },
        { id: 'acc-2', name: 'Work' },
      ],
    });
    const run = await deploy(dir, [], { account });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('acc-2  Work');
    expect(run.stderr).toContain('--account <id>');
    expect(readFakeCalls(account).map(commandOf)).toEqual(['whoami']);
  });

  describe('a first deploy, then the runs after it', () => {
    let dir: string;
    let account: string;
    let original: string;
    let first: Run;

    beforeAll(async () => {
      ({ dir, account } = fresh());
      original = readFileSync(path.join(dir, 'wrangler.toml'), 'utf8');
      relay.claimed = false;
      first = await deploy(dir, ['--show-setup-link'], { account, relayUrl: relay.url });
    });

    test('creates the D1 database and records its id in [env.production], changing nothing else in wrangler.toml', () => {
      expect(first.stderr).toBe('');
      expect(first.status).toBe(0);
      const [db] = readFakeAccount(account).databases;
      expect(db?.name).toBe('tether');
      const written = readFileSync(path.join(dir, 'wrangler.toml'), 'utf8');
      expect(productionDatabase(written)).toEqual({ name: 'tether', id: db!.uuid });
      const changed = written.split('\n').filter((line, i) => line !== original.split('\n')[i]);
      expect(changed).toEqual([`database_id = "${db!.uuid}"`]);
      // The local environment's placeholder stays: npm start and the tests use it.
      expect(written).toContain('database_id = "00000000-0000-0000-0000-000000000000"');
    });

    test('applies every migration to the production database, remotely', () => {
      const migrations = readFakeCalls(account).filter((call) => isCommand(call, 'd1', 'migrations', 'apply'));
      expect(migrations).toHaveLength(1);
      expect(migrations[0]!.args).toEqual(expect.arrayContaining(['DB', '--remote', '--env', 'production']));
      expect(first.stdout).toMatch(/migrations\s+applied 0000_init\.sql, 0001_identity\.sql/);
    });

    test('stores the three secrets through stdin: valid keys, never in argv, never in its output', async () => {
      const calls = readFakeCalls(account);
      const secrets = readFakeAccount(account).workers.production!.secrets;
      expect(Object.keys(secrets).sort()).toEqual([...SECRET_NAMES].sort());
      expect(
        puts(calls)
          .map((call) => call.args[2])
          .sort(),
      ).toEqual([...SECRET_NAMES].sort());
      for (const call of puts(calls)) {
        expect(call.args).toEqual(expect.arrayContaining(['--env', 'production']));
        expect(call.stdin).toBe(secrets[call.args[2]!]);
      }
      // The relay's own readers take them.
      await expect(keySetOf({ TETHER_SIGNING_KEYS: secrets.TETHER_SIGNING_KEYS! })).resolves.toMatchObject({ signer: { kid: expect.any(String) } });
      await expect(vapidKeysOf({ TETHER_VAPID_KEYS: secrets.TETHER_VAPID_KEYS! })).resolves.toMatchObject({ current: { publicKey: expect.any(String) } });
      expect(secrets.TETHER_SETUP_SECRET!.length).toBeGreaterThanOrEqual(32);
      const keys = [secrets.TETHER_SIGNING_KEYS!, secrets.TETHER_VAPID_KEYS!];
      const privateParts = keys.flatMap((json) => (JSON.parse(json) as { d: string }[]).map((jwk) => jwk.d));
      for (const call of calls) {
        for (const value of [...keys, ...privateParts, secrets.TETHER_SETUP_SECRET!]) expect(call.args.join(' ')).not.toContain(value);
      }
      for (const value of [...keys, ...privateParts]) expect(first.stdout + first.stderr).not.toContain(value);
      // The setup secret is printed once: inside the setup link, which is how the owner gets in.
      expect((first.stdout + first.stderr).split(secrets.TETHER_SETUP_SECRET!)).toHaveLength(2);
      expect(calls.every((call) => call.env.WRANGLER_SEND_METRICS === 'false')).toBe(true);
    });

    test('builds the web app, deploys the production Worker and prints the URL, health, the setup link and the pair line', () => {
      const secrets = readFakeAccount(account).workers.production!.secrets;
      expect(readFakeAccount(account).workers.production!.deploys).toBe(1);
      const deployArgs = readFakeCalls(account).find((call) => call.args[0] === 'deploy')!.args;
      expect(deployArgs).toEqual(expect.arrayContaining(['--env', 'production', '--var']));
      // The checkout's commit goes with the deploy as a var, for /api/health to answer (HEAD may have moved since).
      const commit = /^TETHER_COMMIT:([0-9a-f]+)$/.exec(deployArgs[deployArgs.indexOf('--var') + 1]!)?.[1];
      expect(spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: root }).status).toBe(0);
      expect(existsSync(path.join(dir, 'dist', 'web', 'index.html'))).toBe(true);
      // The real wrangler bundled the production Worker from the config as the deploy left it.
      expect(existsSync(path.join(account, 'bundle', 'index.js'))).toBe(true);
      expect(first.stdout).toContain(`relay        ${relay.url}`);
      expect(first.stdout).toContain(`GET ${relay.url}/api/health: 200 ${JSON.stringify(relay.health)}`);
      expect(first.stdout).toContain(`${relay.url}/setup#secret=${encodeURIComponent(secrets.TETHER_SETUP_SECRET!)}`);
      expect(first.stdout).toContain(`tether host pair ${relay.url}`);
      expect(relay.asked).toEqual(expect.arrayContaining(['GET /api/health', 'GET /api/auth/setup']));
    });

    test('keeps the setup secret for the next run in a file only its user can read', () => {
      const file = path.join(dir, '.tether', 'deploy', `${productionWorkerName(original)}.json`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const state = JSON.parse(readFileSync(file, 'utf8')) as { url: string; setupSecret: string };
      const [db] = readFakeAccount(account).databases;
      expect(state).toEqual({
        url: relay.url,
        database: { name: 'tether', id: db!.uuid },
        setupSecret: readFakeAccount(account).workers.production!.secrets.TETHER_SETUP_SECRET,
      });
    });

    test('a second run creates nothing, puts no secret, applies only a new migration and prints the URL and the same link', async () => {
      const before = readFakeAccount(account);
      const config = readFileSync(path.join(dir, 'wrangler.toml'), 'utf8');
      writeFileSync(path.join(dir, 'migrations', '9999_deploy_probe.sql'), 'CREATE TABLE `deploy_probe` (`id` integer PRIMARY KEY NOT NULL);\n');
      clearFakeCalls(account);
      const run = await deploy(dir, ['--skip-build', '--show-setup-link'], { account, relayUrl: relay.url, env: { FAKE_WRANGLER_REAL: 'migrations' } });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const calls = readFakeCalls(account);
      expect(calls.filter((call) => isCommand(call, 'd1', 'create'))).toEqual([]);
      expect(puts(calls)).toEqual([]);
      expect(readFakeAccount(account).databases).toEqual(before.databases);
      expect(readFakeAccount(account).workers.production!.secrets).toEqual(before.workers.production!.secrets);
      expect(readFileSync(path.join(dir, 'wrangler.toml'), 'utf8')).toBe(config);
      expect(run.stdout).toMatch(/migrations\s+applied 9999_deploy_probe\.sql\n/);
      expect(run.stdout).toMatch(/secrets\s+kept TETHER_SETUP_SECRET, TETHER_SIGNING_KEYS, TETHER_VAPID_KEYS\n/);
      expect(run.stdout).toContain(`relay        ${relay.url}`);
      expect(setupLinkIn(run.stdout)).toBe(encodeURIComponent(before.workers.production!.secrets.TETHER_SETUP_SECRET!));
      expect(readFakeAccount(account).workers.production!.deploys).toBe(2);
    });

    test('output that is no terminal (a CI log) gets no setup link unless --show-setup-link asks: it says how to get one', async () => {
      const secret = readFakeAccount(account).workers.production!.secrets.TETHER_SETUP_SECRET!;
      const run = await deploy(dir, ['--skip-build'], { account, relayUrl: relay.url, env: quick });
      expect(run.status, run.stderr).toBe(0);
      expect(setupLinkIn(run.stdout)).toBeUndefined();
      expect(run.stdout + run.stderr).not.toContain(secret);
      expect(run.stdout + run.stderr).not.toContain(encodeURIComponent(secret));
      expect(run.stdout).toContain('The one-time setup link was not printed: this output is not a terminal');
      expect(run.stdout).toContain('npm run deploy -- --show-setup-link');
      expect(run.stdout).toContain(path.join('.tether', 'deploy', 'tether.json'));
      expect(run.stdout).toContain('npm run deploy -- --new-setup-link');
      // Still kept for the next run that may show it.
      expect(JSON.parse(readFileSync(path.join(dir, '.tether', 'deploy', 'tether.json'), 'utf8')).setupSecret).toBe(secret);
    });

    test('from a machine without the setup secret: it says how to get a link, and --new-setup-link replaces only that secret', async () => {
      rmSync(path.join(dir, '.tether'), { recursive: true });
      const before = readFakeAccount(account).workers.production!.secrets;
      clearFakeCalls(account);
      const lost = await deploy(dir, ['--skip-build'], { account, relayUrl: relay.url, env: quick });
      expect(lost.status).toBe(0);
      expect(lost.stdout).toContain('this machine does not hold the setup secret');
      expect(lost.stdout).toContain('npm run deploy -- --new-setup-link');
      expect(setupLinkIn(lost.stdout)).toBeUndefined();
      expect(puts(readFakeCalls(account))).toEqual([]);

      clearFakeCalls(account);
      const renewed = await deploy(dir, ['--skip-build', '--new-setup-link', '--show-setup-link'], { account, relayUrl: relay.url, env: quick });
      expect(renewed.status).toBe(0);
      const after = readFakeAccount(account).workers.production!.secrets;
      expect(puts(readFakeCalls(account)).map((call) => call.args[2])).toEqual(['TETHER_SETUP_SECRET']);
      expect(after.TETHER_SETUP_SECRET).not.toBe(before.TETHER_SETUP_SECRET);
      expect(after.TETHER_SIGNING_KEYS).toBe(before.TETHER_SIGNING_KEYS);
      expect(after.TETHER_VAPID_KEYS).toBe(before.TETHER_VAPID_KEYS);
      expect(setupLinkIn(renewed.stdout)).toBe(encodeURIComponent(after.TETHER_SETUP_SECRET!));
    });

    test('once the owner has signed up: no link, the kept setup secret is dropped, and a deleted one is not put back', async () => {
      relay.claimed = true;
      const file = path.join(dir, '.tether', 'deploy', `${productionWorkerName(original)}.json`);
      expect(existsSync(file)).toBe(true);
      const claimed = await deploy(dir, ['--skip-build'], { account, relayUrl: relay.url, env: quick });
      expect(claimed.status).toBe(0);
      expect(setupLinkIn(claimed.stdout)).toBeUndefined();
      expect(claimed.stdout).toContain('owner        signed up');
      expect(claimed.stdout).toContain('npx wrangler secret delete TETHER_SETUP_SECRET --env production');
      const [db] = readFakeAccount(account).databases;
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: relay.url, database: { name: 'tether', id: db!.uuid } });

      // The owner deletes the setup secret, as the deploy suggested; the next deploy leaves it deleted.
      const state = readFakeAccount(account);
      delete state.workers.production!.secrets.TETHER_SETUP_SECRET;
      writeFileSync(path.join(account, 'state.json'), JSON.stringify(state));
      clearFakeCalls(account);
      const again = await deploy(dir, ['--skip-build'], { account, relayUrl: relay.url, env: quick });
      expect(again.status).toBe(0);
      expect(puts(readFakeCalls(account))).toEqual([]);
      expect(Object.keys(readFakeAccount(account).workers.production!.secrets).sort()).toEqual(['TETHER_SIGNING_KEYS', 'TETHER_VAPID_KEYS']);
      relay.claimed = false;
    });
  });

  test('--database <name> deploys on an existing database and records it; an unknown one stops the deploy', async () => {
    const { dir, account } = fresh();
    const existing = { uuid: '3f2a9c4e-8b1d-4e6f-9a0b-5c7d1e2f3a4b', name: 'my-tether', created_at: '2026-01-01T00:00:00.000Z' };
    writeFakeAccount(account, { databases: [existing] });

    const unknown = await deploy(dir, ['--database', 'nope'], { account, relayUrl: relay.url });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no D1 database "nope"');
    expect(readFakeCalls(account).map(commandOf)).toEqual(['whoami', 'd1 list']);

    const run = await deploy(dir, ['--database', 'my-tether'], { account, relayUrl: relay.url, env: quick });
    if (run.status !== 0) throw new Error(run.stderr);
    expect(readFakeAccount(account).databases).toEqual([existing]);
    expect(productionDatabase(readFileSync(path.join(dir, 'wrangler.toml'), 'utf8'))).toEqual({ name: 'my-tether', id: existing.uuid });
    expect(run.stdout).toContain(`D1 "my-tether" (${existing.uuid}), the one you named; id recorded`);

    // `git pull` (or a checkout) puts the repository's wrangler.toml back: database "tether", placeholder id.
    writeFileSync(path.join(dir, 'wrangler.toml'), readFileSync(path.join(root, 'wrangler.toml'), 'utf8'));
    clearFakeCalls(account);
    const pulled = await deploy(dir, ['--skip-build'], { account, relayUrl: relay.url, env: quick });
    if (pulled.status !== 0) throw new Error(pulled.stderr);
    expect(readFakeCalls(account).filter((call) => isCommand(call, 'd1', 'create'))).toEqual([]);
    expect(readFakeAccount(account).databases).toEqual([existing]);
    expect(productionDatabase(readFileSync(path.join(dir, 'wrangler.toml'), 'utf8'))).toEqual({ name: 'my-tether', id: existing.uuid });
    expect(pulled.stdout).toContain(`D1 "my-tether" (${existing.uuid}), the one this machine deployed on last; id recorded`);
  });

  test('a secret list that fails other than "Worker not found" (an auth error, the network) stops the deploy before any secret is put', async () => {
    const { dir, account } = fresh();
    // A live relay: its database and its keys.
    const database = { uuid: '5d0c3f6a-2b7e-4c1d-8e9f-0a1b2c3d4e5f', name: 'tether', created_at: '2026-01-01T00:00:00.000Z' };
    const secrets = { TETHER_SIGNING_KEYS: '[{"kid":"live"}]', TETHER_VAPID_KEYS: '[{"kid":"vapid-live"}]' };
    for (const failure of [
      'A request to the Cloudflare API (/accounts/acc-1/workers/scripts/tether/secrets) failed.\n  Authentication error [code: 10000]\n  The route was not found for this token.',
      'fetch failed: getaddrinfo ENOTFOUND api.cloudflare.com',
    ]) {
      writeFakeAccount(account, { databases: [database], workers: { production: { secrets, deploys: 3 } }, failures: { 'secret list': failure } });
      const run = await deploy(dir, ['--skip-build'], { account, relayUrl: relay.url, env: quick });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain("Listing the relay's secrets (wrangler secret list); nothing was stored");
      expect(run.stderr).toContain(failure.split('\n').at(-1)!.trim());
      expect(puts(readFakeCalls(account))).toEqual([]);
      expect(readFakeCalls(account).some((call) => call.args[0] === 'deploy')).toBe(false);
      expect(readFakeAccount(account).workers.production!.secrets).toEqual(secrets);
    }
  });

  test('a relay whose health check says D1 lacks migrations: the deploy names them and exits 1', async () => {
    const { dir, account } = fresh();
    const healthy = relay.health;
    relay.health = HealthSchema.parse({
      ...healthy,
      ok: false,
      migrations: { applied: '0003_push_origin', expected: '0004_relay_metrics', pending: ['0004_relay_metrics'] },
    });
    mkdirSync(path.join(dir, 'dist', 'web'), { recursive: true });
    writeFileSync(path.join(dir, 'dist', 'web', 'index.html'), '<!doctype html><title>Tether</title>');
    try {
      const run = await deploy(dir, ['--skip-build'], { account, relayUrl: relay.url, env: quick });
      expect(run.status).toBe(1);
      expect(run.stdout).toContain(`GET ${relay.url}/api/health: 503`);
      expect(run.stderr).toContain(
        'The relay is deployed but not healthy: D1 lacks the migration 0004_relay_metrics this build expects (applied up to 0003_push_origin)',
      );
    } finally {
      relay.health = healthy;
    }
  });
});

describe('wrangler.toml, as the deploy reads and writes it', () => {
  const repoConfig = readFileSync(path.join(root, 'wrangler.toml'), 'utf8');

  test("the repository's config names the production database by its placeholder and the Worker tether", () => {
    expect(productionDatabase(repoConfig)).toEqual({ name: 'tether', id: null });
    expect(productionWorkerName(repoConfig)).toBe('tether');
  });

  test('recording a database replaces its two values in place, keeping their comments, and adds a missing id line', () => {
    const text = [
      '[[d1_databases]]',
      'binding = "DB"',
      'database_name = "tether"',
      'database_id = "local"',
      '[[env.production.d1_databases]]',
      'binding = "DB"  # the relay\'s',
      'database_name = "tether" # kept',
      'migrations_dir = "migrations"',
      '[env.production.vars]',
      'X = "1"',
    ].join('\n');
    const written = withProductionDatabase(text, { name: 'prod', id: 'abc' });
    expect(written.split('\n')).toEqual([
      '[[d1_databases]]',
      'binding = "DB"',
      'database_name = "tether"',
      'database_id = "local"',
      '[[env.production.d1_databases]]',
      'binding = "DB"  # the relay\'s',
      'database_name = "prod" # kept',
      'database_id = "abc"',
      'migrations_dir = "migrations"',
      '[env.production.vars]',
      'X = "1"',
    ]);
    expect(() => productionDatabase('[[d1_databases]]\nbinding = "DB"\n')).toThrow(/env\.production\.d1_databases/);
  });

  test("the relay URL among wrangler's deploy targets: a custom domain, else a route, else workers.dev", () => {
    expect(relayUrlFrom(['https://tether.me.workers.dev'])).toBe('https://tether.me.workers.dev');
    expect(relayUrlFrom(['https://tether.me.workers.dev', 'tether.example.com (custom domain)'])).toBe('https://tether.example.com');
    expect(relayUrlFrom(['tether.example.com/* (zone name: example.com)'])).toBe('https://tether.example.com');
    expect(relayUrlFrom(['schedule: * * * * *'])).toBeNull();
  });
});
