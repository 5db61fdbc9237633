// The turn assembler: what one piece of a backend's output does to the running turn's thread. It is
// pure: given the turn's state, the output, a read-only view of the thread and a clock, it answers the
// turn's next state and the steps to take (items to upsert, text to stream, info to patch), and
// ChatSession takes them in order. So every rule about how provider output becomes items (a reply
// opens on its first text and closes before a tool, a tool settles with the output it streamed, a
// request re-derives the chat's status) is here and tested without a session, a log or a clock.
import type { ChatInfo, ChatItem, ChatToolItem, ChatTurnLimit } from '../../contracts/index.ts';
import type { ProviderOutput } from '../providers/provider.ts';
import { isPendingRequest } from './requests.ts';
import { titleFromAgent } from './title.ts';
import type { VisualInput } from './visuals.ts';

/** What the assembler keeps about the running turn between outputs. */
export interface TurnState {
  readonly id: string;
  /** The turn's cost so far (the backend reports it whole each time). */
  readonly costUsd: number;
  /** The assistant item text is streaming into, if any, and the subagent writing it (null: the agent itself). */
  readonly reply: string | null;
  readonly replyParent: string | null;
  readonly thought: string | null;
  /** The items opened by a tool or subagent call, by the call's tool use id. */
  readonly tools: ReadonlyMap<string, string>;
}

/** One thing ChatSession does for an output, in order. */
export type TurnStep =
  | { type: 'upsert'; item: ChatItem }
  /** Streamed text for a reply, thought or running tool (coalesced by the session). */
  | { type: 'delta'; itemId: string; text: string }
  /** A streaming reply or thought is finished as it stands. */
  | { type: 'close'; itemId: string }
  /**
   * An item changed as it stands once the text still being joined is in: a tool's streamed output is
   * part of what it settles with, so the change is made after the session flushes its deltas.
   */
  | { type: 'update'; itemId: string; change: (item: ChatItem) => ChatItem }
  /** Info changed (an empty patch: only what is derived, such as open requests, may have). */
  | { type: 'info'; patch: Partial<ChatInfo> }
  | { type: 'visual'; input: VisualInput }
  /** Output about the chat rather than the turn (limits, background tasks): the session's `side`. */
  | { type: 'side'; output: Extract<ProviderOutput, { type: 'limits' | 'background' }> }
  | { type: 'finish'; state: 'done' | 'error' | 'aborted'; message?: string; limit?: ChatTurnLimit; outliving: readonly string[] };

export interface Assembled {
  turn: TurnState;
  steps: TurnStep[];
}

/** The thread as the assembler may read it. */
export interface TurnView {
  get(id: string): ChatItem | undefined;
  readonly items: readonly ChatItem[];
  readonly info: ChatInfo;
}

export interface TurnClock {
  now(): number;
  newId(prefix: string): string;
}

export function openTurn(id: string): TurnState {
  return { id, costUsd: 0, reply: null, replyParent: null, thought: null, tools: new Map() };
}

