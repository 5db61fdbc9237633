// Claude Code in the provider registry (registry.ts): its config section and how its provider is made.
import { z } from 'zod';
import { ArgsSchema, CommandSchema, configCommand, EnvSchema } from '../config-values.ts';
import { defineProvider } from '../provider-entry.ts';
import { ClaudeProvider } from './index.ts';
import { CLAUDE_PROFILE } from './profile.ts';

export const claudeEntry = defineProvider({
  kind: 'claude',
  profile: CLAUDE_PROFILE,
  configSchema: z.object({
    backend: z.literal('claude'),
    /** The `claude` executable (default: `claude` on PATH); relative paths resolve against the config's folder. */
    command: CommandSchema.optional(),
    /** Added after the flags the driver sets, e.g. `["--add-dir", "/srv/shared"]`. */
    args: ArgsSchema.optional(),
    /** CLAUDE_CONFIG_DIR of the default account (default: Claude Code's own, `~/.claude`). */
    home: z.string().min(1).optional(),
    env: EnvSchema.optional(),
  }),
  create: (config, _kind, { base }) =>
    new ClaudeProvider({
      command: configCommand(config.command, CLAUDE_PROFILE.command, base),
      args: config.args,
      env: { ...config.env, ...(config.home ? { CLAUDE_CONFIG_DIR: config.home } : {}) },
    }),
  from: (config) => config.command ?? CLAUDE_PROFILE.command,
  discovered: (command) => new ClaudeProvider({ command }),
});
