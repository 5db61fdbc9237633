// What a CLI says of its own version (`--version`), read the same way for every CLI.
import { execFile } from 'node:child_process';

/** The first `x.y.z` (with any pre-release tail) a `--version` printed: `GitHub Copilot CLI 1.0.102.` → `1.0.102`. */
export function versionIn(text: string): string | null {
  return /\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]*[0-9A-Za-z])?/.exec(text)?.[0] ?? null;
}

export interface CliPresence {
  installed: boolean;
  version: string | null;
}

/**
 * Asks `command --version` (found on the PATH of `env`, default the host's). A CLI that cannot be
 * run, or fails to answer, is not installed; one that answers without a version has version null.
 * Asynchronous: a CLI may take seconds to start and the host's link keeps its heartbeat meanwhile.
 */
export function readCliVersion(command: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 15_000): Promise<CliPresence> {
  return new Promise((resolve) => {
    execFile(command, ['--version'], { encoding: 'utf8', timeout: timeoutMs, env, windowsHide: true }, (error, stdout) => {
      resolve(error ? { installed: false, version: null } : { installed: true, version: versionIn(stdout) });
    });
  });
}
