// The host's own configuration file (JSON), read once at start. It decides which backend answers
// for each agent kind and the host policy; nothing the relay says can change either.
//
//   {
//     "providers": {                                   // in order: the first is the default provider
//       "claude": { "backend": "script", "script": "/path/to/script.json" },
//       "codex": { "backend": "codex", "command": "codex", "home": "~/.codex" }
//     },
//     "policy": {                                      // what no client can widen (policy.ts)
//       "roots": ["~/code"], "modeCeiling": "auto-accept-edits",
//       "accountEnv": ["ANTHROPIC_BASE_URL"],          // variables accounts may set, beyond the safe few
//       "accountHomes": ["~/.agent-accounts"]          // where accounts' config folders may be
//     },
//     "coalesceMs": 30,
//     "signatures": { "require": false }               // device signatures on machine-acting requests (off by default for now)
//   }
//
// Without a file (or without `providers`) the host serves `claude` from the default script.
import path from 'node:path';
import { z } from 'zod';
import { AgentKindSchema, RuntimeModeSchema, isRequestType } from '../contracts/index.ts';
import { readJsonFile } from './disk.ts';
import { HostPolicy } from './policy.ts';
import type { Provider } from './providers/provider.ts';
import { ClaudeProvider } from './providers/claude/index.ts';
import { CodexProvider } from './providers/codex/index.ts';
import { CopilotProvider } from './providers/copilot/index.ts';
import { geminiProvider } from './providers/gemini/index.ts';
import { DEFAULT_SCRIPT_PATH, loadScript, ScriptProvider } from './providers/script.ts';

const ScriptBackendSchema = z.object({
  backend: z.literal('script'),
  /** A script file; relative paths resolve against the config file's folder. Default: the shipped script. */
  script: z.string().min(1).optional(),
});

const CodexBackendSchema = z.object({
  backend: z.literal('codex'),
  /** The `codex` executable (default: `codex` on PATH); relative paths resolve against the config's folder. */
  command: z.string().min(1).optional(),
  /** Added after `app-server`, e.g. `["-c", "model_reasoning_summary=\"auto\""]`. */
  args: z.array(z.string()).optional(),
  /** CODEX_HOME of the default account (default: Codex's own, `~/.codex`). */
  home: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
});

const ClaudeBackendSchema = z.object({
  backend: z.literal('claude'),
  /** The `claude` executable (default: `claude` on PATH); relative paths resolve against the config's folder. */
  command: z.string().min(1).optional(),
  /** Added after the flags the driver sets, e.g. `["--add-dir", "/srv/shared"]`. */
  args: z.array(z.string()).optional(),
  /** CLAUDE_CONFIG_DIR of the default account (default: Claude Code's own, `~/.claude`). */
  home: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
});

const GeminiBackendSchema = z.object({
  backend: z.literal('gemini'),
  /** The `gemini` executable (default: `gemini` on PATH); relative paths resolve against the config's folder. */
  command: z.string().min(1).optional(),
  /** Added after `--acp -m <model>`. */
  args: z.array(z.string()).optional(),
  /** GEMINI_CLI_HOME of the default account (the folder holding `.gemini/`; default: Gemini's own, `~`). */
  home: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
});

const CopilotBackendSchema = z.object({
  backend: z.literal('copilot'),
  /** The `copilot` executable (default: `copilot` on PATH); relative paths resolve against the config's folder. */
  command: z.string().min(1).optional(),
  /** Added after `--acp --stdio` and the flags the driver sets. */
  args: z.array(z.string()).optional(),
  /** COPILOT_HOME of the default account (default: Copilot's own, `~/.copilot`). */
  home: z.string().min(1).optional(),
  /** E.g. your own model provider (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_TYPE`, `COPILOT_MODEL`): then no GitHub sign-in is needed. */
  env: z.record(z.string(), z.string()).optional(),
});

