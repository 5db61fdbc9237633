// Which config folders the host's hooks go in: Claude Code's default account, as the host config
// names it (the claude backend's `home`, else its CLAUDE_CONFIG_DIR), else Claude Code's own default
// (`$CLAUDE_CONFIG_DIR`, `~/.claude`). A person who runs `claude` in a terminal uses that folder.
import path from 'node:path';
import type { HostConfig } from '../config.ts';
import { defaultClaudeConfigDir, type HookTarget } from './claude-hooks.ts';

export function hookTargetsFrom(config: HostConfig, base: string): HookTarget[] {
  const backend = config.providers?.claude;
  const named = backend?.backend === 'claude' ? backend.home ?? backend.env?.CLAUDE_CONFIG_DIR : undefined;
  return [{ kind: 'claude', configDir: named ? path.resolve(base, named) : defaultClaudeConfigDir() }];
}
