// Copilot CLI in the provider registry (registry.ts): its config section and how its provider is made.
import { z } from 'zod';
import { ArgsSchema, CommandSchema, configCommand, EnvSchema } from '../config-values.ts';
import { defineProvider } from '../provider-entry.ts';
import { CopilotProvider } from './index.ts';
import { COPILOT_PROFILE } from './profile.ts';

export const copilotEntry = defineProvider({
  kind: 'copilot',
  profile: COPILOT_PROFILE,
  configSchema: z.object({
    backend: z.literal('copilot'),
    /** The `copilot` executable (default: `copilot` on PATH); relative paths resolve against the config's folder. */
    command: CommandSchema.optional(),
    /** Added after `--acp --stdio` and the flags the driver sets. */
    args: ArgsSchema.optional(),
    /** COPILOT_HOME of the default account (default: Copilot's own, `~/.copilot`). */
    home: z.string().min(1).optional(),
    /** E.g. your own model provider (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_TYPE`, `COPILOT_MODEL`): then no GitHub sign-in is needed. */
    env: EnvSchema.optional(),
  }),
  create: (config, _kind, { base, version }) =>
    new CopilotProvider({
      command: configCommand(config.command, COPILOT_PROFILE.command, base),
      args: config.args,
      env: config.env,
      home: config.home,
      clientVersion: version,
    }),
  from: (config) => config.command ?? COPILOT_PROFILE.command,
  discovered: (command, { version }) => new CopilotProvider({ command, clientVersion: version }),
});
