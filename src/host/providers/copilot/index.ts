// The Copilot CLI backend: `copilot --acp --stdio` per chat, through the ACP adapter (../acp).
// This file is only what makes Copilot Copilot (as observed with @github/copilot 1.0.102):
//   - an account is a folder, `COPILOT_HOME`; with `COPILOT_PROVIDER_BASE_URL` (and `_TYPE`,
//     `_API_KEY`, `COPILOT_MODEL`, see `copilot help providers`) it runs on your own model provider
//     with no GitHub sign-in: those are the account's variables (or the config's `env`);
//   - its permission level is its launch flags, not an ACP session mode (modes.ts);
//   - permission requests are matched to tool calls by permissions.ts (some builds name a fixed
//     label instead of the call), and session.ts watches for tools it ran without asking;
//   - it compacts on its own `/compact`, sent as a prompt (session.ts).
import type { ModelInfo, ModelSelection } from '../../../contracts/index.ts';
import { ModelSlugSchema } from '../../../contracts/index.ts';
import { AcpProvider, type AcpAgentSpec } from '../acp/index.ts';
import { expandHome } from '../acp/driver.ts';
import type { Provider, ProviderChatContext, ProviderSession } from '../provider.ts';
import { COPILOT_PROFILE } from './profile.ts';
import { admitModelSlug, flagValue, UUID_SESSION_ID, type SessionIdShape } from '../cli-values.ts';
import { AGENT_MODE, AUTOPILOT_MODE, COPILOT_DEFAULT_MODEL, COPILOT_FLAGS } from './modes.ts';
import { matchPermission } from './permissions.ts';
import { CopilotSession } from './session.ts';
import { copilotToolResult } from './tool-result.ts';

export interface CopilotLaunch {
  /** The `copilot` executable (default: `copilot` on PATH). */
  command?: string;
  /** Added after the flags the driver sets. */
  args?: readonly string[];
  /** Merged over the host's environment (and under the account's): e.g. the `COPILOT_PROVIDER_*` of your own model provider. */
  env?: Readonly<Record<string, string>>;
  /** COPILOT_HOME of the default account; absent = Copilot's own (`~/.copilot`). */
  home?: string;
  clientVersion: string;
}

export { COPILOT_DEFAULT_MODEL };

const DEFAULT_ENTRY: ModelInfo = { slug: COPILOT_DEFAULT_MODEL, name: 'Copilot default (its own setting)', legacy: false, isDefault: true, options: [] };

export function copilotSpec(launch: CopilotLaunch): AcpAgentSpec {
  const command = launch.command ?? 'copilot';
  const profile = COPILOT_PROFILE;
  return {
    kind: 'copilot',
    name: profile.name,
    commandLine: ({ selection, runtimeMode, accountHome, accountEnv }) => {
      const home = accountHome ?? (launch.home ? expandHome(launch.home) : undefined);
      return {
        command,
        args: [
          '--acp',
          '--stdio',
          '--no-auto-update',
          ...COPILOT_FLAGS[runtimeMode].flags,
          ...(selection.model !== COPILOT_DEFAULT_MODEL ? [flagValue('--model', admitModelSlug('selection.model', selection.model))] : []),
          ...(launch.args ?? []),
        ],
        env: { ...process.env, ...launch.env, ...accountEnv, ...(home ? { COPILOT_HOME: home } : {}) },
      };
    },
    sessionIds: UUID_SESSION_ID,
    models: copilotModels(launch.env),
    defaultModel: COPILOT_DEFAULT_MODEL,
    capabilities: profile.capabilities,
    resumeCommand: profile.resumeCommand,
    modes: { supervised: AGENT_MODE, 'auto-accept-edits': AGENT_MODE, auto: AGENT_MODE, 'full-access': AGENT_MODE },
    // Only autopilot says anything about permissions; agent and plan run as launched (session.ts fills that in).
    runtimeModeOf: (modeId) => (modeId === AUTOPILOT_MODE ? 'full-access' : undefined),
    quirks: { matchPermission, toolResult: copilotToolResult },
  };
}

/** The default entry, and the model the config's own variables name (`COPILOT_MODEL`), when it is a slug. */
export function copilotModels(env: Readonly<Record<string, string>> | undefined): ModelInfo[] {
  const named = env?.COPILOT_MODEL?.toLowerCase();
  if (!named || !ModelSlugSchema.safeParse(named).success || named === COPILOT_DEFAULT_MODEL) return [DEFAULT_ENTRY];
  return [DEFAULT_ENTRY, { slug: named, name: env!.COPILOT_MODEL!, legacy: false, isDefault: false, options: [] }];
}

/** The Copilot provider: the ACP adapter with Copilot's spec, each chat's session watched by CopilotSession. */
export class CopilotProvider implements Provider {
  readonly kind = 'copilot' as const;
  readonly canSteer = false;
  readonly probed: Promise<void>;
  readonly sessionIds: SessionIdShape;
  private readonly acp: AcpProvider;
  private readonly env: Readonly<Record<string, string>>;

  constructor(launch: CopilotLaunch, options: { probe?: boolean } = {}) {
    this.env = launch.env ?? {};
    this.acp = new AcpProvider(copilotSpec(launch), { clientVersion: launch.clientVersion, ...options });
    this.probed = this.acp.probed;
    this.sessionIds = this.acp.sessionIds;
  }

  info() {
    return this.acp.info();
  }

  normalizeSelection(selection: ModelSelection | undefined): ModelSelection {
    return this.acp.normalizeSelection(selection);
  }

  open(context: ProviderChatContext): ProviderSession {
    return new CopilotSession(this.acp.open(context), context, this.env);
  }
}
