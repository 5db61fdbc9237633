// The host's hooks for any CLI it installs them in: Claude Code's settings.json (hooks-file.ts), or
// Codex's hooks.json and its trust of them (codex-hooks.ts). One entry for the CLI command and the
// `hooks.status`/`hooks.set` requests.
import type { HooksState } from '../../contracts/index.ts';
import { codexHooksState, installCodexHooks, removeCodexHooks } from './codex-hooks.ts';
import { hooksState, installHooks, removeHooks, type HookTarget } from './hooks-file.ts';

export async function setHooks(dataDir: string, target: HookTarget, installed: boolean): Promise<HooksState> {
  if (target.kind === 'codex') return installed ? installCodexHooks(dataDir, target) : removeCodexHooks(dataDir, target);
  return installed ? installHooks(dataDir, target) : removeHooks(dataDir, target);
}

export async function stateOfHooks(dataDir: string, target: HookTarget): Promise<HooksState> {
  if (target.kind === 'codex') {
    // Codex answers for its trust; a Codex that cannot be asked leaves what the file says.
    return codexHooksState(dataDir, target).catch(() => hooksState(dataDir, target));
  }
  return hooksState(dataDir, target);
}
