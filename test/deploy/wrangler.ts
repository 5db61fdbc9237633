// Runs the project's wrangler the way scripts/local-relay.ts does: on this very Node (>= 22), as CI
// (no prompts), without metrics.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const wranglerJs = path.join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

/** `wrangler <args>` in `cwd` (the project by default): answers its output, throws with it on failure. */
export function wrangler(args: string[], cwd = root): string {
  const run = spawnSync(process.execPath, [wranglerJs, ...args], {
    cwd, encoding: 'utf8', env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
  });
  const output = `${run.stdout}${run.stderr}`;
  if (run.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed (${run.status}):\n${output}`);
  return output;
}
