// Claude Code's stream-json, mapped onto the provider vocabulary. Pure: one stdout line in, the
// outputs it means (and, for a control request the host cannot serve, the reply it needs) out; the
// replies to approvals and questions are encoded here too, from what the request asked. The driver
// (driver.ts) owns the process and only moves lines.
//
// What it relies on, as seen from `claude -p --input-format stream-json --output-format stream-json
// --verbose --include-partial-messages --permission-prompt-tool stdio` (2.1.197):
// - `stream_event`s carry the raw API stream; text and thinking are taken from their deltas. The
//   `assistant` lines that follow repeat each block whole (one block a line, same `message.id`), so
//   their text is used only for a message that did not stream (a subagent's, or a CLI run without
//   partial messages). Tool calls are taken from the `assistant` lines: their input is whole there.
// - `Task` (the API calls it `Agent`) starts a subagent; everything it does carries its tool_use id
//   as `parent_tool_use_id`; `system/task_*` report its progress and end.
// - `result` ends the turn. `total_cost_usd` counts from the start of the process, so a turn's cost
//   is the difference to the previous result. An API error arrives as a synthetic `assistant` line
//   with `error` set, then a `result` with `is_error` and `api_error_status` (429, 529).
// - A permission prompt is `control_request can_use_tool`; `AskUserQuestion` asks its questions the
//   same way and takes the answers back in `updatedInput.answers`, keyed by question text.
// Unknown types and lines that are not JSON become one note each kind, never an exception.
import type {
  ChatAllowAlways,
  ChatBackgroundTask,
  ChatFileChange,
  ChatQuestion,
  ChatSubagentUsage,
  ChatTurnLimit,
  RuntimeMode,
} from '../../../contracts/index.ts';
import type { ProviderOutput } from '../provider.ts';
import { windowOf } from '../../usage/limits.ts';

/** Claude Code's `rateLimitType`s: how long each window is and what the app calls it. */
const CLAUDE_WINDOWS: Record<string, { minutes: number | null; label: string }> = {
  five_hour: { minutes: 300, label: '5-hour limit' },
  seven_day: { minutes: 7 * 24 * 60, label: 'Weekly limit' },
  seven_day_opus: { minutes: 7 * 24 * 60, label: 'Weekly limit (Opus)' },
  seven_day_sonnet: { minutes: 7 * 24 * 60, label: 'Weekly limit (Sonnet)' },
  overage: { minutes: null, label: 'Extra usage' },
};

/** `--permission-mode` per runtime mode (the reference's table). */
export const PERMISSION_MODES: Record<RuntimeMode, string> = {
  supervised: 'default',
  'auto-accept-edits': 'acceptEdits',
  auto: 'auto',
  'full-access': 'bypassPermissions',
};

/** What a permission mode the CLI reports means as a runtime mode; modes narrower than `default` count as supervised. */
export function runtimeModeOf(permissionMode: string): RuntimeMode | undefined {
  switch (permissionMode) {
    case 'default':
    case 'plan':
    case 'dontAsk':
    case 'manual':
      return 'supervised';
    case 'acceptEdits':
      return 'auto-accept-edits';
    case 'auto':
      return 'auto';
    case 'bypassPermissions':
      return 'full-access';
    default:
      return undefined;
  }
}

/** The tool that starts a subagent, under both of its names. */
const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);
const QUESTION_TOOL = 'AskUserQuestion';

/** `system` subtypes that carry nothing a thread shows. */
const QUIET_SYSTEM = new Set([
  'thinking_tokens',
  'task_started',
  'task_updated',
  'hook_started',
  'hook_progress',
  'hook_response',
  'session_state_changed',
  'background_tasks_changed',
  'files_persisted',
  'mirror_error',
]);
/** Top-level types that carry nothing a thread shows. */
/** A background task's statuses once it stopped running. */
const ENDED_TASK = new Set(['completed', 'failed', 'killed', 'stopped']);

const QUIET_TYPES = new Set([
  'keep_alive',
  'prompt_suggestion',
  'auth_status',
  'tool_progress',
  'conversation_reset',
  'control_response',
  'streamlined_text',
  'streamlined_tool_use_summary',
]);

export interface MappedLine {
  outputs: ProviderOutput[];
  /** A line the driver writes back at once (a control request this host does not serve). */
  reply?: Record<string, unknown>;
}

