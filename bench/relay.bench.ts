// `npm run bench`: figures for the relay on workerd (`wrangler dev`), beside a plain `ws` broadcast in
// Node on loopback as the baseline, in one run. Prints:
//   - events per second and p50/p99 latency from host to 1, 10, 100 and 1,000 attached clients, as
//     fast as the host can send (burst) and paced like a streamed reply;
//   - one host with 200 chats streaming at once, each with a client, and the Lobby's chat.status fan-out;
//   - bytes per streamed character, on the TCP socket (a counting proxy) and as message payload, both
//     directions, host ↔ relay and relay ↔ client;
//   - attach of a 5,000-item chat: first (the room fetches it from the host), cold (after a relay
//     restart, from what the room keeps) and warm;
//   - replay of 1,000 and 10,000 missed events; reconnect and replay after a relay restart;
//   - memory per idle socket, whether idle rooms hibernate, storage bytes per event.
// The host is a small in-process link peer (no disk, no CLI) so the figures are the relay's. Latency
// is per host event per client: a client timestamps each event index it sees (the relay may join a
// backlog of deltas into one event, so events are counted by what they carry, not by frames).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { Thread, type ChatEvent, type ChatInfo, type ChatItem } from '../src/contracts/index.ts';
import { LINK_DEFLATE, linkMessages } from '../src/host/link/relay-link.ts';
import { hostTokenSigner } from '../src/host/identity.ts';
import { pairWithSetupSecret } from '../src/host/pairing.ts';
import { generateSigningKey } from '../src/relay/auth/keys.ts';
import { buildWeb } from '../scripts/build-web.ts';
import { bundleWorker, freePort, startLocalRelay, type LocalRelay } from '../scripts/local-relay.ts';
import { LinkProxy } from '../test/support/link-proxy.ts';
import { WorkerdProfiler } from './workerd-profile.ts';

// The relay's owner signs in with these; the bench host pairs with the setup secret (as `npm start`'s does).
const SETUP_SECRET = process.env.TETHER_SETUP_SECRET ?? 'bench-setup-secret-0123456789';
const OWNER = { email: process.env.TETHER_EMAIL ?? 'bench-owner@bench.test', password: process.env.TETHER_PASSWORD ?? 'bench-owner-password', name: 'Bench' };
/** The bench host's id, as the relay made it when the host paired. */
let HOST = '';
let signHostToken: () => Promise<string>;
let ownerToken = '';
const now = () => performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The host link's deflate; BENCH_LINK_DEFLATE=default is ws's own (messages under 1 KiB sent as they are), as the link had before. */
const HOST_DEFLATE = process.env.BENCH_LINK_DEFLATE === 'default' ? true : LINK_DEFLATE;
/** Browsers offer permessage-deflate and compress what they send whatever its size; the bench's clients do the same. */
const CLIENT_DEFLATE = process.env.BENCH_CLIENT_DEFLATE === '0' ? false : { threshold: 0 };

