// AcpMapper: ACP messages from the agent → the provider vocabulary (ProviderOutput), and the
// person's decisions → ACP answers.
//
// Pure: no process, no I/O, no clock. The driver hands it every `session/update` (raw: an update
// this host does not know, or one that does not parse, becomes an info note, never an exception),
// every `session/request_permission` and `elicitation/create`, and the prompt's result or error.
// It keeps what the mapping needs: the tool calls of the turn (an agent may ask permission for a
// call it never announced, or announce it only in the request), the requests waiting for a person,
// which reply and thought are streaming.
//
// Permission answers are chosen by option *kind* (`allow_once`, `allow_always`, `reject_once`,
// `reject_always`) among the options the agent offered: an option id is never made up.
import type {
  CreateElicitationResponse,
  ElicitationPropertySchema,
  PermissionOption,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  ToolCallContent,
  ToolCallLocation,
} from '@agentclientprotocol/sdk';
import type { ChatQuestion } from '../../../contracts/index.ts';
import type { ProviderOutput } from '../provider.ts';
import { fileChangesOf } from './file-changes.ts';
import type { AcpAgentSpec, AcpToolCallView } from './spec.ts';

type Decision = 'allow' | 'allow-always' | 'deny';

interface PendingPermission {
  kind: 'permission';
  options: PermissionOption[];
  toolCallId: string | null;
}

interface PendingElicitation {
  kind: 'elicitation';
  /** The form's fields, in the order asked; `url` mode has none. */
  fields: Array<{ id: string; type: string }>;
  url: string | null;
}

type Pending = PendingPermission | PendingElicitation;

/** What a failed prompt looked like on the wire. */
export interface AcpFailure {
  code: number;
  message: string;
  data?: unknown;
}

// Updates that carry nothing a chat shows (the person's own words are written by the runtime).
const QUIET = new Set(['user_message_chunk', 'config_option_update', 'compaction_summary_chunk']);

const CANCELLED: RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };

export class AcpMapper {
  /** The agent's slash commands, as it last listed them. */
  slashCommands: string[] | null = null;
  private readonly spec: AcpAgentSpec;
  private readonly calls = new Map<string, AcpToolCallView>();
  private readonly pending = new Map<string, Pending>();
  private reply: { messageId: string | null } | null = null;
  private thought = false;
  private plans = 0;
  /** The session cost `usage_update` last reported at the turn's start (it is cumulative). */
  private costAtStart: number | null = null;
  private lastCost: number | null = null;

  constructor(spec: AcpAgentSpec) {
    this.spec = spec;
  }

  /** A prompt is about to go out: the previous turn's streams and calls are closed. */
  turnStarted(): void {
    this.reply = null;
    this.thought = false;
    this.calls.clear();
    this.costAtStart = this.lastCost;
  }

  /** One `session/update` notification's params, as they came. */
  update(params: unknown): ProviderOutput[] {
    const update = record(record(params).update);
    const kind = update.sessionUpdate;
    if (typeof kind !== 'string') return [this.unreadable('a session update without a kind', params)];
    switch (kind) {
      case 'agent_message_chunk':
        return this.message(update);
      case 'agent_thought_chunk':
        return this.thinking(update);
      case 'tool_call':
      case 'tool_call_update':
        return typeof update.toolCallId === 'string' ? this.toolCall(update) : [this.unreadable(`a ${kind} without a toolCallId`, params)];
      case 'plan':
        return this.plan(update.entries);
      case 'available_commands_update':
        this.slashCommands = Array.isArray(update.availableCommands)
          ? update.availableCommands
              .map((c) => record(c).name)
              .filter((n): n is string => typeof n === 'string')
              .map((n) => `/${n}`)
          : [];
        return [];
      case 'current_mode_update': {
        if (typeof update.currentModeId !== 'string') return [this.unreadable('a mode update without a mode', params)];
        const effective = this.spec.runtimeModeOf(update.currentModeId);
        return [{ type: 'mode', permissionMode: update.currentModeId, ...(effective ? { effectiveRuntimeMode: effective } : {}) }];
      }
      case 'usage_update':
        return this.usage(update);
      case 'session_info_update':
        // Only its title is shown (the chat's name); a cleared title leaves the chat's name as it is.
        return typeof update.title === 'string' && update.title.trim() !== '' ? [{ type: 'title', title: update.title }] : [];
      case 'notice': {
        const level = update.severity === 'error' ? 'error' : update.severity === 'warning' ? 'warning' : 'info';
        const text = [update.title, update.description].filter((t): t is string => typeof t === 'string' && t !== '').join(': ');
        return text ? [{ type: 'note', level, text }] : [];
      }
      case 'compaction_update':
        if (update.status === 'completed') return [{ type: 'compaction', preTokens: null }];
        if (update.status === 'failed')
          return [{ type: 'note', level: 'warning', text: `${this.spec.name} could not compact: ${String(update.error ?? 'no reason given')}` }];
        return [];
      default:
        if (QUIET.has(kind)) return [];
        return [{ type: 'note', level: 'info', text: `${this.spec.name} sent a session update this host does not show (${kind})` }];
    }
  }