export const HostConfigSchema = z.object({
  providers: z.partialRecord(AgentKindSchema, z.discriminatedUnion('backend', [ScriptBackendSchema, CodexBackendSchema, ClaudeBackendSchema, GeminiBackendSchema, CopilotBackendSchema])).optional(),
  policy: z.object({
    roots: z.array(z.string().min(1)).min(1).optional(),
    modeCeiling: RuntimeModeSchema.optional(),
    accountEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
    accountHomes: z.array(z.string().min(1)).optional(),
    /** Hidden forks (`chat.summarize`) running at once on this host and in one chat. */
    hiddenForks: z.object({ host: z.int().min(0).max(64).optional(), chat: z.int().min(0).max(16).optional() }).optional(),
  }).optional(),
  coalesceMs: z.int().min(0).max(10_000).optional(),
  /**
   * Device signatures on requests that act on this machine (issue 15). `require` is OFF by default in
   * this release: clients do not sign yet. With it on, an unsigned or unverifiable request is refused
   * and nothing runs; `unsigned` names request types still let through unsigned (for a plain
   * agent-contracts client), which gives up the protection for those types.
   */
  signatures: z.object({
    require: z.boolean().default(false),
    unsigned: z.array(z.string().refine(isRequestType, 'not a request type')).default([]),
  }).optional(),
});
export type HostConfig = z.output<typeof HostConfigSchema>;

/** Reads and validates a config file; `base` is where its relative paths start. */
export function readHostConfig(file: string): { config: HostConfig; base: string } {
  return { config: readJsonFile(file, HostConfigSchema, 'config'), base: path.dirname(path.resolve(file)) };
}

/** The providers a config names, in its order (default: `claude` from the shipped script). */
export function providersFrom(config: HostConfig, base: string, version: string): Provider[] {
  const entries = Object.entries(config.providers ?? { claude: { backend: 'script' } });
  const out: Provider[] = [];
  for (const [kind, backend] of entries) {
    if (!backend) continue;
    switch (backend.backend) {
      case 'script': {
        const file = backend.script ? path.resolve(base, backend.script) : DEFAULT_SCRIPT_PATH;
        out.push(new ScriptProvider({ kind: AgentKindSchema.parse(kind), script: loadScript(file), version }));
        break;
      }
      case 'codex': {
        if (kind !== 'codex') throw new Error(`The codex backend answers only as codex, not as ${kind}`);
        const command = backend.command?.includes('/') ? path.resolve(base, backend.command) : backend.command ?? 'codex';
        out.push(new CodexProvider({ command, args: backend.args, home: backend.home, env: backend.env, clientVersion: version }));
        break;
      }
      case 'claude': {
        if (kind !== 'claude') throw new Error(`The claude backend answers only as claude, not as ${kind}`);
        const command = backend.command?.includes('/') ? path.resolve(base, backend.command) : backend.command ?? 'claude';
        const env = { ...backend.env, ...(backend.home ? { CLAUDE_CONFIG_DIR: backend.home } : {}) };
        out.push(new ClaudeProvider({ command, args: backend.args, env }));
        break;
      }
      case 'gemini': {
        if (kind !== 'gemini') throw new Error(`The gemini backend answers only as gemini, not as ${kind}`);
        const command = backend.command?.includes('/') ? path.resolve(base, backend.command) : backend.command ?? 'gemini';
        out.push(geminiProvider({ command, args: backend.args, env: backend.env, home: backend.home, clientVersion: version }));
        break;
      }
      case 'copilot': {
        if (kind !== 'copilot') throw new Error(`The copilot backend answers only as copilot, not as ${kind}`);
        const command = backend.command?.includes('/') ? path.resolve(base, backend.command) : backend.command ?? 'copilot';
        out.push(new CopilotProvider({ command, args: backend.args, env: backend.env, home: backend.home, clientVersion: version }));
        break;
      }
    }
  }
  if (out.length === 0) throw new Error('The config names no provider');
  return out;
}

/** The host policy a config names; `dataDir` is never a place for an account's config folder. */
export function policyFrom(config: HostConfig, options: { home?: string; dataDir?: string } = {}): HostPolicy {
  const policy = config.policy;
  return new HostPolicy({
    roots: policy?.roots,
    modeCeiling: policy?.modeCeiling,
    accountEnv: policy?.accountEnv,
    accountHomes: policy?.accountHomes,
    hiddenForks: policy?.hiddenForks,
    home: options.home,
    ...(options.dataDir ? { private: [options.dataDir] } : {}),
  });
}