export function assembleTurn(turn: TurnState, output: ProviderOutput, view: TurnView, clock: TurnClock): Assembled {
  switch (output.type) {
    case 'session':
      return info(turn, {
        agentSessionId: output.agentSessionId,
        ...(output.model !== undefined ? { model: output.model } : {}),
        // A reported mode replaces the confirmed one, even when it is none of ours: never a stale claim.
        ...(output.permissionMode !== undefined ? { permissionMode: output.permissionMode, effectiveRuntimeMode: output.effectiveRuntimeMode } : {}),
        ...(output.effectiveRuntimeMode !== undefined ? { effectiveRuntimeMode: output.effectiveRuntimeMode } : {}),
        ...(output.slashCommands !== undefined ? { slashCommands: output.slashCommands } : {}),
      });
    case 'mode':
      return info(turn, { permissionMode: output.permissionMode, effectiveRuntimeMode: output.effectiveRuntimeMode });
    case 'title': {
      // The model named the conversation: that beats the host's wording of its first message. A
      // fork keeps the title it was given (its agent may name it after the fork's preamble).
      const title = view.info.forkOf ? null : titleFromAgent(output.title);
      return title ? info(turn, { suggestedTitle: title }) : none(turn);
    }
    case 'text': {
      const steps: TurnStep[] = [];
      let next = closeThought(turn, steps);
      const parent = output.parentToolUseId ?? null;
      if (next.reply && next.replyParent !== parent) next = closeReply(next, steps);
      if (!next.reply) {
        next = { ...next, reply: clock.newId('reply'), replyParent: parent };
        steps.push({
          type: 'upsert',
          item: {
            id: next.reply!,
            kind: 'assistant',
            createdAt: clock.now(),
            turnId: turn.id,
            text: '',
            streaming: true,
            ...(output.phase ? { phase: output.phase } : {}),
            ...(parent ? { parentToolUseId: parent } : {}),
          },
        });
      }
      steps.push({ type: 'delta', itemId: next.reply!, text: output.text });
      return { turn: next, steps };
    }
    case 'text-end': {
      const steps: TurnStep[] = [];
      return { turn: closeReply(turn, steps), steps };
    }
    case 'thinking': {
      const steps: TurnStep[] = [];
      let next = turn;
      if (!next.thought) {
        next = { ...next, thought: clock.newId('thought') };
        steps.push({
          type: 'upsert',
          item: { id: next.thought!, kind: 'thinking', createdAt: clock.now(), turnId: turn.id, text: '', streaming: true, endedAt: null },
        });
      }
      steps.push({ type: 'delta', itemId: next.thought!, text: output.text });
      return { turn: next, steps };
    }
    case 'thinking-end': {
      const steps: TurnStep[] = [];
      return { turn: closeThought(turn, steps), steps };
    }
    case 'tool-start': {
      const { turn: closed, steps } = closeStreams(turn);
      const id = clock.newId('tool');
      steps.push({ type: 'upsert', item: startedTool(output, id, turn.id, output.parentToolUseId ?? null, clock.now()) });
      return { turn: withTool(closed, output.toolUseId, id), steps };
    }
    case 'tool-output': {
      const id = turn.tools.get(output.toolUseId);
      return id ? { turn, steps: [{ type: 'delta', itemId: id, text: output.text }] } : none(turn);
    }
    case 'tool-end': {
      const id = turn.tools.get(output.toolUseId);
      if (!id || view.get(id)?.kind !== 'tool') return none(turn);
      return { turn, steps: [{ type: 'update', itemId: id, change: (item) => settledTool(item as ChatToolItem, output) }] };
    }
    case 'subagent-start': {
      const { turn: closed, steps } = closeStreams(turn);
      const id = clock.newId('subagent');
      const now = clock.now();
      steps.push({
        type: 'upsert',
        item: {
          id,
          kind: 'subagent',
          createdAt: now,
          turnId: turn.id,
          toolUseId: output.toolUseId,
          description: output.description,
          subagentType: output.subagentType,
          prompt: output.prompt,
          background: output.background,
          status: 'running',
          startedAt: now,
          finishedAt: null,
          summary: null,
          result: null,
          usage: null,
          lastTool: null,
          itemsTruncated: false,
          ...(output.parentToolUseId ? { parentToolUseId: output.parentToolUseId } : {}),
        },
      });
      return { turn: withTool(closed, output.toolUseId, id), steps };
    }
    case 'subagent-progress':
    case 'subagent-end': {
      const item = view.get(turn.tools.get(output.toolUseId) ?? '');
      if (item?.kind !== 'subagent') return none(turn);
      const next = { ...item };
      if (output.usage !== undefined) next.usage = output.usage;
      if (output.summary !== undefined) next.summary = output.summary;
      if (output.type === 'subagent-progress' && output.lastTool !== undefined) next.lastTool = output.lastTool;
      if (output.type === 'subagent-progress' && output.native) next.native = { ...next.native, ...output.native };
      if (output.type === 'subagent-progress' && output.model) next.model = output.model;
      if (output.type === 'subagent-end') {
        next.status = output.status;
        next.finishedAt = clock.now();
        if (output.result !== undefined) next.result = output.result;
      }
      return { turn, steps: [{ type: 'upsert', item: next }] };
    }
    case 'turn-diff': {
      const item = view.get(turn.id);
      return item?.kind === 'turn' ? { turn, steps: [{ type: 'upsert', item: { ...item, checkpointDiff: output.diff } }] } : none(turn);
    }
    case 'compaction': {
      const { turn: closed, steps } = closeStreams(turn);
      steps.push(
        { type: 'upsert', item: { id: clock.newId('compaction'), kind: 'compaction', createdAt: clock.now(), turnId: turn.id, preTokens: output.preTokens } },
        { type: 'info', patch: { usage: { ...view.info.usage, contextTokens: 0 } } },
      );
      return { turn: closed, steps };
    }
    case 'request-cancelled': {
      const item = view.items.find((i) => isPendingRequest(i) && (i.kind === 'approval' || i.kind === 'question') && i.requestId === output.requestId);
      if (item?.kind === 'approval')
        return {
          turn,
          steps: [
            { type: 'upsert', item: { ...item, decision: 'cancelled' } },
            { type: 'info', patch: {} },
          ],
        };
      if (item?.kind === 'question')
        return {
          turn,
          steps: [
            { type: 'upsert', item: { ...item, state: 'cancelled' } },
            { type: 'info', patch: {} },
          ],
        };
      return none(turn);
    }
    case 'approval': {
      const { turn: closed, steps } = closeStreams(turn);
      steps.push(
        {
          type: 'upsert',
          item: {
            id: clock.newId('approval'),
            kind: 'approval',
            createdAt: clock.now(),
            turnId: turn.id,
            requestId: output.requestId,
            toolUseId: output.toolUseId,
            toolName: output.toolName,
            input: output.input,
            description: output.description,
            canAllowAlways: output.canAllowAlways,
            decision: 'pending',
            ...(output.allowAlways ? { allowAlways: output.allowAlways } : {}),
          },
        },
        { type: 'info', patch: {} },
      );
      return { turn: closed, steps };
    }
    case 'question': {
      const { turn: closed, steps } = closeStreams(turn);
      steps.push(
        {
          type: 'upsert',
          item: {
            id: clock.newId('question'),
            kind: 'question',
            createdAt: clock.now(),
            turnId: turn.id,
            requestId: output.requestId,
            questions: output.questions,
            answers: null,
            state: 'pending',
            ...(output.async ? { async: true } : {}),
          },
        },
        { type: 'info', patch: {} },
      );
      return { turn: closed, steps };
    }
    case 'visual': {
      const { turn: closed, steps } = closeStreams(turn);
      const { type: _type, ...visual } = output;
      steps.push({ type: 'visual', input: { ...visual, turnId: turn.id } });
      return { turn: closed, steps };
    }
    case 'usage': {
      const next = output.costUsd !== undefined ? { ...turn, costUsd: Math.max(0, output.costUsd) } : turn;
      const usage = { ...view.info.usage };
      if (output.contextTokens !== undefined) usage.contextTokens = output.contextTokens;
      if (output.contextWindow !== undefined) usage.contextWindow = output.contextWindow;
      return info(next, { usage });
    }
    case 'note':
      return {
        turn,
        steps: [
          { type: 'upsert', item: { id: clock.newId('note'), kind: 'note', createdAt: clock.now(), turnId: turn.id, level: output.level, text: output.text } },
        ],
      };
    case 'limits':
    case 'background':
      return { turn, steps: [{ type: 'side', output }] };
    case 'turn-end':
      return {
        turn,
        steps: [
          {
            type: 'finish',
            state: output.state,
            ...(output.message !== undefined ? { message: output.message } : {}),
            ...(output.limit !== undefined ? { limit: output.limit } : {}),
            outliving: output.outliving ?? [],
          },
        ],
      };
  }
}

