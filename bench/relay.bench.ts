// `npm run bench`: figures for the relay on workerd (`wrangler dev`), beside a plain `ws` broadcast in
// Node on loopback as the baseline. Prints, in one run:
//   - events per second and p50/p99 latency from host to 1, 10 and 100 attached clients;
//   - bytes on the wire per streamed character (host → relay and relay → client);
//   - attach time of a 5,000-item chat (cold: the relay fetches it from the host; warm: from the room);
//   - replay time of 1,000 missed events.
// The host here is a small in-process link peer (no disk, no CLI) so the figures are the relay's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { Thread, type ChatEvent, type ChatInfo, type ChatItem } from '../src/contracts/index.ts';
import { linkMessages } from '../src/host/link/relay-link.ts';
import { hostTokenSigner } from '../src/host/identity.ts';
import { pairWithSetupSecret } from '../src/host/pairing.ts';
import { generateSigningKey } from '../src/relay/auth/keys.ts';
import { buildWeb } from '../scripts/build-web.ts';
import { bundleWorker, freePort, startLocalRelay } from '../scripts/local-relay.ts';

// The relay's owner signs in with these; the bench host pairs with the setup secret (as `npm start`'s does).
const SETUP_SECRET = process.env.TETHER_SETUP_SECRET ?? 'bench-setup-secret-0123456789';
const OWNER = { email: process.env.TETHER_EMAIL ?? 'bench-owner@bench.test', password: process.env.TETHER_PASSWORD ?? 'bench-owner-password', name: 'Bench' };
/** The bench host's id, as the relay made it when the host paired. */
let HOST = '';
let signHostToken: () => Promise<string>;
let ownerToken = '';
const now = () => performance.now();

