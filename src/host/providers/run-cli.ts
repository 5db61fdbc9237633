// One short CLI command (a status question), with its environment, a time limit and bounded output.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';

export interface CliAnswer {
  stdout: string;
  stderr: string;
  /** Exit code (null: it did not exit on its own). */
  code: number | null;
  /** Why it gave no answer (not found, timed out), when it gave none. */
  failure?: string;
}

export function runCli(command: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<CliAnswer> {
  return new Promise((resolve) => {
    execFile(command, [...args], { env, cwd: tmpdir(), timeout: timeoutMs, maxBuffer: 1024 * 1024, windowsHide: true }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      const failure = error && code === null ? (error.killed ? 'It did not answer in time' : error.message) : undefined;
      resolve({ stdout: String(stdout), stderr: String(stderr), code, ...(failure ? { failure } : {}) });
    });
  });
}