/** What a subagent that outlived its turn reports through the context's `side`. */
export type OutlivedWork = Extract<
  ProviderOutput,
  { type: 'tool-start' | 'tool-output' | 'tool-end' | 'text' | 'text-end' | 'subagent-progress' | 'subagent-end' }
>;

export function isOutlivedWork(output: ProviderOutput): output is OutlivedWork {
  switch (output.type) {
    case 'tool-start':
    case 'tool-output':
    case 'tool-end':
    case 'text':
    case 'text-end':
    case 'subagent-progress':
    case 'subagent-end':
      return true;
    default:
      return false;
  }
}

/** The items of subagents that outlived their turn: their open tools by tool use id, their open replies by `replyKey`. */
export type OutlivedItems = ReadonlyMap<string, string>;

/**
 * The work of a subagent that outlived its turn (the turn ended with it `outliving`): its tools, their
 * output, its replies, its progress and end, under its row in the turn it outlived; no turn is opened
 * for it. Only a row still running is touched, and a tool or reply only under such a row, so nothing
 * settled is reopened or rewritten. `activeTurnId`: a row of the running turn is that turn's to update.
 */
export function assembleOutlived(
  work: OutlivedWork,
  items: OutlivedItems,
  view: TurnView,
  activeTurnId: string | null,
  clock: TurnClock,
): { items: OutlivedItems; steps: TurnStep[] } {
  const running = (toolUseId: string | undefined) => {
    const row = toolUseId ? view.items.find((i) => i.kind === 'subagent' && i.toolUseId === toolUseId && i.status === 'running') : undefined;
    return row?.kind === 'subagent' && (activeTurnId === null || row.turnId !== activeTurnId) ? row : undefined;
  };
  const steps: TurnStep[] = [];
  const next = new Map(items);
  switch (work.type) {
    case 'tool-start': {
      const row = running(work.parentToolUseId);
      if (!row) return { items, steps };
      const id = clock.newId('tool');
      next.set(work.toolUseId, id);
      steps.push({ type: 'upsert', item: startedTool(work, id, row.turnId, row.toolUseId, clock.now()) });
      break;
    }
    case 'tool-output': {
      const id = items.get(work.toolUseId);
      if (id) steps.push({ type: 'delta', itemId: id, text: work.text });
      return { items, steps };
    }
    case 'tool-end': {
      next.delete(work.toolUseId);
      const tool = view.items.find((i) => i.kind === 'tool' && i.toolUseId === work.toolUseId && i.state === 'running');
      if (tool?.kind === 'tool' && running(tool.parentToolUseId ?? undefined)) {
        steps.push({ type: 'update', itemId: tool.id, change: (item) => settledTool(item as ChatToolItem, work) });
      }
      break;
    }
    case 'text': {
      const row = running(work.parentToolUseId);
      if (!row) return { items, steps };
      const key = replyKey(row.toolUseId);
      let id = items.get(key);
      if (!id) {
        id = clock.newId('reply');
        next.set(key, id);
        steps.push({
          type: 'upsert',
          item: {
            id,
            kind: 'assistant',
            createdAt: clock.now(),
            turnId: row.turnId,
            text: '',
            streaming: true,
            parentToolUseId: row.toolUseId,
            ...(work.phase ? { phase: work.phase } : {}),
          },
        });
      }
      steps.push({ type: 'delta', itemId: id, text: work.text });
      break;
    }
    case 'text-end': {
      const key = work.parentToolUseId ? replyKey(work.parentToolUseId) : undefined;
      const id = key ? items.get(key) : undefined;
      if (!key || !id) return { items, steps };
      next.delete(key);
      steps.push({ type: 'close', itemId: id });
      break;
    }
    default: {
      const row = running(work.toolUseId);
      if (!row) return { items, steps };
      const changed = { ...row };
      if (work.usage !== undefined) changed.usage = work.usage;
      if (work.summary !== undefined) changed.summary = work.summary;
      if (work.type === 'subagent-progress' && work.lastTool !== undefined) changed.lastTool = work.lastTool;
      if (work.type === 'subagent-end') {
        changed.status = work.status;
        changed.finishedAt = clock.now();
        if (work.result !== undefined) changed.result = work.result;
        const key = replyKey(row.toolUseId);
        const reply = items.get(key);
        next.delete(key);
        if (reply) steps.push({ type: 'close', itemId: reply });
        // Its tools still running end with it, each with what it streamed so far.
        for (const item of view.items) {
          if (item.kind !== 'tool' || item.state !== 'running' || item.parentToolUseId !== row.toolUseId) continue;
          next.delete(item.toolUseId);
          steps.push({ type: 'update', itemId: item.id, change: (current) => ({ ...(current as ChatToolItem), state: 'error' }) });
        }
      }
      steps.push({ type: 'upsert', item: changed });
    }
  }
  return { items: next, steps };
}