interface PendingRequest {
  toolName: string;
  input: Record<string, unknown>;
  suggestions: unknown[];
  /** For a question: the question texts by the ids given to clients. */
  questions?: Map<string, string>;
}

type Json = Record<string, unknown>;

export class ClaudeStreamMapper {
  private readonly pending = new Map<string, PendingRequest>();
  /** tool_use id → its tool name (results name only the id). */
  private readonly tools = new Map<string, string>();
  /** Bash tool_use id → its command (a background task names only the tool id). */
  private readonly commands = new Map<string, string>();
  /** The background tasks running now, by task id. */
  private readonly background = new Map<string, ChatBackgroundTask>();
  /** A running subagent's task id by its Task call's id (`task_started` of type `local_agent`): what `stop_task` names. */
  private readonly agentTasks = new Map<string, string>();
  /** Messages whose text came as stream deltas: their whole `assistant` copies are not shown again. */
  private readonly streamed = new Set<string>();
  /** The kind of each open streamed block, by index. */
  private readonly blocks = new Map<number, string>();
  private readonly unknown = new Set<string>();
  private costSoFar = 0;
  private model: string | null = null;
  private contextBase: number | null = null;
  private contextOutput = 0;
  private limit: ChatTurnLimit | null = null;

  /** Maps one stdout line. */
  map(line: string): MappedLine {
    const trimmed = line.trim();
    if (trimmed === '') return { outputs: [] };
    let message: unknown;
    try {
      message = JSON.parse(trimmed);
    } catch {
      return { outputs: [note('warning', `Claude Code wrote a line that is not JSON: ${clip(trimmed, 200)}`)] };
    }
    if (!isObject(message) || typeof message.type !== 'string') {
      return { outputs: [note('warning', `Claude Code wrote a message without a type: ${clip(trimmed, 200)}`)] };
    }
    switch (message.type) {
      case 'system':
        return { outputs: this.system(message) };
      case 'stream_event':
        return { outputs: this.streamEvent(message) };
      case 'assistant':
        return { outputs: this.assistant(message) };
      case 'user':
        return { outputs: this.user(message) };
      case 'result':
        return { outputs: this.result(message) };
      case 'rate_limit_event':
        return { outputs: this.rateLimit(message) };
      case 'control_request':
        return this.controlRequest(message);
      case 'control_cancel_request': {
        const requestId = str(message.request_id);
        if (!requestId || !this.pending.delete(requestId)) return { outputs: [] };
        return { outputs: [{ type: 'request-cancelled', requestId }] };
      }
      default:
        if (QUIET_TYPES.has(message.type)) return { outputs: [] };
        return { outputs: this.unknownKind(message.type) };
    }
  }

  // -------------------------------------------------------------------------------------------
  // Replies (host → CLI)

  /** The control_response for an approval; null when nothing waits under that id. */
  approvalReply(requestId: string, decision: 'allow' | 'allow-always' | 'deny', message?: string): Json | null {
    const request = this.take(requestId);
    if (!request) return null;
    if (decision === 'deny') return deny(requestId, message?.trim() || 'The user declined this.', false);
    return controlSuccess(requestId, {
      behavior: 'allow',
      updatedInput: request.input,
      ...(decision === 'allow-always' && request.suggestions.length > 0 ? { updatedPermissions: request.suggestions } : {}),
    });
  }

  /** The control_response for a question (`null` answers: dismissed, so the tool is refused). */
  questionReply(requestId: string, answers: Record<string, string> | null): Json | null {
    const request = this.take(requestId);
    if (!request) return null;
    if (!answers) return deny(requestId, 'The user dismissed the question without answering.', false);
    const byText: Record<string, string> = {};
    for (const [id, text] of request.questions ?? []) if (answers[id] !== undefined) byText[text] = answers[id];
    return controlSuccess(requestId, { behavior: 'allow', updatedInput: { ...request.input, answers: byText } });
  }

  /** Refusals for everything still waiting, so an interrupted turn leaves nothing open in the CLI. */
  cancelAll(): Json[] {
    const out = [...this.pending.keys()].map((requestId) => deny(requestId, 'The turn was stopped.', true));
    this.pending.clear();
    return out;
  }

  private take(requestId: string): PendingRequest | undefined {
    const request = this.pending.get(requestId);
    this.pending.delete(requestId);
    return request;
  }

  // -------------------------------------------------------------------------------------------
  // CLI → host

