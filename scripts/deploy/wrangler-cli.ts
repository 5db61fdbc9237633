// Runs wrangler for `npm run deploy`: the project's own wrangler on this very Node (whatever `node`
// the PATH finds first may be older than wrangler accepts), or the script TETHER_WRANGLER names (the
// deploy test's stand-in: no Cloudflare account is reachable from a test). Output is captured, not
// shown, so the deploy prints its own short account of each step and wrangler's only when a step
// fails or --verbose asks; a secret goes on stdin, never in argv (other users' `ps` sees argv).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..');

export interface WranglerResult {
  status: number;
  stdout: string;
  stderr: string;
}

export interface WranglerOptions {
  /** Written to wrangler's stdin, then closed (a secret's value). */
  input?: string;
  /** More environment for this one run. */
  env?: Record<string, string>;
  /** Show wrangler's output as it comes (--verbose), on stderr so stdout stays the deploy's own. */
  echo?: boolean;
}

export function wranglerScript(): string {
  return process.env.TETHER_WRANGLER ?? path.join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
}

/** The environment every wrangler run gets: no metrics, no colours; `extra` on top (the account). */
export function wranglerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', FORCE_COLOR: '0', ...extra };
}

/**
 * One wrangler command. stdin is always a pipe (closed at once when there is no input), so wrangler
 * knows it is not talking to a person: it never waits on a prompt, it takes each prompt's default.
 */
export function runWrangler(args: string[], options: WranglerOptions = {}): Promise<WranglerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [wranglerScript(), ...args], {
      cwd: root,
      env: wranglerEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (options.echo) process.stderr.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (options.echo) process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? 1, stdout, stderr }));
    // A child that exits before reading its stdin must not crash the deploy with EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
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
export interface OutputEntry {
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
      entries = readFileSync(file, 'utf8').split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line) as OutputEntry);
    } catch {
      // No file: the command wrote no entry (it failed early); the status says so.
    }
    return { ...result, entries };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The last lines of a failed command's output, indented, for the deploy's error message. */
export function outputTail(result: WranglerResult, lines = 25): string {
  const text = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-lines);
  return text.map((line) => `    ${line}`).join('\n');
}