  /**
   * A `session/request_permission`: an approval the person answers later (`permissionReply`), or an
   * answer now when the request offers nothing a person could choose.
   */
  permission(requestId: string, params: RequestPermissionRequest): { outputs: ProviderOutput[]; reply?: RequestPermissionResponse } {
    const options = Array.isArray(params.options) ? params.options : [];
    const allowOnce = pick(options, 'allow_once');
    const allowAlways = pick(options, 'allow_always');
    if (!allowOnce && !allowAlways) {
      return {
        outputs: [{ type: 'note', level: 'warning', text: `${this.spec.name} asked for a permission without an option to allow it; cancelled` }],
        reply: CANCELLED,
      };
    }
    const asked = record(params.toolCall);
    const matched = this.spec.quirks?.matchPermission?.(params, this.calls);
    const outputs: ProviderOutput[] = [];
    let toolCallId: string | null = null;
    if (matched === undefined && typeof asked.toolCallId === 'string') {
      // The request's own view of the call: Gemini announces a call only here.
      outputs.push(...this.toolCall({ ...asked, status: null }));
      toolCallId = asked.toolCallId;
    } else if (typeof matched === 'string') {
      toolCallId = matched;
    }
    const call = toolCallId ? this.calls.get(toolCallId) : undefined;
    const view = call ?? this.view({ ...asked, toolCallId: typeof asked.toolCallId === 'string' ? asked.toolCallId : 'permission' });
    const { name, input } = this.describe(view);
    this.pending.set(requestId, { kind: 'permission', options, toolCallId });
    outputs.push({
      type: 'approval',
      requestId,
      toolUseId: toolCallId,
      toolName: name,
      input,
      description: view.title || contentText(view.content) || null,
      canAllowAlways: allowAlways !== undefined,
      ...(allowAlways
        ? { allowAlways: { label: allowAlways.name || 'Allow always', description: `${this.spec.name} does not ask again for this in this session` } }
        : {}),
    });
    return { outputs };
  }

  /** The answer to a waiting permission request, chosen by option kind; null when nothing waits under that id. */
  permissionReply(requestId: string, decision: Decision): { reply: RequestPermissionResponse; outputs: ProviderOutput[] } | null {
    const pending = this.pending.get(requestId);
    if (pending?.kind !== 'permission') return null;
    this.pending.delete(requestId);
    const { options } = pending;
    const option =
      decision === 'deny'
        ? (pick(options, 'reject_once') ?? pick(options, 'reject_always'))
        : decision === 'allow-always'
          ? (pick(options, 'allow_always') ?? pick(options, 'allow_once'))
          : (pick(options, 'allow_once') ?? pick(options, 'allow_always'));
    const outputs: ProviderOutput[] = [];
    // A refused call may never hear of again (Gemini sends no update for it): it ends here.
    if (decision === 'deny' && pending.toolCallId) outputs.push(...this.refuseCall(pending.toolCallId));
    return { reply: option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : CANCELLED, outputs };
  }

