// Remakes test/deploy/fixtures/release-0.1.0.sql: the D1 of the previous release with rows in every
// table, for the upgrade test (test/deploy/migrations.test.ts). It takes that release's own tree
// (`git archive`), runs its relay on workerd, pairs and starts its host, and uses the relay the way
// people do, through the HTTP API and sockets: the owner's setup, sign-ins, a refresh and a sign-out,
// a team with invitations (one used, one not), a disabled member, OIDC sign-ins (one finished, one left
// at the provider, one login code never exchanged), pairings (claimed, pending, denied, a revoked
// host), grants, chats with an approval answered from a push notification, a question, a visual, a
// bookmark and an approval left waiting, push subscriptions and deliveries. Then `wrangler d1 export`.
//
//   npx node scripts/release-snapshot.ts [out.sql]      (default: the fixture itself)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { statementsOf } from './backup/export-file.ts';
import { newSecretValue, SETUP_SECRET, SIGNING_KEYS, VAPID_KEYS } from './deploy/relay-secrets.ts';
import { rowCounts } from '../test/deploy/local-d1.ts';
import { FIXTURE_DISABLED, FIXTURE_HOST, FIXTURE_MEMBER, FIXTURE_OIDC_ONLY, FIXTURE_OWNER, RELEASE, RELEASE_FIXTURE } from '../test/deploy/release-fixture.ts';
import { wrangler } from '../test/deploy/wrangler.ts';

const root = path.resolve(import.meta.dirname, '..');
const out = path.resolve(process.argv[2] ?? RELEASE_FIXTURE);
const work = mkdtempSync(path.join(tmpdir(), 'tether-release-'));
const release = path.join(work, 'release');

// The release's own code throughout (types from this tree, which the release shares).
type LocalRelayModule = typeof import('./local-relay.ts');
type ClientModule = typeof import('../src/client/index.ts');
type PushEndpointModule = typeof import('../test/support/push-endpoint.ts');
type IdpModule = typeof import('../test/support/idp-server.ts');

function extractRelease(): void {
  mkdirSync(release);
  const tar = path.join(work, 'release.tar');
  const archived = spawnSync('git', ['archive', '--format=tar', '-o', tar, RELEASE.commit], { cwd: root, encoding: 'utf8' });
  if (archived.status !== 0) throw new Error(`git archive ${RELEASE.commit} failed: ${archived.stderr}`);
  const extracted = spawnSync('tar', ['-xf', tar, '-C', release], { encoding: 'utf8' });
  if (extracted.status !== 0) throw new Error(`extracting the release failed: ${extracted.stderr}`);
  // The release's own dependencies: this tree's when it pins the same ones, else installed from its lock file.
  const pins = (text: string) => {
    const pkg = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify([pkg.dependencies, pkg.devDependencies, pkg.overrides]);
  };
  if (pins(readFileSync(path.join(release, 'package.json'), 'utf8')) === pins(readFileSync(path.join(root, 'package.json'), 'utf8'))) {
    symlinkSync(path.join(root, 'node_modules'), path.join(release, 'node_modules'), 'dir');
  } else {
    const installed = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: release, stdio: 'inherit' });
    if (installed.status !== 0) throw new Error('npm ci in the release failed');
  }
  // No web app is needed for the API; wrangler wants an assets folder to exist.
  mkdirSync(path.join(release, 'dist', 'web'), { recursive: true });
  writeFileSync(path.join(release, 'dist', 'web', 'index.html'), '<!doctype html><title>Tether</title>');
}

const load = <T>(file: string) => import(path.join(release, file)) as Promise<T>;

interface Session {
  userId: string;
  sessionId: string;
  accessToken: string;
  refreshToken: string;
}
type Frame = Record<string, any>;

