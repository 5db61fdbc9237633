// The fuzz suite (issue 18): hostile frames on every socket kind (a host's lobby, a chat, the host
// link) and hostile requests on the HTTP routes, from a seed. For every frame: the answer is a
// well-formed reply (`{id, ok:false, error:{code, message}}` with one of the protocol's codes, or a
// result for a valid read), no socket closes (the frames come from a person with every role, so no
// documented close applies), no route answers 5xx, and a baseline chat the frames are aimed at is
// exactly as it was at the end: its thread, its seq, its bookmarks and approvals, and nothing that
// acts on the machine ever reached its host.
//
// `npm test` runs a short seeded run; `npm run fuzz` the full one (TETHER_FUZZ_FRAMES per kind,
// 10,000 by default there), which prints its figures (scripts/fuzz.ts).
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_ERROR_CODES, REQUEST_RULES, TETHER_ERROR_CODES, isAgentRequestType } from '../../src/contracts/index.ts';
import worker from '../../src/relay/index.ts';
import { clientFrames, floodFrames, linkFrames, Rng, type HostileFrame } from '../support/hostile-frames.ts';
import { hostileRequests, type HostileRequest } from '../support/hostile-requests.ts';
import { signIn, grant, type Person } from './people.ts';
import { approvalItem, assistantItem, Client, FakeHost, OWNER, openSocket, until, userItem } from './peers.ts';

const FRAMES = Number(env.FUZZ_FRAMES || 300);
const SEED = Number(env.FUZZ_SEED || 18);
/** Frames one person sends before the next takes over (a person's budget is 600 a minute; a socket's 300). */
const PER_SOCKET = 250;
const CODES = new Set<string>([...AGENT_ERROR_CODES, ...TETHER_ERROR_CODES]);
const BASELINE = 'baseline';

type Frame = Record<string, any>;

/**
 * One HTTP request to the relay's own fetch handler, in this workerd, with an execution context of
 * its own whose waitUntil work is awaited, as the runtime would. Not `SELF.fetch`: the vitest pool's
 * SELF (@cloudflare/vitest-pool-workers 0.23.0, the newest release) wraps its entrypoint class's
 * prototype in one more Proxy on every request it serves (createProxyPrototypeClass, workers-sdk
 * issue #15092, fixed upstream by #15106, not released yet), so each request walks one more `get`
 * trap than the one before: the full run's 10,000 requests slowed down with each one and from about
 * the 1,600th every SELF.fetch threw `RangeError: Maximum call stack size exceeded`. A test-harness
 * fault, not the Worker's: the same 10,000 requests against a real `wrangler dev` over a socket
 * answer as fast at the end as at the start (docs/fuzz-and-chaos.md). Every other SELF.fetch here (a
 * grant, a socket's upgrade) is one of a few hundred.
 */
