// The shell script a test's tmux window runs: a person's own terminal, in `cwd`, with `vars` exported,
// then `exec command`. One thing a person's terminal never has is the test runner's CI variables
// (`CI=true` under .ci/run), which tmux hands every window from the environment it started in: Gemini
// CLI 0.61, like other Ink TUIs, takes `CI` for "not interactive" and exits at once instead of
// drawing (a fresh-clone run failed terminal-gemini that way), so they are unset first.
import { writeFileSync } from 'node:fs';

export function writeTerminalScript(file: string, cwd: string, vars: Record<string, string>, command: string): void {
  const exports = Object.entries(vars).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`).join('\n');
  writeFileSync(file, `unset CI CONTINUOUS_INTEGRATION $(compgen -e | grep '^CI_')\ncd ${JSON.stringify(cwd)}\n${exports}\nexec ${command}\n`);
}