  private system(message: Json): ProviderOutput[] {
    const subtype = str(message.subtype) ?? '';
    switch (subtype) {
      case 'init': {
        this.model = str(message.model);
        const permissionMode = str(message.permissionMode);
        const sessionId = str(message.session_id);
        if (!sessionId) return [note('warning', 'Claude Code started without a session id')];
        return [
          {
            type: 'session',
            agentSessionId: sessionId,
            model: this.model,
            ...(permissionMode ? { permissionMode, effectiveRuntimeMode: runtimeModeOf(permissionMode) } : {}),
            ...(Array.isArray(message.slash_commands) ? { slashCommands: message.slash_commands.filter((c): c is string => typeof c === 'string') } : {}),
          },
        ];
      }
      case 'status': {
        const out: ProviderOutput[] = [];
        const permissionMode = str(message.permissionMode);
        if (permissionMode) out.push({ type: 'mode', permissionMode, effectiveRuntimeMode: runtimeModeOf(permissionMode) });
        if (message.compact_result === 'failed') out.push(note('warning', `Compaction failed: ${str(message.compact_error) ?? 'no reason given'}`));
        return out;
      }
      case 'compact_boundary': {
        const meta = isObject(message.compact_metadata) ? message.compact_metadata : {};
        this.contextBase = 0;
        this.contextOutput = 0;
        return [{ type: 'compaction', preTokens: count(meta.pre_tokens) }];
      }
      case 'task_progress': {
        const toolUseId = str(message.tool_use_id);
        if (!toolUseId) return [];
        return [{ type: 'subagent-progress', toolUseId, lastTool: str(message.last_tool_name), usage: subagentUsage(message.usage) }];
      }
      case 'task_started': {
        // A shell command or a monitor the CLI runs in the background (`local_bash`; agents are subagents).
        const taskId = str(message.task_id);
        const type = str(message.task_type) ?? '';
        const toolUseId = str(message.tool_use_id);
        if (taskId && toolUseId && type === 'local_agent') this.agentTasks.set(toolUseId, taskId);
        if (!taskId || (type !== 'local_bash' && !type.includes('monitor'))) return [];
        this.background.set(taskId, {
          id: taskId,
          kind: type === 'local_bash' ? 'shell' : 'monitor',
          description: str(message.description) ?? '',
          command: (toolUseId && this.commands.get(toolUseId)) ?? null,
          startedAt: Date.now(),
        });
        return [this.backgroundList()];
      }
      case 'task_updated': {
        const taskId = str(message.task_id);
        const patch = isObject(message.patch) ? message.patch : {};
        if (!taskId || !this.background.has(taskId) || !ENDED_TASK.has(String(patch.status))) return [];
        this.background.delete(taskId);
        return [this.backgroundList()];
      }
      case 'task_notification': {
        const taskId = str(message.task_id);
        if (taskId && this.background.delete(taskId)) return [this.backgroundList()];
        const toolUseId = str(message.tool_use_id);
        if (toolUseId) this.agentTasks.delete(toolUseId);
        if (!toolUseId || !SUBAGENT_TOOLS.has(this.tools.get(toolUseId) ?? 'Task')) return [];
        return [
          {
            type: 'subagent-end',
            toolUseId,
            status: message.status === 'completed' ? 'done' : 'failed',
            summary: str(message.summary),
            usage: subagentUsage(message.usage),
          },
        ];
      }
      case 'api_retry': {
        const status = typeof message.error_status === 'number' ? ` ${message.error_status}` : '';
        const attempt =
          typeof message.attempt === 'number'
            ? ` (attempt ${message.attempt}${typeof message.max_retries === 'number' ? ` of ${message.max_retries}` : ''})`
            : '';
        return [note('warning', `The model API answered${status}${message.error ? ` (${String(message.error)})` : ''}; retrying${attempt}.`)];
      }
      case 'local_command_output': {
        const text = str(message.content);
        return text ? [note('info', text)] : [];
      }
      default:
        if (QUIET_SYSTEM.has(subtype)) return [];
        return this.unknownKind(`system/${subtype}`);
    }
  }

