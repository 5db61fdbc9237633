// The one place that knows how to run wrangler: the project's own wrangler on this very Node (whatever
// `node` the PATH finds first may be older than wrangler accepts), or the script TETHER_WRANGLER names
// (the deploy test's stand-in: no Cloudflare account is reachable from a test), without metrics or
// colours. `npm run deploy`, backup and restore capture the output (they print their own short account
// of each step and wrangler's only when a step fails or --verbose asks); the local relay, the tests and
// the stand-in's pass-through run it synchronously. A secret goes on stdin, never in argv (other users'
// `ps` sees argv).
import { spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const REAL_WRANGLER = path.join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

export interface WranglerResult {
  status: number;
  stdout: string;
  stderr: string;
}

export interface WranglerOptions {
  /** Written to wrangler's stdin, then closed (a secret's value). */
  input?: string;
  /** More environment for this one run; an undefined value removes the variable. */
  env?: Record<string, string | undefined>;
  /** Show wrangler's output as it comes (--verbose), on stderr so stdout stays the caller's own. */
  echo?: boolean;
  /** The folder to run in (the project by default). */
  cwd?: string;
  /** The project's own wrangler even when TETHER_WRANGLER names another (the stand-in's pass-through). */
  real?: boolean;
}

/** How to spawn `wrangler <args>`: this Node, the script, and the environment every run gets. */
export function wranglerSpawn(
  args: string[],
  options: Pick<WranglerOptions, 'env' | 'cwd' | 'real'> = {},
): { command: string; args: string[]; options: SpawnOptions } {
  const script = options.real ? REAL_WRANGLER : (process.env.TETHER_WRANGLER ?? REAL_WRANGLER);
  return {
    command: process.execPath,
    args: [script, ...args],
    options: { cwd: options.cwd ?? root, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', FORCE_COLOR: '0', ...options.env } },
  };
}

/**
 * One wrangler command. stdin is always a pipe (closed at once when there is no input), so wrangler
 * knows it is not talking to a person: it never waits on a prompt, it takes each prompt's default.
 */
export function runWrangler(args: string[], options: WranglerOptions = {}): Promise<WranglerResult> {
  const run = wranglerSpawn(args, options);
  return new Promise((resolve, reject) => {
    const child = spawn(run.command, run.args, { ...run.options, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (options.echo) process.stderr.write(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (options.echo) process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? 1, stdout, stderr }));
    // A child that exits before reading its stdin must not crash the caller with EPIPE.
    child.stdin!.on('error', () => {});
    child.stdin!.end(options.input ?? '');
  });
}

/** The same, blocking, as CI (no prompts): for the local relay's setup, the tests and the stand-in's pass-through. */
export function runWranglerSync(args: string[], options: Omit<WranglerOptions, 'echo'> = {}): WranglerResult {
  const run = wranglerSpawn(args, { ...options, env: { CI: 'true', ...options.env } });
  const result = spawnSync(run.command, run.args, { ...run.options, input: options.input ?? '', encoding: 'utf8' });
  return { status: result.status ?? 1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** The JSON value in a command's stdout (wrangler may print a line or two around it). */
export function jsonIn<T>(stdout: string, open: '[' | '{'): T | null {
  const close = open === '[' ? ']' : '}';
  const start = stdout.indexOf(open);
  const end = stdout.lastIndexOf(close);
  if (start < 0 || end < start) return null;
  try {
    return JSON.parse(stdout.slice(start, end + 1)) as T;
  } catch {
    return null;
  }
}

/** The entries wrangler wrote to its machine-readable output file (WRANGLER_OUTPUT_FILE_PATH), one JSON object a line. */
interface OutputEntry {
  type: string;
  [key: string]: unknown;
}

/**
 * Runs a command with WRANGLER_OUTPUT_FILE_PATH set to a private temporary file and answers its
 * entries beside the usual result: `wrangler deploy` writes `{type: "deploy", targets: [...]}` there,
 * the URLs it deployed to, so nothing has to be scraped from its human-readable output.
 */
export async function runWranglerWithOutput(args: string[], options: WranglerOptions = {}): Promise<WranglerResult & { entries: OutputEntry[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tether-deploy-'));
  const file = path.join(dir, 'wrangler-output.jsonl');
  try {
    const result = await runWrangler(args, { ...options, env: { ...options.env, WRANGLER_OUTPUT_FILE_PATH: file } });
    let entries: OutputEntry[] = [];
    try {
      entries = readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as OutputEntry);
    } catch {
      // No file: the command wrote no entry (it failed early); the status says so.
    }
    return { ...result, entries };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The last lines of a failed command's output, indented, for the caller's error message. */
export function outputTail(result: WranglerResult, lines = 25): string {
  const text = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-lines);
  return text.map((line) => `    ${line}`).join('\n');
}

/** The migration files a `wrangler d1 migrations apply` reports applying, each once. */
export function migrationsAppliedIn(output: string): string[] {
  return [...new Set(output.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? [])];
}