  /** An `elicitation/create`: a question for the person, or an answer now when it cannot be asked. */
  elicitation(requestId: string, params: unknown): { outputs: ProviderOutput[]; reply?: CreateElicitationResponse } {
    const p = record(params);
    const message = typeof p.message === 'string' ? p.message : '';
    if (p.mode === 'url' && typeof p.url === 'string') {
      this.pending.set(requestId, { kind: 'elicitation', fields: [], url: p.url });
      return {
        outputs: [
          {
            type: 'question',
            requestId,
            questions: [
              {
                id: 'url',
                header: this.spec.name,
                question: `${message}\n\nOpen ${p.url} and finish there, then continue.`.trim(),
                choices: [
                  { label: 'Continue', description: 'I finished on that page' },
                  { label: 'Decline', description: 'Do not go on' },
                ],
                multiSelect: false,
              },
            ],
          },
        ],
      };
    }
    const schema = record(p.requestedSchema);
    const properties = Object.entries(record(schema.properties));
    if (p.mode !== 'form' || properties.length === 0) {
      return {
        outputs: [{ type: 'note', level: 'warning', text: `${this.spec.name} asked for input this host cannot show; declined` }],
        reply: { action: 'decline' },
      };
    }
    const questions: ChatQuestion[] = properties.map(([id, raw]) => fieldQuestion(id, record(raw) as ElicitationPropertySchema, message, properties.length));
    this.pending.set(requestId, {
      kind: 'elicitation',
      fields: properties.map(([id, raw]) => ({ id, type: String(record(raw).type ?? 'string') })),
      url: null,
    });
    return { outputs: [{ type: 'question', requestId, questions }] };
  }

  /** The answer to a waiting elicitation (`null`: dismissed). */
  elicitationReply(requestId: string, answers: Record<string, string> | null): CreateElicitationResponse | null {
    const pending = this.pending.get(requestId);
    if (pending?.kind !== 'elicitation') return null;
    this.pending.delete(requestId);
    if (answers === null) return { action: 'cancel' };
    if (pending.url !== null) return answers.url === 'Continue' ? { action: 'accept' } : { action: 'decline' };
    const content: Record<string, string | number | boolean | string[]> = {};
    for (const field of pending.fields) {
      const answer = answers[field.id];
      if (answer === undefined || answer === '') continue;
      if (field.type === 'boolean') content[field.id] = answer === 'Yes' || answer === 'true';
      else if (field.type === 'number' || field.type === 'integer') {
        const n = Number(answer);
        if (Number.isFinite(n)) content[field.id] = field.type === 'integer' ? Math.trunc(n) : n;
      } else if (field.type === 'array') content[field.id] = answer.split(', ').filter((a) => a !== '');
      else content[field.id] = answer;
    }
    return { action: 'accept', content };
  }

  /** Every waiting request, to be answered as cancelled (the turn stops, or the process goes). */
  cancelAll(): Array<{ requestId: string; kind: Pending['kind'] }> {
    const out = [...this.pending.entries()].map(([requestId, p]) => ({ requestId, kind: p.kind }));
    this.pending.clear();
    return out;
  }

  /** The prompt's result: usage, then the turn's end. */
  promptDone(response: PromptResponse): ProviderOutput[] {
    const out: ProviderOutput[] = [];
    const usage = this.spec.quirks?.promptUsage?.(response);
    if (usage) out.push(usage);
    if (this.costAtStart !== null || this.lastCost !== null) {
      const cost = (this.lastCost ?? 0) - (this.costAtStart ?? 0);
      if (cost > 0) out.push({ type: 'usage', costUsd: cost });
    }
    switch (response.stopReason) {
      case 'end_turn':
        out.push({ type: 'turn-end', state: 'done' });
        break;
      case 'cancelled':
        out.push({ type: 'turn-end', state: 'aborted', message: `${this.spec.name} stopped the turn` });
        break;
      case 'max_tokens':
        out.push({ type: 'note', level: 'warning', text: `${this.spec.name} stopped: the reply reached its token limit` }, { type: 'turn-end', state: 'done' });
        break;
      case 'max_turn_requests':
        out.push(
          { type: 'note', level: 'warning', text: `${this.spec.name} stopped: the turn reached its limit of model requests` },
          { type: 'turn-end', state: 'done' },
        );
        break;
      case 'refusal':
        out.push({ type: 'turn-end', state: 'error', message: `${this.spec.name} refused to go on` });
        break;
      default:
        out.push(
          { type: 'note', level: 'info', text: `${this.spec.name} ended the turn with ${String(response.stopReason)}` },
          { type: 'turn-end', state: 'done' },
        );
    }
    return out;
  }

