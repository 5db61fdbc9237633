// A CPU profile of the relay's isolate through the inspector of the Worker's own workerd (the Chrome
// DevTools protocol), for `BENCH_PROFILE=1 node bench/relay.bench.ts`: where the relay's time goes while
// one phase of the bench runs, by function (self time) and by the steps of an event's path (inclusive
// time of the functions that make each step).
//
// Why not wrangler dev's --inspector-port: with wrangler 4.164 that port is served by an inspector
// proxy Worker in wrangler's *proxy* workerd, which buffers what the runtime sends until a DevTools
// client connects and, in our runs, did not deliver the answers to our own requests. The Worker's own workerd (started by miniflare with
// `--inspector-addr=127.0.0.1:0`) listens on an inspector of its own; we find it among that process's
// listening sockets (`ss -ltnp`) by asking each for `/json`, and talk to its `core:user:<worker>` target.
//
// workerd answers the Profiler domain itself (not V8's agent), in its own shape: the answer to
// `Profiler.enable`, `setSamplingInterval` and `start` is the request's own frame sent back (id, method,
// params, no result), and `Profiler.stop`'s carries the method beside `result.profile`. So an answer
// is any frame with one of our ids; events are frames without an id. (This file used to drop frames
// with a method as "echoes", which dropped every Profiler answer: BENCH_PROFILE then timed out.)
// BENCH_PROFILE_DIR=<dir> also writes each profile there as <label>.cpuprofile (DevTools opens it).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** The steps of an event's way through the relay, each the inclusive time of the functions named (bundled names). */
const STEPS: Array<[string, RegExp]> = [
  ['host link: read the message (HostLink.webSocketMessage)', /^(webSocketMessage|onMessage)$/],
  ['  of which JSON.parse of the link message', /^parse$/],
  ['HostLink → ChatRoom RPC (ChatRoom.ingest, callee side)', /^ingest$/],
  ['  validate the event (zod safeParse)', /^safeParse$/],
  ['  store (transactionSync: room row, log row)', /^transactionSync$/],
  ['  serialize the event (JSON.stringify)', /^stringify$/],
  ['  fan-out loop (fanOut)', /^fanOut$/],
  ['    socket send (WebSocket.send)', /^send$/],
  ['client frames (ClientSockets webSocketMessage → onFrame)', /^onFrame$/],
  ['garbage collector', /^\(garbage collector\)$/],
];

/** A sample stands for at most this much time (µs): see report(). */
const SAMPLE_CAP_US = 1_000;

export class WorkerdProfiler {
  private readonly pid: number;
  private readonly modules: ModuleMap | null;
  private constructor(pid: number, bundle?: string) {
    this.pid = pid;
    this.modules = bundle ? modulesOf(bundle) : null;
  }

  /**
   * A profiler for the isolate of the user Worker in workerd `pid` (the Worker's own, as the bench
   * finds it); `bundle`, the Worker's script as it runs, names the module of each frame.
   */
  static async connect(pid: number, bundle?: string): Promise<WorkerdProfiler> {
    const profiler = new WorkerdProfiler(pid, bundle);
    // Fails here, before any figure, if no inspector answers.
    const session = await profiler.started(250);
    await session.call('Profiler.stop');
    session.close();
    return profiler;
  }

  /**
   * A fresh inspector session with the profiler started. One session per profile, and a new one when
   * any step goes unanswered for 3 s: in our runs workerd left some sessions deaf (the first one after
   * the relay started always; now and then a later one), while the next connection was answered.
   */
  private async started(intervalUs: number): Promise<InspectorSession> {
    for (let tries = 1; ; tries++) {
      const session = await InspectorSession.open(await userWorkerTarget(this.pid));
      try {
        await session.call('Runtime.getIsolateId', {}, 3_000);
        await session.call('Profiler.enable', {}, 3_000);
        await session.call('Profiler.setSamplingInterval', { interval: intervalUs }, 3_000);
        await session.call('Profiler.start', {}, 3_000);
        return session;
      } catch (error) {
        session.close();
        if (tries === 8) throw error;
      }
    }
  }

  private profiling = false;

