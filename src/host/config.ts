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
//     // any ACP agent by its command line, in one of the kinds' slots (acp/command-line.ts):
//     //   "gemini": { "backend": "acp", "name": "OpenCode", "command": "opencode", "args": ["acp"],
//     //               "env": {}, "modes": { "supervised": "plan", "auto-accept-edits": "build" } }
//     "coalesceMs": 30,
//     "signatures": { "require": true, "allowUnsigned": [] }  // device signatures on machine-acting requests (on by default)
//   }
//
// Without a file (or without `providers`) the host serves every agent CLI it finds on the person's
// own PATH that can chat (discovery.ts), and the scripted demo agent only when it finds none.
import path from 'node:path';
import { z } from 'zod';
import { AgentKindSchema, REQUEST_RULES, RuntimeModeSchema, isRequestType, type AgentKind, type RequestType } from '../contracts/index.ts';
import { readJsonFile } from './disk.ts';
import { HostPolicy } from './policy.ts';
import type { Provider } from './providers/provider.ts';
import { ClaudeProvider } from './providers/claude/index.ts';
import { CodexProvider } from './providers/codex/index.ts';
import { CopilotProvider } from './providers/copilot/index.ts';
import { geminiProvider } from './providers/gemini/index.ts';
import { DEFAULT_SCRIPT_PATH, DEMO_AGENT_NAME, loadScript, ScriptProvider } from './providers/script.ts';
import { discoverAgents, type DiscoveredAgent, type DiscoveryOptions } from './providers/discovery.ts';
import { CLI_KINDS, CLI_PROFILES } from './providers/roster.ts';
import { CONFIG_ARGS_MAX, ENV_NAME, configArgProblem, configCommandProblem, configEnvValueProblem, configModeProblem, configNameProblem } from './providers/cli-values.ts';
import { commandLineProvider } from './providers/acp/command-line.ts';

// Every config value that reaches a command line or an environment, checked (cli-values.ts).
const checked = (problem: (value: string) => string | null) => z.string().superRefine((value, ctx) => {
  const why = problem(value);
  if (why) ctx.addIssue({ code: 'custom', message: why });
});
const CommandSchema = checked(configCommandProblem).pipe(z.string().min(1));
const ArgsSchema = z.array(checked(configArgProblem)).max(CONFIG_ARGS_MAX);
const EnvSchema = z.record(z.string().regex(ENV_NAME, 'a variable name is a letter or _, then letters, digits or _'), checked(configEnvValueProblem));

const ScriptBackendSchema = z.object({
  backend: z.literal('script'),
  /** A script file; relative paths resolve against the config file's folder. Default: the shipped script. */
  script: z.string().min(1).optional(),
});

const CodexBackendSchema = z.object({
  backend: z.literal('codex'),
  /** The `codex` executable (default: `codex` on PATH); relative paths resolve against the config's folder. */
  command: CommandSchema.optional(),
  /** Added after `app-server`, e.g. `["-c", "model_reasoning_summary=\"auto\""]`. */
  args: ArgsSchema.optional(),
  /** CODEX_HOME of the default account (default: Codex's own, `~/.codex`). */
  home: z.string().min(1).optional(),
  env: EnvSchema.optional(),
});

const ClaudeBackendSchema = z.object({
  backend: z.literal('claude'),
  /** The `claude` executable (default: `claude` on PATH); relative paths resolve against the config's folder. */
  command: CommandSchema.optional(),
  /** Added after the flags the driver sets, e.g. `["--add-dir", "/srv/shared"]`. */
  args: ArgsSchema.optional(),
  /** CLAUDE_CONFIG_DIR of the default account (default: Claude Code's own, `~/.claude`). */
  home: z.string().min(1).optional(),
  env: EnvSchema.optional(),
});

const GeminiBackendSchema = z.object({
  backend: z.literal('gemini'),
  /** The `gemini` executable (default: `gemini` on PATH); relative paths resolve against the config's folder. */
  command: CommandSchema.optional(),
  /** Added after `--acp -m <model>`. */
  args: ArgsSchema.optional(),
  /** GEMINI_CLI_HOME of the default account (the folder holding `.gemini/`; default: Gemini's own, `~`). */
  home: z.string().min(1).optional(),
  env: EnvSchema.optional(),
});

