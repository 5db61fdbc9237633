// AcpAgentSpec: everything that makes one ACP agent different from another, as data and a few
// hooks. The adapter (connection, mapper, driver, provider) is written once against this; a new
// agent is a new spec, never a copy of the adapter.
import type { AgentKind, ChatFileChange, ChatTurnLimit, ModelInfo, ModelSelection, ProviderCapabilities, RuntimeMode } from '../../../contracts/index.ts';
import type { PromptResponse, RequestPermissionRequest, ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import type { ProviderOutput } from '../provider.ts';
import type { SessionIdShape } from '../cli-values.ts';

/** What a spec needs to build one chat's command line. */
export interface AcpLaunchContext {
  selection: ModelSelection;
  runtimeMode: RuntimeMode;
  /** The account's config folder (`~` already expanded); absent = the CLI's default account. */
  accountHome?: string;
  accountEnv?: Record<string, string>;
}

/** How to start the agent: the whole child environment, not merged with anything later. */
export interface AcpCommandLine {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** A tool call as the mapper has assembled it from `tool_call`, `tool_call_update` and permission requests. */
export interface AcpToolCallView {
  toolCallId: string;
  title: string;
  kind: ToolKind | string | null;
  status: string | null;
  content: ToolCallContent[];
  locations: ToolCallLocation[];
  rawInput: unknown;
  rawOutput: unknown;
  /** The tool-start output went out (an approval or an update showed it). */
  started: boolean;
  /** A terminal state went out. */
  ended: boolean;
}

/** The agent-specific readings of the protocol. Every hook is optional; absent = the ACP default. */
export interface AcpQuirks {
  /**
   * Which tool call a permission request is about. Default: its `toolCall.toolCallId` (and a call
   * the agent never announced is shown from the request itself). Return a known id to attach the
   * approval to that call, `null` to show the approval without a tool (e.g. a request whose id is a
   * fixed label that matches nothing safely), or `undefined` for the default.
   */
  matchPermission?(request: RequestPermissionRequest, calls: ReadonlyMap<string, AcpToolCallView>): string | null | undefined;
  /** A tool's display name and input. Default: by the ACP tool kind, Claude-shaped (`Bash`, `Edit`, …). */
  describeTool?(call: AcpToolCallView): { name: string; input: Record<string, unknown> } | undefined;
  /** One `agent_thought_chunk`'s text as shown (`first`: the first of this thought). */
  thought?(text: string, first: boolean): string;
  /** Usage a prompt result carries outside the protocol (Gemini: `_meta.quota`). */
  promptUsage?(response: PromptResponse): ProviderOutput | null;
  /** The model that really answered, when a prompt result says (Gemini's `auto` routes each turn). */
  modelUsed?(response: PromptResponse): string | null;
  /**
   * A finished tool's output and file changes. Default: its text content (else its raw output) and
   * its `diff` contents as hunks (Copilot's `diff` holds only the edited snippet; its raw output
   * has the whole git diff).
   */
  toolResult?(call: AcpToolCallView): { output: string | null; changes: ChatFileChange[] } | undefined;
  /** A failed prompt's limit. Default: JSON-RPC code 429 is a usage limit. */
  limitOf?(error: { code: number; message: string; data?: unknown }): ChatTurnLimit | undefined;
  /**
   * The agent goes on replaying a loaded session's history after it answered `session/load`
   * (Gemini 0.61): the driver waits for the replay to go quiet before it prompts.
   */
  replaysAfterLoad?: boolean;
  /**
   * Loading a session in the UTC minute it was created in destroys it (Gemini 0.61 names its
   * transcript by the minute and session id, and a load first writes a fresh transcript under that
   * name): the driver waits for the next minute before it loads a session this host made that recently.
   */
  loadNeedsNewMinute?: boolean;
}

export interface AcpAgentSpec {
  kind: AgentKind;
  /** What people call it (`Gemini CLI`). */
  name: string;
  /**
   * The command line for one chat (the version probe runs its command with the default context).
   * A client's value in it (the model) is checked with cli-values.ts and given as `--flag=value`;
   * one that does not fit throws `bad-request`, and nothing is started.
   */
  commandLine(context: AcpLaunchContext): AcpCommandLine;
  /** The shape of the agent's session ids (what `session/load` is given). Absent: AGENT_SESSION_ID. */
  sessionIds?: SessionIdShape;
  /** The probe's arguments: whatever the command needs first (e.g. a script when it is node), then `--version`. */
  versionArgs?: readonly string[];
  /**
   * The installed version read without running the CLI (e.g. from its npm package), or null to ask
   * `--version`. For CLIs that take seconds to start: `provider.list` waits for the probe.
   */
  installedVersion?(commandLine: AcpCommandLine): Promise<string | null>;
  /** The models offered before the agent named its own (a session's `models` replaces them). */
  models: ModelInfo[];
  defaultModel: string;
  capabilities: ProviderCapabilities;
  /** `provider.list`'s resume template (`{flags}`, `{id}`). */
  resumeCommand: string;
  /** The ACP session mode for each runtime mode, narrowest first when the agent lacks one. */
  modes: Record<RuntimeMode, string>;
  /** What an ACP mode id the agent reports means as a runtime mode (undefined = none of ours). */
  runtimeModeOf(modeId: string): RuntimeMode | undefined;
  quirks?: AcpQuirks;
  /** Refuses (a ProtocolError) a prompt the agent would act on by itself, outside its permission checks. */
  admitPrompt?(text: string): void;
}