function info(chatId: string): ChatInfo {
  return {
    chatId, provider: 'claude', cwd: '/bench', agentSessionId: null, model: null, selection: { model: 'm', options: {} },
    runtimeMode: 'full-access', status: 'idle', running: false, activeTurnId: null, slashCommands: [],
    usage: { contextTokens: 0, contextWindow: null, costUsd: 0, turns: 0 }, createdAt: Date.now(),
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const open = (ws: WebSocket) => new Promise<void>((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });

/** A link peer: answers chat.attach from memory, sends events with outbox positions, counts bytes. */
class BenchHost {
  ws!: WebSocket;
  readonly chats = new Map<string, { thread: Thread; seq: number; log: ChatEvent[] }>();
  private n = 0;
  unacked = 0;
  bytesSent = 0;

  async connect(url: string): Promise<void> {
    const token = await signHostToken();
    this.ws = new WebSocket(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/link`, { headers: { Authorization: `Bearer ${token}` } });
    await open(this.ws);
    this.ws.on('message', (data) => this.onMessage(String(data)));
    setInterval(() => this.ws.send('ping'), 1_000).unref();
  }

  chat(chatId: string, items: ChatItem[] = []) {
    let chat = this.chats.get(chatId);
    if (!chat) this.chats.set(chatId, chat = { thread: new Thread(info(chatId), items), seq: 0, log: [] });
    return chat;
  }

  emit(chatId: string, event: ChatEvent): number {
    const chat = this.chat(chatId);
    chat.thread.apply(event);
    chat.seq += 1;
    chat.log.push(event);
    const text = JSON.stringify({ type: 'event', event: 'chat.event', payload: { chatId, event, seq: chat.seq }, n: ++this.n });
    this.bytesSent += Buffer.byteLength(text);
    this.unacked += 1;
    // Like the real host's link: what one tick produced goes out as one message.
    this.batch.push(text);
    if (this.batch.length === 1) setImmediate(() => { for (const m of linkMessages(this.batch.splice(0))) this.ws.send(m); });
    return chat.seq;
  }
  private batch: string[] = [];

  private onMessage(text: string): void {
    if (text === 'pong') return;
    const frame = JSON.parse(text);
    if (frame.link === 'ack') { this.unacked -= frame.n.length; return; }
    if (frame.type === 'chat.attach') {
      const chat = this.chat(frame.payload.chatId);
      const since = frame.payload.since;
      const result = since !== undefined && since >= 0 && since <= chat.seq
        ? { info: chat.thread.info, items: [], seq: chat.seq, events: chat.log.slice(since) }
        : { info: chat.thread.info, items: chat.thread.items, seq: chat.seq };
      this.ws.send(JSON.stringify({ id: frame.id, ok: true, result }));
    } else {
      this.ws.send(JSON.stringify({ id: frame.id, ok: true, result: {} }));
    }
  }

  async drained(): Promise<void> {
    while (this.unacked > 0) await new Promise((r) => setTimeout(r, 5));
  }
}

/** A client socket that timestamps every chat.event by its seq. */
class BenchClient {
  readonly ws: WebSocket;
  readonly arrivals = new Map<number, number>();
  bytes = 0;
  private replies = new Map<string, (v: any) => void>();
  constructor(url: string) {
    // A program, not a browser: the access token rides in the header (a browser would mint a ticket).
    this.ws = new WebSocket(url, { headers: { Authorization: `Bearer ${ownerToken}` } });
    this.ws.on('message', (data: Buffer) => {
      const at = now();
      this.bytes += data.length;
      const frame = JSON.parse(data.toString());
      if (frame.event === 'chat.event' && frame.payload.seq !== undefined) this.arrivals.set(frame.payload.seq, at);
      else if ('ok' in frame) this.replies.get(frame.id)?.(frame);
    });
  }
  request(type: string, payload: unknown): Promise<any> {
    const id = crypto.randomUUID();
    return new Promise((resolve) => { this.replies.set(id, resolve); this.ws.send(JSON.stringify({ id, type, payload })); });
  }
}

interface FanOutFigures { clients: number; eventsPerSecond: number; p50: number; p99: number }

async function relayFanOut(url: string, host: BenchHost, clientCount: number, events: number, everyMs = 0): Promise<FanOutFigures> {
  const chatId = `fan-${clientCount}-${everyMs}`;
  host.chat(chatId);
  host.emit(chatId, { type: 'item', item: { kind: 'assistant', id: 'a', createdAt: Date.now(), turnId: 't', text: '', streaming: true } });
  await host.drained();
  const clients = Array.from({ length: clientCount }, () => new BenchClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`));
  await Promise.all(clients.map((c) => open(c.ws)));
  const attached = await Promise.all(clients.map((c) => c.request('chat.attach', { chatId })));
  const base = attached[0].result.seq as number;
  return measure(events, (i) => host.emit(chatId, { type: 'delta', itemId: 'a', text: `word${i} ` }), clients.map((c) => c.arrivals), base, () => clients.forEach((c) => c.ws.close()), everyMs);
}

/**
 * Sends `events` events, then waits for every client; latency is per event per client. Unpaced, the
 * host sends as fast as it can (throughput; latency then includes queueing); paced, one event every
 * `everyMs` (a streamed reply as the host coalesces it: one delta per 30 ms).
 */
async function measure(events: number, emit: (i: number) => number, arrivals: Map<number, number>[], base: number, done: () => void, everyMs = 0): Promise<FanOutFigures> {
  const sentAt = new Map<number, number>();
  const start = now();
  for (let i = 0; i < events; i++) {
    const seq = emit(i);
    sentAt.set(seq, now());
    if (everyMs > 0) await new Promise((r) => setTimeout(r, everyMs));
    else if (i % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  const last = base + events;
  while (!arrivals.every((a) => a.has(last))) await new Promise((r) => setTimeout(r, 2));
  const elapsed = now() - start;
  const latencies: number[] = [];
  for (const a of arrivals) for (const [seq, t0] of sentAt) latencies.push(a.get(seq)! - t0);
  done();
  return { clients: arrivals.length, eventsPerSecond: Math.round(events / (elapsed / 1000)), p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function baselineFanOut(clientCount: number, events: number, everyMs = 0): Promise<FanOutFigures> {
  const port = await freePort();
  const server = new WebSocketServer({ host: '127.0.0.1', port });
  const listeners = new Set<WebSocket>();
  let seq = 0;
  server.on('connection', (ws, req) => {
    if (req.url === '/host') {
      ws.on('message', (data) => {
        // The same work a relay must do at least: read the event, stamp it, serialize once, send to all.
        const frame = JSON.parse(String(data));
        const text = JSON.stringify({ type: 'event', event: 'chat.event', payload: { ...frame.payload, seq: ++seq } });
        for (const l of listeners) l.send(text);
      });
    } else {
      listeners.add(ws);
    }
  });
  const clients = Array.from({ length: clientCount }, () => new BenchClient(`ws://127.0.0.1:${port}/client`));
  await Promise.all(clients.map((c) => open(c.ws)));
  const host = new WebSocket(`ws://127.0.0.1:${port}/host`);
  await open(host);
  let hostSeq = 0;
  const figures = await measure(events, (i) => {
    host.send(JSON.stringify({ type: 'event', event: 'chat.event', payload: { chatId: 'b', event: { type: 'delta', itemId: 'a', text: `word${i} ` } } }));
    return ++hostSeq;
  }, clients.map((c) => c.arrivals), 0, () => { clients.forEach((c) => c.ws.close()); host.close(); }, everyMs);
  server.close();
  return figures;
}

async function bytesPerChar(url: string, host: BenchHost): Promise<{ hostToRelay: number; relayToClient: number }> {
  const chatId = 'bytes';
  host.chat(chatId);
  host.emit(chatId, { type: 'item', item: { kind: 'assistant', id: 'a', createdAt: Date.now(), turnId: 't', text: '', streaming: true } });
  await host.drained();
  const client = new BenchClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`);
  await open(client.ws);
  const base = (await client.request('chat.attach', { chatId })).result.seq as number;
  client.bytes = 0;
  const before = host.bytesSent;
  const chunk = 'The quick brown fox jumps over the lazy dog. '.slice(0, 24); // a typical coalesced delta
  const count = 2_000;
  for (let i = 0; i < count; i++) host.emit(chatId, { type: 'delta', itemId: 'a', text: chunk });
  while (!client.arrivals.has(base + count)) await new Promise((r) => setTimeout(r, 5));
  client.ws.close();
  const chars = chunk.length * count;
  return { hostToRelay: (host.bytesSent - before) / chars, relayToClient: client.bytes / chars };
}

async function attachLarge(url: string, host: BenchHost): Promise<{ cold: number; warm: number; bytes: number }> {
  const chatId = 'large';
  const items: ChatItem[] = Array.from({ length: 5_000 }, (_, i) => (i % 2 === 0
    ? { kind: 'user', id: `u${i}`, createdAt: Date.now(), turnId: `t${i}`, text: `Question number ${i}: ${'lorem ipsum '.repeat(8)}` }
    : { kind: 'assistant', id: `a${i}`, createdAt: Date.now(), turnId: `t${i - 1}`, text: `Answer ${i}: ${'dolor sit amet '.repeat(12)}`, streaming: false }));
  host.chat(chatId, items);
  const time = async () => {
    const client = new BenchClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`);
    await open(client.ws);
    const t0 = now();
    const reply = await client.request('chat.attach', { chatId });
    const ms = now() - t0;
    if (reply.result.items.length !== 5_000) throw new Error('attach answered the wrong thread');
    const bytes = client.bytes;
    client.ws.close();
    return { ms, bytes };
  };
  const cold = await time();
  const warm = await time();
  return { cold: cold.ms, warm: warm.ms, bytes: warm.bytes };
}

async function replayMissed(url: string, host: BenchHost): Promise<number> {
  const chatId = 'replay';
  host.chat(chatId, []);
  host.emit(chatId, { type: 'item', item: { kind: 'assistant', id: 'a', createdAt: Date.now(), turnId: 't', text: '', streaming: true } });
  await host.drained();
  const first = new BenchClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`);
  await open(first.ws);
  const since = (await first.request('chat.attach', { chatId })).result.seq as number;
  first.ws.close();
  for (let i = 0; i < 1_000; i++) host.emit(chatId, { type: 'delta', itemId: 'a', text: `piece ${i} ` });
  await host.drained();
  const again = new BenchClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`);
  await open(again.ws);
  const t0 = now();
  const reply = await again.request('chat.attach', { chatId, since });
  const ms = now() - t0;
  if (reply.result.events?.length !== 1_000) throw new Error(`replay answered ${reply.result.events?.length} events`);
  again.ws.close();
  return ms;
}

// BENCH_RELAY_URL points the benchmark at a relay already running (for profiling): give it that relay's
// TETHER_SETUP_SECRET, and TETHER_EMAIL / TETHER_PASSWORD of its owner.
const state = mkdtempSync(path.join(tmpdir(), 'tether-bench-'));
/** The bench builds what wrangler dev needs (the web app it serves as assets) into its own folder, as a fresh clone has no dist/web. */
function builtWorker(): { assets: string; script: string } {
  const assets = path.join(state, 'web');
  buildWeb({ quiet: true, outDir: assets });
  // Bundled once: edits to src/relay while the bench runs cannot reload the relay under it.
  return { assets, script: bundleWorker(path.join(state, 'worker'), assets) };
}
const relay = process.env.BENCH_RELAY_URL
  ? { url: process.env.BENCH_RELAY_URL, stop: async () => undefined }
  : await startLocalRelay({
    persistTo: state,
    ...builtWorker(),
    vars: { TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('bench')]), TETHER_SETUP_SECRET: SETUP_SECRET, RATE_FRAMES: '100000/60', RATE_FRAMES_USER: '100000/60' },
    quiet: true,
  });

/** Claims the owner on a fresh relay (or signs in on a running one); answers an access token (10 minutes: enough for a run). */
async function ownerSignIn(url: string): Promise<string> {
  const post = (route: string, body: unknown) => fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const claimed = process.env.BENCH_RELAY_URL ? null : await post('/api/auth/setup', { ...OWNER, secret: SETUP_SECRET });
  const res = claimed?.status === 201 ? claimed : await post('/api/auth/signin', { email: OWNER.email, password: OWNER.password });
  if (!res.ok) throw new Error(`the bench owner cannot sign in: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { accessToken: string }).accessToken;
}

try {
  ownerToken = await ownerSignIn(relay.url);
  const paired = await pairWithSetupSecret({ relayUrl: relay.url, secret: SETUP_SECRET, name: 'bench-host', dataDir: path.join(state, 'host') });
  HOST = paired.hostId;
  signHostToken = hostTokenSigner(paired);
  const host = new BenchHost();
  await host.connect(relay.url);
  const f = (x: number) => x.toFixed(1);
  console.log(`Tether relay benchmark — wrangler dev (workerd) on ${relay.url}, Node ${process.version}\n`);
  console.log('Fan-out of streamed deltas, host → relay → N attached clients (latency per event per client, ms)');
  console.log('  clients | relay ev/s | relay p50 | relay p99 | ws baseline ev/s | baseline p50 | baseline p99');
  for (const [clients, events] of [[1, 2_000], [10, 2_000], [100, 500]] as const) {
    const r = await relayFanOut(relay.url, host, clients, events);
    const b = await baselineFanOut(clients, events);
    console.log(`  ${String(clients).padStart(7)} | ${String(r.eventsPerSecond).padStart(10)} | ${f(r.p50).padStart(9)} | ${f(r.p99).padStart(9)} | ${String(b.eventsPerSecond).padStart(16)} | ${f(b.p50).padStart(12)} | ${f(b.p99).padStart(12)}`);
  }
  console.log('\nThe same, paced as a streamed reply (one coalesced delta every 30 ms, 100 deltas): latency only');
  console.log('  clients | relay p50 | relay p99 | baseline p50 | baseline p99');
  for (const clients of [1, 10, 100]) {
    const r = await relayFanOut(relay.url, host, clients, 100, 30);
    const b = await baselineFanOut(clients, 100, 30);
    console.log(`  ${String(clients).padStart(7)} | ${f(r.p50).padStart(9)} | ${f(r.p99).padStart(9)} | ${f(b.p50).padStart(12)} | ${f(b.p99).padStart(12)}`);
  }
  const bytes = await bytesPerChar(relay.url, host);
  console.log(`\nBytes on the wire per streamed character (24-character deltas): host → relay ${bytes.hostToRelay.toFixed(2)}, relay → client ${bytes.relayToClient.toFixed(2)}`);
  const attach = await attachLarge(relay.url, host);
  console.log(`Attach of a 5,000-item chat: cold (relay fetches it from the host) ${f(attach.cold)} ms, warm ${f(attach.warm)} ms, ${(attach.bytes / 1024 / 1024).toFixed(2)} MiB`);
  console.log(`Replay of 1,000 missed events (chat.attach with since): ${f(await replayMissed(relay.url, host))} ms`);
  host.ws.close();
} finally {
  await relay.stop();
  rmSync(state, { recursive: true, force: true });
}
process.exit(0);
