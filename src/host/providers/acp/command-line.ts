// Any ACP agent by its command line (issue 19): a host config entry `{ "backend": "acp", "name":
// "OpenCode", "command": "opencode", "args": ["acp"], "env": {…}, "modes": {…} }` served on the ACP
// adapter written once (this folder). Nothing here knows one agent from another; what differs is
// the config's, checked by cli-values.ts when the config is read.
//
// It takes one of the protocol's agent kinds as its slot (a chat's `provider` is that closed enum,
// which strict clients validate), and shows its own `name`.
//
// Runtime modes are the agent's ACP session modes as `modes` names them. A runtime mode the config
// does not name runs in the nearest narrower one it names, and with none named a chat stays in the
// agent's own starting mode: a host never guesses that some mode id of an unknown agent is safe.
//
// A message whose first character is `/` or `$` is refused unless `slashCommands` is on: agents run
// their own commands from such text (Gemini CLI's `/extensions install`, Qwen Code is its fork)
// outside their permission checks, and an unknown agent's command list is not the host's to vet.
import path from 'node:path';
import { MODE_ORDER, ProtocolError, type ModelInfo, type ProviderCapabilities, type RuntimeMode, type AgentKind } from '../../../contracts/index.ts';
import { AcpProvider, type AcpAgentSpec } from './index.ts';

export interface CommandLineAgent {
  kind: AgentKind;
  /** What people call it (`OpenCode`). */
  name: string;
  /** The executable: a name looked up on PATH, or a path (already resolved against the config's folder). */
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /** ACP session mode ids by runtime mode (any subset). */
  modes: Partial<Record<RuntimeMode, string>>;
  /** Messages starting with `/` or `$` go to the agent (its own commands). Default false. */
  slashCommands: boolean;
  /** What a person pastes into a terminal to go on with a chat (`{flags}`, `{id}`). */
  resumeCommand?: string;
  /** The variable naming the account's config folder, if the agent has one (`OPENCODE_CONFIG_DIR`). */
  homeVariable?: string;
  clientVersion: string;
}

/** What Tether can promise of an ACP agent it knows nothing else about. */
export const GENERIC_ACP_CAPABILITIES: ProviderCapabilities = {
  chat: true,
  terminal: false,
  hooks: false,
  streamsToolOutput: false,
  diffs: 'unified',
  attachments: true,
  mentions: false,
  // ACP's `reject_once` carries no words.
  denyReason: false,
  allowAlways: true,
  asyncQuestions: false,
  compaction: 'none',
  reportsCost: false,
  reportsContextWindow: false,
  reportsThinking: true,
  slashCommands: false,
};

/** The model a chat names until the agent's session offers its own list: the agent's own choice. */
export const AGENT_DEFAULT_MODEL = 'default';
const DEFAULT_MODEL: ModelInfo = { slug: AGENT_DEFAULT_MODEL, name: 'Its own default', legacy: false, isDefault: true, options: [] };

/** Every runtime mode mapped to a named one: itself, else the nearest narrower named, else '' (leave the agent's). */
export function fillModes(modes: Partial<Record<RuntimeMode, string>>): Record<RuntimeMode, string> {
  const out = {} as Record<RuntimeMode, string>;
  let narrower = '';
  for (const mode of MODE_ORDER) {
    narrower = modes[mode] ?? narrower;
    out[mode] = narrower;
  }
  return out;
}

export function commandLineSpec(agent: CommandLineAgent): AcpAgentSpec {
  const modes = fillModes(agent.modes);
  const byId = new Map<string, RuntimeMode>();
  // A mode id several runtime modes share reads as the narrowest of them.
  for (const mode of [...MODE_ORDER].reverse()) if (modes[mode]) byId.set(modes[mode], mode);
  return {
    kind: agent.kind,
    name: agent.name,
    commandLine: ({ accountHome, accountEnv }) => ({
      command: agent.command,
      args: [...agent.args],
      env: {
        ...process.env,
        ...agent.env,
        ...accountEnv,
        ...(accountHome && agent.homeVariable ? { [agent.homeVariable]: accountHome } : {}),
      },
    }),
    models: [DEFAULT_MODEL],
    defaultModel: AGENT_DEFAULT_MODEL,
    capabilities: GENERIC_ACP_CAPABILITIES,
    resumeCommand: agent.resumeCommand ?? `${path.basename(agent.command)} {flags} {id}`,
    modes,
    runtimeModeOf: (modeId) => byId.get(modeId),
    admitPrompt: agent.slashCommands
      ? undefined
      : (text) => {
          const first = text.trimStart()[0];
          if (first === '/' || first === '$') {
            throw new ProtocolError(
              'bad-request',
              `${agent.name} may run its own commands from a message starting with ${first}, outside its permission checks; this host does not pass such a message on (config: slashCommands)`,
            );
          }
        },
  };
}

export function commandLineProvider(agent: CommandLineAgent, options: { probe?: boolean } = {}): AcpProvider {
  return new AcpProvider(commandLineSpec(agent), { clientVersion: agent.clientVersion, ...options });
}
