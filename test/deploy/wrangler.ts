// The tests' wrangler: scripts/wrangler.ts's, blocking, failing loudly.
import { runWranglerSync } from '../../scripts/wrangler.ts';

/** `wrangler <args>` in `cwd` (the project by default): answers its output, throws with it on failure. */
export function wrangler(args: string[], cwd?: string): string {
  const run = runWranglerSync(args, { cwd });
  const output = `${run.stdout}${run.stderr}`;
  if (run.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed (${run.status}):\n${output}`);
  return output;
}
