// Runs the relay locally on workerd through `wrangler dev`: migrations applied to the local D1 first,
// state kept in the folder given (`.wrangler/state` for `npm start`). Used by `npm start`, the
// end-to-end tests and the benchmark, so all three run the same real Worker.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { runWranglerSync, wranglerSpawn } from './wrangler.ts';

export interface LocalRelay {
  url: string;
  /** wrangler dev's inspector (Chrome DevTools protocol) for the Worker: the benchmark profiles through it. */
  inspectorPort: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface LocalRelayOptions {
  port?: number;
  persistTo: string;
  /** The web app's folder, instead of wrangler.toml's dist/web. */
  assets?: string;
  /**
   * A Worker bundled beforehand by `bundleWorker`, run as it is: wrangler dev then watches only that
   * file, so edits to src/relay while tests run do not reload the relay under them.
   */
  script?: string;
  /** Extra variables for the Worker (`--var NAME:value`); secrets for `npm start` come from .dev.vars instead. */
  vars?: Record<string, string>;
  quiet?: boolean;
  /**
   * Another Worker's wrangler.toml, run instead of the relay (the bench's runtime floor): its own
   * top-level Worker, so neither the relay's migrations nor `--env local` apply.
   */
  config?: string;
}

const root = path.resolve(import.meta.dirname, '..');
/** wrangler.toml's local environment: every local wrangler command names it (the top level is no Worker). */
export const LOCAL_ENV = ['--env', 'local'];

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Applies the migrations D1 has not recorded to the local D1 in `persistTo`; answers wrangler's output. */
export function applyMigrations(persistTo: string): string {
  return wranglerOrThrow(['d1', 'migrations', 'apply', 'tether', '--local', '--persist-to', persistTo, ...LOCAL_ENV], 'migrations');
}

/**
 * `wrangler deploy --dry-run --outdir` of an environment (nothing is uploaded), the web app in
 * `assets`: the Worker as that deploy would upload it. Answers wrangler's output (its size report).
 */
export function dryRunDeploy(outDir: string, assets: string, environment = 'local'): string {
  return wranglerOrThrow(['deploy', '--dry-run', '--outdir', outDir, '--assets', assets, '--env', environment], 'bundling the Worker');
}

/** Bundles the local Worker as `wrangler deploy` would (nothing is uploaded) into `outDir`; answers the script's path. */
export function bundleWorker(outDir: string, assets: string): string {
  dryRunDeploy(outDir, assets);
  return path.join(outDir, 'index.js');
}

function wranglerOrThrow(args: string[], what: string): string {
  const run = runWranglerSync(args);
  if (run.status !== 0) throw new Error(`${what} failed:\n${run.stdout}\n${run.stderr}`);
  return `${run.stdout}${run.stderr}`;
}

export async function startLocalRelay(options: LocalRelayOptions): Promise<LocalRelay> {
  if (!options.config) applyMigrations(options.persistTo);
  const port = options.port ?? (await freePort());
  const inspectorPort = await freePort();
  const worker = options.config
    ? ['--config', options.config]
    : [...(options.script ? [options.script, '--no-bundle', '--config', path.join(root, 'wrangler.toml')] : []), ...LOCAL_ENV];
  const args = [
    'dev',
    ...worker,
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspectorPort),
    '--persist-to',
    options.persistTo,
    '--show-interactive-dev-session=false',
    '--log-level',
    options.quiet ? 'warn' : 'info',
  ];
  if (options.assets) args.push('--assets', options.assets);
  for (const [name, value] of Object.entries(options.vars ?? {})) args.push('--var', `${name}:${value}`);
  const run = wranglerSpawn(args);
  const child = spawn(run.command, run.args, { ...run.options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
    if (!options.quiet) process.stdout.write(chunk);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${output}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      stopGroup(child);
      throw new Error(`wrangler dev did not become healthy:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    inspectorPort,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        stopGroup(child);
        setTimeout(() => {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            /* gone */
          }
        }, 5_000).unref();
      }),
  };
}

function stopGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    /* gone */
  }
}
