// The shell script a test's tmux window runs: a person's own terminal, in `cwd`, with `vars` exported,
// then `exec command`. One thing a person's terminal never has is the test runner's CI variables
// (`CI=true` under .ci/run), which tmux hands every window from the environment it started in: Gemini
// CLI 0.61, like other Ink TUIs, takes `CI` for "not interactive" and exits at once instead of
// drawing (a fresh-clone run failed terminal-gemini that way), so they are unset first. Also the
// tmux server, its screen and the wait that shows both when it times out, shared by the four suites.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { until } from '../support/until.ts';

export function writeTerminalScript(file: string, cwd: string, vars: Record<string, string>, command: string): void {
  const exports = Object.entries(vars)
    .map(([k, v]) => `export ${k}=${JSON.stringify(v)}`)
    .join('\n');
  writeFileSync(file, `unset CI CONTINUOUS_INTEGRATION $(compgen -e | grep '^CI_')\ncd ${JSON.stringify(cwd)}\n${exports}\nexec ${command}\n`);
}

/** A tmux server of the test's own (`-L socket`), so tests never meet each other's windows. */
export function tmuxOn(socket: string): (...args: string[]) => string {
  return (...args) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** What window `target` shows now, or '(no pane)' once it (or the server) is gone. */
export function screenOf(tmux: (...args: string[]) => string, target = 'term'): string {
  try {
    return tmux('capture-pane', '-p', '-t', target);
  } catch {
    return '(no pane)';
  }
}

/** Waits until `check` gives a value; on timeout the error carries `detail()` (the host's log, the screen). */
export const waitShowing = <T>(check: () => T | undefined | null | false, what: string, detail: () => string, ms: number): Promise<T> =>
  // Every 50 ms: a check here often captures a tmux pane, a process of its own.
  until(check, what, { ms, every: 50, detail });
