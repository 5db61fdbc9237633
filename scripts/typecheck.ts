// `npm run typecheck`: every TypeScript project of the tree, each with its target's globals only, so a
// file cannot use what its runtime lacks (a DOM call in the relay, a Node module in contracts). The
// projects share tsconfig.base.json; DEVELOPERS.md (Layers) says which runs where.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

/** Each project and what it may use besides the language. */
export const TS_PROJECTS: ReadonlyArray<{ config: string; target: string }> = [
  { config: 'src/contracts/tsconfig.json', target: 'no DOM, no Node, no Workers' },
  { config: 'src/relay/tsconfig.json', target: 'Workers (and AsyncLocalStorage, src/relay/als.d.ts)' },
  { config: 'src/host/tsconfig.json', target: 'Node' },
  { config: 'src/client/tsconfig.json', target: 'DOM and Node' },
  { config: 'src/web/tsconfig.json', target: 'DOM' },
  { config: 'src/web/sw/tsconfig.json', target: 'WebWorker (the service worker)' },
  { config: 'tsconfig.json', target: 'tests, scripts, bench, configs: all of them' },
];

/** Checks every project on this Node; answers the configs that failed (tsc prints why). */
export function typecheck(): string[] {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  return TS_PROJECTS.filter(({ config }) => spawnSync(process.execPath, [tsc, '--noEmit', '-p', config], { cwd: root, stdio: 'inherit' }).status !== 0).map(
    ({ config }) => config,
  );
}

if (import.meta.main) {
  const failed = typecheck();
  if (failed.length > 0) console.error(`The type check failed: ${failed.join(', ')}`);
  process.exit(failed.length > 0 ? 1 : 0);
}
