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
import { DEFAULT_SCRIPT_PATH, DEMO_AGENT_NAME, loadScript, ScriptProvider } from './providers/script.ts';
import { discoverAgents, type DiscoveredAgent, type DiscoveryOptions } from './providers/discovery.ts';
import { CLI_KINDS, CLI_PROFILES, cliEntry, entryFor, type ProviderSection, ProviderSectionSchema } from './providers/registry.ts';

export const HostConfigSchema = z.object({
  /** Each kind's slot: a section of the provider registry's (registry.ts), chosen by its `backend`. */
  providers: z.partialRecord(AgentKindSchema, ProviderSectionSchema).optional(),
  policy: z
    .object({
      roots: z.array(z.string().min(1)).min(1).optional(),
      modeCeiling: RuntimeModeSchema.optional(),
      accountEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
      accountHomes: z.array(z.string().min(1)).optional(),
      /** Hidden forks (`chat.summarize`) running at once on this host and in one chat. */
      hiddenForks: z.object({ host: z.int().min(0).max(64).optional(), chat: z.int().min(0).max(16).optional() }).optional(),
    })
    .optional(),
  coalesceMs: z.int().min(0).max(10_000).optional(),
  /** Terminal sessions (issue 16). */
  terminal: z
    .object({
      /**
       * How long a Codex terminal approval waits for an answer from the app before Codex's own prompt
       * comes up in the terminal (Codex 0.171 asks there only once the host's hook let go); default 60.
       */
      codexApprovalWaitSeconds: z.int().min(1).max(580).optional(),
    })
    .optional(),
  /**
   * Device signatures on requests that act on this machine (issue 15), required by default: an
   * unsigned or unverifiable request is refused and nothing runs. `allowUnsigned` names request types
   * (only ones the registry says act on the machine: reads never need a signature) let through
   * unsigned, for a plain agent-contracts client that cannot sign; for those types whoever controls
   * the relay can then ask in anyone's name. `require: false` gives that up for every type.
   */
  signatures: z
    .object({
      require: z.boolean().default(true),
      allowUnsigned: z.array(z.string().refine(actsOnMachine, 'not a request type that acts on this machine (reads need no signature)')).default([]),
    })
    .optional(),
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

/** The providers a config names, in its order (default: `claude` from the shipped script), each made by its registry entry. */
export function providersFrom(config: HostConfig, base: string, version: string): Provider[] {
  const entries = Object.entries(config.providers ?? { claude: { backend: 'script' } });
  const out: Provider[] = [];
  for (const [kind, section] of entries) {
    if (!section) continue;
    const entry = entryFor(section.backend);
    if (entry.kind && entry.kind !== kind) throw new Error(`The ${section.backend} backend answers only as ${entry.kind}, not as ${kind}`);
    out.push(entry.create(section, AgentKindSchema.parse(kind), { base, version }));
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
export async function planAgents(
  config: HostConfig,
  base: string,
  version: string,
  options: { configFile?: string | null; discovery?: DiscoveryOptions; found?: DiscoveredAgent[] } = {},
): Promise<AgentPlan> {
  const configFile = options.configFile ?? null;
  if (config.providers) {
    const providers = providersFrom(config, base, version);
    const named = Object.entries(config.providers).filter(([, section]) => section) as Array<[AgentKind, ProviderSection]>;
    const agents: AgentLine[] = providers.map((provider) => {
      const section = named.find(([kind]) => kind === provider.kind)?.[1];
      const from = section ? entryFor(section.backend).from(section, base) : null;
      return {
        kind: provider.kind,
        name: provider.info().name,
        served: true,
        from,
        version: null,
        why: `named in ${configFile ?? 'the config'} (backend ${section?.backend ?? '?'})`,
      };
    });
    for (const kind of CLI_KINDS) {
      if (!providers.some((p) => p.kind === kind))
        agents.push({
          kind,
          name: CLI_PROFILES[kind].name,
          served: false,
          from: null,
          version: null,
          why: `not in the providers of ${configFile ?? 'the config'}`,
        });
    }
    return { providers, agents, source: 'config', configFile };
  }
  const found = options.found ?? (await discoverAgents(options.discovery));
  const providers = found.filter((agent) => agent.served).map((agent) => discoveredProvider(agent, version));
  const agents: AgentLine[] = found.map((agent) => ({
    kind: agent.kind,
    name: agent.name,
    served: agent.served,
    from: agent.executable,
    version: agent.version,
    why: agent.why,
  }));
  if (providers.length > 0) return { providers, agents, source: 'discovered', configFile };
  const demo = new ScriptProvider({ kind: 'claude', script: loadScript(DEFAULT_SCRIPT_PATH), version, name: DEMO_AGENT_NAME });
  agents.unshift({
    kind: 'claude',
    name: DEMO_AGENT_NAME,
    served: true,
    from: DEFAULT_SCRIPT_PATH,
    version,
    why: 'no agent CLI that can chat was found on PATH; replies are scripted, not a model',
  });
  return { providers: [demo], agents, source: 'demo', configFile };
}

function discoveredProvider(agent: DiscoveredAgent, version: string): Provider {
  const entry = cliEntry(agent.kind);
  if (!entry.discovered) throw new Error(`${agent.name} cannot be served from PATH alone`);
  return entry.discovered(agent.executable!, { version });
}

/** The agents as lines a person reads: served ones first, then the rest with why not. */
export function formatAgents(plan: Pick<AgentPlan, 'agents'>, indent = '  '): string[] {
  const lines: string[] = [];
  for (const agent of [...plan.agents.filter((a) => a.served), ...plan.agents.filter((a) => !a.served)]) {
    const version = agent.version ? ` ${agent.version}` : '';
    lines.push(
      agent.served
        ? `${indent}serving  ${agent.name}${version}${agent.from ? ` from ${agent.from}` : ''}: ${agent.why}`
        : `${indent}not      ${agent.name}: ${agent.why}`,
    );
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
