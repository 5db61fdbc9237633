// What the chat runtime needs from an agent backend, and nothing more.
//
// A provider is two parts, as the style guide asks: a pure mapper from the backend's own output
// (a scripted file here; Claude Code's stream-json or Codex's app-server JSON-RPC later) to the small
// provider-neutral vocabulary below, and a thin driver (`ProviderSession`) that owns the process and
// the turn. The runtime turns `ProviderOutput`s into chat items and events, so every backend gets the
// same thread semantics (streaming, requests, turn settling) for free.
//
// AgentKind on the wire is closed (claude|codex|gemini|copilot|apple): a backend always answers *as*
// one of those kinds; which backend serves a kind is the host's configuration.
import type {
  AgentKind,
  ChatAllowAlways,
  ChatAttachment,
  ChatBackgroundTask,
  ChatCheckpointDiff,
  ChatFileChange,
  ChatItem,
  ChatQuestion,
  ChatSkill,
  ChatSubagentItem,
  ChatSubagentSource,
  ChatSubagentUsage,
  ChatTurnLimit,
  ModelSelection,
  ProviderCapabilities,
  ProviderInfo,
  RuntimeMode,
  UsageWindow,
} from '../../contracts/index.ts';
import type { SessionIdShape } from './cli-values.ts';

/** One thing the backend did, in the order it did it. A turn ends with exactly one `turn-end`. */
export type ProviderOutput =
  /** The backend announced its own session (what a resume needs) and the model it really uses. */
  | {
      type: 'session';
      agentSessionId: string;
      model?: string | null;
      /** What the backend confirmed it runs in (its own word, and as a RuntimeMode). */
      permissionMode?: string;
      effectiveRuntimeMode?: RuntimeMode;
      slashCommands?: string[];
    }
  /** The backend's own title for the conversation (Codex thread names, ACP session info), as it sent it. */
  | { type: 'title'; title: string }
  /** The backend switched its permission mode mid-session (e.g. an approval set `acceptEdits`). */
  | { type: 'mode'; permissionMode: string; effectiveRuntimeMode?: RuntimeMode }
  /** Reply text; opens an assistant item on the first piece, appends after. `parentToolUseId`: a subagent wrote it. */
  | { type: 'text'; text: string; phase?: string; parentToolUseId?: string }
  /** The current reply is complete; the next `text` opens a new item. `parentToolUseId`: the reply of that subagent, one that outlived its turn. */
  | { type: 'text-end'; parentToolUseId?: string }
  | { type: 'thinking'; text: string }
  | { type: 'thinking-end' }
  | { type: 'tool-start'; toolUseId: string; name: string; input: unknown; description?: string; parentToolUseId?: string }
  /** Streamed output of a running tool. */
  | { type: 'tool-output'; toolUseId: string; text: string }
  | { type: 'tool-end'; toolUseId: string; output: string | null; error?: boolean; changes?: ChatFileChange[] }
  /** The backend waits for a person; answered through `ProviderSession.answerApproval`. */
  | {
      type: 'approval';
      requestId: string;
      toolUseId: string | null;
      toolName: string;
      input: unknown;
      description: string | null;
      canAllowAlways: boolean;
      allowAlways?: ChatAllowAlways;
    }
  /** The backend withdrew a request it asked (it settles as cancelled). */
  | { type: 'request-cancelled'; requestId: string }
  /** A subagent started (its `toolUseId` is what its work names as `parentToolUseId`). */
  | {
      type: 'subagent-start';
      toolUseId: string;
      description: string;
      subagentType: string | null;
      prompt: string | null;
      background: boolean;
      parentToolUseId?: string;
    }
  /** `native`: the CLI's own handle on it (Codex: the subagent's thread); `model`: the model it runs. */
  | {
      type: 'subagent-progress';
      toolUseId: string;
      lastTool?: string | null;
      usage?: ChatSubagentUsage | null;
      summary?: string | null;
      native?: { agentId?: string; threadId?: string };
      model?: string;
    }
  | { type: 'subagent-end'; toolUseId: string; status: 'done' | 'failed'; result?: string | null; summary?: string | null; usage?: ChatSubagentUsage | null }
  /** Everything the running turn changed so far, as the backend tracks it (replaces the last one). */
  | { type: 'turn-diff'; diff: ChatCheckpointDiff }
  /** The backend folded its context; the context meter starts again. */
  | { type: 'compaction'; preTokens: number | null }
  /** The backend asks; answered through `ProviderSession.answerQuestion`. */
  | { type: 'question'; requestId: string; questions: ChatQuestion[]; async?: boolean }
  /** The backend published a self-contained HTML page into the chat. */
  | { type: 'visual'; title: string; html: string; maxHeight?: number; heights?: Array<[number, number]>; layout?: 'inline' | 'wide' }
  /** Usage so far: `costUsd` is this turn's cost, the context numbers replace the chat's. */
  | { type: 'usage'; costUsd?: number; contextTokens?: number; contextWindow?: number | null }
  | { type: 'note'; level: 'info' | 'warning' | 'error'; text: string }
  /** The CLI reported its plan's limits (some windows; the others keep their last reading). */
  | { type: 'limits'; plan?: string | null; windows: UsageWindow[] }
  /** The commands and monitors the CLI keeps running in the background, whole (replaces the last list). */
  | { type: 'background'; tasks: ChatBackgroundTask[] }
  /** `limit`: the turn stopped on a usage limit or an overload. `aborted`: the backend stopped it itself. */
  // `outliving`: the subagents (by the call that opened them) the CLI keeps running past this turn;
  // their rows stay running, and their work (tools, their output, replies), progress and ends come
  // later through the context's `side`.
  | { type: 'turn-end'; state: 'done' | 'error' | 'aborted'; message?: string; limit?: ChatTurnLimit; outliving?: string[] };

