// A CPU profile of the relay's isolate through wrangler dev's inspector (the Chrome DevTools
// protocol workerd speaks), for `BENCH_PROFILE=1 node bench/relay.bench.ts`: where the relay's time
// goes while one phase of the bench runs, by function (self time) and by the steps of an event's path
// (inclusive time of the functions that make each step).
import WebSocket from 'ws';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; endTime: number; samples?: number[]; timeDeltas?: number[] }

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

export class WorkerdProfiler {
  private ws!: WebSocket;
  private next = 0;
  private readonly waiting = new Map<number, (result: any) => void>();

  static async connect(inspectorPort: number): Promise<WorkerdProfiler> {
    const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json() as Array<{ webSocketDebuggerUrl: string }>;
    const profiler = new WorkerdProfiler();
    profiler.ws = new WebSocket(targets[0]!.webSocketDebuggerUrl, { maxPayload: 1 << 30 });
    await new Promise<void>((resolve, reject) => { profiler.ws.once('open', resolve); profiler.ws.once('error', reject); });
    profiler.ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; method?: string; result?: unknown; error?: { message?: string } };
      // Only answers settle a call: this inspector also sends back a request's own frame (with its
      // method) now and then, which must not pass for the answer.
      if (message.id === undefined || message.method !== undefined) return;
      if (message.error) console.error(`inspector: ${message.error.message ?? JSON.stringify(message.error)}`);
      profiler.waiting.get(message.id)?.(message.result);
    });
    await profiler.call('Profiler.enable');
    await profiler.call('Profiler.setSamplingInterval', { interval: 250 });
    return profiler;
  }

  /** One inspector call; refused after 30 s (wrangler's inspector proxy sometimes never reaches the runtime: it only echoes). */
  private call(method: string, params: object = {}): Promise<any> {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`BENCH_PROFILE: the inspector did not answer ${method} in 30 s (wrangler dev's inspector proxy did not reach workerd); run again`));
      }, 30_000);
      this.waiting.set(id, (result) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(result);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Profiles the isolate while `run` runs; answers run's value and a short report. */
  async during<T>(run: () => Promise<T>): Promise<{ value: T; report: string }> {
    await this.call('Profiler.start');
    const value = await run();
    const { profile } = await this.call('Profiler.stop') as { profile: Profile };
    return { value, report: report(profile) };
  }

  /**
   * Whether a room woke from hibernation while `run` ran: the ChatRoom constructor (RoomStore's)
   * was on the stack in a sample, and how busy the isolate was meanwhile (ms).
   */
  async woke<T>(run: () => Promise<T>): Promise<{ value: T; constructed: boolean; busyMs: number }> {
    await this.call('Profiler.setSamplingInterval', { interval: 50 });
    await this.call('Profiler.start');
    const value = await run();
    const { profile } = await this.call('Profiler.stop') as { profile: Profile };
    await this.call('Profiler.setSamplingInterval', { interval: 250 });
    const constructed = profile.nodes.some((node) => node.callFrame.functionName === 'RoomStore' || node.callFrame.functionName === 'ChatRoom');
    const total = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
    // (program) is native time the sampler cannot place; while the isolate waits it lands there too.
    const idle = profile.nodes.filter((node) => ['(idle)', '(program)'].includes(node.callFrame.functionName)).reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
    return { value, constructed, busyMs: ((total - idle) * (profile.endTime - profile.startTime)) / 1_000 / Math.max(1, total) };
  }

  close(): void {
    this.ws.close();
  }
}

function report(profile: Profile): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const total = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  // (program) is native time the sampler cannot place; while the isolate waits it lands there too, so it is not counted busy.
  const idle = profile.nodes.filter((node) => ['(idle)', '(program)'].includes(node.callFrame.functionName)).reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const busy = Math.max(1, total - idle);
  const msPerSample = (profile.endTime - profile.startTime) / 1_000 / Math.max(1, total);
  // Inclusive time per step: a sample counts once for a step however deep the step's functions recurse.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stepHits = STEPS.map(() => 0);
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits) continue;
    const names = new Set<string>();
    for (let at: number | undefined = node.id; at !== undefined; at = parent.get(at)) names.add(byId.get(at)!.callFrame.functionName);
    STEPS.forEach(([, pattern], i) => { if ([...names].some((name) => pattern.test(name))) stepHits[i]! += hits; });
  }
  const self = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    const name = node.callFrame.functionName || '(anonymous)';
    if (!hits || name === '(idle)' || name === '(program)') continue;
    const key = `${name}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  const pct = (hits: number) => `${((100 * hits) / busy).toFixed(1).padStart(5)} %`;
  const lines = [`  busy ${(busy * msPerSample).toFixed(0)} ms of ${(total * msPerSample).toFixed(0)} ms profiled; share of busy time:`];
  STEPS.forEach(([label], i) => lines.push(`    ${pct(stepHits[i]!)}  ${label}`));
  lines.push('  most self time:');
  for (const [name, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 14)) lines.push(`    ${pct(hits)}  ${name}`);
  return lines.join('\n');
}
