// Codex in the provider registry (registry.ts): its config section and how its provider is made.
import { z } from 'zod';
import { ArgsSchema, CommandSchema, configCommand, EnvSchema } from '../config-values.ts';
import { defineProvider } from '../provider-entry.ts';
import { CodexProvider } from './index.ts';
import { CODEX_PROFILE } from './profile.ts';

export const codexEntry = defineProvider({
  kind: 'codex',
  profile: CODEX_PROFILE,
  configSchema: z.object({
    backend: z.literal('codex'),
    /** The `codex` executable (default: `codex` on PATH); relative paths resolve against the config's folder. */
    command: CommandSchema.optional(),
    /** Added after `app-server`, e.g. `["-c", "model_reasoning_summary=\"auto\""]`. */
    args: ArgsSchema.optional(),
    /** CODEX_HOME of the default account (default: Codex's own, `~/.codex`). */
    home: z.string().min(1).optional(),
    env: EnvSchema.optional(),
  }),
  create: (config, _kind, { base, version }) =>
    new CodexProvider({
      command: configCommand(config.command, CODEX_PROFILE.command, base),
      args: config.args,
      home: config.home,
      env: config.env,
      clientVersion: version,
    }),
  from: (config) => config.command ?? CODEX_PROFILE.command,
  discovered: (command, { version }) => new CodexProvider({ command, clientVersion: version }),
});