  private streamEvent(message: Json): ProviderOutput[] {
    const event = isObject(message.event) ? message.event : null;
    if (!event) return [];
    const parent = str(message.parent_tool_use_id);
    const index = typeof event.index === 'number' ? event.index : -1;
    switch (event.type) {
      case 'message_start': {
        const start = isObject(event.message) ? event.message : {};
        const id = str(start.id);
        if (id) this.streamed.add(id);
        this.blocks.clear();
        if (!parent) this.noteContext(start.usage);
        return [];
      }
      case 'content_block_start': {
        const block = isObject(event.content_block) ? event.content_block : {};
        this.blocks.set(index, str(block.type) ?? 'other');
        return [];
      }
      case 'content_block_delta': {
        const delta = isObject(event.delta) ? event.delta : {};
        if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') {
          return [{ type: 'text', text: delta.text, ...(parent ? { parentToolUseId: parent } : {}) }];
        }
        if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking !== '' && !parent) {
          return [{ type: 'thinking', text: delta.thinking }];
        }
        return [];
      }
      case 'content_block_stop': {
        const kind = this.blocks.get(index);
        this.blocks.delete(index);
        if (kind === 'text') return [{ type: 'text-end' }];
        if (kind === 'thinking' && !parent) return [{ type: 'thinking-end' }];
        return [];
      }
      case 'message_delta': {
        const usage = isObject(event.usage) ? event.usage : {};
        if (!parent && typeof usage.output_tokens === 'number') this.contextOutput = usage.output_tokens;
        return [];
      }
      default:
        return [];
    }
  }

  private assistant(message: Json): ProviderOutput[] {
    const body = isObject(message.message) ? message.message : {};
    const parent = str(message.parent_tool_use_id);
    const error = str(message.error);
    if (error) {
      // The API refused; the `result` that follows ends the turn with this, so no reply is shown.
      if (error === 'rate_limit') this.limit ??= { kind: 'usage' };
      return [];
    }
    const id = str(body.id) ?? '';
    const streamed = this.streamed.has(id);
    if (!parent && !streamed) this.noteContext(body.usage);
    const out: ProviderOutput[] = [];
    for (const block of Array.isArray(body.content) ? body.content : []) {
      if (!isObject(block)) continue;
      if (block.type === 'text' && !streamed && typeof block.text === 'string' && block.text !== '') {
        out.push({ type: 'text', text: block.text, ...(parent ? { parentToolUseId: parent } : {}) }, { type: 'text-end' });
      } else if (block.type === 'thinking' && !streamed && !parent && typeof block.thinking === 'string' && block.thinking !== '') {
        out.push({ type: 'thinking', text: block.thinking }, { type: 'thinking-end' });
      } else if (block.type === 'tool_use') {
        out.push(...this.toolUse(block, parent));
      }
    }
    return out;
  }

  private toolUse(block: Json, parent: string | null): ProviderOutput[] {
    const toolUseId = str(block.id);
    const name = str(block.name);
    if (!toolUseId || !name) return [];
    this.tools.set(toolUseId, name);
    const input = isObject(block.input) ? block.input : {};
    if (typeof input.command === 'string' && input.run_in_background === true) this.commands.set(toolUseId, input.command);
    const under = parent ? { parentToolUseId: parent } : {};
    if (SUBAGENT_TOOLS.has(name)) {
      return [
        {
          type: 'subagent-start',
          toolUseId,
          description: str(input.description) ?? 'Subagent',
          subagentType: str(input.subagent_type),
          prompt: str(input.prompt),
          background: input.run_in_background === true,
          ...under,
        },
      ];
    }
    const description = str(input.description);
    return [{ type: 'tool-start', toolUseId, name, input: block.input ?? {}, ...(description ? { description } : {}), ...under }];
  }

  private user(message: Json): ProviderOutput[] {
    const body = isObject(message.message) ? message.message : {};
    if (!Array.isArray(body.content)) return [];
    const structured = isObject(message.tool_use_result) ? message.tool_use_result : null;
    const out: ProviderOutput[] = [];
    for (const block of body.content) {
      if (!isObject(block) || block.type !== 'tool_result') continue;
      const toolUseId = str(block.tool_use_id);
      if (!toolUseId) continue;
      const name = this.tools.get(toolUseId);
      const error = block.is_error === true;
      if (name && SUBAGENT_TOOLS.has(name)) {
        // Its report is the first text; the CLI appends a note for the model (agent id, usage).
        const report = structured && Array.isArray(structured.content) ? textOf(structured.content) : firstText(block.content);
        out.push({ type: 'subagent-end', toolUseId, status: error ? 'failed' : 'done', result: report });
        continue;
      }
      const changes = error || !structured ? [] : fileChanges(structured);
      out.push({ type: 'tool-end', toolUseId, output: textOf(block.content), error, ...(changes.length ? { changes } : {}) });
    }
    return out;
  }

  private result(message: Json): ProviderOutput[] {
    const total = typeof message.total_cost_usd === 'number' ? message.total_cost_usd : this.costSoFar;
    const costUsd = Math.max(0, total - this.costSoFar);
    this.costSoFar = Math.max(this.costSoFar, total);
    const out: ProviderOutput[] = [
      {
        type: 'usage',
        costUsd,
        ...(this.contextBase !== null ? { contextTokens: this.contextBase + this.contextOutput } : {}),
        ...this.contextWindow(message.modelUsage),
      },
    ];
    const terminal = str(message.terminal_reason) ?? '';
    const status = typeof message.api_error_status === 'number' ? message.api_error_status : null;
    let limit = this.limit;
    if (status === 429) limit ??= { kind: 'usage' };
    if (status === 529) limit = { kind: 'overload' };
    this.limit = null;
    this.streamed.clear();
    if (terminal.startsWith('aborted')) {
      out.push({ type: 'turn-end', state: 'aborted' });
    } else if (message.is_error === true || (typeof message.subtype === 'string' && message.subtype !== 'success')) {
      const errors = Array.isArray(message.errors) ? message.errors.filter((e): e is string => typeof e === 'string' && !e.startsWith('[ede_diagnostic]')) : [];
      const text = str(message.result) ?? (errors.join('\n') || `Claude Code ended the turn with ${String(message.subtype ?? 'an error')}`);
      out.push({ type: 'turn-end', state: 'error', message: text, ...(limit ? { limit } : {}) });
    } else {
      out.push({ type: 'turn-end', state: 'done' });
    }
    return out;
  }

  /**
   * Claude Code reports a subscription's windows as `rate_limit_event`s (a claude.ai sign-in only:
   * with an API key, 2.1.197 sends none, even when the replies carry `anthropic-ratelimit-unified-*`
   * headers, so these are tested from recorded frames). A window is reported when its use is known:
   * `utilization`, or `rejected` (all of it).
   */
  private rateLimit(message: Json): ProviderOutput[] {
    const info = isObject(message.rate_limit_info) ? message.rate_limit_info : {};
    const resetsAt = typeof info.resetsAt === 'number' ? info.resetsAt * 1000 : undefined;
    const type = str(info.rateLimitType);
    const window = type?.replaceAll('_', ' ') ?? 'usage';
    const out: ProviderOutput[] = [];
    const used = typeof info.utilization === 'number' && Number.isFinite(info.utilization) ? info.utilization : info.status === 'rejected' ? 1 : null;
    const known = type ? CLAUDE_WINDOWS[type] : undefined;
    if (used !== null && type) {
      out.push({
        type: 'limits',
        windows: [windowOf(type, known?.minutes ?? null, used, resetsAt ?? null, known?.label ?? `${window[0].toUpperCase()}${window.slice(1)} limit`)],
      });
    }
    if (info.status === 'rejected') {
      this.limit = { kind: 'usage', ...(resetsAt !== undefined ? { resetsAt } : {}) };
      return out;
    }
    if (info.status === 'allowed_warning') {
      const share = used !== null ? `${Math.round(used * 100)}% of ` : 'Most of ';
      const when = resetsAt !== undefined ? `; it resets at ${new Date(resetsAt).toISOString()}` : '';
      out.push(note('warning', `${share}the ${window} limit is used${when}.`));
    }
    return out;
  }

  /** The task id Claude Code gave a subagent that still runs, or null when it named none (or it ended). */
  agentTask(toolUseId: string): string | null {
    return this.agentTasks.get(toolUseId) ?? null;
  }

  private backgroundList(): ProviderOutput {
    return { type: 'background', tasks: [...this.background.values()] };
  }

  private controlRequest(message: Json): MappedLine {
    const requestId = str(message.request_id);
    const request = isObject(message.request) ? message.request : {};
    if (!requestId) return { outputs: [note('warning', 'Claude Code asked something without a request id')] };
    if (request.subtype !== 'can_use_tool') {
      return {
        outputs: [],
        reply: {
          type: 'control_response',
          response: { subtype: 'error', request_id: requestId, error: `This host does not serve ${String(request.subtype)}` },
        },
      };
    }
    const toolName = str(request.tool_name) ?? 'unknown';
    const input = isObject(request.input) ? request.input : {};
    const suggestions = Array.isArray(request.permission_suggestions) ? request.permission_suggestions : [];
    if (toolName === QUESTION_TOOL) {
      const questions = questionsOf(input.questions);
      if (questions.length > 0) {
        this.pending.set(requestId, { toolName, input, suggestions: [], questions: new Map(questions.map((q) => [q.id, q.question])) });
        return { outputs: [{ type: 'question', requestId, questions }] };
      }
    }
    this.pending.set(requestId, { toolName, input, suggestions });
    const allowAlways = allowAlwaysOf(suggestions);
    return {
      outputs: [
        {
          type: 'approval',
          requestId,
          toolUseId: str(request.tool_use_id),
          toolName,
          input,
          description: str(request.decision_reason) ?? str(request.description),
          canAllowAlways: allowAlways !== undefined,
          ...(allowAlways ? { allowAlways } : {}),
        },
      ],
    };
  }

  private noteContext(usage: unknown): void {
    if (!isObject(usage)) return;
    this.contextBase = (count(usage.input_tokens) ?? 0) + (count(usage.cache_read_input_tokens) ?? 0) + (count(usage.cache_creation_input_tokens) ?? 0);
    this.contextOutput = count(usage.output_tokens) ?? 0;
  }

  private contextWindow(modelUsage: unknown): { contextWindow?: number } {
    if (!isObject(modelUsage)) return {};
    const entries = Object.entries(modelUsage).filter((e): e is [string, Json] => isObject(e[1]));
    const mine = entries.find(([model]) => model === this.model) ?? entries[0];
    const window = mine ? count(mine[1].contextWindow) : null;
    return window ? { contextWindow: window } : {};
  }

  private unknownKind(kind: string): ProviderOutput[] {
    if (this.unknown.has(kind)) return [];
    this.unknown.add(kind);
    return [note('info', `Claude Code sent a message this host does not know (${clip(kind, 80)}); it was skipped.`)];
  }
}