/** The key of a subagent's open reply among the outlived items (tool use ids are the CLI's, so the prefix keeps the two apart). */
function replyKey(toolUseId: string): string {
  return `reply:${toolUseId}`;
}

/** The turn's open reply and thought finished, as anything that is not more of their text does. */
export function closeStreams(turn: TurnState): Assembled {
  const steps: TurnStep[] = [];
  return { turn: closeThought(closeReply(turn, steps), steps), steps };
}

function closeReply(turn: TurnState, steps: TurnStep[]): TurnState {
  if (!turn.reply) return turn;
  steps.push({ type: 'close', itemId: turn.reply });
  return { ...turn, reply: null, replyParent: null };
}

function closeThought(turn: TurnState, steps: TurnStep[]): TurnState {
  if (!turn.thought) return turn;
  steps.push({ type: 'close', itemId: turn.thought });
  return { ...turn, thought: null };
}

function withTool(turn: TurnState, toolUseId: string, itemId: string): TurnState {
  const tools = new Map(turn.tools);
  tools.set(toolUseId, itemId);
  return { ...turn, tools };
}

function info(turn: TurnState, patch: Partial<ChatInfo>): Assembled {
  return { turn, steps: [{ type: 'info', patch }] };
}

function none(turn: TurnState): Assembled {
  return { turn, steps: [] };
}

/** The item a `tool-start` opens, running; `parent`: the subagent it is under (null: the agent itself). */
export function startedTool(
  output: Extract<ProviderOutput, { type: 'tool-start' }>,
  id: string,
  turnId: string | null,
  parent: string | null,
  now: number,
): ChatToolItem {
  return {
    id,
    kind: 'tool',
    createdAt: now,
    turnId,
    toolUseId: output.toolUseId,
    name: output.name,
    input: output.input,
    output: null,
    state: 'running',
    parentToolUseId: parent,
    progress: { startedAt: now, description: output.description ?? null, output: null },
  };
}

/** A tool item as its `tool-end` settles it. */
export function settledTool(item: ChatToolItem, output: Extract<ProviderOutput, { type: 'tool-end' }>): ChatToolItem {
  return { ...item, state: output.error ? 'error' : 'done', output: output.output, ...(output.changes?.length ? { changes: output.changes } : {}) };
}
