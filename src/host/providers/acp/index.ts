// The ACP adapter: any agent that speaks the Agent Client Protocol (Gemini CLI, Copilot CLI, …)
// served as a Provider, written once.
//
// How a provider plugs in: write an `AcpAgentSpec` (spec.ts) and hand it to `AcpProvider`:
//
//   export const myAgentSpec = (launch: MyLaunch): AcpAgentSpec => ({
//     kind: 'copilot', name: 'Copilot CLI',
//     commandLine: ({ selection, runtimeMode, accountHome, accountEnv }) => ({
//       command: launch.command, args: ['--acp', '--stdio'],
//       env: { ...process.env, ...launch.env, ...accountEnv, ...(accountHome ? { COPILOT_HOME: accountHome } : {}) },
//     }),
//     models, defaultModel, capabilities, resumeCommand,
//     modes: { supervised: '…', 'auto-accept-edits': '…', auto: '…', 'full-access': '…' },  // ACP session mode ids
//     runtimeModeOf: (modeId) => …,
//     quirks: { matchPermission(request, calls) { … } },                          // only what differs
//   });
//   new AcpProvider(myAgentSpec(launch), { clientVersion })
//
// and register it in `src/host/config.ts` like the others (`gemini/index.ts` is a complete small
// example; `copilot/` wraps the adapter's session to watch it too). The spec is data plus a few
// hooks (`AcpQuirks`): which tool call a permission request is about (Copilot's requests name a
// fixed label, not the call), how a tool is named and shown and what a finished one returned, how a
// thought chunk reads, usage and the model a prompt result carries outside the protocol (Gemini's
// `_meta.quota`), what an error's limit is, whether the agent replays a loaded session after
// answering or destroys one loaded too soon; and `installedVersion` for a CLI slow to print its
// version. Everything else is the adapter's:
//   - connection.ts  the process (CliProcess: own process group, polite shutdown) and the SDK's
//                    client connection (`@agentclientprotocol/sdk`), `session/update`s taken raw in order;
//   - mapper.ts      pure: updates, permission requests (answered by option *kind*, never by an
//                    invented id), elicitations, prompt results → ProviderOutput; unknown → notes;
//   - driver.ts      one chat: initialize → session/load or session/new → set mode → prompt per
//                    turn; cancel answers every waiting permission `cancelled`;
//   - file-changes.ts ACP `diff` contents (before/after) → unified hunks.
// Runtime modes are ACP session modes (the spec's table); models are the spec's list until a
// session's answer names the agent's own (its unstable `models` field), which then replaces it.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import type { AgentKind, ModelInfo, ModelSelection, ProviderInfo } from '../../../contracts/index.ts';
import type { Provider, ProviderChatContext, ProviderSession, TurnInput } from '../provider.ts';
import { versionIn } from '../cli-version.ts';
import { AGENT_SESSION_ID, type SessionIdShape } from '../cli-values.ts';
import { AcpSession } from './driver.ts';
import type { AcpAgentSpec } from './spec.ts';

export type { AcpAgentSpec, AcpCommandLine, AcpLaunchContext, AcpQuirks, AcpToolCallView } from './spec.ts';
export { AcpMapper, describeTool } from './mapper.ts';
export { AcpSession } from './driver.ts';
export { AcpPeer } from './connection.ts';

export interface AcpProviderOptions {
  /** Tether's version, sent as `clientInfo`. */
  clientVersion: string;
  /** Skip the `--version` probe (tests that only map). */
  probe?: boolean;
}

export class AcpProvider implements Provider {
  readonly kind: AgentKind;
  // A prompt that is running cannot take more input in ACP; a message waits for the turn.
  readonly canSteer = false;
  readonly probed: Promise<void>;
  readonly sessionIds: SessionIdShape;
  private readonly spec: AcpAgentSpec;
  private readonly options: AcpProviderOptions;
  private found: { installed: boolean; version: string | null } = { installed: false, version: null };
  private models: ModelInfo[];
  /** When each session this host made was created (see AcpQuirks.loadNeedsNewMinute). */
  private readonly created = new Map<string, number>();

  constructor(spec: AcpAgentSpec, options: AcpProviderOptions) {
    this.spec = spec;
    this.kind = spec.kind;
    this.sessionIds = spec.sessionIds ?? AGENT_SESSION_ID;
    this.options = options;
    this.models = spec.models;
    this.probed = options.probe === false ? Promise.resolve() : this.probe();
  }

  info(): ProviderInfo {
    const { installed, version } = this.found;
    return {
      kind: this.spec.kind,
      name: this.spec.name,
      installed,
      version,
      models: installed ? this.models.map((m) => ({ ...m, isDefault: m.slug === this.spec.defaultModel })) : [],
      defaultModel: installed ? this.spec.defaultModel : null,
      capabilities: this.spec.capabilities,
      resumeCommand: this.spec.resumeCommand,
    };
  }

  normalizeSelection(selection: ModelSelection | undefined): ModelSelection {
    const asked = selection?.model.toLowerCase();
    const model = this.models.find((m) => m.slug === asked) ?? this.spec.models.find((m) => m.slug === asked);
    return { model: model?.slug ?? this.spec.defaultModel, options: {} };
  }

  admitInput(input: Pick<TurnInput, 'text'>): void {
    this.spec.admitPrompt?.(input.text);
  }

  open(context: ProviderChatContext): ProviderSession {
    return new AcpSession(this.spec, context, {
      clientVersion: this.options.clientVersion,
      onModels: (models) => this.learnModels(models),
      created: this.created,
    });
  }

  /** The agent's own list replaces the spec's, keeping the spec's default first when the agent lacks it. */
  private learnModels(models: ModelInfo[]): void {
    const fallback = this.spec.models.find((m) => m.slug === this.spec.defaultModel);
    const hasDefault = models.some((m) => m.slug === this.spec.defaultModel);
    this.models = !hasDefault && fallback ? [fallback, ...models] : models;
  }

  /** Asks the CLI its version once; a CLI that does not answer is not installed. */
  private async probe(): Promise<void> {
    const commandLine = this.spec.commandLine({ selection: { model: this.spec.defaultModel, options: {} }, runtimeMode: 'supervised' });
    try {
      const known = await this.spec.installedVersion?.(commandLine).catch(() => null);
      if (known) {
        this.found = { installed: true, version: known };
        return;
      }
      const { stdout } = await promisify(execFile)(commandLine.command, [...(this.spec.versionArgs ?? ['--version'])], {
        encoding: 'utf8',
        timeout: 20_000,
        env: commandLine.env,
        cwd: tmpdir(),
      });
      this.found = { installed: true, version: versionIn(stdout) };
    } catch {
      this.found = { installed: false, version: null };
    }
  }
}
