// `npm start`: the whole product on this machine. The relay on workerd through `wrangler dev`
// (migrations applied, state kept in .wrangler/ across restarts), and a host on this machine linked
// to it, serving the `script` provider until real CLIs are configured.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { consoleLog, startHost } from '../src/host/index.ts';
import { mintToken } from '../src/relay/auth/tokens.ts';
import { startLocalRelay } from './local-relay.ts';

const [major] = process.versions.node.split('.').map(Number);
if (major! < 22) {
  console.error(`Tether needs Node >= 22; this is ${process.version}. Run it through npm (npm start), which uses the Node in node_modules.`);
  process.exit(1);
}

const root = path.resolve(import.meta.dirname, '..');
const local = path.join(root, '.tether');
mkdirSync(local, { recursive: true, mode: 0o700 });

/** The token secret lives in .dev.vars, which wrangler dev reads; made once, kept across restarts. */
function tokenSecret(): string {
  const file = path.join(root, '.dev.vars');
  const existing = existsSync(file) ? /^TETHER_TOKEN_SECRET=(.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]?.trim() : undefined;
  if (existing) return existing;
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${existsSync(file) ? `${readFileSync(file, 'utf8').trimEnd()}\n` : ''}TETHER_TOKEN_SECRET=${secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

const secret = tokenSecret();
const port = Number(process.env.PORT ?? 8787);
console.log('Starting the relay on workerd (wrangler dev)…');
const relay = await startLocalRelay({ port, persistTo: path.join(root, '.wrangler', 'state'), quiet: !process.env.TETHER_VERBOSE });

const ownerId = 'owner';
const hostId = `local-${hostname().toLowerCase().replace(/[^a-z0-9-]/g, '-')}`;
const ownerToken = await mintToken(secret, { kind: 'user', userId: ownerId });
const hostToken = await mintToken(secret, { kind: 'host', hostId, ownerId });
writeFileSync(path.join(local, 'local.json'), JSON.stringify({ relayUrl: relay.url, hostId, ownerToken }, null, 2), { mode: 0o600 });

const host = await startHost({
  dataDir: path.join(local, 'host'),
  relayUrl: relay.url,
  hostId,
  token: hostToken,
  log: consoleLog(Boolean(process.env.TETHER_VERBOSE)),
});

console.log(`
Tether is running.

  relay        ${relay.url}   (health: ${relay.url}/api/health)
  host         ${hostId}, linked, answering as "Claude Code (scripted)" from src/host/providers/script.default.json
  owner token  saved in .tether/local.json (valid 30 days; every restart mints a new one)

Next:
  - Talk to your host from another terminal:   npm run try -- "please approve the build"
    (keywords in the default script: approve, question, tool, visual, stream, fail, slow)
  - Any agent-contracts client connects to
      ${relay.url.replace('http', 'ws')}/v1/hosts/${hostId}/lobby?access_token=<owner token>
      ${relay.url.replace('http', 'ws')}/v1/hosts/${hostId}/chats/<chat id>?access_token=<owner token>

Ctrl-C stops the relay and the host; their state stays in .wrangler/ and .tether/.
`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log('\nStopping…');
  await host.close().catch((error: unknown) => console.error(String(error)));
  await relay.stop();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
relay.process.once('exit', (code) => {
  if (stopping) return;
  console.error(`wrangler dev exited (${code}); stopping the host.`);
  void host.close().finally(() => process.exit(1));
});
