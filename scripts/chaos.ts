// `npm run chaos`: the chaos suite's random fault cycles (test/e2e/chaos.e2e.test.ts) at full length:
// TETHER_CHAOS_CYCLES cycles (1,000 unless set) against one real wrangler dev, a real `tether host`
// running the pinned Claude Code CLI on a scripted model, and SDK clients, then its figures (faults by
// kind, the work done, the end state's counts, reconnect times). Exits non-zero if the run failed.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ensureChromium } from './chromium.ts';

const root = path.resolve(import.meta.dirname, '..');
const cycles = process.env.TETHER_CHAOS_CYCLES || '1000';
ensureChromium(); // the e2e project's setup expects it, though this file drives no browser
const run = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules', 'vitest/vitest.mjs'), 'run', '--project', 'e2e', 'test/e2e/chaos.e2e.test.ts', '-t', 'cycles'],
  {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
    env: { ...process.env, TETHER_CHAOS_CYCLES: cycles, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` },
  },
);
const output = `${run.stdout}\n${run.stderr}`;
const at = output.indexOf('CHAOS-FIGURES');
console.log(
  output
    .split('\n')
    .filter((l) => /Tests\s|✓|×|Error/.test(l))
    .join('\n'),
);
if (at < 0) {
  console.error('The chaos run printed no figures:\n', output.slice(-6000));
  process.exit(1);
}
console.log(
  `\nchaos: ${output
    .slice(at + 'CHAOS-FIGURES '.length)
    .split('\n')
    .slice(0, 5)
    .join('\n')}`,
);
process.exit(run.status ?? 1);