// ---------------------------------------------------------------------------------------------
// Lines the host writes

export interface ImageInput {
  mime: string;
  /** Base64 without a `data:` prefix. */
  data: string;
}

/** One user message; images go first as content blocks, as the Messages API takes them. */
export function userLine(text: string, images: ImageInput[] = []): Json {
  const content =
    images.length === 0
      ? text
      : [...images.map((image) => ({ type: 'image', source: { type: 'base64', media_type: image.mime, data: image.data } })), { type: 'text', text }];
  return { type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: 'default' };
}

/** Asks Claude Code to stop one of its background tasks (it answers with `task_updated` killed and `task_notification` stopped). */
export function stopTaskLine(requestId: string, taskId: string): Json {
  return { type: 'control_request', request_id: requestId, request: { subtype: 'stop_task', task_id: taskId } };
}

export function interruptLine(requestId: string): Json {
  return { type: 'control_request', request_id: requestId, request: { subtype: 'interrupt' } };
}

function controlSuccess(requestId: string, response: Json): Json {
  return { type: 'control_response', response: { subtype: 'success', request_id: requestId, response } };
}

function deny(requestId: string, message: string, interrupt: boolean): Json {
  return controlSuccess(requestId, { behavior: 'deny', message, interrupt });
}

// ---------------------------------------------------------------------------------------------
// Shapes