async function main(): Promise<void> {
  extractRelease();
  const { startLocalRelay } = await load<LocalRelayModule>('scripts/local-relay.ts');
  const { RelaySocket, relayPaths } = await load<ClientModule>('src/client/index.ts');
  const { PushEndpoint } = await load<PushEndpointModule>('test/support/push-endpoint.ts');
  const { IdentityProvider, IDP_CLIENT_ID, IDP_CLIENT_SECRET } = await load<IdpModule>('test/support/idp-server.ts');

  const idp = await new IdentityProvider().start();
  const pushService = await new PushEndpoint().start();
  // The secrets made as a deploy makes them (the release's relay reads the same shapes).
  const setupSecret = await newSecretValue(SETUP_SECRET);
  // `wrangler d1 export --local` reads the default state folder of the config's directory.
  const relay = await startLocalRelay({
    persistTo: path.join(release, '.wrangler', 'state'),
    quiet: true,
    vars: {
      [SIGNING_KEYS]: await newSecretValue(SIGNING_KEYS),
      [SETUP_SECRET]: setupSecret,
      [VAPID_KEYS]: await newSecretValue(VAPID_KEYS),
      PUSH_SUBJECT: `mailto:${FIXTURE_OWNER.email}`,
      PUSH_ALLOW_LOOPBACK: '1',
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: IDP_CLIENT_ID,
      OIDC_CLIENT_SECRET: IDP_CLIENT_SECRET,
    },
  });
  const host: { child: ChildProcess | null } = { child: null };
  const sockets: InstanceType<ClientModule['RelaySocket']>[] = [];
  try {
    const api = async (method: string, route: string, body?: unknown, token?: string, expect = [200, 201]): Promise<any> => {
      const res = await fetch(`${relay.url}${route}`, {
        method,
        headers: {
          'user-agent': 'release-snapshot',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!expect.includes(res.status)) throw new Error(`${method} ${route}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    };

    // Accounts and sessions: setup, a password sign-in that refreshes once, the setup session signed out.
    const setup: Session = await api('POST', '/api/auth/setup', { ...FIXTURE_OWNER, secret: setupSecret });
    const signedIn: Session = await api('POST', '/api/auth/signin', { email: FIXTURE_OWNER.email, password: FIXTURE_OWNER.password });
    const owner: Session = { ...signedIn, ...(await api('POST', '/api/auth/refresh', { refreshToken: signedIn.refreshToken })) };
    await api('POST', '/api/auth/signout', undefined, setup.accessToken);
    await api('POST', '/api/auth/signin', { email: FIXTURE_OWNER.email, password: 'not the password' }, undefined, [401]);
    await api('POST', '/api/auth/tickets', undefined, owner.accessToken); // a socket ticket never used

    // A team, its invitations (accepted, open), and a member the owner disabled.
    const team = await api('POST', '/api/teams', { name: 'Platform' }, owner.accessToken);
    const invite = (email: string, role: string) => api('POST', `/api/teams/${team.id}/invitations`, { role, email }, owner.accessToken);
    const alice: Session = await api('POST', `/api/invitations/${(await invite(FIXTURE_MEMBER.email, 'member')).token}/accept`, FIXTURE_MEMBER);
    const carol: Session = await api('POST', `/api/invitations/${(await invite(FIXTURE_DISABLED.email, 'admin')).token}/accept`, FIXTURE_DISABLED);
    await invite('bob@release.example', 'member');
    await api('POST', `/api/users/${carol.userId}/disable`, {}, owner.accessToken);

    // OIDC: Alice and Dana through the provider; one sign-in left at the provider, one login code unused.
    const hop = async (url: string | URL) => {
      const res = await fetch(url, { redirect: 'manual' });
      if (res.status !== 302) throw new Error(`${url}: ${res.status} ${await res.text()}`);
      return new URL(res.headers.get('location')!, url);
    };
    const oidcLogin = async (who: { email: string; name: string }) => {
      await fetch(`${idp.url}/test/next`, { method: 'POST', body: JSON.stringify({ email: who.email, emailVerified: true, name: who.name }) });
      const back = await hop(await hop(await hop(`${relay.url}/api/auth/oidc/start?return=${encodeURIComponent('/')}`)));
      return new URLSearchParams(back.hash.slice(1)).get('login')!;
    };
    await api('POST', '/api/auth/oidc/exchange', { code: await oidcLogin(FIXTURE_MEMBER) });
    await api('POST', '/api/auth/oidc/exchange', { code: await oidcLogin(FIXTURE_OIDC_ONLY) });
    await oidcLogin(FIXTURE_MEMBER);
    await hop(`${relay.url}/api/auth/oidc/start?return=${encodeURIComponent('/')}`);

    // Pairings: the real host (claimed), one waiting, one denied, and a host paired then revoked.
    const hostData = path.join(work, 'host');
    const hostId = await pairHost(relay.url, hostData, owner.accessToken);
    const publicKey = () => generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
    await api('POST', '/api/pair/start', { name: 'phone-in-a-drawer', publicKey: publicKey() });
    const denied = await api('POST', '/api/pair/start', { name: 'unknown-laptop', publicKey: publicKey() });
    await api('POST', '/api/pair/deny', { userCode: denied.userCode }, owner.accessToken);
    const old = await api('POST', '/api/pair/start', { name: 'old-desktop', publicKey: publicKey() });
    await api('POST', '/api/pair/approve', { userCode: old.userCode }, owner.accessToken);
    const claimed = await api('POST', '/api/pair/poll', { deviceCode: old.deviceCode });
    await api('DELETE', `/api/hosts/${claimed.hostId}`, undefined, owner.accessToken);

    // Grants on the real host: Alice views it, the team operates it, one chat for Dana.
    await api('POST', `/api/hosts/${hostId}/grants`, { subject: { type: 'user', email: FIXTURE_MEMBER.email }, role: 'viewer' }, owner.accessToken);
    await api('POST', `/api/hosts/${hostId}/grants`, { subject: { type: 'team', id: team.id }, role: 'operator' }, owner.accessToken);
    await api(
      'POST',
      `/api/hosts/${hostId}/grants`,
      { subject: { type: 'user', email: FIXTURE_OIDC_ONLY.email }, role: 'viewer', chatId: FIXTURE_HOST.chats[0] },
      owner.accessToken,
    );

    // Push: the owner's and Alice's browsers subscribe.
    pushService.vapidKey = (await api('GET', '/api/push/key')).publicKey;
    await api('POST', '/api/push/subscriptions', pushService.subscribe('owner-phone'), owner.accessToken);
    await api('POST', '/api/push/subscriptions', pushService.subscribe('alice-phone'), alice.accessToken);

    // The host runs; chats happen.
    host.child = spawn(process.execPath, [path.join(release, 'bin', 'tether.js'), 'host', 'start', '--data', hostData], { cwd: release, stdio: 'ignore' });
    const open = async (url: string) => {
      const socket = new RelaySocket(url, owner.accessToken);
      sockets.push(socket);
      const frames: Frame[] = [];
      let waiting: { test: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];
      socket.onFrame((raw) => {
        const frame = raw as Frame;
        frames.push(frame);
        waiting = waiting.filter((w) => !(w.test(frame) && (w.resolve(frame), true)));
      });
      await socket.opened;
      /** The first frame passing `test` (the test may look at all frames so far), within a minute. */
      const next = async (test: (f: Frame) => boolean, what: string): Promise<Frame> =>
        frames.find(test) ??
        (await new Promise<Frame>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 60_000);
          waiting.push({
            test,
            resolve: (f) => {
              clearTimeout(timer);
              resolve(f);
            },
          });
        }));
      return { socket, frames, next };
    };
    const lobby = await open(relayPaths.lobby(relay.url, hostId));
    await lobby.next((f) => f.event === 'host.presence' && f.payload.online, 'the host online');
    const [chatId, waitingChatId] = FIXTURE_HOST.chats;
    await lobby.socket.request('chat.create', { chatId });
    await lobby.socket.request('chat.create', { chatId: waitingChatId });
    const chat = await open(relayPaths.chat(relay.url, hostId, chatId));
    await chat.socket.request('chat.attach', { chatId });
    const item = (f: Frame) => (f.event === 'chat.event' ? f.payload.event.item : undefined);
    const turnsDone = (n: number) =>
      chat.next(() => chat.frames.filter((f) => item(f)?.kind === 'turn' && item(f).state !== 'running').length >= n, `turn ${n} done`);

    await chat.socket.request('chat.send', { chatId, text: 'hello there' });
    await turnsDone(1);
    await chat.socket.request('chat.send', { chatId, text: 'please approve the build' });
    const asked = await pushService.waitFor((p) => p.name === 'owner-phone' && p.payload.kind === 'needs-you', 'the approval push');
    await api('POST', '/api/push/act', { token: asked.payload.action!.token, decision: 'allow' });
    await turnsDone(2);
    await chat.socket.request('chat.send', { chatId, text: 'ask me a question' });
    const question = item(await chat.next((f) => item(f)?.kind === 'question' && item(f).state === 'pending', 'a question'));
    const answers = Object.fromEntries(question.questions.map((q: any) => [q.id, q.choices[0]?.label ?? 'yes']));
    await chat.socket.request('chat.answer', { chatId, requestId: question.requestId, answers });
    await turnsDone(3);
    await chat.socket.request('chat.send', { chatId, text: 'show me a visual' });
    await chat.next((f) => f.event === 'chat.visuals' && f.payload.visuals.length > 0, 'a visual');
    await turnsDone(4);
    const first = chat.frames.map(item).find((i) => i?.kind === 'user');
    await chat.socket.request('chat.addBookmark', { chatId, itemId: first.id, name: 'where it started' });
    await pushService.waitFor((p) => p.name === 'owner-phone' && p.payload.kind === 'turn-ended', 'a turn-ended push');

    const waitingChat = await open(relayPaths.chat(relay.url, hostId, waitingChatId));
    await waitingChat.socket.request('chat.attach', { chatId: waitingChatId });
    await waitingChat.socket.request('chat.send', { chatId: waitingChatId, text: 'please approve the deploy' });
    await waitingChat.next((f) => item(f)?.kind === 'approval' && item(f).decision === 'pending', 'the waiting approval');
  } finally {
    for (const socket of sockets) socket.close();
    await stopHost(host.child);
    await relay.stop();
    await pushService.stop();
    await idp.stop();
  }

  const state = path.join(release, '.wrangler', 'state');
  requireEveryTable(state);
  const exported = path.join(work, 'export.sql');
  wrangler(['d1', 'export', 'tether', '--local', '--output', exported], release);
  const sql = importable(readFileSync(exported, 'utf8'));
  if (!/INSERT INTO "d1_migrations"/.test(sql)) throw new Error('the export has no d1_migrations rows');
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, sql);
  console.log(`wrote ${path.relative(root, out)} (${sql.length} bytes)`);
  rmSync(work, { recursive: true, force: true });
}

/** `tether host pair` of the release, its code approved by the owner; answers the host's id. */
async function pairHost(relayUrl: string, dataDir: string, ownerToken: string): Promise<string> {
  const child = spawn(process.execPath, [path.join(release, 'bin', 'tether.js'), 'host', 'pair', relayUrl, '--data', dataDir, '--name', FIXTURE_HOST.name], {
    cwd: release,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const userCode = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const code = /^\s+([2-9A-Z]{4}-[2-9A-Z]{4})\s*$/m.exec(output)?.[1];
      if (code) resolve(code);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then((code) => reject(new Error(`tether host pair exited (${code}) before showing a code:\n${output}`)));
  });
  const approved = await fetch(`${relayUrl}/api/pair/approve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ownerToken}` },
    body: JSON.stringify({ userCode }),
  });
  if (!approved.ok) throw new Error(`approving the host failed: ${approved.status} ${await approved.text()}`);
  if ((await exited) !== 0) throw new Error(`tether host pair failed:\n${output}`);
  return (JSON.parse(readFileSync(path.join(dataDir, 'identity.json'), 'utf8')) as { hostId: string }).hostId;
}

function stopHost(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * The export reordered so it loads into an empty D1: wrangler writes each table's rows right after
 * its CREATE, in creation order, so `chats` rows come before `hosts` exists and D1 (foreign keys
 * always on) fails with "no such table: main.hosts" (cloudflare/workers-sdk#5683, still open). All
 * tables first, then the rows (foreign keys are deferred by the export's own PRAGMA), then indexes.
 */
function importable(sql: string): string {
  const rank = (statement: string) => (/^PRAGMA /i.test(statement) ? 0 : /^CREATE TABLE /i.test(statement) ? 1 : /^INSERT /i.test(statement) ? 2 : 3);
  return `${statementsOf(sql)
    .map((statement, i) => ({ statement, i }))
    .sort((a, b) => rank(a.statement) - rank(b.statement) || a.i - b.i)
    .map(({ statement }) => statement)
    .join('\n')}\n`;
}

/** The fixture is only worth its name if every table of the release holds something. */
function requireEveryTable(state: string): void {
  const empty = Object.entries(rowCounts(state))
    .filter(([, rows]) => rows === 0)
    .map(([table]) => table);
  if (empty.length > 0) throw new Error(`tables left empty: ${empty.join(', ')}`);
}

await main();