  private async profile<T>(run: () => Promise<T>, intervalUs: number): Promise<{ value: T; profile: Profile }> {
    // One at a time: a second session asked to profile while one is profiling was never answered.
    if (this.profiling) throw new Error('BENCH_PROFILE: a profile inside a profile');
    this.profiling = true;
    try {
      const session = await this.started(intervalUs);
      try {
        const value = await run();
        const { profile } = (await session.call('Profiler.stop')) as { profile: Profile };
        return { value, profile };
      } finally {
        session.close();
      }
    } finally {
      this.profiling = false;
    }
  }

  /** Profiles the isolate while `run` runs (250 µs samples); answers run's value and a short report. */
  async during<T>(run: () => Promise<T>, label = 'profile'): Promise<{ value: T; report: string }> {
    const { value, profile } = await this.profile(run, 250);
    const dir = process.env.BENCH_PROFILE_DIR;
    if (dir) writeFileSync(path.join(dir, `${label.replace(/[^\w-]+/g, '-')}.cpuprofile`), JSON.stringify(profile));
    return { value, report: report(profile, this.modules) };
  }

  /**
   * Whether a room woke from hibernation while `run` ran: the ChatRoom constructor (RoomStore's)
   * was on the stack in a sample, and how busy the isolate was meanwhile (ms).
   */
  async woke<T>(run: () => Promise<T>): Promise<{ value: T; constructed: boolean; busyMs: number }> {
    const { value, profile } = await this.profile(run, 50);
    const constructed = profile.nodes.some((node) => node.callFrame.functionName === 'RoomStore' || node.callFrame.functionName === 'ChatRoom');
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    let busyUs = 0;
    for (const [id, us] of sampleTimes(profile)) if (!IDLE.includes(byId.get(id)!.callFrame.functionName)) busyUs += us;
    return { value, constructed, busyMs: busyUs / 1_000 };
  }

  close(): void {
    // nothing held between profiles
  }
}

/** One DevTools protocol connection: calls by id; a frame with one of our ids is its answer (see the header). */
class InspectorSession {
  private next = 0;
  private readonly waiting = new Map<number, (result: any) => void>();
  private readonly ws: WebSocket;
  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message?: string } };
      if (message.id === undefined) return; // an event
      if (message.error) console.error(`inspector: ${message.error.message ?? JSON.stringify(message.error)}`);
      this.waiting.get(message.id)?.(message.result);
    });
  }

  static async open(url: string): Promise<InspectorSession> {
    const ws = new WebSocket(url, { maxPayload: 1 << 30 });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new InspectorSession(ws);
  }

  /** One call; refused after `timeoutMs`, naming it. */
  call(method: string, params: object = {}, timeoutMs = 30_000): Promise<any> {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`BENCH_PROFILE: workerd's inspector did not answer ${method} in ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiting.set(id, (result) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(result);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** The DevTools WebSocket of the user Worker's isolate in workerd `pid`: the listening port whose /json names a `core:user:` target. */
async function userWorkerTarget(pid: number): Promise<string> {
  const listening = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`));
  for (const line of listening) {
    const port = /127\.0\.0\.1:(\d+)/.exec(line)?.[1];
    if (!port) continue;
    const targets = await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(2_000) })
      .then(
        (r) => r.json() as Promise<Array<{ id: string; webSocketDebuggerUrl: string }>>,
        () => null,
      )
      .catch(() => null);
    const user = Array.isArray(targets) ? targets.find((t) => t.id.startsWith('core:user:')) : undefined;
    if (user) return user.webSocketDebuggerUrl;
  }
  throw new Error(`BENCH_PROFILE: no inspector with a core:user: target among workerd ${pid}'s listening sockets`);
}

