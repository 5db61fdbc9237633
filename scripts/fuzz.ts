// `npm run fuzz`: the full fuzz suite (test/relay/fuzz.test.ts) with TETHER_FUZZ_FRAMES hostile frames
// per socket kind and HTTP requests (10,000 unless set), seeded by TETHER_FUZZ_SEED (18 unless set),
// then its figures: frames, answers by code, anomalies. Exits non-zero when any anomaly was found.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const frames = process.env.TETHER_FUZZ_FRAMES || '10000';
const seed = process.env.TETHER_FUZZ_SEED || '18';
const started = Date.now();
const run = spawnSync(process.execPath, [path.join(root, 'node_modules', 'vitest/vitest.mjs'), 'run', '--project', 'relay', 'test/relay/fuzz.test.ts'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 1024 * 1024 * 1024,
  env: {
    ...process.env,
    TETHER_FUZZ_FRAMES: frames,
    TETHER_FUZZ_SEED: seed,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
  },
});
const output = `${run.stdout}\n${run.stderr}`;
const line = output.split('\n').find((l) => l.includes('FUZZ-FIGURES '));
const summary = output
  .split('\n')
  .filter((l) => /Tests\s|✓|×/.test(l))
  .join('\n');
console.log(summary);
// A failed test's own report (its assertion, diff and stack) from vitest's failure section, so a
// failure says why, not only that it failed.
if (run.status !== 0) {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const from = plain.search(/Failed Tests \d+|FAIL\s/);
  console.error(from >= 0 ? plain.slice(from, from + 20_000) : `vitest exited ${run.status}:\n${plain.slice(-4000)}`);
}
if (!line) {
  console.error('The fuzz run printed no figures:\n', output.slice(-4000));
  process.exit(1);
}
type Figures = {
  frames: number;
  served: number;
  refused: Record<string, number>;
  anomalies: string[];
  closes: number;
  slowest?: Array<[number, string]>;
  byRoute?: Record<string, [number, number]>;
  byThousand?: Array<[number, number]>;
};
const { figures } = JSON.parse(line.slice(line.indexOf('FUZZ-FIGURES ') + 'FUZZ-FIGURES '.length)) as { figures: Record<string, Figures> };
let total = 0;
let anomalies = 0;
console.log(`\nfuzz: seed ${seed}, ${frames} per kind, ${Math.round((Date.now() - started) / 1000)} s`);
for (const [kind, f] of Object.entries(figures)) {
  total += f.frames;
  anomalies += f.anomalies.length;
  const codes = Object.entries(f.refused)
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  console.log(
    `  ${kind.padEnd(6)} ${String(f.frames).padStart(6)} sent, ${f.served} served, refused: ${codes || 'none'}; ${f.closes} closes, ${f.anomalies.length} anomalies`,
  );
  for (const a of f.anomalies.slice(0, 10)) console.log(`      ${a}`);
  if (f.slowest?.length) console.log(`      slowest: ${f.slowest.map(([ms, what]) => `${what} ${ms} ms`).join('; ')}`);
  const mean = ([n, ms]: [number, number]) => (n ? Math.round(ms / n) : 0);
  if (f.byThousand?.length) console.log(`      mean answer time by each 1,000 requests: ${f.byThousand.map((t) => `${mean(t)} ms`).join(', ')}`);
  if (f.byRoute) {
    const routes = Object.entries(f.byRoute).sort((a, b) => mean(b[1]) - mean(a[1]));
    console.log(`      mean by route: ${routes.map(([route, t]) => `${route} ${mean(t)} ms (${t[0]})`).join('; ')}`);
  }
}
console.log(`  total  ${total} hostile frames and requests, ${anomalies} anomalies`);
process.exit(run.status === 0 && anomalies === 0 ? 0 : 1);
