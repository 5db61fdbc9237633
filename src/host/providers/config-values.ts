// The schemas of the config values every provider's section shares: a command, its arguments, its
// environment, each checked by cli-values.ts before anything reaches a command line.
import path from 'node:path';
import { z } from 'zod';
import { configArgProblem, configCommandProblem, configEnvValueProblem, CONFIG_ARGS_MAX, ENV_NAME } from './cli-values.ts';

// Every config value that reaches a command line or an environment, checked (cli-values.ts).
export const checked = (problem: (value: string) => string | null) =>
  z.string().superRefine((value, ctx) => {
    const why = problem(value);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  });
export const CommandSchema = checked(configCommandProblem).pipe(z.string().min(1));
export const ArgsSchema = z.array(checked(configArgProblem)).max(CONFIG_ARGS_MAX);
export const EnvSchema = z.record(z.string().regex(ENV_NAME, 'a variable name is a letter or _, then letters, digits or _'), checked(configEnvValueProblem));

/** A command as the config names it: a path (relative ones resolve against the config's folder), else a name looked up on PATH. */
export function configCommand(command: string | undefined, fallback: string, base: string): string {
  return command?.includes('/') ? path.resolve(base, command) : (command ?? fallback);
}