async function workerFetch(request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

interface Figures {
  frames: number;
  served: number;
  refused: Record<string, number>;
  anomalies: string[];
  closes: number;
}

const figures: Record<string, Figures> = {};
const figuresOf = (kind: string) => (figures[kind] ??= { frames: 0, served: 0, refused: {}, anomalies: [], closes: 0 });

const host = new FakeHost('fuzz-host');
let owner: Person;
let people = 0;

/** A person with the owner role on the host, granted by its owner: their frames get past every access check. */
async function fuzzPerson(): Promise<Person> {
  const person = await signIn(`fuzz-person-${++people}`);
  await grant(owner, host.hostId, { type: 'user', id: person.userId }, 'owner');
  return person;
}

interface Snapshot {
  attach: unknown;
  rows: unknown;
}

/** What the baseline chat is: a fresh attach (thread, info, seq, bookmarks) and the relay's own rows about it. */
async function baseline(): Promise<Snapshot> {
  const me = await Client.chat(host.hostId, BASELINE);
  const { result } = await me.request('chat.attach', { chatId: BASELINE });
  me.close();
  const rows = await Promise.all(
    ['requests', 'bookmarks', 'chats'].map((table) =>
      env.DB.prepare(`SELECT * FROM ${table} WHERE host_id = ? AND chat_id = ?`)
        .bind(host.hostId, BASELINE)
        .all()
        .then((r) => r.results),
    ),
  );
  return { attach: result, rows };
}

/** Requests the host received that act on the machine (none of the hostile frames may become one). */
const actedOn = () => host.received.filter((f) => typeof f.type === 'string' && isAgentRequestType(f.type) && REQUEST_RULES[f.type].actsOnMachine);

let before: Snapshot;
let acted = 0;

beforeAll(async () => {
  owner = await signIn(OWNER);
  // The host answers every request it is sent (so nothing waits out a timeout) and records it; it
  // changes no chat: what reaches it shows in `received`.
  for (const type of Object.keys(REQUEST_RULES)) {
    if (!['chat.attach', 'chat.history', 'chat.list'].includes(type)) host.handlers[type] = () => ({});
  }
  await host.connect();
  host.create(BASELINE, [userItem('u1', 'the baseline'), assistantItem('a1', 'its reply', false)]);
  host.emit(BASELINE, { type: 'item', item: approvalItem('ap1', 'req-base') });
  const me = await Client.chat(host.hostId, BASELINE);
  await me.request('chat.attach', { chatId: BASELINE });
  await me.request('chat.addBookmark', { chatId: BASELINE, itemId: 'u1', name: 'kept' });
  await until(() => host.outbox.size === 0, 'the baseline stored');
  me.close();
  before = await baseline();
  acted = actedOn().length;
});

afterAll(() => {
  // The full run's figures, for scripts/fuzz.ts to print (one line, read from vitest's output).
  console.log(`FUZZ-FIGURES ${JSON.stringify({ seed: SEED, perKind: FRAMES, figures })}`);
});

/** Checks one frame the relay sent a client; answers the reply's error code, 'ok', or null for a push. */
function checkServerFrame(text: string, sent: HostileFrame | null, f: Figures): string | null {
  if (text === 'pong') return 'pong';
  let frame: Frame;
  try {
    frame = JSON.parse(text) as Frame;
  } catch {
    f.anomalies.push(`not JSON from the relay: ${text.slice(0, 80)}`);
    return 'broken';
  }
  if (frame.type === 'event') {
    if (typeof frame.event !== 'string') f.anomalies.push(`an event without a name: ${text.slice(0, 80)}`);
    return null;
  }
  if (typeof frame.ok !== 'boolean' || !(frame.id === null || typeof frame.id === 'string')) {
    f.anomalies.push(`a reply without ok or id: ${text.slice(0, 120)}`);
    return 'broken';
  }
  if (frame.ok) {
    if (sent && !sent.mayServe) f.anomalies.push(`served what it must refuse: ${sent.what}`);
    return 'ok';
  }
  const { error } = frame;
  if (typeof error !== 'object' || error === null || typeof error.code !== 'string' || typeof error.message !== 'string' || error.message.length === 0) {
    f.anomalies.push(`an error reply that is not {code, message}: ${text.slice(0, 120)} (for ${sent?.what})`);
    return 'broken';
  }
  if (!CODES.has(error.code)) f.anomalies.push(`an error code outside the protocol: ${error.code} (for ${sent?.what})`);
  if (error.code === 'internal') f.anomalies.push(`internal for ${sent?.what}: ${error.message}`);
  return error.code as string;
}

/** A client socket the fuzz drives: one reply awaited per frame, every frame the relay sends checked. */
class Target {
  private ws!: WebSocket;
  private sent = 0;
  private waiting: ((text: string) => void) | null = null;
  private readonly queue: string[] = [];
  private readonly kind: 'lobby' | 'chat';
  private readonly f: Figures;
  constructor(kind: 'lobby' | 'chat', f: Figures) {
    this.kind = kind;
    this.f = f;
  }

  private path(): string {
    return this.kind === 'lobby' ? `/v1/hosts/${host.hostId}/lobby` : `/v1/hosts/${host.hostId}/chats/${BASELINE}`;
  }

  async open(): Promise<void> {
    const person = await fuzzPerson();
    this.ws = await openSocket(this.path(), person.token);
    this.sent = 0;
    const ws = this.ws;
    ws.addEventListener('close', (e) => {
      if (this.ws !== ws) return; // one this target let go of
      this.f.closes += 1;
      this.f.anomalies.push(`the ${this.kind} socket closed: ${e.code} ${e.reason}`);
    });
    ws.addEventListener('message', (e) => {
      const text = typeof e.data === 'string' ? e.data : new TextDecoder().decode(e.data as ArrayBuffer);
      // Pushes (presence at connect, events) are checked and set aside; replies go to whoever waits.
      if (text.startsWith('{"type":"event"')) return void checkServerFrame(text, null, this.f);
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = null;
        w(text);
      } else this.queue.push(text);
    });
  }

  private next(what: string): Promise<string> {
    const ready = this.queue.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        reject(new Error(`no answer on the ${this.kind} socket to ${what}`));
      }, 15_000);
      this.waiting = (text) => {
        clearTimeout(timer);
        resolve(text);
      };
    });
  }

  private async rotate(): Promise<void> {
    const old = this.ws;
    await this.open();
    old.close(1000, 'next person');
  }

  /** Sends one frame and checks its answer. */
  async one(frame: HostileFrame): Promise<void> {
    if (this.sent >= PER_SOCKET) await this.rotate();
    this.sent += 1;
    this.f.frames += 1;
    this.ws.send(frame.data);
    let answer: string;
    try {
      answer = await this.next(frame.what);
    } catch (error) {
      this.f.anomalies.push(`${String(error)}`);
      await this.rotate();
      return;
    }
    this.count(checkServerFrame(answer, frame, this.f));
  }

  /** A burst without waiting, past the socket's budget; then every answer, which must include rate-limited ones. */
  async flood(frames: HostileFrame[]): Promise<void> {
    await this.rotate();
    for (const frame of frames) this.ws.send(frame.data);
    this.f.frames += frames.length;
    const codes: string[] = [];
    for (const frame of frames) codes.push(String(checkServerFrame(await this.next(frame.what), frame, this.f)));
    for (const code of codes) this.count(code);
    if (!codes.includes('rate-limited')) this.f.anomalies.push(`a flood of ${frames.length} frames on the ${this.kind} socket was never rate-limited`);
    await this.rotate();
  }

  private count(code: string | null): void {
    if (code === 'ok') this.f.served += 1;
    else if (code) this.f.refused[code] = (this.f.refused[code] ?? 0) + 1;
  }

  close(): void {
    const ws = this.ws;
    this.ws = null as unknown as WebSocket;
    ws.close(1000, 'done');
  }
}