  /** The prompt failed: the turn ends in error, with the limit when it was one. */
  promptFailed(error: AcpFailure): ProviderOutput[] {
    const limit = this.spec.quirks?.limitOf ? this.spec.quirks.limitOf(error) : error.code === 429 ? { kind: 'usage' as const } : undefined;
    return [{ type: 'turn-end', state: 'error', message: error.message || `${this.spec.name} failed the turn (${error.code})`, ...(limit ? { limit } : {}) }];
  }

  /** A line that was not a JSON-RPC message: a note, never a failure. */
  malformed(line: string, reason: string): ProviderOutput[] {
    const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
    return [{ type: 'note', level: 'info', text: `${this.spec.name} printed a line this host could not read (${reason}): ${shown}` }];
  }

  // ---------------------------------------------------------------------------------------------

  private message(update: Record<string, unknown>): ProviderOutput[] {
    const content = record(update.content);
    const messageId = typeof update.messageId === 'string' ? update.messageId : null;
    const out: ProviderOutput[] = [];
    if (this.reply && this.reply.messageId !== messageId && messageId !== null) out.push({ type: 'text-end' });
    this.thought = false;
    if (content.type === 'text' && typeof content.text === 'string') {
      if (content.text === '') return out;
      this.reply = { messageId };
      out.push({ type: 'text', text: content.text });
      return out;
    }
    if (content.type === 'resource_link' && typeof content.uri === 'string') {
      this.reply = { messageId };
      out.push({ type: 'text', text: `[${typeof content.name === 'string' ? content.name : content.uri}](${content.uri})` });
      return out;
    }
    out.push({
      type: 'note',
      level: 'info',
      text: `${this.spec.name} sent ${typeof content.type === 'string' ? `${content.type} content` : 'content'} this host does not show`,
    });
    return out;
  }

  private thinking(update: Record<string, unknown>): ProviderOutput[] {
    const content = record(update.content);
    if (content.type !== 'text' || typeof content.text !== 'string') return [this.unreadable('a thought that is not text', update)];
    const first = !this.thought;
    this.thought = true;
    const text = this.spec.quirks?.thought ? this.spec.quirks.thought(content.text, first) : content.text;
    return text ? [{ type: 'thinking', text }] : [];
  }

  private toolCall(update: Record<string, unknown>): ProviderOutput[] {
    const id = update.toolCallId as string;
    const known = this.calls.get(id);
    const call = known ?? this.view(update);
    if (known) merge(known, update);
    this.calls.set(id, call);
    const out: ProviderOutput[] = [];
    if (!call.started) {
      call.started = true;
      if (this.reply) out.push({ type: 'text-end' });
      this.reply = null;
      this.thought = false;
      const { name, input } = this.describe(call);
      out.push({ type: 'tool-start', toolUseId: id, name, input, ...(call.title ? { description: call.title } : {}) });
    }
    if (call.status === 'completed' || call.status === 'failed') {
      out.push(...this.endCall(id, call.status === 'failed'));
    }
    return out;
  }

  /** A tool-end for a call, once per terminal state (a later update with more to say ends it again). */
  /** A refused call: what its request showed is what it would have done, so there is no output and no change. */
  private refuseCall(id: string): ProviderOutput[] {
    const call = this.calls.get(id);
    if (!call || !call.started || call.ended) return [];
    call.ended = true;
    return [{ type: 'tool-end', toolUseId: id, output: 'Denied', error: true }];
  }