/** Where each module of the bundle starts (esbuild marks each with a `// path` line): for "our code by module". */
type ModuleMap = Array<[line: number, module: string]>;
export function modulesOf(bundle: string): ModuleMap {
  const map: ModuleMap = [];
  readFileSync(bundle, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      // `// src/relay/log.ts`, `// ../main/node_modules/hono/dist/context.js` (a package as one module: hono, zod, drizzle-orm).
      const marker = /^\/\/ (?:\.\.\/)*(?:[^/\s]+\/)?((?:src|node_modules|packages)\/\S+)$/.exec(line)?.[1];
      if (marker) map.push([i, marker.startsWith('node_modules/') ? marker.replace(/^node_modules\/((?:@[^/]+\/)?[^/]+).*$/, '$1') : marker]);
    });
  return map;
}
function moduleAt(map: ModuleMap, line: number): string {
  let lo = 0;
  let hi = map.length - 1;
  let found = '(bundle)';
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (map[mid]![0] <= line) {
      found = map[mid]![1];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Native frames (no script) by what they are; the rest by the module the bundle says they come from. */
const STORAGE = new Set([
  'exec',
  'transactionSync',
  'one',
  'toArray',
  'raw',
  'next',
  'get',
  'put',
  'delete',
  'deleteAll',
  'getAlarm',
  'setAlarm',
  'deleteAlarm',
  'list',
  'sync',
]);
function groupOf(node: ProfileNode, modules: ModuleMap | null): string {
  const { functionName: name, url, lineNumber } = node.callFrame;
  if (name === '(garbage collector)') return 'garbage collector';
  if (!url) {
    if (name === 'send') return 'WebSocket.send (native: frame, deflate, write)';
    if (STORAGE.has(name)) return 'storage (native SQLite calls)';
    if (name === 'parse' || name === 'stringify') return 'JSON (native)';
    return `native: ${name || '(anonymous)'}`;
  }
  const module = modules ? moduleAt(modules, lineNumber) : url;
  if (module === 'src/relay/objects/scoped-calls.ts')
    return 'HostLink → ChatRoom RPC call (the stub call in scoped-calls.ts; the native call, its argument serialization, lands here)';
  return module;
}

/** (program): native time the sampler cannot place; waits land there too. Neither counts as busy. */
const IDLE = ['(idle)', '(program)'];

/**
 * The time (µs) each node's samples stand for. workerd samples while the isolate runs and not while it
 * waits, so a sample stands for the gap to the next one, capped (the gap after the last sample of a
 * busy stretch is waiting, not work). Counting samples times the span's average would call it all busy.
 */
function sampleTimes(profile: Profile): Map<number, number> {
  const weight = new Map<number, number>();
  const deltas = profile.timeDeltas ?? [];
  (profile.samples ?? []).forEach((id, i) => weight.set(id, (weight.get(id) ?? 0) + Math.min(deltas[i + 1] ?? 250, SAMPLE_CAP_US)));
  return weight;
}

export function report(profile: Profile, modules: ModuleMap | null): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const weight = sampleTimes(profile);
  const samples = profile.samples ?? [];
  const idleNames = IDLE;
  let busyUs = 0;
  for (const [id, us] of weight) if (!idleNames.includes(byId.get(id)!.callFrame.functionName)) busyUs += us;
  const busy = Math.max(1, busyUs);
  // Inclusive time per step: a sample counts once for a step however deep the step's functions recurse.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stepUs = STEPS.map(() => 0);
  const self = new Map<string, number>();
  const groups = new Map<string, number>();
  for (const [id, us] of weight) {
    const node = byId.get(id)!;
    if (idleNames.includes(node.callFrame.functionName)) continue;
    const names = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) names.add(byId.get(at)!.callFrame.functionName);
    STEPS.forEach(([, pattern], i) => {
      if ([...names].some((name) => pattern.test(name))) stepUs[i]! += us;
    });
    const group = groupOf(node, modules);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const name = node.callFrame.functionName || '(anonymous)';
    const key = node.callFrame.url
      ? `${name} (${modules ? moduleAt(modules, node.callFrame.lineNumber).replace(/^src\/relay\//, '') : 'bundle'}:${node.callFrame.lineNumber + 1})`
      : `${name} (native)`;
    self.set(key, (self.get(key) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)} %`;
  const lines = [
    `  busy ~${(busy / 1000).toFixed(0)} ms of ${((profile.endTime - profile.startTime) / 1000).toFixed(0)} ms profiled (${samples.length} samples); share of busy time:`,
  ];
  STEPS.forEach(([label], i) => lines.push(`    ${pct(stepUs[i]!)}  ${label}`));
  lines.push('  self time by group:');
  for (const [group, us] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 16)) lines.push(`    ${pct(us)}  ${group}`);
  lines.push('  most self time, by function:');
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 16)) lines.push(`    ${pct(us)}  ${name}`);
  return lines.join('\n');
}
