// `node bench/host-store.bench.ts` (part of `npm run bench`): what the host's own storage costs per
// write it must not lose, on this machine's disk (a temp folder, not /dev/shm: an fsync is the point).
// Prints, for 2,000 writes each, events per second and the p50/p99 time of one:
//   - a chat event through HostCore (the chat's log row, then the event to an attached client);
//   - an event frame into the outbox (its row, before it may go on the relay's socket), and the ack of all of them;
//   - a journaled request answered (`chat.cancel` with no turn running: its journal rows only).
// It reads only APIs the host has had since before host.db, so the same file can time an older tree.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HostCore } from '../src/host/chats/core.ts';
import { Outbox } from '../src/host/link/outbox.ts';
import { HostPolicy } from '../src/host/policy.ts';
import { ScriptFileSchema, ScriptProvider } from '../src/host/providers/script.ts';

const COUNT = Number(process.env.HOST_STORE_BENCH_COUNT ?? 2_000);
const root = mkdtempSync(path.join(tmpdir(), 'tether-host-store-bench-'));

function figures(label: string, times: number[], totalMs: number): void {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(3);
  console.log(`  ${label}: ${Math.round((times.length / totalMs) * 1000)} per s; one: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`);
}

function timed(count: number, work: (i: number) => void): { times: number[]; totalMs: number } {
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    work(i);
    times.push(performance.now() - t);
  }
  return { times, totalMs: performance.now() - started };
}

try {
  console.log(`Tether host storage benchmark: ${COUNT} writes each, in ${root}, Node ${process.version}`);
  const dataDir = path.join(root, 'host');
  const script = ScriptFileSchema.parse({ replies: [{ steps: [{ type: 'text', text: 'ok' }] }] });
  const core = await HostCore.open({
    dataDir,
    providers: [new ScriptProvider({ kind: 'claude', script })],
    policy: new HostPolicy({ home: root }),
    coalesceMs: 0,
  });
  let seen = 0;
  core.connect('bench-client', () => (seen += 1), { allChats: true });
  const ask = async (id: string, type: string, payload: unknown) => {
    const reply = await core.serve({ id, type, payload }, 'bench-client');
    if (!reply.ok) throw new Error(`${type} failed: ${JSON.stringify(reply)}`);
  };
  await ask('create', 'chat.create', { chatId: 'c1', cwd: root });
  const session = core.session('c1');
  const events = timed(COUNT, (i) => session.updateInfo({ lastLine: { role: 'assistant', text: `line ${i}`, at: Date.now() } }));
  figures('chat event (log row, then the client)', events.times, events.totalMs);
  if (seen < COUNT) throw new Error(`the client saw ${seen} of ${COUNT} events`);

  const renames: number[] = [];
  const renamesStarted = performance.now();
  for (let i = 0; i < COUNT / 4; i++) {
    const t = performance.now();
    await ask(`cancel-${i}`, 'chat.cancel', { chatId: 'c1' });
    renames.push(performance.now() - t);
  }
  figures('journaled request (chat.cancel)', renames, performance.now() - renamesStarted);
  await core.close();

  const outbox = Outbox.open(path.join(root, 'link'));
  const pushes = timed(COUNT, (i) => outbox.push({ type: 'event', event: 'chat.event', payload: { chatId: 'c1', seq: i, event: { type: 'info' } } }));
  figures('outbox frame (its row before the socket)', pushes.times, pushes.totalMs);
  const ns = outbox.readAfter(0).map((entry) => entry.n);
  const acked = timed(1, () => outbox.ack(ns));
  console.log(`  ack of ${ns.length} frames at once: ${acked.totalMs.toFixed(1)} ms`);
  outbox.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