const CopilotBackendSchema = z.object({
  backend: z.literal('copilot'),
  /** The `copilot` executable (default: `copilot` on PATH); relative paths resolve against the config's folder. */
  command: CommandSchema.optional(),
  /** Added after `--acp --stdio` and the flags the driver sets. */
  args: ArgsSchema.optional(),
  /** COPILOT_HOME of the default account (default: Copilot's own, `~/.copilot`). */
  home: z.string().min(1).optional(),
  /** E.g. your own model provider (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_TYPE`, `COPILOT_MODEL`): then no GitHub sign-in is needed. */
  env: EnvSchema.optional(),
});

const AcpBackendSchema = z.object({
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
});

export const HostConfigSchema = z.object({
  providers: z.partialRecord(AgentKindSchema, z.discriminatedUnion('backend', [ScriptBackendSchema, CodexBackendSchema, ClaudeBackendSchema, GeminiBackendSchema, CopilotBackendSchema, AcpBackendSchema])).optional(),
  policy: z.object({
    roots: z.array(z.string().min(1)).min(1).optional(),
    modeCeiling: RuntimeModeSchema.optional(),
    accountEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
    accountHomes: z.array(z.string().min(1)).optional(),
    /** Hidden forks (`chat.summarize`) running at once on this host and in one chat. */
    hiddenForks: z.object({ host: z.int().min(0).max(64).optional(), chat: z.int().min(0).max(16).optional() }).optional(),
  }).optional(),
  coalesceMs: z.int().min(0).max(10_000).optional(),
  /** Terminal sessions (issue 16). */
  terminal: z.object({
    /**
     * How long a Codex terminal approval waits for an answer from the app before Codex's own prompt
     * comes up in the terminal (Codex 0.171 asks there only once the host's hook let go); default 60.
     */
    codexApprovalWaitSeconds: z.int().min(1).max(580).optional(),
  }).optional(),
  /**
   * Device signatures on requests that act on this machine (issue 15), required by default: an
   * unsigned or unverifiable request is refused and nothing runs. `allowUnsigned` names request types
   * (only ones the registry says act on the machine: reads never need a signature) let through
   * unsigned, for a plain agent-contracts client that cannot sign; for those types whoever controls
   * the relay can then ask in anyone's name. `require: false` gives that up for every type.
   */
  signatures: z.object({
    require: z.boolean().default(true),
    allowUnsigned: z.array(z.string().refine(actsOnMachine, 'not a request type that acts on this machine (reads need no signature)')).default([]),
  }).optional(),
});
export type HostConfig = z.output<typeof HostConfigSchema>;

function actsOnMachine(type: string): boolean {
  return isRequestType(type) && REQUEST_RULES[type].actsOnMachine;
}