function info(chatId: string): ChatInfo {
  return {
    chatId,
    provider: 'claude',
    cwd: '/bench',
    agentSessionId: null,
    model: null,
    selection: { model: 'm', options: {} },
    runtimeMode: 'full-access',
    status: 'idle',
    running: false,
    activeTurnId: null,
    slashCommands: [],
    usage: { contextTokens: 0, contextWindow: null, costUsd: 0, turns: 0 },
    createdAt: Date.now(),
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const open = (ws: WebSocket) =>
  new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
const assistant = (id: string): ChatItem => ({ kind: 'assistant', id, createdAt: Date.now(), turnId: 't', text: '', streaming: true });
/** A delta that carries its event index, which every client reads back to timestamp it. */
const marked = (i: number) => `word${i} `;
const MARK = /word(\d+) /g;

/** A link peer: answers chat.attach from memory, sends events with outbox positions, counts bytes. */
class BenchHost {
  ws!: WebSocket;
  /** Where it connected last. */
  private url = '';
  readonly chats = new Map<string, { thread: Thread; seq: number; log: ChatEvent[] }>();
  private n = 0;
  unacked = 0;
  bytesSent = 0;
  /** Why the relay closed the link (code and reason), once it did. */
  closed: string | null = null;
  private batch: string[] = [];

  /** Deflate as the real host's link offers it (relay-link.ts). */
  async connect(url: string): Promise<void> {
    this.url = url;
    const token = await signHostToken();
    this.ws = new WebSocket(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/link`, {
      headers: { Authorization: `Bearer ${token}` },
      perMessageDeflate: HOST_DEFLATE,
    });
    await open(this.ws);
    this.unacked = 0;
    this.ws.on('message', (data) => this.onMessage(String(data)));
    const ws = this.ws;
    // A link the relay closed is said, and what still waits on it fails (drained) instead of hanging.
    ws.on('close', (code, reason) => {
      if (this.ws === ws) this.closed = `${code} ${String(reason)}`;
    });
    this.closed = null;
    this.ws.send(JSON.stringify({ link: 'hello', version: 'bench', pending: 0 }));
    const ping = setInterval(() => (ws.readyState === WebSocket.OPEN ? ws.send('ping') : clearInterval(ping)), 1_000);
    ping.unref();
  }

  chat(chatId: string, items: ChatItem[] = []) {
    let chat = this.chats.get(chatId);
    if (!chat) this.chats.set(chatId, (chat = { thread: new Thread(info(chatId), items), seq: 0, log: [] }));
    return chat;
  }

  emit(chatId: string, event: ChatEvent): number {
    const chat = this.chat(chatId);
    chat.thread.apply(event);
    chat.seq += 1;
    chat.log.push(event);
    this.frame('chat.event', { chatId, event, seq: chat.seq });
    return chat.seq;
  }

  frame(event: string, payload: unknown): void {
    const text = JSON.stringify({ type: 'event', event, payload, n: ++this.n });
    this.bytesSent += Buffer.byteLength(text);
    this.unacked += 1;
    // Like the real host's link: what one tick produced goes out as one message.
    this.batch.push(text);
    if (this.batch.length === 1)
      setImmediate(() => {
        for (const m of linkMessages(this.batch.splice(0))) this.ws.send(m);
      });
  }

  private onMessage(text: string): void {
    if (text === 'pong') return;
    const frame = JSON.parse(text);
    if (frame.link === 'ack') {
      this.unacked -= frame.n.length;
      return;
    }
    if (frame.type === 'chat.attach') {
      const chat = this.chat(frame.payload.chatId);
      const since = frame.payload.since;
      const result =
        since !== undefined && since >= 0 && since <= chat.seq
          ? { info: chat.thread.info, items: [], seq: chat.seq, events: chat.log.slice(since) }
          : { info: chat.thread.info, items: chat.thread.items, seq: chat.seq };
      this.ws.send(JSON.stringify({ id: frame.id, ok: true, result }));
    } else {
      this.ws.send(JSON.stringify({ id: frame.id, ok: true, result: {} }));
    }
  }

  /**
   * Connects again when the relay closed the link since the last section. The baseline runs in this
   * process: its 1,000-client broadcast keeps the event loop busy past the relay's 3 s silence limit
   * (its own p99 is over 3 s), the bench host's pings wait behind it, and the relay rightly takes the
   * host for gone. That is the bench's doing, not the relay's, so the next section gets a new link (said
   * in the output) rather than failing.
   */
  async relinked(): Promise<void> {
    if (this.closed === null) return;
    console.log(`  (the relay had closed the bench host's link, ${this.closed}, while this process was busy: connected again)`);
    await this.connect(this.url);
  }

  async drained(): Promise<void> {
    const deadline = Date.now() + 120_000;
    while (this.unacked > 0) {
      if (this.closed !== null) throw new Error(`the relay closed the bench host's link (${this.closed}) with ${this.unacked} frames unacknowledged`);
      if (Date.now() > deadline) throw new Error(`${this.unacked} frames of the bench host unacknowledged after 120 s`);
      await sleep(5);
    }
  }
}

/** A client socket that timestamps every event index it sees in a delta (and counts what it got). */
class BenchClient {
  readonly ws: WebSocket;
  readonly arrivals = new Map<number, number>();
  bytes = 0;
  chars = 0;
  statuses = 0;
  private replies = new Map<string, (v: any) => void>();
  constructor(url: string) {
    // A program, not a browser: the access token rides in the header (a browser would mint a ticket).
    this.ws = new WebSocket(url, { headers: { Authorization: `Bearer ${ownerToken}` }, perMessageDeflate: CLIENT_DEFLATE });
    this.ws.on('error', () => undefined); // a failed connect rejects open(); a later error closes the socket
    this.ws.on('message', (data: Buffer) => {
      const at = now();
      this.bytes += data.length;
      const frame = JSON.parse(data.toString());
      if (frame.event === 'chat.event' && frame.payload.event.type === 'delta') {
        const text: string = frame.payload.event.text;
        this.chars += text.length;
        for (const m of text.matchAll(MARK)) this.arrivals.set(Number(m[1]), at);
      } else if (frame.event === 'chat.status') this.statuses += 1;
      else if ('ok' in frame) this.replies.get(frame.id)?.({ ...frame, arrivedAt: at });
    });
  }
  /** Rejects after a minute: a bench must end, and say what it waited for. */
  request(type: string, payload: unknown): Promise<any> {
    const id = crypto.randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${type} within 60 s`)), 60_000);
      this.replies.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.ws.send(JSON.stringify({ id, type, payload }));
    });
  }
  close(): void {
    this.ws.close();
  }
}

interface FanOutFigures {
  clients: number;
  eventsPerSecond: number;
  p50: number;
  p99: number;
  slowest: string;
}

let fanOuts = 0;
async function attachedClients(url: string, chatId: string, count: number): Promise<BenchClient[]> {
  const clients: BenchClient[] = [];
  // Opened a hundred at a time: a thousand upgrades at once is a connection storm, not a fan-out figure.
  for (let at = 0; at < count; at += 100) {
    const some = await Promise.all(
      Array.from({ length: Math.min(100, count - at) }, () => openClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`)),
    );
    await Promise.all(some.map((c) => c.request('chat.attach', { chatId })));
    clients.push(...some);
  }
  return clients;
}

/** Connects tried again (a busy relay may reset an upgrade under a storm of them); printed with the figures. */
let connectRetries = 0;
async function openClient(url: string): Promise<BenchClient> {
  for (let tries = 0; ; tries++) {
    const client = new BenchClient(url);
    try {
      await open(client.ws);
      return client;
    } catch (error) {
      if (tries === 3) throw error;
      connectRetries += 1;
      await sleep(100);
    }
  }
}

async function relayFanOut(url: string, host: BenchHost, clientCount: number, events: number, everyMs = 0, profile = profiled): Promise<FanOutFigures> {
  const chatId = `fan-${++fanOuts}`;
  await host.relinked();
  host.chat(chatId);
  host.emit(chatId, { type: 'item', item: assistant('a') });
  await host.drained();
  const clients = await attachedClients(url, chatId, clientCount);
  const label = `${everyMs ? 'paced' : 'burst'}, ${clientCount} clients`;
  const figures = await profile(label, () =>
    measure(
      events,
      (i) => {
        host.emit(chatId, { type: 'delta', itemId: 'a', text: marked(i) });
      },
      clients.map((c) => c.arrivals),
      everyMs,
    ),
  );
  clients.forEach((c) => c.close());
  return figures;
}

/**
 * Sends `events` events, then waits for every client; latency is per event per client. Unpaced, the
 * host sends as fast as it can (throughput; latency then includes queueing); paced, one event every
 * `everyMs` (a streamed reply as the host coalesces it: one delta per 30 ms).
 */
async function measure(events: number, emit: (i: number) => void, arrivals: Map<number, number>[], everyMs = 0): Promise<FanOutFigures> {
  const sentAt: number[] = [];
  const start = now();
  for (let i = 0; i < events; i++) {
    emit(i);
    sentAt.push(now());
    if (everyMs > 0) await sleep(everyMs);
    else if (i % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  const deadline = Date.now() + 120_000;
  while (!arrivals.every((a) => a.size === events)) {
    if (Date.now() > deadline) throw new Error(`only ${Math.min(...arrivals.map((a) => a.size))} of ${events} events reached every client`);
    await sleep(2);
  }
  const elapsed = Math.max(...arrivals.map((a) => Math.max(...a.values()))) - start;
  const latencies: number[] = [];
  for (const a of arrivals) sentAt.forEach((t0, i) => latencies.push(a.get(i)! - t0));
  // The events whose last client waited longest, with when they were sent: what a p99 of 100 is made of.
  const slowest = sentAt
    .map((t0, i) => ({ i, sent: t0 - start, ms: Math.max(...arrivals.map((a) => a.get(i)!)) - t0 }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3);
  return {
    clients: arrivals.length,
    eventsPerSecond: Math.round(events / (elapsed / 1000)),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    slowest: slowest.map((e) => `#${e.i} (sent at +${Math.round(e.sent)} ms) ${f(e.ms)}`).join(', '),
  };
}

/** The baseline: the least a relay must do (read the event, stamp it, serialize once, send to all), in Node with `ws`. */
async function baselineServer(): Promise<{ port: number; close(): void }> {
  const port = await freePort();
  const server = new WebSocketServer({ host: '127.0.0.1', port });
  const listeners = new Map<string, Set<WebSocket>>();
  const seqs = new Map<string, number>();
  server.on('connection', (ws, req) => {
    const chat = new URL(req.url!, 'http://x').searchParams.get('chat') ?? 'b';
    if (req.url!.startsWith('/host')) {
      ws.on('message', (data) => {
        for (const frame of [JSON.parse(String(data))].flat()) {
          const chatId = frame.payload.chatId as string;
          const seq = (seqs.get(chatId) ?? 0) + 1;
          seqs.set(chatId, seq);
          const text = JSON.stringify({ type: 'event', event: frame.event, payload: { ...frame.payload, seq } });
          for (const l of listeners.get(frame.event === 'chat.status' ? 'lobby' : chatId) ?? []) l.send(text);
        }
      });
    } else {
      if (!listeners.has(chat)) listeners.set(chat, new Set());
      listeners.get(chat)!.add(ws);
    }
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return { port, close: () => server.close() };
}

async function baselineFanOut(clientCount: number, events: number, everyMs = 0): Promise<FanOutFigures> {
  const server = await baselineServer();
  const clients = Array.from({ length: clientCount }, () => new BenchClient(`ws://127.0.0.1:${server.port}/client`));
  await Promise.all(clients.map((c) => open(c.ws)));
  const host = new WebSocket(`ws://127.0.0.1:${server.port}/host`);
  await open(host);
  const figures = await measure(
    events,
    (i) => {
      host.send(JSON.stringify({ type: 'event', event: 'chat.event', payload: { chatId: 'b', event: { type: 'delta', itemId: 'a', text: marked(i) } } }));
    },
    clients.map((c) => c.arrivals),
    everyMs,
  );
  clients.forEach((c) => c.close());
  host.close();
  server.close();
  return figures;
}

/**
 * The runtime's floor (bench/floor): the same paced fan-out through a bare Durable Object on workerd,
 * its clients offering deflate as the relay's do and its host frames deflated as the relay's link is;
 * `store`: with one SQLite write per event before the sends, as the room's log row.
 */
async function floorFanOut(floorUrl: string, clientCount: number, events: number, everyMs: number, store: boolean): Promise<FanOutFigures> {
  const chat = `floor-${++fanOuts}`;
  const base = `${floorUrl.replace('http', 'ws')}`;
  const clients: BenchClient[] = [];
  for (let at = 0; at < clientCount; at += 100) {
    const some = Array.from({ length: Math.min(100, clientCount - at) }, () => new BenchClient(`${base}/client?chat=${chat}`));
    await Promise.all(some.map((c) => open(c.ws)));
    clients.push(...some);
  }
  const host = new WebSocket(`${base}/host?chat=${chat}${store ? '&store=1' : ''}`, { perMessageDeflate: HOST_DEFLATE });
  await open(host);
  const figures = await measure(
    events,
    (i) => {
      host.send(JSON.stringify({ type: 'event', event: 'chat.event', payload: { chatId: chat, event: { type: 'delta', itemId: 'a', text: marked(i) } } }));
    },
    clients.map((c) => c.arrivals),
    everyMs,
  );
  clients.forEach((c) => c.close());
  host.close();
  return figures;
}

/** Starts the runtime floor's own wrangler dev (a Worker of its own, beside the relay's); answers its workerd's own address. */
async function startFloor(): Promise<{ url: string; stop(): Promise<void> }> {
  const floor = await startLocalRelay({ config: path.join(import.meta.dirname, 'floor', 'wrangler.toml'), persistTo: path.join(state, 'floor'), quiet: true });
  const runtime = await runtimeOf(floor);
  return { url: runtime?.url ?? floor.url, stop: () => floor.stop() };
}

interface ManyChats {
  eventsPerSecond: number;
  p50: number;
  p99: number;
  statuses: number;
  statusesExpected: number;
}

/**
 * One host, `chats` chats streaming at once, a client on each and one on the Lobby: every round the
 * host sends one delta to each chat, and every fifth round a chat.status for each (the Lobby's fan-out).
 */
async function manyChats(relay: { url: string } | null, host: BenchHost | null, chats: number, rounds: number, everyMs: number): Promise<ManyChats> {
  const ids = Array.from({ length: chats }, (_, i) => `many-${i}`);
  let clients: BenchClient[];
  let lobby: BenchClient;
  let emit: (chatId: string, i: number) => void;
  let status: (chatId: string) => void;
  let close = () => undefined as void;
  if (relay && host) {
    await host.relinked();
    for (const id of ids) {
      host.chat(id);
      host.emit(id, { type: 'item', item: assistant('a') });
    }
    await host.drained();
    clients = [];
    for (let at = 0; at < chats; at += 50)
      clients.push(...(await Promise.all(ids.slice(at, at + 50).map(async (id) => (await attachedClients(relay.url, id, 1))[0]!))));
    lobby = new BenchClient(`${relay.url.replace('http', 'ws')}/v1/hosts/${HOST}/lobby`);
    await open(lobby.ws);
    emit = (id, i) => {
      host.emit(id, { type: 'delta', itemId: 'a', text: marked(i) });
    };
    status = (id) => host.frame('chat.status', { chatId: id, info: { ...host.chat(id).thread.info, status: 'running', running: true } });
  } else {
    const server = await baselineServer();
    clients = ids.map((id) => new BenchClient(`ws://127.0.0.1:${server.port}/client?chat=${id}`));
    lobby = new BenchClient(`ws://127.0.0.1:${server.port}/client?chat=lobby`);
    await Promise.all([...clients, lobby].map((c) => open(c.ws)));
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/host`);
    await open(ws);
    const batch: string[] = [];
    const send = (text: string) => {
      batch.push(text);
      if (batch.length === 1)
        setImmediate(() => {
          for (const m of linkMessages(batch.splice(0))) ws.send(m);
        });
    };
    emit = (id, i) =>
      send(JSON.stringify({ type: 'event', event: 'chat.event', payload: { chatId: id, event: { type: 'delta', itemId: 'a', text: marked(i) } } }));
    status = (id) => send(JSON.stringify({ type: 'event', event: 'chat.status', payload: { chatId: id, info: info(id) } }));
    close = () => {
      ws.close();
      server.close();
    };
  }
  const sentAt: number[] = [];
  const start = now();
  for (let r = 0; r < rounds; r++) {
    sentAt.push(now());
    for (const id of ids) emit(id, r);
    if (r % 5 === 0) for (const id of ids) status(id);
    await sleep(everyMs);
  }
  const statusesExpected = Math.ceil(rounds / 5) * chats;
  const deadline = Date.now() + 120_000;
  while (!clients.every((c) => c.arrivals.size === rounds) || lobby.statuses < statusesExpected) {
    if (Date.now() > deadline) throw new Error('the 200 chats did not all arrive');
    await sleep(5);
  }
  const elapsed = Math.max(...clients.map((c) => Math.max(...c.arrivals.values()))) - start;
  const latencies: number[] = [];
  for (const c of clients) sentAt.forEach((t0, r) => latencies.push(c.arrivals.get(r)! - t0));
  [...clients, lobby].forEach((c) => c.close());
  close();
  return {
    eventsPerSecond: Math.round((rounds * chats) / (elapsed / 1000)),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    statuses: lobby.statuses,
    statusesExpected,
  };
}

/** Prose-like text (words drawn from a vocabulary, seeded): what a reply streams, so deflate sees no easy repeats. */
function prose(chars: number): string {
  const words = (
    'the of and to in is that for it as with was on be by this are from or at which an but not have has were can all ' +
    'their one its they been more will would also when there if into some than other only any these may so what about time ' +
    'function return value const file test error type string number request relay host client socket event thread stream ' +
    'change update check build run state config path line code data list item chat model agent reply token message frame ' +
    'because before after first last next each every while where could should might must always never often here then now'
  ).split(' ');
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  let text = '';
  while (text.length < chars) text += `${words[Math.floor(random() * words.length)]}${random() < 0.08 ? '. ' : ' '}`;
  return text.slice(0, chars);
}

interface WireFigures {
  payloadHostToRelay: number;
  wireHostToRelay: number;
  wireRelayToHost: number;
  payloadRelayToClient: number;
  wireRelayToClient: number;
  wireClientToRelay: number;
  hostDeflate: boolean;
  clientDeflate: boolean;
}

/**
 * 2,000 deltas of 24 characters of prose, host → relay → one client, through counting TCP proxies:
 * bytes on the socket per streamed character, each direction, beside the payload (after inflating).
 */
async function wireBytes(runtimeUrl: string, chatId = 'bytes', paced = false): Promise<WireFigures> {
  const hostProxy = await LinkProxy.start(runtimeUrl);
  const clientProxy = await LinkProxy.start(runtimeUrl);
  const host = new BenchHost();
  await host.connect(hostProxy.url);
  host.chat(chatId);
  host.emit(chatId, { type: 'item', item: assistant('a') });
  await host.drained();
  const client = new BenchClient(`${clientProxy.url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`);
  await open(client.ws);
  await client.request('chat.attach', { chatId });
  await sleep(200);
  const wire = { h2r: hostProxy.bytesToTarget, r2h: hostProxy.bytesFromTarget, c2r: clientProxy.bytesToTarget, r2c: clientProxy.bytesFromTarget };
  client.bytes = 0;
  client.chars = 0;
  const before = host.bytesSent;
  const count = 2_000;
  const text = prose(24 * count);
  for (let i = 0; i < count; i++) {
    host.emit(chatId, { type: 'delta', itemId: 'a', text: text.slice(i * 24, i * 24 + 24) });
    if (paced && i % 20 === 19) await sleep(5);
  }
  while (client.chars < text.length) await sleep(5);
  await host.drained();
  await sleep(200);
  const chars = text.length;
  const figures: WireFigures = {
    payloadHostToRelay: (host.bytesSent - before) / chars,
    wireHostToRelay: (hostProxy.bytesToTarget - wire.h2r) / chars,
    wireRelayToHost: (hostProxy.bytesFromTarget - wire.r2h) / chars,
    payloadRelayToClient: client.bytes / chars,
    wireRelayToClient: (clientProxy.bytesFromTarget - wire.r2c) / chars,
    wireClientToRelay: (clientProxy.bytesToTarget - wire.c2r) / chars,
    hostDeflate: host.ws.extensions.includes('permessage-deflate'),
    clientDeflate: client.ws.extensions.includes('permessage-deflate'),
  };
  client.close();
  host.ws.close();
  await hostProxy.close();
  await clientProxy.close();
  return figures;
}

const LARGE_ITEMS: ChatItem[] = Array.from({ length: 5_000 }, (_, i) =>
  i % 2 === 0
    ? { kind: 'user', id: `u${i}`, createdAt: Date.now(), turnId: `t${i}`, text: `Question number ${i}: ${'lorem ipsum '.repeat(8)}` }
    : { kind: 'assistant', id: `a${i}`, createdAt: Date.now(), turnId: `t${i - 1}`, text: `Answer ${i}: ${'dolor sit amet '.repeat(12)}`, streaming: false },
);

/**
 * One attach on a socket already open: `ms` until the client holds the parsed reply, `arrivedMs` until
 * its last byte arrived, inflated (ws's `message`, before the client's own JSON.parse: for 1.2 MiB that
 * parse is ~6 ms of Node's time, the client's and not the relay's).
 */
async function timeAttach(url: string, chatId: string, items: number): Promise<{ ms: number; arrivedMs: number; bytes: number }> {
  const client = new BenchClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`);
  await open(client.ws);
  const t0 = now();
  const reply = await client.request('chat.attach', { chatId });
  const ms = now() - t0;
  if (reply.result?.items?.length !== items) throw new Error(`attach answered the wrong thread: ${JSON.stringify(reply).slice(0, 300)}`);
  const bytes = client.bytes;
  client.close();
  return { ms, arrivedMs: reply.arrivedAt - t0, bytes };
}

/** `count` warm attaches one after the other: the median and the slowest of each figure (one attach alone is noise). */
async function timeWarmAttaches(url: string, chatId: string, items: number, count: number) {
  const runs: Awaited<ReturnType<typeof timeAttach>>[] = [];
  for (let i = 0; i < count; i++) runs.push(await timeAttach(url, chatId, items));
  const arrived = runs.map((r) => r.arrivedMs);
  const parsed = runs.map((r) => r.ms);
  return {
    bytes: runs[0]!.bytes,
    text: `arrived p50 ${f(percentile(arrived, 50))} (max ${f(Math.max(...arrived))}) ms, parsed by the client p50 ${f(percentile(parsed, 50))} (max ${f(Math.max(...parsed))}) ms, of ${count}`,
  };
}

/** Misses `count` events on a chat (two replies streaming in turns: nothing to join), then attaches with since. */
async function missEvents(url: string, host: BenchHost, chatId: string, count: number): Promise<number> {
  await host.relinked();
  host.chat(chatId);
  host.emit(chatId, { type: 'item', item: assistant('a') });
  host.emit(chatId, { type: 'item', item: assistant('b') });
  await host.drained();
  const first = new BenchClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`);
  await open(first.ws);
  const since = (await first.request('chat.attach', { chatId })).result.seq as number;
  first.close();
  for (let i = 0; i < count; i++) {
    host.emit(chatId, { type: 'delta', itemId: i % 2 ? 'b' : 'a', text: `piece ${i} ` });
    if (i % 500 === 499) await new Promise((r) => setImmediate(r));
  }
  await host.drained();
  return since;
}

async function timeReplay(url: string, chatId: string, since: number, count: number): Promise<{ ms: number; connectMs: number; text: string }> {
  const t0 = now();
  const again = new BenchClient(`${url.replace('http', 'ws')}/v1/hosts/${HOST}/chats/${chatId}`);
  await open(again.ws);
  const t1 = now();
  const reply = await again.request('chat.attach', { chatId, since });
  const ms = now() - t1;
  again.close();
  const answered = reply.result?.events?.length;
  // A relay whose log keeps fewer answers a snapshot instead: timed, and said.
  const text = answered === count ? `${f(ms)} ms` : `${f(ms)} ms (not kept: ${answered === undefined ? 'a snapshot' : `${answered} events`})`;
  return { ms, connectMs: t1 - t0, text };
}

// ---- the runtime behind wrangler dev ----

/**
 * wrangler dev puts a proxy Worker (a second workerd process) in front of the Worker and passes every
 * socket through it: a hop, and a second compression negotiation, that no deployed relay has. The
 * bench speaks to the Worker's own workerd: the process of wrangler's that serves our entry socket.
 */
async function runtimeOf(relay: LocalRelay): Promise<{ url: string; pid: number } | null> {
  try {
    const processes = execFileSync('ps', ['-o', 'pid=,args=', '-g', String(relay.process.pid)], { encoding: 'utf8' }).split('\n');
    const worker = processes.find((line) => line.includes('workerd serve') && line.includes('--socket-addr=entry=127.0.0.1:0'));
    const pid = Number(worker?.trim().split(/\s+/)[0]);
    if (!pid) return null;
    const listening = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(`pid=${pid},`));
    for (const line of listening) {
      const port = /127\.0\.0\.1:(\d+)/.exec(line)?.[1];
      if (!port) continue;
      const url = `http://127.0.0.1:${port}`;
      const healthy = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (healthy) return { url, pid };
    }
  } catch {
    // no ps or ss here: measured through wrangler's proxy instead
  }
  return null;
}

function rssBytes(pid: number): number {
  const status = execFileSync('cat', [`/proc/${pid}/status`], { encoding: 'utf8' });
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Every file under `dir` with its size (the Durable Objects' SQLite files and their WALs). */
function filesIn(dir: string): Map<string, number> {
  const files = new Map<string, number>();
  if (!existsSync(dir)) return files;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    // SQLite removes a database's -shm and -wal when it closes it: one listed may be gone a moment later.
    const size = statSync(path.join(entry.parentPath, entry.name), { throwIfNoEntry: false })?.size;
    if (size !== undefined) files.set(path.join(entry.parentPath, entry.name), size);
  }
  return files;
}

// ---- the run ----

// BENCH_RELAY_URL points the benchmark at a relay already running (for profiling): give it that relay's
// TETHER_SETUP_SECRET, and TETHER_EMAIL / TETHER_PASSWORD of its owner. The restart figures need the bench's own relay.
// The relay's state lives on tmpfs where there is one (BENCH_STATE_DIR to choose): a Durable Object's
// write is durable before its fan-out leaves (the output gate), so on a disk the figures would be this
// machine's fsync (here, shared by several engineers, it made one client's paced p50 60 ms instead of 4).
const stateRoot = process.env.BENCH_STATE_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
const state = mkdtempSync(path.join(stateRoot, 'tether-bench-'));
/** The bench builds what wrangler dev needs (the web app it serves as assets) into its own folder, as a fresh clone has no dist/web. */
function builtWorker(): { assets: string; script: string } {
  const assets = path.join(state, 'web');
  buildWeb({ quiet: true, outDir: assets });
  // Bundled once: edits to src/relay while the bench runs cannot reload the relay under it.
  return { assets, script: process.env.BENCH_WORKER ?? bundleWorker(path.join(state, 'worker'), assets) };
}
const relayOptions = process.env.BENCH_RELAY_URL
  ? null
  : {
      persistTo: state,
      ...builtWorker(),
      vars: {
        TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('bench')]),
        TETHER_SETUP_SECRET: SETUP_SECRET,
        RATE_FRAMES: '1000000/60',
        RATE_FRAMES_USER: '1000000/60',
      },
      quiet: true,
    };
let relay: LocalRelay | { url: string; stop(): Promise<void> } = relayOptions
  ? await startLocalRelay(relayOptions)
  : { url: process.env.BENCH_RELAY_URL!, stop: async () => undefined };

/** Claims the owner on a fresh relay (or signs in on a running one); answers an access token (10 minutes: enough for a run). */
async function ownerSignIn(url: string): Promise<string> {
  const post = (route: string, body: unknown) =>
    fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const claimed = process.env.BENCH_RELAY_URL ? null : await post('/api/auth/setup', { ...OWNER, secret: SETUP_SECRET });
  const res = claimed?.status === 201 ? claimed : await post('/api/auth/signin', { email: OWNER.email, password: OWNER.password });
  if (!res.ok) throw new Error(`the bench owner cannot sign in: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { accessToken: string }).accessToken;
}

// BENCH_PROFILE=1: a CPU profile of the relay's isolate (the Worker's own workerd's inspector) for each relay phase, printed at the end.
let profiler: WorkerdProfiler | null = null;
let runtimePid: number | null = null;
const profiles: string[] = [];
async function profiled<T>(label: string, run: () => Promise<T>): Promise<T> {
  if (!profiler && !runtimePid) return run();
  const before = { workerd: runtimePid ? threadCpu(runtimePid) : new Map<string, number>(), bench: process.cpuUsage() };
  const { value, report } = profiler
    ? await profiler.during(run, label)
    : { value: await run(), report: '  (BENCH_PROFILE=cpu: no CPU profile, so no sampler in the figures)' };
  // The profile sees the isolate only; a socket's deflate and write, and the runtime's other threads, are not in it.
  const after = runtimePid ? threadCpu(runtimePid) : new Map<string, number>();
  const bench = process.cpuUsage(before.bench);
  const threads = [...after]
    .map(([name, ms]) => [name, ms - (before.workerd.get(name) ?? 0)] as const)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
  const workerd = threads.reduce((sum, [, ms]) => sum + ms, 0);
  const cpu = `  CPU meanwhile (whole processes, 10 ms ticks): the Worker's workerd ${workerd} ms (${threads.map(([name, ms]) => `${name} ${ms}`).join(', ')}), this bench (host and clients) ${Math.round((bench.user + bench.system) / 1000)} ms`;
  profiles.push(`${label}\n${cpu}\n${report}`);
  return value;
}

/** CPU time (ms) of each thread of process `pid`, summed by thread name, from /proc. */
function threadCpu(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name; clock ticks of 10 ms.
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}

/** BENCH_ONLY=fanout,paced,chats,bytes,attach,restart runs only those parts (for profiling one). */
const only = process.env.BENCH_ONLY?.split(',');
const part = (name: string) => !only || only.includes(name);
const f = (x: number) => x.toFixed(1);
let floor: Awaited<ReturnType<typeof startFloor>> | null = null;
const ratio = (r: number, b: number) => (r / b).toFixed(2);
try {
  const runtime = 'process' in relay ? await runtimeOf(relay) : null;
  const url = runtime?.url ?? relay.url;
  ownerToken = await ownerSignIn(url);
  const paired = await pairWithSetupSecret({ relayUrl: url, secret: SETUP_SECRET, name: 'bench-host', dataDir: path.join(state, 'host') });
  HOST = paired.hostId;
  signHostToken = hostTokenSigner(paired);
  // BENCH_PROFILE=cpu: only the processes' CPU time per part, without a sampler running in the isolate.
  if (process.env.BENCH_PROFILE && runtime) {
    if (process.env.BENCH_PROFILE !== 'cpu') profiler = await WorkerdProfiler.connect(runtime.pid, relayOptions?.script);
    runtimePid = runtime.pid;
  }
  const host = new BenchHost();
  await host.connect(url);
  console.log(
    `Tether relay benchmark, ${new Date().toISOString().slice(0, 10)}: wrangler dev (workerd) on ${url}${runtime ? " (the Worker's own workerd, past wrangler's dev proxy)" : ''}, state in ${stateRoot}, Node ${process.version}, ${(await import('node:os')).cpus().length} cores`,
  );
  console.log('Relay and baseline run one after the other in this run; ratios are relay / baseline.\n');

  if (part('fanout'))
    console.log('Fan-out of streamed deltas, host → relay → N attached clients, as fast as the host sends (latency per event per client, ms)');
  if (part('fanout')) console.log('  clients | relay ev/s | baseline ev/s | ratio | relay p50 / p99 | baseline p50 / p99');
  for (const [clients, events] of part('fanout')
    ? ([
        [1, 2_000],
        [10, 2_000],
        [100, 500],
        [1_000, 200],
      ] as const)
    : []) {
    const r = await relayFanOut(url, host, clients, events);
    const b = await baselineFanOut(clients, events);
    console.log(
      `  ${String(clients).padStart(7)} | ${String(r.eventsPerSecond).padStart(10)} | ${String(b.eventsPerSecond).padStart(13)} | ${ratio(r.eventsPerSecond, b.eventsPerSecond).padStart(5)} | ${`${f(r.p50)} / ${f(r.p99)}`.padStart(15)} | ${f(b.p50)} / ${f(b.p99)}`,
    );
  }
  if (part('paced')) console.log('\nThe same, paced as a streamed reply (one delta every 30 ms, 100 deltas): latency per event per client, ms');
  if (part('paced')) console.log('  clients | relay p50 / p99 | baseline p50 / p99 | p99 gap');
  // The runtime's floor runs beside (its own workerd, idle while the relay is measured), so each gap splits in three.
  floor = part('paced') && process.env.BENCH_FLOOR !== '0' ? await startFloor() : null;
  for (const clients of part('paced') ? [1, 10, 100, 1_000] : []) {
    const r = await relayFanOut(url, host, clients, 100, 30); // profiled inside: the events only, not the clients' connects
    const b = await baselineFanOut(clients, 100, 30);
    console.log(
      `  ${String(clients).padStart(7)} | ${`${f(r.p50)} / ${f(r.p99)}`.padStart(15)} | ${`${f(b.p50)} / ${f(b.p99)}`.padStart(18)} | +${f(r.p99 - b.p99)}`,
    );
    if (floor) {
      const bare = await floorFanOut(floor.url, clients, 100, 30, false);
      const stored = await floorFanOut(floor.url, clients, 100, 30, true);
      console.log(
        `          runtime floor, a bare Durable Object: ${f(bare.p50)} / ${f(bare.p99)} (+${f(bare.p99 - b.p99)} over the baseline); with a write per event: ${f(stored.p50)} / ${f(stored.p99)} (+${f(stored.p99 - b.p99)}); the relay over that: +${f(r.p99 - stored.p99)} p99, +${f(r.p50 - stored.p50)} p50`,
      );
      console.log(`          slowest events (last client): relay ${r.slowest}; floor with writes ${stored.slowest}; baseline ${b.slowest}`);
    } else console.log(`          slowest events (last client): relay ${r.slowest}; baseline ${b.slowest}`);
  }
  await floor?.stop();
  floor = null;

  if (part('chats')) {
    const many = await profiled('200 chats', () => manyChats({ url }, host, 200, 20, 50));
    const manyBase = await manyChats(null, null, 200, 20, 50);
    console.log('\nOne host, 200 chats streaming at once (a delta to each every 50 ms, 20 rounds; a chat.status for each every 5th round to a Lobby client)');
    console.log(
      `  relay: ${many.eventsPerSecond} deltas/s delivered, p50 ${f(many.p50)} / p99 ${f(many.p99)} ms, Lobby got ${many.statuses} of ${many.statusesExpected} statuses`,
    );
    console.log(
      `  baseline: ${manyBase.eventsPerSecond} deltas/s, p50 ${f(manyBase.p50)} / p99 ${f(manyBase.p99)} ms; ratio ${ratio(many.eventsPerSecond, manyBase.eventsPerSecond)}`,
    );
  }
  if (part('bytes')) {
    // Through proxies, with a host link of their own (it replaces the bench host's; the host connects again after).
    const burst = await wireBytes(url, 'bytes');
    const paced = await wireBytes(url, 'bytes-paced', true);
    await host.connect(url);
    console.log('\nBytes per streamed character (2,000 deltas of 24 characters of prose), payload and on the TCP socket');
    for (const [label, w] of [
      ['as fast as the host sends', burst],
      ['paced (20 deltas per 5 ms)', paced],
    ] as const) {
      console.log(
        `  ${label}: host → relay payload ${w.payloadHostToRelay.toFixed(2)}, wire ${w.wireHostToRelay.toFixed(2)} (relay → host acks ${w.wireRelayToHost.toFixed(2)}); relay → client payload ${w.payloadRelayToClient.toFixed(2)}, wire ${w.wireRelayToClient.toFixed(2)} (client → relay ${w.wireClientToRelay.toFixed(2)})`,
      );
    }
    console.log(`  permessage-deflate negotiated: host link ${burst.hostDeflate ? 'yes' : 'no'}, client ${burst.clientDeflate ? 'yes' : 'no'}`);
  }
  if (part('attach')) {
    host.chat('large', LARGE_ITEMS);
    const first = await timeAttach(url, 'large', 5_000);
    const warm = await timeWarmAttaches(url, 'large', 5_000, 20);
    // Twenty more warm attaches under the profiler (one is too short to sample), not in the figure.
    if (runtimePid)
      await profiled('attach, 20 warm', async () => {
        for (let i = 0; i < 20; i++) await timeAttach(url, 'large', 5_000);
      });
    const since1k = await missEvents(url, host, 'replay-1k', 1_000);
    const replay1k = await timeReplay(url, 'replay-1k', since1k, 1_000);
    // The room of a new chat is a new SQLite file (and WAL): what it holds after 10,000 events, per event.
    const filesBefore = filesIn(path.join(state, 'v3', 'do'));
    const since10k = await missEvents(url, host, 'replay-10k', 10_000);
    const newFiles = [...filesIn(path.join(state, 'v3', 'do'))].filter(([file]) => !filesBefore.has(file));
    const storagePerEvent = relayOptions && newFiles.length > 0 ? newFiles.reduce((sum, [, size]) => sum + size, 0) / 10_002 : NaN;
    const replay10k = await timeReplay(url, 'replay-10k', since10k, 10_000);
    console.log(
      `\nAttach of a 5,000-item chat (${(warm.bytes / 1024 / 1024).toFixed(2)} MiB): first (the room fetches it from the host) ${f(first.ms)} ms (arrived ${f(first.arrivedMs)}); warm: ${warm.text}`,
    );
    console.log(`Replay of missed events (chat.attach with since): 1,000 in ${replay1k.text}, 10,000 in ${replay10k.text}`);
    if (relayOptions)
      console.log(
        `Storage per logged event (the new room's SQLite file and WAL after 10,000 deltas of ~10 characters, ~110 bytes of JSON each): ${storagePerEvent.toFixed(0)} bytes`,
      );
  }

  if (runtime && relayOptions && part('restart')) {
    host.chat('large', LARGE_ITEMS);
    if (!part('attach')) await timeAttach(url, 'large', 5_000);
    // Idle sockets: 1,000 attached clients on one chat, then nothing for a while.
    const rssBefore = rssBytes(runtime.pid);
    host.chat('idle');
    host.emit('idle', { type: 'item', item: assistant('a') });
    await host.drained();
    const idle = await attachedClients(url, 'idle', 1_000);
    await sleep(2_000);
    const rssAttached = rssBytes(runtime.pid);
    console.log(
      `Memory per idle attached socket (the Worker's workerd RSS, 1,000 sockets on one chat): ${((rssAttached - rssBefore) / 1_000 / 1024).toFixed(1)} KiB`,
    );
    // Hibernation: while the sockets idle nothing runs in the isolate; after a while the room is evicted,
    // and a frame on one of its sockets constructs it again (the constructor shows in the profile).
    {
      const watch = profiler ?? (await WorkerdProfiler.connect(runtime.pid));
      const quiet = await watch.woke(() => sleep(15_000));
      const poke = await watch.woke(() => idle[0]!.request('chat.attach', { chatId: 'idle', since: 0 }));
      console.log(
        `Idle: 1,000 attached sockets for 15 s ran ${f(quiet.busyMs)} ms of JavaScript in the isolate (the room constructed meanwhile: ${quiet.constructed ? 'yes' : 'no'}); then one frame on one socket constructed the room again: ${poke.constructed ? 'yes (it had hibernated)' : 'no (it was still in memory)'}`,
      );
      if (watch !== profiler) watch.close();
    }
    idle.forEach((c) => c.close());

    // A relay restart: the host and a client come back; the client replays what it missed.
    const sinceRestart = await missEvents(url, host, 'restart', 1_000);
    host.ws.close();
    await relay.stop();
    const restartedAt = now();
    relay = await startLocalRelay({ ...relayOptions, port: undefined });
    const backRuntime = await runtimeOf(relay as LocalRelay);
    const back = backRuntime?.url ?? relay.url;
    const upAt = now();
    // The restarted relay is a new workerd: the profile and the CPU figures follow it.
    if (runtimePid && backRuntime) {
      runtimePid = backRuntime.pid;
      if (profiler) profiler = await WorkerdProfiler.connect(backRuntime.pid, relayOptions.script);
    }
    const replayAfter = await timeReplay(back, 'restart', sinceRestart, 1_000);
    // Under BENCH_PROFILE the sampler runs in this figure's isolate: read it from a run without.
    const cold = await profiled('attach, cold (after a restart)', () => timeAttach(back, 'large', 5_000));
    const warmAgain = await timeWarmAttaches(back, 'large', 5_000, 20);
    await host.connect(back);
    console.log(
      `After a relay restart (${f((upAt - restartedAt) / 1000)} s to healthy): a client's reconnect ${f(replayAfter.connectMs)} ms and replay of 1,000 events ${replayAfter.text}, the room cold`,
    );
    console.log(
      `Attach of the 5,000-item chat after the restart: cold (the room from its own storage, no host round trip) ${f(cold.ms)} ms (arrived ${f(cold.arrivedMs)}); warm: ${warmAgain.text}`,
    );
  }
  if (connectRetries > 0) console.log(`(${connectRetries} client connects were refused or reset and tried again)`);
  host.ws.close();
  if (runtimePid) {
    console.log(`\nWhere the relay's time goes (CPU profile of the isolate, 250 µs samples; a sample counts for the time to the next, at most 1 ms)`);
    for (const one of profiles) console.log(one);
    profiler?.close();
  }
} finally {
  await floor?.stop();
  await relay.stop();
  rmSync(state, { recursive: true, force: true });
}
process.exit(0);
