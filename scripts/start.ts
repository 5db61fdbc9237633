// `npm start`: the whole product on this machine. The relay on workerd through `wrangler dev`
// (migrations applied, state kept in .wrangler/ across restarts), and a host on this machine linked
// to it, serving the `script` provider until real CLIs are configured.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { consoleLog, startHost } from '../src/host/index.ts';
import { formatAgents } from '../src/host/config.ts';
import { hostTokenSigner } from '../src/host/identity.ts';
import { pairWithSetupSecret } from '../src/host/pairing.ts';
import { buildWeb } from './build-web.ts';
import { ownerClaimed, setupLink } from './deploy/relay-checks.ts';
import { newSecretValue, SETUP_SECRET, SIGNING_KEYS, VAPID_KEYS } from './deploy/relay-secrets.ts';
import { startLocalRelay } from './local-relay.ts';

const [major] = process.versions.node.split('.').map(Number);
if (major! < 22) {
  console.error(`Tether needs Node >= 22; this is ${process.version}. Run it through npm (npm start), which uses the Node in node_modules.`);
  process.exit(1);
}

const root = path.resolve(import.meta.dirname, '..');
const local = path.join(root, '.tether');
mkdirSync(local, { recursive: true, mode: 0o700 });

/**
 * The relay's secrets live in .dev.vars, which wrangler dev reads: its signing keys and the setup
 * secret that claims the owner account. Made once, kept across restarts (a new key would sign
 * everyone out).
 */
async function devSecrets(): Promise<{ signingKeys: string; setupSecret: string }> {
  const file = path.join(root, '.dev.vars');
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const read = (name: string) => new RegExp(`^${name}=(.+)$`, 'm').exec(text)?.[1]?.trim();
  const add = (name: string, value: string) => { text = `${text.trimEnd()}${text.trim() ? '\n' : ''}${name}=${value}\n`; };
  let signingKeys = read(SIGNING_KEYS);
  let setupSecret = read(SETUP_SECRET);
  if (!signingKeys) add(SIGNING_KEYS, signingKeys = `'${await newSecretValue(SIGNING_KEYS)}'`);
  if (!setupSecret) add(SETUP_SECRET, setupSecret = await newSecretValue(SETUP_SECRET));
  // Web Push's VAPID key: browsers subscribe under it, so it is kept too (a new one orphans every subscription).
  if (!read(VAPID_KEYS)) add(VAPID_KEYS, `'${await newSecretValue(VAPID_KEYS)}'`);
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  // .dev.vars quotes the JSON (dotenv syntax); the value itself is what is between the quotes.
  return { signingKeys: signingKeys.replace(/^'(.*)'$/, '$1'), setupSecret };
}

const secrets = await devSecrets();
const port = Number(process.env.PORT ?? 8787);
console.log('Building the web app…');
buildWeb({ quiet: true });
console.log('Starting the relay on workerd (wrangler dev)…');
const relay = await startLocalRelay({ port, persistTo: path.join(root, '.wrangler', 'state'), quiet: !process.env.TETHER_VERBOSE });

// The local host pairs itself through the setup secret (the owner's approval, before the owner has
// signed in): its key stays in .tether/host/identity.json and it signs its own link tokens.
const hostData = path.join(local, 'host');
const identity = await pairWithSetupSecret({ relayUrl: relay.url, secret: secrets.setupSecret, name: hostname(), dataDir: hostData }).catch((error: unknown) => {
  console.error(`The local host could not pair with the relay: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`(To start over with a new key, remove ${path.join(hostData, 'identity.json')}.)`);
  return relay.stop().then(() => process.exit(1));
});
const hostId = identity.hostId;
writeFileSync(path.join(local, 'local.json'), JSON.stringify({ relayUrl: relay.url, hostId }, null, 2), { mode: 0o600 });

const host = await startHost({
  dataDir: hostData,
  relayUrl: relay.url,
  hostId,
  token: hostTokenSigner(identity),
  log: consoleLog(Boolean(process.env.TETHER_VERBOSE)),
  // Paired by the setup secret, before the owner exists: no person's device approved it, so no owner
  // is pinned to check signatures against (the web app signs, but this host cannot tell whose key is
  // the owner's). Unless its config says otherwise, this local host believes the relay (the banner says so).
  requireSignaturesByDefault: false,
});

// Until the owner has a password, the one-time setup link (the secret rides in the fragment, which
// no server sees) is how they get one.
const claimed = await ownerClaimed(relay.url);
const owner = claimed === true
  ? '  owner        signed up; sign in with your email and password'
  : `  owner        not set up yet. Open this one-time link to create the owner account:
                 ${setupLink(relay.url, secrets.setupSecret)}`;

const plan = host.agents!;
const configLine = plan.configFile
  ? `${plan.configFile} (its "providers" decide the agents)`
  : `none: ${path.join(hostData, 'config.json')} does not exist, so the agents are the ones found on PATH`;
const demoHint = plan.source === 'demo'
  ? `
  The only agent is the scripted demo: no Claude Code, Codex, Gemini CLI or Copilot CLI that can chat
  was found on your PATH. Install one and sign in (e.g. npm install -g @anthropic-ai/claude-code, then
  claude and /login), then restart. What it finds and why: node_modules/.bin/node bin/tether.js host doctor --data ${hostData}
`
  : '';

const signaturesLine = host.signatures.require
  ? `required${host.signatures.allowUnsigned.length ? `, except ${host.signatures.allowUnsigned.join(', ')}` : ''}`
  : 'NOT required: this local host is paired by the setup secret, so no owner\'s device is pinned to check them against; it believes the relay about who asks';

console.log(`
Tether is running.

  relay        ${relay.url}   (health: ${relay.url}/api/health)
  host         ${hostId}, linked; data in ${hostData}
  config       ${configLine}
  signatures   ${signaturesLine}
  agents
${formatAgents(plan, '    ').join('\n')}
${demoHint}${owner}

Next:
  - Talk to your host from another terminal:
      TETHER_EMAIL=<you> TETHER_PASSWORD=<yours> npm run try -- "please approve the build"
${plan.source === 'demo' ? '    (keywords in the demo script: approve, question, tool, visual, stream, fail, slow)\n' : ''}  - Any agent-contracts client signs in (POST ${relay.url}/api/auth/signin {email, password}), trades its
    access token for a socket ticket (POST /api/auth/tickets) and connects to
      ${relay.url.replace('http', 'ws')}/v1/hosts/${hostId}/lobby?ticket=<ticket>
      ${relay.url.replace('http', 'ws')}/v1/hosts/${hostId}/chats/<chat id>?ticket=<ticket>

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