  private endCall(id: string, error: boolean): ProviderOutput[] {
    const call = this.calls.get(id);
    if (!call || !call.started) return [];
    const result = this.spec.quirks?.toolResult?.(call);
    // Only a call that completed changed anything: a refused or failed edit shows what it would have done, not a change.
    const changes = error ? [] : result ? result.changes : fileChangesOf(call.content);
    const output = result ? result.output : toolOutput(call);
    if (call.ended && output === null && changes.length === 0) return [];
    call.ended = true;
    return [{ type: 'tool-end', toolUseId: id, output, error, ...(changes.length ? { changes } : {}) }];
  }

  private plan(entries: unknown): ProviderOutput[] {
    if (!Array.isArray(entries)) return [this.unreadable('a plan without entries', entries)];
    const todos = entries
      .map((e) => record(e))
      .filter((e) => typeof e.content === 'string')
      .map((e) => ({
        content: e.content as string,
        status: e.status === 'completed' || e.status === 'in_progress' ? e.status : 'pending',
        activeForm: e.content as string,
        ...(typeof e.priority === 'string' ? { priority: e.priority } : {}),
      }));
    // A plan replaces the last one; shown as Claude Code shows its to-do list, so every client draws it.
    const id = `plan-${++this.plans}`;
    if (this.reply) this.reply = null;
    return [
      { type: 'tool-start', toolUseId: id, name: 'TodoWrite', input: { todos } },
      { type: 'tool-end', toolUseId: id, output: null },
    ];
  }

  private usage(update: Record<string, unknown>): ProviderOutput[] {
    const cost = record(update.cost);
    if (typeof cost.amount === 'number' && cost.currency === 'USD') this.lastCost = cost.amount;
    return [
      {
        type: 'usage',
        ...(typeof update.used === 'number' && update.used >= 0 ? { contextTokens: Math.round(update.used) } : {}),
        ...(typeof update.size === 'number' && update.size > 0 ? { contextWindow: Math.round(update.size) } : {}),
      },
    ];
  }

  private view(update: Record<string, unknown>): AcpToolCallView {
    const call: AcpToolCallView = {
      toolCallId: String(update.toolCallId),
      title: '',
      kind: null,
      status: null,
      content: [],
      locations: [],
      rawInput: undefined,
      rawOutput: undefined,
      started: false,
      ended: false,
    };
    merge(call, update);
    return call;
  }

  private describe(call: AcpToolCallView): { name: string; input: Record<string, unknown> } {
    return this.spec.quirks?.describeTool?.(call) ?? describeTool(call);
  }

  private unreadable(what: string, value: unknown): ProviderOutput {
    const shown = JSON.stringify(value) ?? String(value);
    return {
      type: 'note',
      level: 'info',
      text: `${this.spec.name} sent ${what}, which this host could not read: ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}`,
    };
  }
}

/** A `tool_call_update` changes only the fields it carries (ACP: absent = unchanged, content replaces). */
function merge(call: AcpToolCallView, update: Record<string, unknown>): void {
  if (typeof update.title === 'string' && update.title !== '') call.title = update.title;
  if (typeof update.kind === 'string') call.kind = update.kind;
  if (typeof update.status === 'string') call.status = update.status;
  if (Array.isArray(update.content)) call.content = update.content.filter((c): c is ToolCallContent => typeof record(c).type === 'string');
  if (Array.isArray(update.locations)) call.locations = update.locations.filter((l): l is ToolCallLocation => typeof record(l).path === 'string');
  if (update.rawInput !== undefined) call.rawInput = update.rawInput;
  if (update.rawOutput !== undefined) call.rawOutput = update.rawOutput;
}

/**
 * The tool's name and input by ACP kind, in the shapes Claude Code's tools have (`Bash {command}`,
 * `Edit {file_path, old_string, new_string}`, `Write {file_path, content}`, …): clients already draw
 * those, and approval summaries read them.
 */