/** Whether this host requires signatures and which types it lets through unsigned; a config that says nothing requires them. */
export function signatureSettings(config: HostConfig): { require: boolean; allowUnsigned: RequestType[] } {
  return { require: config.signatures?.require ?? true, allowUnsigned: (config.signatures?.allowUnsigned ?? []) as RequestType[] };
}

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
      case 'acp': {
        const command = backend.command.includes('/') ? path.resolve(base, backend.command) : backend.command;
        out.push(commandLineProvider({
          kind: AgentKindSchema.parse(kind),
          name: backend.name,
          command,
          args: backend.args,
          env: backend.env,
          modes: backend.modes,
          slashCommands: backend.slashCommands,
          ...(backend.resumeCommand ? { resumeCommand: backend.resumeCommand } : {}),
          ...(backend.homeVariable ? { homeVariable: backend.homeVariable } : {}),
          clientVersion: version,
        }));
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

/** One agent as the banner and `host doctor` tell it: served or not, from where, and why. */
export interface AgentLine {
  kind: AgentKind;
  name: string;
  served: boolean;
  /** The executable (absolute when discovered), or the script file; null when there is none. */
  from: string | null;
  version: string | null;
  why: string;
}

/** What a host serves and why: its providers, and a line for every agent it knows. */
export interface AgentPlan {
  providers: Provider[];
  agents: AgentLine[];
  /** `config` (the config's own `providers`), `discovered`, or `demo` (nothing found that can chat). */
  source: 'config' | 'discovered' | 'demo';
  /** The config file read, if any. */
  configFile: string | null;
}

/**
 * The providers a host serves: its config's `providers` when it names them (nothing is looked up),
 * otherwise every CLI discovery finds that can chat, run from the executable it found, and the
 * scripted agent, called `Demo agent (scripted)`, only when there is none.
 */
export async function planAgents(config: HostConfig, base: string, version: string, options: { configFile?: string | null; discovery?: DiscoveryOptions; found?: DiscoveredAgent[] } = {}): Promise<AgentPlan> {
  const configFile = options.configFile ?? null;
  if (config.providers) {
    const providers = providersFrom(config, base, version);
    const named = Object.entries(config.providers).filter(([, backend]) => backend) as Array<[AgentKind, NonNullable<NonNullable<HostConfig['providers']>[AgentKind]>]>;
    const agents: AgentLine[] = providers.map((provider) => {
      const backend = named.find(([kind]) => kind === provider.kind)?.[1];
      const from = backend?.backend === 'script'
        ? (backend.script ? path.resolve(base, backend.script) : DEFAULT_SCRIPT_PATH)
        : backend && 'command' in backend && backend.command ? backend.command : CLI_PROFILES[provider.kind as keyof typeof CLI_PROFILES]?.command ?? null;
      return { kind: provider.kind, name: provider.info().name, served: true, from, version: null, why: `named in ${configFile ?? 'the config'} (backend ${backend?.backend ?? '?'})` };
    });
    for (const kind of CLI_KINDS) {
      if (!providers.some((p) => p.kind === kind)) agents.push({ kind, name: CLI_PROFILES[kind].name, served: false, from: null, version: null, why: `not in the providers of ${configFile ?? 'the config'}` });
    }
    return { providers, agents, source: 'config', configFile };
  }
  const found = options.found ?? await discoverAgents(options.discovery);
  const providers = found.filter((agent) => agent.served).map((agent) => discoveredProvider(agent, version));
  const agents: AgentLine[] = found.map((agent) => ({ kind: agent.kind, name: agent.name, served: agent.served, from: agent.executable, version: agent.version, why: agent.why }));
  if (providers.length > 0) return { providers, agents, source: 'discovered', configFile };
  const demo = new ScriptProvider({ kind: 'claude', script: loadScript(DEFAULT_SCRIPT_PATH), version, name: DEMO_AGENT_NAME });
  agents.unshift({ kind: 'claude', name: DEMO_AGENT_NAME, served: true, from: DEFAULT_SCRIPT_PATH, version, why: 'no agent CLI that can chat was found on PATH; replies are scripted, not a model' });
  return { providers: [demo], agents, source: 'demo', configFile };
}

function discoveredProvider(agent: DiscoveredAgent, version: string): Provider {
  const command = agent.executable!;
  switch (agent.kind) {
    case 'claude':
      return new ClaudeProvider({ command });
    case 'codex':
      return new CodexProvider({ command, clientVersion: version });
    case 'gemini':
      return geminiProvider({ command, clientVersion: version });
    case 'copilot':
      return new CopilotProvider({ command, clientVersion: version });
  }
}

/** The agents as lines a person reads: served ones first, then the rest with why not. */
export function formatAgents(plan: Pick<AgentPlan, 'agents'>, indent = '  '): string[] {
  const lines: string[] = [];
  for (const agent of [...plan.agents.filter((a) => a.served), ...plan.agents.filter((a) => !a.served)]) {
    const version = agent.version ? ` ${agent.version}` : '';
    lines.push(agent.served
      ? `${indent}serving  ${agent.name}${version}${agent.from ? ` from ${agent.from}` : ''}: ${agent.why}`
      : `${indent}not      ${agent.name}: ${agent.why}`);
  }
  return lines;
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