async function fuzzClientSocket(kind: 'lobby' | 'chat', seed: number): Promise<Figures> {
  const f = figuresOf(kind);
  const rng = new Rng(seed);
  const target = new Target(kind, f);
  await target.open();
  // Two huge frames (at and past the 16 MiB limit, in bytes) per run, whatever its length.
  for (const frame of clientFrames(rng, FRAMES, { chatId: BASELINE, socket: kind, hugeFrames: 2 })) await target.one(frame);
  await target.flood(floodFrames(rng, 320, BASELINE));
  target.close();
  return f;
}

describe('fuzz: hostile frames and requests', { timeout: Math.max(120_000, FRAMES * 150) }, () => {
  it('the chat socket answers every hostile frame with a well-formed reply and never closes', async () => {
    const f = await fuzzClientSocket('chat', SEED);
    expect(f.anomalies.slice(0, 20)).toEqual([]);
    expect(f.frames).toBeGreaterThanOrEqual(FRAMES);
  });

  it('the lobby socket answers every hostile frame with a well-formed reply and never closes', async () => {
    const f = await fuzzClientSocket('lobby', SEED + 1);
    expect(f.anomalies.slice(0, 20)).toEqual([]);
    expect(f.frames).toBeGreaterThanOrEqual(FRAMES);
  });

  it('the host link takes hostile frames without closing, stores nothing forged, and the valid events between them go through', async () => {
    const f = figuresOf('link');
    const rng = new Rng(SEED + 2);
    // Half aimed at the baseline's own host (unreadable events for the baseline chat only), half from another host.
    const intruder = new FakeHost('fuzz-intruder');
    for (const type of Object.keys(REQUEST_RULES)) if (!['chat.attach', 'chat.history', 'chat.list'].includes(type)) intruder.handlers[type] = () => ({});
    await intruder.connect();
    intruder.create('probe', []);
    const watcher = await Client.chat(intruder.hostId, 'probe');
    await watcher.request('chat.attach', { chatId: 'probe' });
    const links = [
      { fake: host, frames: linkFrames(rng, Math.ceil(FRAMES / 2), BASELINE, 'elsewhere') },
      { fake: intruder, frames: linkFrames(rng, Math.floor(FRAMES / 2), 'probe', BASELINE) },
    ];
    let done = false;
    for (const { fake } of links) {
      fake.ws!.addEventListener('close', (e) => {
        if (done) return;
        f.closes += 1;
        f.anomalies.push(`the link of ${fake.hostId} closed: ${e.code} ${e.reason}`);
      });
      fake.ws!.addEventListener('message', (e) => {
        const text = String(e.data);
        if (text === 'pong') return;
        const frame = JSON.parse(text) as Frame;
        if (
          'link' in frame &&
          (frame.link !== 'ack' || !Array.isArray(frame.n) || !frame.n.every((n: unknown) => Number.isSafeInteger(n) && (n as number) > 0))
        ) {
          f.anomalies.push(`a control frame from the relay that is not an ack of positions: ${text.slice(0, 120)}`);
        }
      });
    }
    let probes = 0;
    for (let i = 0; i < Math.max(...links.map((l) => l.frames.length)); i++) {
      for (const { fake, frames } of links) {
        const frame = frames[i];
        if (!frame) continue;
        fake.ws!.send(frame.data);
        f.frames += 1;
      }
      // Every 100 frames a valid event from the intruder's host: it must reach its chat and be acknowledged.
      if (i % 100 === 99 || i === links[1]!.frames.length - 1) {
        const id = `probe-${++probes}`;
        intruder.emit('probe', { type: 'item', item: userItem(id, 'a valid event among hostile ones') });
        await watcher.waitFor((fr) => fr.event === 'chat.event' && fr.payload.event.item?.id === id, `probe ${id}`);
        f.served += 1;
      }
    }
    await until(() => intruder.outbox.size === 0 && host.outbox.size === 0, 'every valid event acknowledged');
    // Nothing forged reached another host's chat, nor the baseline.
    expect(watcher.chatEvents().map((fr) => fr.payload.event.item?.id)).toEqual(Array.from({ length: probes }, (_, k) => `probe-${k + 1}`));
    expect(f.anomalies.slice(0, 20)).toEqual([]);
    done = true;
    watcher.close();
    intruder.disconnect();
  });

  it('the HTTP routes answer hostile requests with 4xx {code, message}, never 5xx', async () => {
    const f = figuresOf('http');
    const intruder = await signIn('fuzz-intruder-person');
    const requests = hostileRequests(new Rng(SEED + 3), FRAMES, { hostId: host.hostId, chatId: BASELINE, intruderToken: intruder.token, subjectId: OWNER });
    const slowest: Array<[number, string]> = [];
    const byRoute: Record<string, [number, number]> = {};
    // Answer times summed by each thousand requests in the order sent: a figure (printed by scripts/fuzz.ts), not asserted.
    const byThousand: Array<[number, number]> = [];
    // Kept on the figures from the start, so a run that times out still shows where its time went.
    Object.assign(f, { slowest, byRoute, byThousand });
    const one = async ({ method, route: shape, path, headers, body, what }: HostileRequest) => {
      const thousand = (byThousand[Math.floor(f.frames / 1000)] ??= [0, 0]);
      f.frames += 1;
      const at = Date.now();
      let res: Response;
      try {
        res = await workerFetch(new Request(`http://relay.test${path}`, { method, headers, body }));
      } catch (error) {
        f.anomalies.push(`${what}: the fetch threw ${String(error)}`);
        return;
      }
      if (res.webSocket) {
        // An upgrade the relay accepted (a hostile path that is still a socket it serves): closed at once.
        res.webSocket.accept();
        res.webSocket.close(1000, 'fuzz');
        f.served += 1;
        return;
      }
      const text = await res.text();
      const took = Date.now() - at;
      thousand[0] += 1;
      thousand[1] += took;
      const route = (byRoute[shape] ??= [0, 0]);
      route[0] += 1;
      route[1] += took;
      slowest.push([took, `${what} ${res.status}`]);
      slowest.sort((x, y) => y[0] - x[0]).splice(5);
      if (res.status >= 500) f.anomalies.push(`${what}: ${res.status} ${text.slice(0, 120)}`);
      if (res.status < 400) {
        f.served += 1;
        return;
      }
      f.refused[String(res.status)] = (f.refused[String(res.status)] ?? 0) + 1;
      let parsed: Frame | null = null;
      try {
        parsed = JSON.parse(text) as Frame;
      } catch {
        // not JSON
      }
      if (!parsed || typeof parsed.code !== 'string' || typeof parsed.message !== 'string' || !CODES.has(parsed.code)) {
        f.anomalies.push(`${what}: ${res.status} without a {code, message}: ${text.slice(0, 120)}`);
      }
    };
    // A few at once, as many people's requests come: each worker takes the next until all are sent.
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let next = requests.next(); !next.done; next = requests.next()) await one(next.value);
      }),
    );

    expect(f.anomalies.slice(0, 20)).toEqual([]);
    expect(f.frames).toBe(FRAMES);
  });

  it('the baseline chat is exactly as it was, and nothing that acts on the machine reached its host', async () => {
    expect(await baseline()).toEqual(before);
    expect(
      actedOn()
        .slice(acted)
        .map((fr) => `${fr.type} ${JSON.stringify(fr.payload).slice(0, 80)}`),
    ).toEqual([]);
    const online = await env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline();
    expect(online, "the baseline's host is still online").toBe(true);
  });
});
