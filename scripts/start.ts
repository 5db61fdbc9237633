// `npm start`: the whole product on this machine. The relay on workerd through `wrangler dev`
// (migrations applied, state kept in .wrangler/ across restarts), and a host on this machine linked
// to it, paired by the owner's signed approval and requiring signatures (scripts/local-host.ts).
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { consoleLog } from '../src/host/index.ts';
import { formatAgents } from '../src/host/config.ts';
import { shortFingerprint } from '../src/contracts/index.ts';
import { buildWeb } from './build-web.ts';
import { ownerClaimed, setupLink } from './deploy/relay-checks.ts';
import { newSecretValue, SETUP_SECRET, SIGNING_KEYS, VAPID_KEYS } from './deploy/relay-secrets.ts';
import { localFile, startLocalHost } from './local-host.ts';
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
  const add = (name: string, value: string) => {
    text = `${text.trimEnd()}${text.trim() ? '\n' : ''}${name}=${value}\n`;
  };
  let signingKeys = read(SIGNING_KEYS);
  let setupSecret = read(SETUP_SECRET);
  if (!signingKeys) add(SIGNING_KEYS, (signingKeys = `'${await newSecretValue(SIGNING_KEYS)}'`));
  if (!setupSecret) add(SETUP_SECRET, (setupSecret = await newSecretValue(SETUP_SECRET)));
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

// The local host pairs the signed way: the owner approves its code in the web app, whose device key
// signs the approval, and the host pins them (scripts/local-host.ts). The first time, the setup link
// creates the owner account and leads on to that approval.
const hostData = path.join(local, 'host');
const localJson = localFile(root);
const writeLocal = (value: { relayUrl: string; hostId: string | null; approveAt?: string }) =>
  writeFileSync(localJson, JSON.stringify(value, null, 2), { mode: 0o600 });
// Ctrl-C while the host waits for its approval stops the relay too.
const pairing = new AbortController();
const abortPairing = () => pairing.abort(new Error('stopped while waiting for the approval'));
process.once('SIGINT', abortPairing);
process.once('SIGTERM', abortPairing);
const started = await startLocalHost({
  signal: pairing.signal,
  relayUrl: relay.url,
  dataDir: hostData,
  name: hostname(),
  say: (line) => console.log(line),
  log: consoleLog(Boolean(process.env.TETHER_VERBOSE)),
  onCode: ({ userCode, verificationUrl }) => {
    writeLocal({ relayUrl: relay.url, hostId: null, approveAt: verificationUrl });
    void ownerClaimed(relay.url).then((claimed) =>
      console.log(
        claimed === true
          ? `
The host on this machine waits for you to approve it (code ${userCode}). Sign in and approve it at:
    ${verificationUrl}
`
          : `
The relay has no owner yet. Open this one-time link to create the owner account; it then leads you
to approve the host on this machine (code ${userCode}), signed by your browser's device key:
    ${setupLink(relay.url, secrets.setupSecret, userCode)}
`,
      ),
    );
  },
}).catch((error: unknown) => {
  console.error(`The local host could not start: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`(To pair it again from scratch, remove ${hostData}/identity.json and ${hostData}/trust.json.)`);
  return relay.stop().then(() => process.exit(1));
});
process.off('SIGINT', abortPairing);
process.off('SIGTERM', abortPairing);
const { host, identity, owner: pinned } = started;
const hostId = identity.hostId;
writeLocal({ relayUrl: relay.url, hostId });

// Until the owner has a password, the one-time setup link (the secret rides in the fragment, which
// no server sees) is how they get one.
const claimed = await ownerClaimed(relay.url);
const owner =
  claimed === true
    ? `  owner        ${pinned.name}, pinned by this host (device ${shortFingerprint(pinned.device.id)})`
    : `  owner        the relay has none (was its state in .wrangler/ removed?). Open this one-time link to create the owner account:
                 ${setupLink(relay.url, secrets.setupSecret)}
               then remove ${hostData}/identity.json and restart, so the host pairs with the new owner`;

const plan = host.agents!;
const configLine = plan.configFile
  ? `${plan.configFile} (its "providers" decide the agents)`
  : `none: ${path.join(hostData, 'config.json')} does not exist, so the agents are the ones found on PATH`;
const demoHint =
  plan.source === 'demo'
    ? `
  The only agent is the scripted demo: no Claude Code, Codex, Gemini CLI or Copilot CLI that can chat
  was found on your PATH. Install one and sign in (e.g. npm install -g @anthropic-ai/claude-code, then
  claude and /login), then restart. What it finds and why: node_modules/.bin/node bin/tether.js host doctor --data ${hostData}
`
    : '';

const signaturesLine = host.signatures.require
  ? `required${host.signatures.allowUnsigned.length ? `, except ${host.signatures.allowUnsigned.join(', ')}` : ''}: what acts on this machine must be signed by a device it can follow back to its owner`
  : `NOT required (${path.join(hostData, 'config.json')} turns them off): this host believes the relay about who asks`;

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
  - Open ${relay.url} and start a chat on this host.
  - Or talk to it from another terminal (its device key waits for your vouch in Settings → Devices):
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