export type ProviderEmit = (output: ProviderOutput) => void;

/** Everything a driver may know about the chat it serves. */
export interface ProviderChatContext {
  chatId: string;
  cwd: string;
  /** Already narrowed to the host's ceiling. */
  runtimeMode: RuntimeMode;
  selection: ModelSelection;
  account?: string;
  /** Set when the chat continues a backend session (resume). */
  agentSessionId: string | null;
  /** Continue `agentSessionId` under a new session id (a fork), leaving the original as it was. */
  forkSession?: boolean;
  /** The account's config folder (`~` allowed) and variables; absent = the CLI's default account. */
  accountHome?: string;
  accountEnv?: Record<string, string>;
  /**
   * Where outputs about the chat rather than a turn go (`background`, `limits`), whenever they come:
   * a background command ends after its turn did.
   */
  side?: ProviderEmit;
  /**
   * The CLI started a turn of its own in the chat's conversation, one nobody sent (Codex wakes its
   * thread when an agent reports back, with `multi_agent_v2`): the runtime opens it as a turn of
   * origin `agent` labelled `label`, and answers where its outputs go, as `startTurn`'s emit
   * (ending with one `turn-end`). Null when a turn runs already: the CLI's turn is then not shown.
   */
  agentTurn?(label: string): ProviderEmit | null;
}

export interface TurnInput {
  turnId: string;
  text: string;
  /** Stored files: each has its absolute `path` and `mime`. */
  attachments: ChatAttachment[];
  mentions?: string[];
  /** The image attachments with their bytes, for a backend that takes images inline (read when the turn starts). */
  images?: TurnImage[];
}

export interface TurnImage {
  attachmentId: string;
  path: string;
  mime: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
  /** Base64, no `data:` prefix. */
  data: string;
}

/** What `Provider.fork` is asked: copy a backend conversation as it stood after one of its turns. */
export interface ProviderForkRequest {
  /** The conversation to copy. */
  agentSessionId: string;
  cwd: string;
  /** The fork point: the turn's id and the backend's own marks on it, if it left any. */
  turnId: string;
  native?: { turnId?: string; lastUuid?: string };
  /** Whether that turn is the conversation's last: a backend that can only branch a whole session needs it. */
  latest: boolean;
  /** The account the fork runs under (absent: the CLI's default). */
  account?: string;
}

/** The driver for one chat: owns the backend process (if any) and the running turn. */
export interface ProviderSession {
  /** The backend process is alive (not "a turn is in flight"). */
  readonly running: boolean;
  /**
   * Starts a turn. Outputs go to `emit`, never synchronously from this call, and end with `turn-end`.
   * The runtime never starts a turn while another runs.
   */
  startTurn(input: TurnInput, emit: ProviderEmit): void;
  /** Hands a message to the running turn; false when it cannot (the runtime then queues it). */
  steer?(input: TurnInput): boolean;
  /**
   * Optional: folds the backend's context the way the backend itself does it (Claude Code's
   * `/compact`, Codex's `thread/compact/start`), as a turn of its own: outputs as for `startTurn`, a
   * `compaction` from the backend's own marker once it folded, and one `turn-end`. Only called between
   * turns, on a chat that has a backend session. Absent: `chat.compact` answers `chat-unsupported`.
   */
  compact?(turnId: string, emit: ProviderEmit): void;
  /** Stops the running turn; the runtime has already settled it, so no `turn-end` is needed. */
  interrupt(): void;
  /** Stops one of the background tasks it reported; false when its process is not running. Absent: it cannot. */
  stopTask?(taskId: string): boolean;
  /** Stops one of its running subagents by the call that opened it; null when the CLI named no way to; false when its process is not running. Absent: it cannot. */
  stopSubagent?(toolUseId: string): boolean | null;
  answerApproval(requestId: string, decision: 'allow' | 'allow-always' | 'deny', message?: string): void;
  /** `null` = the question was cancelled or dismissed without an answer. */
  answerQuestion(requestId: string, answers: Record<string, string> | null): void;
  /** Ends the backend (closing stdin, then signals); resolves once it exited. */
  kill(): Promise<void>;
}

