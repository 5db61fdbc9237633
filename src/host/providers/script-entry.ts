// The scripted agent in the provider registry (registry.ts): replies from a script file, in any
// kind's slot (script.ts).
import path from 'node:path';
import { z } from 'zod';
import { defineProvider } from './provider-entry.ts';
import { DEFAULT_SCRIPT_PATH, loadScript, ScriptProvider } from './script.ts';

const scriptFile = (script: string | undefined, base: string): string => (script ? path.resolve(base, script) : DEFAULT_SCRIPT_PATH);

export const scriptEntry = defineProvider({
  kind: null,
  profile: null,
  configSchema: z.object({
    backend: z.literal('script'),
    /** A script file; relative paths resolve against the config file's folder. Default: the shipped script. */
    script: z.string().min(1).optional(),
  }),
  create: (config, kind, { base, version }) => new ScriptProvider({ kind, script: loadScript(scriptFile(config.script, base)), version }),
  from: (config, base) => scriptFile(config.script, base),
});
