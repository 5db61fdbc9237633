// `node bench/usage-scan.bench.ts` (part of `npm run bench`): the usage scan of a large set of
// generated session files (test/support/usage-transcripts.ts; Claude Code transcripts and Codex
// rollouts with tool output between the calls, as real ones have), 1 GiB by default
// (USAGE_BENCH_MB to change it). Prints the first scan's bytes per second and the process's memory
// at its peak, then the scan of the same files unchanged (stats only) and after one file grew.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageScanner } from '../src/host/usage/scanner.ts';
import { claudeLines, claudeProjectDir, codexCallLines, codexOpening } from '../test/support/usage-transcripts.ts';

const TARGET = Number(process.env.USAGE_BENCH_MB ?? 1024) * 1024 * 1024;
const root = mkdtempSync(path.join(tmpdir(), 'tether-usage-bench-'));
const claudeConfig = path.join(root, 'claude');
const codexHome = path.join(root, 'codex');
const models = ['claude-opus-4-5-20251101', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001'];
const start = Date.parse('2026-09-01T00:00:00Z');

let written = 0;
let calls = 0;
let session = 0;
const generateStarted = performance.now();
while (written < TARGET) {
  session += 1;
  const folder = `/home/ada/src/project-${session % 40}`;
  const at = start + session * 37 * 60_000;
  const lines: string[] = [];
  let file: string;
  if (session % 4 === 0) {
    file = path.join(codexHome, 'sessions', '2026', '09', String(1 + (session % 28)).padStart(2, '0'), `rollout-${session}.jsonl`);
    lines.push(...codexOpening(`cx-${session}`, folder, 'gpt-5.1-codex', at));
    let total = 0;
    for (let i = 0; i < 60; i += 1) {
      total += 3000;
      lines.push(...codexCallLines(`cx-${session}`, { at: at + i * 20_000, input: 2800, cached: 2000, output: 200, reasoning: 50 }, total, 2500));
      calls += 1;
    }
  } else {
    file = path.join(claudeProjectDir(claudeConfig, folder), `s-${session}.jsonl`);
    for (let i = 0; i < 60; i += 1) {
      lines.push(
        ...claudeLines(
          `s-${session}`,
          folder,
          { at: at + i * 20_000, model: models[session % 3], messageId: `msg_${session}_${i}`, input: 50, output: 300, cacheRead: 40_000, cacheWrite: 1_500 },
          3000,
        ),
      );
      calls += 1;
    }
  }
  const text = lines.map((line) => `${line}\n`).join('');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  written += Buffer.byteLength(text);
}
const generateMs = performance.now() - generateStarted;
console.log(`usage scan: generated ${(written / 1024 / 1024).toFixed(0)} MiB in ${session} files, ${calls} calls (${(generateMs / 1000).toFixed(1)} s)`);

let peakRss = 0;
const sample = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);
const roots = [
  { provider: 'claude' as const, path: path.join(claudeConfig, 'projects') },
  { provider: 'codex' as const, path: path.join(codexHome, 'sessions') },
];
const scanner = new UsageScanner(null);
const rssBefore = process.memoryUsage().rss;
let started = performance.now();
const first = await scanner.scan(roots);
let ms = performance.now() - started;
peakRss = Math.max(peakRss, process.memoryUsage().rss);
clearInterval(sample);
let counted = 0;
for (const entry of scanner.entries.values()) counted += entry.totals[0];
if (counted !== calls) throw new Error(`the scan counted ${counted} calls of ${calls}`);
console.log(
  `usage scan: first scan ${(first.bytesRead / 1024 / 1024).toFixed(0)} MiB, ${first.files} files in ${(ms / 1000).toFixed(2)} s = ${(first.bytesRead / 1024 / 1024 / (ms / 1000)).toFixed(0)} MiB/s; ${counted} calls in ${scanner.entries.size} entries`,
);
console.log(
  `usage scan: memory rss ${(rssBefore / 1024 / 1024).toFixed(0)} MiB before, peak ${(peakRss / 1024 / 1024).toFixed(0)} MiB, heap used after ${(process.memoryUsage().heapUsed / 1024 / 1024).toFixed(0)} MiB`,
);

started = performance.now();
const again = await scanner.scan(roots);
ms = performance.now() - started;
console.log(`usage scan: unchanged rescan of ${again.files} files: ${ms.toFixed(0)} ms, ${again.bytesRead} bytes read`);

const grown = path.join(claudeProjectDir(claudeConfig, '/home/ada/src/project-1'), 's-1.jsonl');
appendFileSync(
  grown,
  claudeLines('s-1', '/home/ada/src/project-1', { at: start, model: models[0], messageId: 'msg_new', input: 1, output: 1 })
    .map((l) => `${l}\n`)
    .join(''),
);
started = performance.now();
const after = await scanner.scan(roots);
ms = performance.now() - started;
console.log(`usage scan: rescan after one file grew: ${ms.toFixed(0)} ms, ${after.changedFiles} file read, ${after.bytesRead} bytes`);

if (process.env.USAGE_BENCH_KEEP) console.log(root);
else rmSync(root, { recursive: true, force: true });
