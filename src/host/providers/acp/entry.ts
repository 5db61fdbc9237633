// Any ACP agent by its command line, in the provider registry (registry.ts): it takes whichever
// kind's slot the config puts it in (command-line.ts says how it is driven).
import { z } from 'zod';
import { RuntimeModeSchema } from '../../../contracts/index.ts';
import { configArgProblem, configModeProblem, configNameProblem, ENV_NAME } from '../cli-values.ts';
import { ArgsSchema, checked, CommandSchema, configCommand, EnvSchema } from '../config-values.ts';
import { defineProvider } from '../provider-entry.ts';
import { commandLineProvider } from './command-line.ts';

export const acpEntry = defineProvider({
  kind: null,
  profile: null,
  configSchema: z.object({
    backend: z.literal('acp'),
    /** What people call it (`OpenCode`): clients show it for the kind it takes as its slot. */
    name: checked(configNameProblem),
    /** The executable: a name looked up on PATH, or a path (relative ones resolve against the config's folder). */
    command: CommandSchema,
    /** Its whole argument list for ACP over stdio, e.g. `["acp"]` (OpenCode) or `["--acp"]` (Qwen Code). */
    args: ArgsSchema.default([]),
    /** Merged over the host's environment (and under an account's). */
    env: EnvSchema.default({}),
    /** The agent's ACP session mode id for each runtime mode (any subset; see acp/command-line.ts). */
    modes: z.partialRecord(RuntimeModeSchema, checked(configModeProblem)).default({}),
    /** Let messages starting with `/` or `$` through to the agent's own commands (default: refused). */
    slashCommands: z.boolean().default(false),
    /** `provider.list`'s resume template (`{flags}`, `{id}`). */
    resumeCommand: checked(configArgProblem).optional(),
    /** The variable that names an account's config folder, when the agent has one. */
    homeVariable: z.string().regex(ENV_NAME).optional(),
  }),
  create: (config, kind, { base, version }) =>
    commandLineProvider({
      kind,
      name: config.name,
      command: configCommand(config.command, config.command, base),
      args: config.args,
      env: config.env,
      modes: config.modes,
      slashCommands: config.slashCommands,
      ...(config.resumeCommand ? { resumeCommand: config.resumeCommand } : {}),
      ...(config.homeVariable ? { homeVariable: config.homeVariable } : {}),
      clientVersion: version,
    }),
  from: (config) => config.command,
});
