// Gemini CLI in the provider registry (registry.ts): its config section and how its provider is made.
import { z } from 'zod';
import { ArgsSchema, CommandSchema, configCommand, EnvSchema } from '../config-values.ts';
import { defineProvider } from '../provider-entry.ts';
import { geminiProvider } from './index.ts';
import { GEMINI_PROFILE } from './profile.ts';

export const geminiEntry = defineProvider({
  kind: 'gemini',
  profile: GEMINI_PROFILE,
  configSchema: z.object({
    backend: z.literal('gemini'),
    /** The `gemini` executable (default: `gemini` on PATH); relative paths resolve against the config's folder. */
    command: CommandSchema.optional(),
    /** Added after `--acp -m <model>`. */
    args: ArgsSchema.optional(),
    /** GEMINI_CLI_HOME of the default account (the folder holding `.gemini/`; default: Gemini's own, `~`). */
    home: z.string().min(1).optional(),
    env: EnvSchema.optional(),
  }),
  create: (config, _kind, { base, version }) =>
    geminiProvider({
      command: configCommand(config.command, GEMINI_PROFILE.command, base),
      args: config.args,
      env: config.env,
      home: config.home,
      clientVersion: version,
    }),
  from: (config) => config.command ?? GEMINI_PROFILE.command,
  discovered: (command, { version }) => geminiProvider({ command, clientVersion: version }),
});