function questionsOf(raw: unknown): ChatQuestion[] {
  if (!Array.isArray(raw)) return [];
  return raw
    .filter(isObject)
    .filter((q) => typeof q.question === 'string')
    .map((q, index) => ({
      id: `q${index + 1}`,
      header: str(q.header) ?? '',
      question: q.question as string,
      multiSelect: q.multiSelect === true,
      choices: (Array.isArray(q.options) ? q.options : [])
        .filter(isObject)
        .filter((o) => typeof o.label === 'string')
        .map((o) => ({
          label: o.label as string,
          description: str(o.description) ?? '',
        })),
    }));
}

const DESTINATIONS: Record<string, string> = {
  session: 'For the rest of this session.',
  localSettings: "Saved in this project's local settings.",
  projectSettings: "Saved in this project's settings.",
  userSettings: 'Saved in your user settings.',
};

const FILE_TOOLS: Record<string, string> = { Read: 'reading', Edit: 'editing', Write: 'writing', MultiEdit: 'editing', NotebookEdit: 'editing' };

/**
 * One of Claude Code's permission rules in words (the rule syntax, `Bash(npm run *)`, is the CLI's):
 * a command or commands starting with some words, files read or edited in a folder, a site fetched.
 */
export function ruleWords(toolName: string, content: string | undefined): string {
  if (content === undefined || content === '' || content === '*') {
    return toolName === 'Bash' ? 'every command' : FILE_TOOLS[toolName] ? `${FILE_TOOLS[toolName]} any file` : `every ${toolName} call`;
  }
  if (toolName === 'Bash') {
    const prefix = /^(.*?)(?::\*| \*)$/.exec(content)?.[1];
    return prefix !== undefined ? `commands starting with \`${prefix}\`` : `\`${content}\``;
  }
  if (FILE_TOOLS[toolName]) {
    const folder = content.replace(/\/\*\*$/, '').replace(/^\/\//, '/');
    return folder === content ? `${FILE_TOOLS[toolName]} ${content}` : `${FILE_TOOLS[toolName]} files in ${folder}`;
  }
  if (toolName === 'WebFetch' && content.startsWith('domain:')) return `fetching from ${content.slice('domain:'.length)}`;
  return `${toolName} for ${content}`;
}

/** What "allow always" would do, in words; undefined when the CLI proposed nothing. */
function allowAlwaysOf(suggestions: unknown[]): ChatAllowAlways | undefined {
  const labels: string[] = [];
  const places = new Set<string>();
  for (const suggestion of suggestions.filter(isObject)) {
    if (suggestion.type === 'addRules' && Array.isArray(suggestion.rules)) {
      const rules = suggestion.rules.filter(isObject).map((r) => ruleWords(String(r.toolName), typeof r.ruleContent === 'string' ? r.ruleContent : undefined));
      labels.push(`Always allow ${rules.join(' and ')}`);
    } else if (suggestion.type === 'setMode' && typeof suggestion.mode === 'string') {
      labels.push(suggestion.mode === 'acceptEdits' ? 'Accept every edit' : `Switch to ${suggestion.mode}`);
    } else if (suggestion.type === 'addDirectories' && Array.isArray(suggestion.directories)) {
      labels.push(`${labels.length > 0 ? 'and access to' : 'Allow access to'} ${suggestion.directories.map(String).join(', ')}`);
    } else {
      continue;
    }
    const place = DESTINATIONS[String(suggestion.destination)];
    if (place) places.add(place);
  }
  if (labels.length === 0) return undefined;
  return { label: labels.join(', '), description: [...places].join(' ') };
}

/** The file a Write or Edit changed, from the CLI's structured result. */
function fileChanges(result: Json): ChatFileChange[] {
  const path = str(result.filePath);
  if (!path) return [];
  if (result.type === 'create' && typeof result.content === 'string') {
    const lines = splitLines(result.content);
    return [{ path, kind: 'add', diff: ['--- /dev/null', `+++ ${side('b', path)}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`)].join('\n') }];
  }
  const hunks = Array.isArray(result.structuredPatch) ? result.structuredPatch.filter(isObject) : [];
  if (hunks.length === 0) return [];
  const body = hunks.flatMap((h) => [
    `@@ -${Number(h.oldStart)},${Number(h.oldLines)} +${Number(h.newStart)},${Number(h.newLines)} @@`,
    ...(Array.isArray(h.lines) ? h.lines.map(String) : []),
  ]);
  return [{ path, kind: 'update', diff: [`--- ${side('a', path)}`, `+++ ${side('b', path)}`, ...body].join('\n') }];
}

/** A diff header's path: the CLI reports absolute paths, which need no `a/` `b/` prefix. */
function side(prefix: 'a' | 'b', path: string): string {
  return path.startsWith('/') ? path : `${prefix}/${path}`;
}

function subagentUsage(raw: unknown): ChatSubagentUsage | null {
  if (!isObject(raw)) return null;
  return { totalTokens: count(raw.total_tokens) ?? 0, toolUses: count(raw.tool_uses) ?? 0, durationMs: count(raw.duration_ms) ?? 0 };
}

/** A tool result's text: a string, or its text blocks joined. */
function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  return content
    .filter(isObject)
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

function firstText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const block = content.filter(isObject).find((b) => b.type === 'text' && typeof b.text === 'string');
  return block ? (block.text as string) : null;
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function note(level: 'info' | 'warning' | 'error', text: string): ProviderOutput {
  return { type: 'note', level, text };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
