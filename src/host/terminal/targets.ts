// Which config folders the host's hooks go in. Claude Code's default account, as the host config
// names it (the claude backend's `home`, else its CLAUDE_CONFIG_DIR), else Claude Code's own default
// (`$CLAUDE_CONFIG_DIR`, `~/.claude`): a person who runs `claude` in a terminal uses that folder.
// Codex only when the host config has a codex backend: its `home` (else its CODEX_HOME, else
// `$CODEX_HOME`, else `~/.codex`), trusted with that backend's `codex` (codex-hooks.ts).
import os from 'node:os';
import path from 'node:path';
import type { HostConfig } from '../config.ts';
import { expandHome } from '../providers/codex/driver.ts';
import type { AccountBook } from '../chats/accounts.ts';
import { defaultClaudeConfigDir, type HookTarget } from './hooks-file.ts';

export function hookTargetsFrom(config: HostConfig, base: string, env: NodeJS.ProcessEnv = process.env): HookTarget[] {
  const claude = config.providers?.claude;
  const named = claude?.backend === 'claude' ? (claude.home ?? claude.env?.CLAUDE_CONFIG_DIR) : undefined;
  const targets: HookTarget[] = [{ kind: 'claude', configDir: named ? path.resolve(base, expandHome(named)) : defaultClaudeConfigDir(env) }];
  const codex = config.providers?.codex;
  if (codex?.backend === 'codex') {
    const home = codex.home ?? codex.env?.CODEX_HOME ?? env.CODEX_HOME ?? path.join(os.homedir(), '.codex');
    const command = codex.command?.includes('/') ? path.resolve(base, codex.command) : (codex.command ?? 'codex');
    targets.push({ kind: 'codex', configDir: path.resolve(base, expandHome(home)), command });
  }
  return targets;
}

/**
 * The config targets and, beside them, the config folder of every other account of Claude Code and
 * Codex the host has (made in the app): a person who runs `CLAUDE_CONFIG_DIR=<that folder> claude`
 * uses it. A client names an account's folder, so only one the host's policy admits
 * (`policy.accountHomes`, never a chat folder or the host's data) is a target. Codex's are trusted
 * with the configured backend's `codex`, and only when the host has one.
 */
export function withAccountTargets(configured: readonly HookTarget[], accounts: AccountBook): HookTarget[] {
  const out = [...configured];
  for (const kind of ['claude', 'codex'] as const) {
    const base = configured.find((target) => target.kind === kind);
    if (!base) continue;
    for (const { home } of accounts.homesOf(kind)) {
      if (!out.some((target) => target.kind === kind && target.configDir === home)) out.push({ ...base, configDir: home });
    }
  }
  return out;
}