export function describeTool(call: AcpToolCallView): { name: string; input: Record<string, unknown> } {
  const raw = record(call.rawInput);
  const diff = call.content.find((c) => c.type === 'diff');
  const path = call.locations[0]?.path ?? (diff?.type === 'diff' ? diff.path : undefined) ?? str(raw.file_path) ?? str(raw.path);
  const base: Record<string, unknown> = { ...raw, ...(call.title ? { title: call.title } : {}) };
  switch (call.kind) {
    case 'execute':
      return { name: 'Bash', input: { ...base, command: str(raw.command) ?? call.title } };
    case 'edit': {
      if (diff?.type === 'diff') {
        const before = typeof diff.oldText === 'string' ? diff.oldText : '';
        if (before === '') return { name: 'Write', input: { ...base, file_path: diff.path, content: diff.newText } };
        return { name: 'Edit', input: { ...base, file_path: diff.path, old_string: before, new_string: diff.newText } };
      }
      return { name: 'Edit', input: { ...base, ...(path ? { file_path: path } : {}) } };
    }
    case 'read':
      return { name: 'Read', input: { ...base, ...(path ? { file_path: path } : {}) } };
    case 'delete':
      return { name: 'Delete', input: { ...base, ...(path ? { file_path: path } : {}) } };
    case 'move':
      return { name: 'Move', input: { ...base, ...(path ? { file_path: path } : {}) } };
    case 'search':
      return { name: 'Grep', input: { ...base, pattern: str(raw.pattern) ?? str(raw.query) ?? call.title } };
    case 'fetch':
      return { name: 'WebFetch', input: { ...base, url: str(raw.url) ?? call.title } };
    case 'think':
      return { name: 'Think', input: base };
    default:
      return { name: call.title || 'tool', input: base };
  }
}

function toolOutput(call: AcpToolCallView): string | null {
  const text = contentText(call.content);
  if (text) return text;
  if (typeof call.rawOutput === 'string' && call.rawOutput !== '') return call.rawOutput;
  if (call.rawOutput !== undefined && call.rawOutput !== null) return JSON.stringify(call.rawOutput);
  return null;
}

function contentText(content: readonly ToolCallContent[]): string {
  const parts: string[] = [];
  for (const block of content) {
    if (block.type === 'content') {
      const inner = record(block.content);
      if (typeof inner.text === 'string') parts.push(inner.text);
      else if (typeof inner.uri === 'string') parts.push(inner.uri);
    } else if (block.type === 'terminal') {
      parts.push(`(terminal ${String(block.terminalId)})`);
    }
  }
  return parts.join('\n');
}

function fieldQuestion(id: string, field: ElicitationPropertySchema, message: string, count: number): ChatQuestion {
  const f = record(field);
  const title = typeof f.title === 'string' && f.title ? f.title : id;
  const described = typeof f.description === 'string' && f.description ? f.description : null;
  const question = count === 1 ? [message, described].filter(Boolean).join('\n\n') || title : (described ?? title);
  let choices: Array<{ label: string; description: string }> = [];
  let multiSelect = false;
  if (f.type === 'boolean') {
    choices = [
      { label: 'Yes', description: '' },
      { label: 'No', description: '' },
    ];
  } else if (f.type === 'array') {
    multiSelect = true;
    choices = enumChoices(record(f.items));
  } else {
    choices = enumChoices(f);
  }
  return { id, header: title, question, choices, multiSelect };
}

/** A string field's choices: `oneOf` (value = `const`, label = title) or plain `enum`. The answer is the label. */
function enumChoices(schema: Record<string, unknown>): Array<{ label: string; description: string }> {
  const oneOf = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
  if (oneOf) {
    return oneOf
      .map((o) => record(o))
      .filter((o) => typeof o.const === 'string')
      .map((o) => ({
        label: o.const as string,
        description: typeof o.title === 'string' && o.title !== o.const ? o.title : '',
      }));
  }
  if (Array.isArray(schema.enum)) return schema.enum.filter((e): e is string => typeof e === 'string').map((e) => ({ label: e, description: '' }));
  return [];
}

function pick(options: readonly PermissionOption[], kind: string): PermissionOption | undefined {
  return options.find((o) => record(o).kind === kind && typeof o.optionId === 'string');
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
