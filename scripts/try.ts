// `npm run try -- "message"`: a small terminal client for the relay `npm start` runs. It opens a chat,
// sends the message, prints the reply as it streams and asks you about approvals and questions.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { RelaySocket, relayPaths } from '../src/client/index.ts';
import { requestSigner, settledAmong } from '../src/client/device-key.ts';
import { loadOrCreateDeviceKey } from '../src/client/device-key-file.ts';
import { Thread, shortFingerprint, type ChatItem } from '../src/contracts/index.ts';

const root = path.resolve(import.meta.dirname, '..');
let local: { relayUrl: string; hostId: string };
try {
  const read = JSON.parse(readFileSync(path.join(root, '.tether', 'local.json'), 'utf8')) as { relayUrl: string; hostId: string | null; approveAt?: string };
  if (read.hostId === null) {
    // Before this client registers a device of its own: the browser that approves is the person's first.
    console.error(`The host on this machine waits for its owner's approval: sign in and approve it in the web app first (${read.approveAt ?? read.relayUrl}).`);
    process.exit(1);
  }
  local = { relayUrl: read.relayUrl, hostId: read.hostId };
} catch {
  console.error('Run `npm start` first (in another terminal).');
  process.exit(1);
}

/** Signs in as the owner with TETHER_EMAIL / TETHER_PASSWORD; answers an access token. */
async function signIn(): Promise<string> {
  const email = process.env.TETHER_EMAIL;
  const password = process.env.TETHER_PASSWORD;
  if (!email || !password) {
    console.error('Sign in first: TETHER_EMAIL=<you> TETHER_PASSWORD=<yours> npm run try -- "hello"');
    console.error('(No account yet? Open the setup link `npm start` printed to create the owner account.)');
    process.exit(1);
  }
  const res = await fetch(`${local.relayUrl}/api/auth/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as { accessToken?: string; message?: string };
  if (!res.ok || !body.accessToken) {
    console.error(`Sign-in refused: ${body.message ?? res.status}`);
    process.exit(1);
  }
  return body.accessToken;
}
const token = await signIn();

// This terminal client is a device of its own (issue 15): its key lives in .tether/try-device.json
// (0600), is registered with the relay as one of the person's devices, and signs every request that
// acts on the machine, so a host that requires signatures and knows this device carries them out.
const deviceKey = await loadOrCreateDeviceKey(path.join(root, '.tether', 'try-device.json'));
const registered = await fetch(`${local.relayUrl}/api/devices`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify({ name: 'npm run try', publicKey: deviceKey.publicKey }),
});
if (!registered.ok) {
  const body = (await registered.json().catch(() => ({}))) as { message?: string };
  console.error(`(this device's key was not registered: ${body.message ?? registered.status}; requests still go signed)`);
} else {
  await vouched();
}

/**
 * A host follows a device back to its owner: the device that approved its pairing (pinned in its
 * trust.json) or one a counting device vouched for. Until this one is, the host refuses what it signs,
 * so this waits for the person to vouch for it in the web app.
 */
async function vouched(): Promise<void> {
  let pinned: string | null = null;
  try {
    pinned =
      (JSON.parse(readFileSync(path.join(root, '.tether', 'host', 'trust.json'), 'utf8')) as { owner?: { device?: { id?: string } } }).owner?.device?.id ??
      null;
  } catch {
    // Not this repository's npm start host (TETHER_HOST_DATA elsewhere): the host says whether it counts.
  }
  if (pinned === deviceKey.id) return;
  let told = false;
  for (;;) {
    const res = await fetch(`${local.relayUrl}/api/devices`, { headers: { authorization: `Bearer ${token}` } });
    const list = res.ok ? ((await res.json()) as { devices: Array<{ id: string; vouchedBy: string | null }> }).devices : [];
    const self = list.find((device) => device.id === deviceKey.id);
    if (!self || self.vouchedBy !== null) return;
    if (!told) {
      console.log(`This terminal is a new device of yours ("npm run try", fingerprint ${shortFingerprint(deviceKey.id)}).`);
      console.log(`Vouch for it in the web app (${local.relayUrl}, Settings → Devices) so the host takes what it signs; waiting…`);
      told = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}
const text = process.argv.slice(2).join(' ') || 'hello';
const chatId = process.env.TETHER_CHAT ?? `try-${Date.now().toString(36)}`;
const prompt = createInterface({ input: process.stdin, output: process.stdout });
let stdinOpen = true;
prompt.once('close', () => {
  stdinOpen = false;
});
/** Asks on the terminal; with no terminal left (piped input ended) the answer is empty. */
const ask = {
  question: (q: string) => (stdinOpen ? prompt.question(q) : Promise.resolve('')),
  close: () => prompt.close(),
};

let thread: Thread | undefined;
// An approval or answer is signed over the request as this client shows it (its thread).
const signer = requestSigner(deviceKey, local.hostId, (frame) => settledAmong(frame.type, frame.payload, thread?.items ?? []));
const lobby = new RelaySocket(relayPaths.lobby(local.relayUrl, local.hostId), token, { signer });
await lobby.request('chat.create', { chatId });
const chat = new RelaySocket(relayPaths.chat(local.relayUrl, local.hostId, chatId), token, { signer });
const attached = await chat.request('chat.attach', { chatId, historyLimit: 1 });
thread = new Thread(attached.info, []);
const printed = new Map<string, number>();
let turnId: string | undefined;
const asked = new Set<string>();
let lastStreamed: string | null = null;

chat.onFrame((raw) => {
  const frame = raw as { event?: string; payload?: { event?: Parameters<Thread['apply']>[0] } };
  if (frame.event !== 'chat.event' || !frame.payload?.event) return;
  const item = thread?.apply(frame.payload.event);
  if (item) void show(item);
});

async function show(item: ChatItem): Promise<void> {
  if (turnId && item.turnId !== turnId && item.kind !== 'turn') return;
  if (item.kind === 'assistant' || item.kind === 'thinking') {
    const done = printed.get(item.id);
    if (lastStreamed !== item.id && lastStreamed !== null && item.kind === 'assistant') process.stdout.write('\n');
    lastStreamed = item.id;
    process.stdout.write((item.kind === 'thinking' && done === undefined ? '\n(thinking) ' : '') + item.text.slice(done ?? 0));
    printed.set(item.id, item.text.length);
  } else if (item.kind === 'tool' && item.state !== 'running' && !printed.has(item.id)) {
    printed.set(item.id, 1);
    console.log(`\n[tool ${item.name}] ${item.state}${item.output ? `: ${item.output.slice(0, 200)}` : ''}`);
  } else if (item.kind === 'approval' && item.decision === 'pending' && !asked.has(item.requestId)) {
    asked.add(item.requestId);
    const answer = (await ask.question(`\n${item.toolName} wants to run ${JSON.stringify(item.input)}. Allow? [y/N] `)).trim().toLowerCase();
    await chat
      .request('chat.approve', { chatId, requestId: item.requestId, decision: answer.startsWith('y') ? 'allow' : 'deny' })
      .catch((error: Error) => console.log(`(${error.message})`));
  } else if (item.kind === 'question' && item.state === 'pending' && !asked.has(item.requestId)) {
    asked.add(item.requestId);
    const answers: Record<string, string> = {};
    for (const q of item.questions) {
      const choices = q.choices.map((c, i) => `${i + 1}) ${c.label}`).join('  ');
      const picked = (await ask.question(`\n${q.question} ${choices} > `)).trim();
      answers[q.id] = q.choices[Number(picked) - 1]?.label ?? picked;
    }
    await chat.request('chat.answer', { chatId, requestId: item.requestId, answers }).catch((error: Error) => console.log(`(${error.message})`));
  } else if (item.kind === 'turn' && item.id === turnId && item.state !== 'running') {
    console.log(`\n— turn ${item.state}, $${item.costUsd.toFixed(4)}`);
    ask.close();
    chat.close();
    lobby.close();
  }
}

const sent = await chat.request('chat.send', { chatId, text });
turnId = sent.turnId;
if (sent.queued) console.log('(queued: the host is busy or offline; it goes out when it can)');