/** A backend serving one AgentKind on this host. */
export interface Provider {
  readonly kind: AgentKind;
  /** What `provider.list` says about it; must parse as ProviderInfo. */
  info(): ProviderInfo;
  /** Whether `delivery: 'steer'` can reach a running turn. */
  readonly canSteer: boolean;
  /**
   * Resolves once `info()` knows what the backend is (its version, its catalog), probed without
   * blocking the host; `provider.list` waits for it. Absent = known from the start.
   */
  readonly probed?: Promise<void>;
  /**
   * The shape of this backend's own session ids: a `chat.create {resume}` that does not fit is
   * refused before it reaches the CLI (cli-values.ts). Absent: AGENT_SESSION_ID, the contract's.
   */
  readonly sessionIds?: SessionIdShape;
  /** Turns any model selection into one this backend serves (alias → slug, unknown → default, options dropped). */
  normalizeSelection(selection: ModelSelection | undefined): ModelSelection;
  open(context: ProviderChatContext): ProviderSession;
  /**
   * Optional: answers the backend session a fork continues. It may be a new copy, or the original's
   * id: until a chat's session id differs from every other chat's, its driver is opened with
   * `forkSession: true`, so the backend branches it on first use. Throws a ProtocolError
   * (`chat-unsupported`, `fork-failed`, `transcript-missing`) when it cannot. Absent: this backend
   * cannot fork, and `chat.fork`, `chat.summarize` and `chat.continueOn` answer `chat-unsupported`.
   */
  fork?(request: ProviderForkRequest): Promise<string>;
  /**
   * The files this backend's CLI reads on its own when handed `input` in `chat` (absolute paths, as
   * the CLI resolves them): the attachments it gets by path, and any its prompt processing expands
   * from the text (Claude Code's `@path`). The host checks each against its policy before the input
   * reaches the CLI (chats/file-reads.ts). Absent: the attachments' paths only.
   */
  filesRead?(input: Pick<TurnInput, 'text' | 'attachments' | 'mentions'>, chat: FileReadContext): string[];
  /** Refuses (a ProtocolError) input the CLI would act on by itself, outside its permission checks (Gemini's own commands). */
  admitInput?(input: Pick<TurnInput, 'text'>): void;
  /**
   * Where this CLI keeps its session files for an account (its config folder and variables, as
   * AccountBook.launchSettings answers them; undefined = the CLI's default account): the folders
   * `usage.summary` scans. Absent: this backend keeps no records the host can read usage from.
   */
  usageRoots?(account: AccountLaunch | undefined): string[];
  /**
   * Asks the CLI its plan's limits now, outside any turn (`usage.refreshLimits`). Absent: the CLI
   * reports them only as events while it runs.
   */
  readLimits?(account: AccountLaunch | undefined): Promise<LimitsAnswer>;
  /** Asks the CLI whether the account is signed in (`accounts.watchLogin`). Absent: it cannot be asked. */
  checkSignIn?(account: AccountLaunch | undefined): Promise<SignInState>;
  /**
   * A subagent's own work from the CLI's records (`chat.subagent`), for the row `subagent` of the chat
   * whose CLI session is `agentSessionId`: its items and where they were read, or null when the CLI
   * kept none. Absent: none kept.
   */
  subagentItems?(agentSessionId: string, subagent: ChatSubagentItem, account: AccountLaunch | undefined): Promise<SubagentWork | null>;
  /** The skills the CLI would load for a chat in `cwd` under `account` (`skills.list`). Absent: none. */
  listSkills?(cwd: string, account: AccountLaunch | undefined): Promise<ChatSkill[]>;
}

/** A subagent's work as `chat.subagent` pages it. */
export interface SubagentWork {
  items: ChatItem[];
  source: ChatSubagentSource;
}

export type LimitsAnswer =
  | { ok: true; reading: { plan?: string | null; windows: UsageWindow[] } }
  | { ok: false; reason: 'not-installed' | 'no-subscription' | 'failed'; message: string | null };

/** An account's config folder and variables, as a CLI is started with them. */
export interface AccountLaunch {
  home?: string;
  env?: Record<string, string>;
}

/** What deciding a message's file reads may know about its chat. */
export interface FileReadContext {
  cwd: string;
  /** The account's variables (absent: the CLI's default account). */
  accountEnv?: Readonly<Record<string, string>>;
}

/** What a CLI says of an account's sign-in. */
export interface SignInState {
  signedIn: boolean;
  email?: string | null;
  plan?: string | null;
  message?: string | null;
}

/** The agent kinds that are a CLI of their own (`apple` is a slot only an ACP agent or the script fills). */
export type CliKind = Exclude<AgentKind, 'apple'>;

export interface CliProfile {
  name: string;
  /** The executable looked up on PATH. */
  command: string;
  capabilities: ProviderCapabilities;
  /**
   * What a person pastes into a terminal to go on with a chat. The id is glued to its flag (or
   * after `--`), so even an id that is not what it should be stays that flag's value in a shell.
   */
  resumeCommand: string;
}
