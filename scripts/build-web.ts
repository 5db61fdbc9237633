// Builds the web app (src/web) into dist/web, which wrangler serves as the Worker's static assets.
// `npm start` and the end-to-end tests build it first, so the app always matches the source.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

/** `outDir`: another folder than dist/web (each end-to-end run builds its own, so runs never share one). */
export function buildWeb(options: { quiet?: boolean; outDir?: string } = {}): void {
  // The app, then its service worker into the same folder (built apart: vite.sw.config.ts says why).
  for (const [config, empty] of [
    ['vite.config.ts', true],
    ['vite.sw.config.ts', false],
  ] as const) {
    const args = [
      path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--config',
      path.join(root, 'src', 'web', config),
      '--logLevel',
      options.quiet ? 'error' : 'info',
    ];
    if (options.outDir) args.push('--outDir', options.outDir, ...(empty ? ['--emptyOutDir'] : []));
    const run = spawnSync(process.execPath, args, {
      cwd: root,
      stdio: options.quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`building the web app failed (${config}):\n${run.stdout ?? ''}${run.stderr ?? ''}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) buildWeb();
