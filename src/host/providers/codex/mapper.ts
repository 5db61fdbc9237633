// CodexMapper: `codex app-server` JSON-RPC messages → the provider vocabulary (ProviderOutput).
//
// Pure: no process, no I/O, no clock. The driver hands it every notification and every request
// Codex makes, and asks it how to encode an answer; it keeps only what the mapping needs (the thread
// and turn it serves, which items are streaming, the requests waiting for a person, the newest rate
// limits and turn diff). Transcripts recorded from the real binary drive it in tests.
//
// Codex's subagents (0.171's collab agents: the model's `spawn_agent`) each run in a thread of their
// own on the same app-server. A `collabAgentToolCall` of tool `spawnAgent` is a subagent row (its call
// id is what its work names as `parentToolUseId`), the thread it names in `receiverThreadIds` is that
// subagent's: its replies and tools are mapped under the row, its token usage is the row's, and its
// turn's end ends the row (done with its last reply, or failed). The other collab tools (`wait`,
// `sendInput`, `closeAgent` …) stay tool rows named `agent:<tool>`.
//
// What it leaves out on purpose: the user's own message items (the runtime writes those), thread
// status and read-state chatter, a subagent's reasoning (as Claude Code's), and events of threads
// that are neither the one the driver named nor a subagent of it. Anything it does not know becomes
// an info note, never an error.
import type { ChatFileChange, ChatQuestion, ChatTurnLimit, RuntimeMode } from '../../../contracts/index.ts';
import type { ProviderOutput } from '../provider.ts';
import type { RpcErrorBody, RpcId } from './rpc.ts';
import { parseUnifiedDiff } from './turn-diff.ts';
import { windowOf } from '../../usage/limits.ts';

/** Codex's approval policy and sandbox for each runtime mode (agent-contracts §9). */
export const CODEX_MODES: Record<
  RuntimeMode,
  { approvalPolicy: 'untrusted' | 'on-request' | 'never'; sandbox: 'read-only' | 'workspace-write' | 'danger-full-access' }
> = {
  supervised: { approvalPolicy: 'untrusted', sandbox: 'read-only' },
  'auto-accept-edits': { approvalPolicy: 'untrusted', sandbox: 'workspace-write' },
  auto: { approvalPolicy: 'on-request', sandbox: 'workspace-write' },
  'full-access': { approvalPolicy: 'never', sandbox: 'danger-full-access' },
};

/** The runtime mode a confirmed policy pair is, or undefined when it is none of the four. */
export function runtimeModeOf(approvalPolicy: unknown, sandbox: unknown): RuntimeMode | undefined {
  const sandboxMode = typeof sandbox === 'object' && sandbox !== null ? sandboxModeOf((sandbox as { type?: unknown }).type) : sandbox;
  for (const [mode, pair] of Object.entries(CODEX_MODES) as Array<[RuntimeMode, (typeof CODEX_MODES)[RuntimeMode]]>) {
    if (pair.approvalPolicy === approvalPolicy && pair.sandbox === sandboxMode) return mode;
  }
  return undefined;
}

function sandboxModeOf(type: unknown): string | undefined {
  if (type === 'readOnly') return 'read-only';
  if (type === 'workspaceWrite') return 'workspace-write';
  if (type === 'dangerFullAccess') return 'danger-full-access';
  return undefined;
}

/** How the driver answers a request Codex made. */
export type CodexReply = { id: RpcId; result: unknown } | { id: RpcId; error: RpcErrorBody };

interface PendingRequest {
  rpcId: RpcId;
  kind: 'command' | 'fileChange' | 'question' | 'permissions';
  /** What a cancel answers (interrupt, dismiss). */
  cancel: unknown;
  allowAlways?: unknown;
  permissions?: unknown;
}

interface OpenItem {
  type: string;
  /** The subagent thread it belongs to (absent: the chat's own thread). */
  thread?: string;
  /** Text already passed on as deltas, so the completed item adds only what is missing. */
  streamed: string;
  /** A file change's edits: Codex's approval request names only the item, the person must see what it does. */
  changes?: ChatFileChange[];
}

/** A subagent's thread: the spawn call that opened it (its row) and what its row reports. */
interface AgentThread {
  toolUseId: string;
  /** Its running turn (what stopping it interrupts), null while it waits. */
  turnId: string | null;
  /** Its last finished reply: the row's result. */
  reply: string | null;
  error: string | null;
  tokens: number;
  toolUses: number;
  /** When its spawn started and the newest moment its events named (ms, Codex's clock). */
  startedAtMs: number | null;
  seenAtMs: number | null;
  /** We asked Codex to stop it. */
  stopping: boolean;
  /** The chat's turn whose spawn opened it. */
  spawnedIn: string | null;
  /** Its turn ended (its row ended). */
  ended: boolean;
}

/** What an agent that outlived its turn passes on to the chat (its thinking stays out, as during the turn). */
const OUTLIVED = new Set<ProviderOutput['type']>(['tool-start', 'tool-output', 'tool-end', 'text', 'text-end', 'subagent-progress', 'subagent-end']);

/** How many events of one not-yet-named thread are kept while a spawn is open. */
const EARLY_MAX = 64;

/** The row's words for a spawn call: the prompt's first line, cut. */
const DESCRIPTION_MAX = 80;

// Known notifications that carry nothing a chat shows.
const QUIET = new Set([
  'thread/started',
  'thread/status/changed',
  'thread/readState/changed',
  'thread/settings/updated',
  'thread/archived',
  'thread/unarchived',
  'thread/closed',
  'thread/deleted',
  'thread/goal/updated',
  'thread/goal/cleared',
  'thread/prediction/updated',
  'thread/queue/changed',
  'thread/section/changed',
  'thread/attachment/updated',
  'thread/project/updated',
  'thread/environment/connected',
  'thread/environment/disconnected',
  'turn/started',
  'turn/moderationMetadata',
  'turn/plan/updated',
  'item/plan/delta',
  'item/fileChange/outputDelta',
  'item/fileChange/patchUpdated',
  'item/commandExecution/terminalInteraction',
  'item/mcpToolCall/progress',
  'item/autoApprovalReview/started',
  'item/autoApprovalReview/completed',
  'hook/started',
  'hook/completed',
  'skills/changed',
  'remoteControl/status/changed',
  'mcpServer/startupStatus/updated',
  'mcpServer/oauthLogin/completed',
  'account/updated',
  'account/login/completed',
  'app/list/updated',
  'fs/changed',
  'model/safetyBuffering/updated',
  'configWarning',
  'windows/worldWritableWarning',
  'serverRequest/resolved',
  'project/changed',
  'thread/compacted',
]);

export class CodexMapper {
  /** The Codex thread this chat is; events of other threads are left out. */
  threadId: string | null = null;
  /** The Codex turn running now (null between turns). */
  turnId: string | null = null;
  /** The newest `account/rateLimits/updated` snapshot. */
  rateLimits: Record<string, unknown> | null = null;
  /** The newest aggregated diff of the running turn. */
  diff: string | null = null;
  private readonly items = new Map<string, OpenItem>();
  /** The subagents' threads by thread id. */
  private readonly agents = new Map<string, AgentThread>();
  /** Spawn calls started and not yet completed (their threads still unnamed). */
  private readonly spawning = new Set<string>();
  /**
   * What unknown threads said while a spawn was open: a new agent's thread may start (its
   * `turn/started`, even its first items) before the spawn's `item/completed` names it. Replayed
   * once a spawn names the thread; dropped when no spawn is open.
   */
  private readonly early = new Map<string, Array<[string, Record<string, unknown>]>>();
  private readonly pending = new Map<string, PendingRequest>();
  /**
   * What agents that outlived the chat's turn that spawned them said about their rows (progress, their
   * tools' and their own end): it belongs to the chat, not to a turn, and the driver passes it on as such.
   */
  readonly outlived: ProviderOutput[] = [];
  private errorMessage: string | null = null;
  private interrupted = false;

  /** A turn Codex accepted: later events name it. */
  turnStarted(turnId: string): void {
    this.turnId = turnId;
    this.diff = null;
    this.errorMessage = null;
    this.interrupted = false;
  }

  /** We asked Codex to stop: its `interrupted` ending is ours, not news. */
  interrupting(): void {
    this.interrupted = true;
  }

  /**
   * The running turn of the subagent `toolUseId` opened, to interrupt it: null when its thread is not
   * known yet (the spawn has not completed), `{ turnId: null }` when it runs no turn now.
   */
  agentTurn(toolUseId: string): { threadId: string; turnId: string | null } | null {
    for (const [threadId, agent] of this.agents) {
      if (agent.toolUseId === toolUseId) return { threadId, turnId: agent.turnId };
    }
    return null;
  }

  /** The subagent threads the chat's turn `spawnedIn` opened that run a turn now: what stopping that turn interrupts too. */
  runningAgentTurns(spawnedIn: string): Array<{ threadId: string; turnId: string }> {
    const running: Array<{ threadId: string; turnId: string }> = [];
    for (const [threadId, agent] of this.agents) {
      if (agent.turnId && agent.spawnedIn === spawnedIn) running.push({ threadId, turnId: agent.turnId });
    }
    return running;
  }

  /** We asked Codex to stop a subagent's turn: its `interrupted` end is ours. */
  stoppingAgent(threadId: string): void {
    const agent = this.agents.get(threadId);
    if (agent) agent.stopping = true;
  }

  notification(method: string, params: unknown): ProviderOutput[] {
    const p = record(params);
    if (typeof p.threadId === 'string' && this.threadId && p.threadId !== this.threadId) {
      const agent = this.agents.get(p.threadId);
      if (agent && agent.spawnedIn !== null && agent.spawnedIn !== this.turnId) {
        // Its turn is over: its work goes to the chat under its row (its tools, their output, its
        // replies, its progress and end), never into whatever turn runs now.
        for (const output of this.agentNotification(p.threadId, agent, method, p)) {
          if (OUTLIVED.has(output.type)) this.outlived.push(output.type === 'text-end' ? { type: 'text-end', parentToolUseId: agent.toolUseId } : output);
        }
        return [];
      }
      if (agent) return this.agentNotification(p.threadId, agent, method, p);
      if (this.spawning.size > 0) this.keepEarly(p.threadId, method, p);
      return [];
    }
    switch (method) {
      case 'thread/name/updated':
        // The thread's name (set by Codex or `thread/name/set`) is the chat's title; a cleared one leaves it.
        return typeof p.threadName === 'string' && p.threadName.trim() !== '' ? [{ type: 'title', title: p.threadName }] : [];
      case 'item/started':
        return this.itemStarted(record(p.item));
      case 'item/completed':
        return this.itemCompleted(record(p.item));
      case 'item/agentMessage/delta':
        return this.streamed(p.itemId, p.delta, 'text');
      case 'item/reasoning/summaryTextDelta':
      case 'item/reasoning/textDelta':
        return this.streamed(p.itemId, p.delta, 'thinking');
      case 'item/reasoning/summaryPartAdded':
        // A new summary paragraph: keep them apart in the one thought.
        return Number(p.summaryIndex) > 0 ? this.streamed(p.itemId, '\n\n', 'thinking') : [];
      case 'item/commandExecution/outputDelta':
        return typeof p.itemId === 'string' && typeof p.delta === 'string' && p.delta !== ''
          ? [{ type: 'tool-output', toolUseId: p.itemId, text: p.delta }]
          : [];
      case 'thread/tokenUsage/updated': {
        const usage = record(p.tokenUsage);
        const last = record(usage.last);
        const window = usage.modelContextWindow;
        return [
          {
            type: 'usage',
            ...(typeof last.totalTokens === 'number' ? { contextTokens: last.totalTokens } : {}),
            ...(typeof window === 'number' && window > 0 ? { contextWindow: window } : {}),
          },
        ];
      }
      case 'account/rateLimits/updated': {
        this.rateLimits = record(p.rateLimits);
        const limits = codexLimits(this.rateLimits);
        return limits ? [limits] : [];
      }
      case 'turn/diff/updated':
        if (typeof p.diff !== 'string' || p.diff === this.diff) return [];
        this.diff = p.diff;
        return [{ type: 'turn-diff', diff: parseUnifiedDiff(p.diff) }];
      case 'error': {
        const error = record(p.error);
        const message = typeof error.message === 'string' ? error.message : 'Codex reported an error';
        if (p.willRetry === true) return [{ type: 'note', level: 'warning', text: `${message} (retrying)` }];
        this.errorMessage = message;
        return [];
      }
      case 'warning':
      case 'guardianWarning':
      case 'deprecationNotice':
        return typeof p.message === 'string' ? [{ type: 'note', level: 'warning', text: p.message }] : [];
      case 'model/rerouted':
        return [{ type: 'note', level: 'info', text: `Codex moved this turn from ${String(p.fromModel)} to ${String(p.toModel)}` }];
      case 'turn/completed':
        return this.turnCompleted(record(p.turn));
      default:
        if (QUIET.has(method) || method.startsWith('thread/realtime/') || method.startsWith('fuzzyFileSearch/')) return [];
        return [{ type: 'note', level: 'info', text: `Codex sent ${method}, which this host does not show` }];
    }
  }

  /**
   * A request Codex makes. A person's question becomes an approval or question output (answered
   * later through `approvalReply`/`questionReply`); anything this host never takes part in is
   * answered at once.
   */
  request(id: RpcId, method: string, params: unknown): { outputs: ProviderOutput[]; reply?: CodexReply } {
    const p = record(params);
    const requestId = this.requestKey(id);
    switch (method) {
      case 'item/commandExecution/requestApproval': {
        const decisions = Array.isArray(p.availableDecisions) ? p.availableDecisions : null;
        const allowAlways = pickAllowAlways(decisions);
        const command = displayCommand(p);
        this.pending.set(requestId, { rpcId: id, kind: 'command', cancel: { decision: 'cancel' }, ...(allowAlways ? { allowAlways } : {}) });
        return {
          outputs: [
            {
              type: 'approval',
              requestId,
              toolUseId: typeof p.itemId === 'string' ? p.itemId : null,
              toolName: 'Bash',
              input: { command, ...(typeof p.cwd === 'string' ? { cwd: p.cwd } : {}) },
              description: typeof p.reason === 'string' ? p.reason : null,
              canAllowAlways: allowAlways !== undefined,
              ...(allowAlways ? { allowAlways: allowAlwaysLabel(allowAlways, command) } : {}),
            },
          ],
        };
      }
      case 'item/fileChange/requestApproval': {
        this.pending.set(requestId, { rpcId: id, kind: 'fileChange', cancel: { decision: 'cancel' }, allowAlways: 'acceptForSession' });
        const changes = typeof p.itemId === 'string' ? this.items.get(p.itemId)?.changes : undefined;
        return {
          outputs: [
            {
              type: 'approval',
              requestId,
              toolUseId: typeof p.itemId === 'string' ? p.itemId : null,
              toolName: 'Edit',
              input: { changes: changes ?? [], ...(typeof p.grantRoot === 'string' ? { grantRoot: p.grantRoot } : {}) },
              description: typeof p.reason === 'string' ? p.reason : null,
              canAllowAlways: true,
              allowAlways: { label: 'Allow edits for this session', description: 'Codex applies further edits in this chat without asking' },
            },
          ],
        };
      }
      case 'item/permissions/requestApproval': {
        this.pending.set(requestId, { rpcId: id, kind: 'permissions', cancel: { permissions: {}, scope: 'turn' }, permissions: p.permissions ?? {} });
        return {
          outputs: [
            {
              type: 'approval',
              requestId,
              toolUseId: typeof p.itemId === 'string' ? p.itemId : null,
              toolName: 'Permissions',
              input: p.permissions ?? {},
              description: typeof p.reason === 'string' ? p.reason : null,
              canAllowAlways: true,
              allowAlways: { label: 'Allow for this session', description: 'Grant these permissions until the chat ends' },
            },
          ],
        };
      }
      case 'item/tool/requestUserInput': {
        const questions = toQuestions(p.questions);
        if (questions.length === 0) {
          return { outputs: [], reply: { id, error: { code: -32602, message: 'A question without questions cannot be asked' } } };
        }
        this.pending.set(requestId, { rpcId: id, kind: 'question', cancel: { answers: {} } });
        return { outputs: [{ type: 'question', requestId, questions, ...(p.isBlocking === false ? { async: true } : {}) }] };
      }
      case 'mcpServer/elicitation/request':
        return {
          outputs: [
            { type: 'note', level: 'warning', text: `An MCP server (${String(p.serverName ?? 'unknown')}) asked for input this host cannot show; declined` },
          ],
          reply: { id, result: { action: 'decline', content: null } },
        };
      default:
        return {
          outputs: [{ type: 'note', level: 'info', text: `Codex asked ${method}, which this host does not answer` }],
          reply: { id, error: { code: -32601, message: `This host does not handle ${method}` } },
        };
    }
  }

  /** The answer to a pending approval, or null when nothing waits under that id. */
  approvalReply(requestId: string, decision: 'allow' | 'allow-always' | 'deny'): CodexReply | null {
    const pending = this.take(requestId);
    if (!pending || pending.kind === 'question') return null;
    if (pending.kind === 'permissions') {
      const granted = decision === 'deny' ? {} : pending.permissions;
      return { id: pending.rpcId, result: { permissions: granted, scope: decision === 'allow-always' ? 'session' : 'turn' } };
    }
    const choice = decision === 'deny' ? 'decline' : decision === 'allow-always' && pending.allowAlways !== undefined ? pending.allowAlways : 'accept';
    return { id: pending.rpcId, result: { decision: choice } };
  }

  /** The answer to a pending question (`null`: dismissed or cancelled, answered empty). */
  questionReply(requestId: string, answers: Record<string, string> | null): CodexReply | null {
    const pending = this.take(requestId);
    if (!pending || pending.kind !== 'question') return null;
    const out: Record<string, { answers: string[] }> = {};
    for (const [id, answer] of Object.entries(answers ?? {})) out[id] = { answers: answer === '' ? [] : [answer] };
    return { id: pending.rpcId, result: { answers: out } };
  }

  /** The process is gone: every agent still running past its turn ends failed (its turn cannot end now). */
  agentsGone(reason: string): ProviderOutput[] {
    const outputs: ProviderOutput[] = [];
    for (const agent of this.agents.values()) {
      if (agent.ended || agent.spawnedIn === null || agent.spawnedIn === this.turnId) continue;
      agent.ended = true;
      outputs.push({ type: 'subagent-end', toolUseId: agent.toolUseId, status: 'failed', result: agent.reply, summary: reason, usage: agentUsage(agent) });
    }
    return outputs;
  }

  /** Every waiting request answered as cancelled (the turn stops, or the process goes). */
  cancelAll(): CodexReply[] {
    const replies = [...this.pending.values()].map((p) => ({ id: p.rpcId, result: p.cancel }));
    this.pending.clear();
    return replies;
  }

  /** A line that was not JSON-RPC: a note, never a failure. */
  malformed(line: string, reason: string): ProviderOutput[] {
    const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
    return [{ type: 'note', level: 'info', text: `Codex printed a line this host could not read (${reason}): ${shown}` }];
  }

  // ---------------------------------------------------------------------------------------------

  private requestKey(id: RpcId): string {
    // Codex numbers its requests per process; the turn makes them unique in the chat.
    return `codex:${this.turnId ?? 'none'}:${String(id)}`;
  }

  private take(requestId: string): PendingRequest | undefined {
    const pending = this.pending.get(requestId);
    this.pending.delete(requestId);
    return pending;
  }

  private streamed(itemId: unknown, delta: unknown, kind: 'text' | 'thinking'): ProviderOutput[] {
    if (typeof itemId !== 'string' || typeof delta !== 'string' || delta === '') return [];
    const item = this.items.get(itemId) ?? { type: kind === 'text' ? 'agentMessage' : 'reasoning', streamed: '' };
    item.streamed += delta;
    this.items.set(itemId, item);
    return [kind === 'text' ? { type: 'text', text: delta } : { type: 'thinking', text: delta }];
  }

  /** `thread`: the subagent thread it came from (absent: the chat's own). */
  private itemStarted(item: Record<string, unknown>, thread?: string): ProviderOutput[] {
    const id = typeof item.id === 'string' ? item.id : null;
    const type = typeof item.type === 'string' ? item.type : 'unknown';
    if (!id) return [];
    this.items.set(id, { type, streamed: '', ...(thread ? { thread } : {}), ...(type === 'fileChange' ? { changes: fileChanges(item.changes) } : {}) });
    const parent = this.parentOf(thread);
    if (type === 'collabAgentToolCall' && item.tool === 'spawnAgent') {
      this.spawning.add(id);
      return [spawnStart(id, item, parent)];
    }
    switch (type) {
      case 'userMessage':
      case 'agentMessage':
      case 'reasoning':
      case 'plan':
      case 'contextCompaction':
      case 'hookPrompt':
        return [];
      default: {
        const tool = toolOf(item);
        return [
          {
            type: 'tool-start',
            toolUseId: id,
            name: tool.name,
            input: tool.input,
            ...(tool.description ? { description: tool.description } : {}),
            ...(parent ? { parentToolUseId: parent } : {}),
          },
          ...this.agentToolUsed(thread, tool.name),
        ];
      }
    }
  }

  private itemCompleted(item: Record<string, unknown>, thread?: string): ProviderOutput[] {
    const id = typeof item.id === 'string' ? item.id : null;
    const type = typeof item.type === 'string' ? item.type : 'unknown';
    if (!id) return [];
    const open = this.items.get(id);
    this.items.delete(id);
    const parent = this.parentOf(thread);
    if (type === 'collabAgentToolCall' && item.tool === 'spawnAgent') return [...(open ? [] : [spawnStart(id, item, parent)]), ...this.spawned(id, item)];
    const under = parent ? { parentToolUseId: parent } : {};
    switch (type) {
      case 'userMessage':
      case 'hookPrompt':
        return [];
      case 'agentMessage':
      case 'plan': {
        const text = typeof item.text === 'string' ? item.text : '';
        const agent = thread ? this.agents.get(thread) : undefined;
        if (agent && type === 'agentMessage' && text !== '') agent.reply = text;
        const rest = remainder(text, open?.streamed ?? '');
        const phase = typeof item.phase === 'string' ? item.phase : undefined;
        return [...(rest ? [{ type: 'text' as const, text: rest, ...(phase ? { phase } : {}), ...under }] : []), { type: 'text-end' }];
      }
      case 'reasoning': {
        if (thread) return [];
        const summary = Array.isArray(item.summary) ? item.summary.filter((s): s is string => typeof s === 'string') : [];
        const content = Array.isArray(item.content) ? item.content.filter((s): s is string => typeof s === 'string') : [];
        const text = (summary.length > 0 ? summary : content).join('\n\n');
        const rest = open?.streamed ? '' : text;
        if (!rest && !open?.streamed) return [];
        return [...(rest ? [{ type: 'thinking' as const, text: rest }] : []), { type: 'thinking-end' }];
      }
      case 'contextCompaction':
        // A subagent's own compaction is not the chat's.
        return thread ? [] : [{ type: 'compaction', preTokens: null }];
      default: {
        const outputs: ProviderOutput[] = [];
        // A tool Codex reports only once it is done still gets its start.
        if (!open) {
          const tool = toolOf(item);
          outputs.push(
            { type: 'tool-start', toolUseId: id, name: tool.name, input: tool.input, ...(tool.description ? { description: tool.description } : {}), ...under },
            ...this.agentToolUsed(thread, tool.name),
          );
        }
        outputs.push(toolEnd(id, item));
        return outputs;
      }
    }
  }

  /** The row a subagent thread's work goes under (undefined: the chat's own thread). */
  private parentOf(thread: string | undefined): string | undefined {
    return thread ? this.agents.get(thread)?.toolUseId : undefined;
  }

  /** A spawn call completed: the thread it names is that subagent's from now on; no thread, it failed. */
  private spawned(id: string, item: Record<string, unknown>): ProviderOutput[] {
    this.spawning.delete(id);
    const threads = Array.isArray(item.receiverThreadIds) ? item.receiverThreadIds.filter((t): t is string => typeof t === 'string' && t !== '') : [];
    const threadId = threads[0];
    const early = threadId ? (this.early.get(threadId) ?? []) : [];
    if (threadId) this.early.delete(threadId);
    if (this.spawning.size === 0) this.early.clear();
    if (item.status === 'failed' || !threadId) {
      return [{ type: 'subagent-end', toolUseId: id, status: 'failed', result: 'Codex could not start the agent' }];
    }
    const startedAtMs = typeof item.startedAtMs === 'number' ? item.startedAtMs : null;
    const agent: AgentThread = {
      toolUseId: id,
      turnId: null,
      reply: null,
      error: null,
      tokens: 0,
      toolUses: 0,
      startedAtMs,
      seenAtMs: startedAtMs,
      stopping: false,
      spawnedIn: this.turnId,
      ended: false,
    };
    this.agents.set(threadId, agent);
    const model = typeof item.model === 'string' && item.model !== '' ? item.model : undefined;
    return [
      { type: 'subagent-progress', toolUseId: id, native: { threadId }, ...(model ? { model } : {}) },
      ...early.flatMap(([method, params]) => this.agentNotification(threadId, agent, method, params)),
    ];
  }

  /** Bounded: a thread that never turns out to be an agent's costs at most EARLY_MAX events. */
  private keepEarly(threadId: string, method: string, params: Record<string, unknown>): void {
    const kept = this.early.get(threadId) ?? [];
    if (kept.length >= EARLY_MAX) return;
    kept.push([method, params]);
    this.early.set(threadId, kept);
  }

  /** What a subagent's own thread says: its work under its row, its usage, its end. */
  private agentNotification(threadId: string, agent: AgentThread, method: string, p: Record<string, unknown>): ProviderOutput[] {
    const item = record(p.item);
    for (const at of [item.completedAtMs, item.startedAtMs, p.completedAtMs, p.startedAtMs]) {
      if (typeof at === 'number' && at > (agent.seenAtMs ?? 0)) agent.seenAtMs = at;
    }
    switch (method) {
      case 'turn/started': {
        const turnId = record(p.turn).id;
        agent.turnId = typeof turnId === 'string' ? turnId : null;
        agent.error = null;
        return [];
      }
      case 'item/started':
        return this.itemStarted(item, threadId);
      case 'item/completed':
        return this.itemCompleted(item, threadId);
      case 'item/agentMessage/delta':
        return this.streamed(p.itemId, p.delta, 'text').map((output) => ({ ...output, parentToolUseId: agent.toolUseId }));
      case 'item/commandExecution/outputDelta':
        return typeof p.itemId === 'string' && typeof p.delta === 'string' && p.delta !== ''
          ? [{ type: 'tool-output', toolUseId: p.itemId, text: p.delta }]
          : [];
      case 'thread/tokenUsage/updated': {
        const total = record(record(p.tokenUsage).total).totalTokens;
        if (typeof total !== 'number') return [];
        agent.tokens = total;
        return [{ type: 'subagent-progress', toolUseId: agent.toolUseId, usage: agentUsage(agent) }];
      }
      case 'error': {
        const message = record(p.error).message;
        if (p.willRetry !== true && typeof message === 'string') agent.error = message;
        return [];
      }
      case 'turn/completed':
        return this.agentTurnCompleted(threadId, agent, record(p.turn));
      default:
        return [];
    }
  }

  /** A subagent started a tool: its row's last tool and count. */
  private agentToolUsed(thread: string | undefined, name: string): ProviderOutput[] {
    const agent = thread ? this.agents.get(thread) : undefined;
    if (!agent) return [];
    agent.toolUses += 1;
    return [{ type: 'subagent-progress', toolUseId: agent.toolUseId, lastTool: name, usage: agentUsage(agent) }];
  }

  /** A subagent's turn ended: its row ends (done with its last reply; interrupted or failed, failed), its open tools with it. */
  private agentTurnCompleted(threadId: string, agent: AgentThread, turn: Record<string, unknown>): ProviderOutput[] {
    agent.turnId = null;
    agent.ended = true;
    const outputs: ProviderOutput[] = [];
    for (const [id, open] of this.items) {
      if (open.thread !== threadId) continue;
      this.items.delete(id);
      if (open.type === 'agentMessage' || open.type === 'plan') outputs.push({ type: 'text-end' });
      else if (open.type !== 'reasoning' && open.type !== 'userMessage') outputs.push({ type: 'tool-end', toolUseId: id, output: null, error: true });
    }
    const usage = agentUsage(agent);
    if (turn.status === 'completed') {
      outputs.push({ type: 'subagent-end', toolUseId: agent.toolUseId, status: 'done', result: agent.reply, usage });
    } else {
      const ours = turn.status === 'interrupted' && agent.stopping;
      const error = record(turn.error).message;
      const message = ours
        ? 'Stopped'
        : typeof error === 'string'
          ? error
          : (agent.error ?? (turn.status === 'interrupted' ? 'Codex stopped the agent' : 'The agent failed'));
      outputs.push({ type: 'subagent-end', toolUseId: agent.toolUseId, status: 'failed', result: agent.reply, summary: message, usage });
    }
    agent.stopping = false;
    return outputs;
  }

  private turnCompleted(turn: Record<string, unknown>): ProviderOutput[] {
    if (typeof turn.id === 'string' && this.turnId && turn.id !== this.turnId) return [];
    this.turnId = null;
    // A subagent's open items stay: it may run on past the turn that spawned it.
    for (const [id, open] of this.items) if (!open.thread) this.items.delete(id);
    this.spawning.clear();
    this.early.clear();
    const cancelled = [...this.pending.keys()].map((requestId) => ({ type: 'request-cancelled' as const, requestId }));
    this.pending.clear();
    const status = turn.status;
    // Codex keeps an agent running past the turn that spawned it (0.171: its thread goes on to its own end).
    // Every agent still at work, not only this turn's: one an earlier turn left running goes on past this one too.
    const outliving = [...this.agents.values()].filter((a) => !a.ended && a.spawnedIn !== null).map((a) => a.toolUseId);
    const still = outliving.length > 0 ? { outliving } : {};
    if (status === 'completed') return [...cancelled, { type: 'turn-end', state: 'done', ...still }];
    if (status === 'interrupted') {
      const ours = this.interrupted;
      this.interrupted = false;
      return [...cancelled, { type: 'turn-end', state: 'aborted', ...(ours ? {} : { message: 'Codex stopped the turn' }), ...still }];
    }
    const error = record(turn.error);
    const message = typeof error.message === 'string' ? error.message : (this.errorMessage ?? 'The turn failed');
    const limit = this.limitOf(error.codexErrorInfo);
    return [...cancelled, { type: 'turn-end', state: 'error', message, ...(limit ? { limit } : {}), ...still }];
  }

  /** A failing turn's limit: a usage limit with the reset Codex's newest rate limits name, or an overload. */
  private limitOf(info: unknown): ChatTurnLimit | undefined {
    if (info === 'serverOverloaded') return { kind: 'overload' };
    if (info !== 'usageLimitExceeded' && info !== 'rateLimitExceeded') return undefined;
    const resetsAt = this.blockedReset();
    return { kind: 'usage', ...(resetsAt !== undefined ? { resetsAt } : {}) };
  }

  /** When the fullest window of the newest rate limits resets, in ms (Codex sends seconds). */
  private blockedReset(): number | undefined {
    const limits = this.rateLimits;
    if (!limits) return undefined;
    let best: { used: number; resetsAt: number } | undefined;
    for (const key of ['primary', 'secondary']) {
      const window = record(limits[key]);
      if (typeof window.resetsAt !== 'number') continue;
      const used = typeof window.usedPercent === 'number' ? window.usedPercent : 0;
      if (!best || used > best.used) best = { used, resetsAt: window.resetsAt };
    }
    return best ? best.resetsAt * 1000 : undefined;
  }
}

/** A spawn call as the subagent row it opens: its prompt, the first line of which describes it. Codex's agents run beside the turn. */
function spawnStart(id: string, item: Record<string, unknown>, parent: string | undefined): ProviderOutput {
  const prompt = typeof item.prompt === 'string' && item.prompt !== '' ? item.prompt : null;
  const line =
    prompt
      ?.split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  const description = line === '' ? 'Codex agent' : line.length > DESCRIPTION_MAX ? `${line.slice(0, DESCRIPTION_MAX - 1)}…` : line;
  return { type: 'subagent-start', toolUseId: id, description, subagentType: null, prompt, background: true, ...(parent ? { parentToolUseId: parent } : {}) };
}

function agentUsage(agent: AgentThread): { totalTokens: number; toolUses: number; durationMs: number } {
  const durationMs = agent.startedAtMs !== null && agent.seenAtMs !== null ? Math.max(0, Math.round(agent.seenAtMs - agent.startedAtMs)) : 0;
  return { totalTokens: Math.max(0, Math.round(agent.tokens)), toolUses: agent.toolUses, durationMs };
}

function toolOf(item: Record<string, unknown>): { name: string; input: unknown; description?: string } {
  switch (item.type) {
    case 'commandExecution': {
      const command = displayCommand(item);
      return { name: 'Bash', input: { command, ...(typeof item.cwd === 'string' ? { cwd: item.cwd } : {}) }, description: command };
    }
    case 'fileChange':
      return { name: 'Edit', input: { changes: fileChanges(item.changes) } };
    case 'mcpToolCall':
      return { name: `mcp__${String(item.server)}__${String(item.tool)}`, input: item.arguments ?? {} };
    case 'dynamicToolCall':
      return { name: String(item.tool ?? 'tool'), input: item.arguments ?? {} };
    case 'webSearch':
      return { name: 'WebSearch', input: { query: item.query ?? '' } };
    case 'imageView':
      return { name: 'ViewImage', input: { path: item.path ?? '' } };
    case 'collabAgentToolCall':
      return { name: `agent:${String(item.tool ?? 'call')}`, input: { prompt: item.prompt ?? null, receiverThreadIds: item.receiverThreadIds ?? [] } };
    default:
      return { name: String(item.type ?? 'tool'), input: item };
  }
}

function toolEnd(id: string, item: Record<string, unknown>): ProviderOutput {
  const status = item.status;
  const failed = status === 'failed' || status === 'declined' || (typeof item.exitCode === 'number' && item.exitCode !== 0) || item.success === false;
  switch (item.type) {
    case 'commandExecution':
      return {
        type: 'tool-end',
        toolUseId: id,
        output: typeof item.aggregatedOutput === 'string' ? item.aggregatedOutput : status === 'declined' ? 'Declined' : null,
        error: failed,
      };
    case 'fileChange': {
      const changes = fileChanges(item.changes);
      return {
        type: 'tool-end',
        toolUseId: id,
        output: status === 'declined' ? 'Declined' : changes.map((c) => `${c.kind} ${c.path}`).join('\n'),
        error: failed,
        ...(changes.length ? { changes } : {}),
      };
    }
    case 'mcpToolCall': {
      const error = record(item.error);
      const output = typeof error.message === 'string' ? error.message : contentText(record(item.result).content);
      return { type: 'tool-end', toolUseId: id, output, error: failed || typeof error.message === 'string' };
    }
    case 'dynamicToolCall':
      return { type: 'tool-end', toolUseId: id, output: contentText(item.contentItems), error: failed };
    default:
      return { type: 'tool-end', toolUseId: id, output: null, error: failed };
  }
}

/**
 * A fileChange item's changes as ChatFileChange. Codex gives an update as unified hunks, but an added
 * or deleted file as its plain content: that becomes one hunk of added (or deleted) lines.
 */
function fileChanges(value: unknown): ChatFileChange[] {
  if (!Array.isArray(value)) return [];
  const out: ChatFileChange[] = [];
  for (const raw of value) {
    const change = record(raw);
    const kind = record(change.kind).type;
    if (typeof change.path !== 'string' || (kind !== 'add' && kind !== 'update' && kind !== 'delete')) continue;
    const text = typeof change.diff === 'string' ? change.diff : '';
    out.push({ path: change.path, kind, diff: kind === 'update' ? text : wholeFileHunk(text, kind === 'add' ? '+' : '-') });
  }
  return out;
}

function wholeFileHunk(content: string, sign: '+' | '-'): string {
  if (content === '' || content.startsWith('@@')) return content;
  const lines = content.replace(/\n$/, '').split('\n');
  const range = sign === '+' ? `-0,0 +1,${lines.length}` : `-1,${lines.length} +0,0`;
  return `@@ ${range} @@\n${lines.map((line) => sign + line).join('\n')}\n`;
}

function contentText(content: unknown): string | null {
  if (!Array.isArray(content)) return null;
  const texts = content
    .map((c) => record(c))
    .filter((c) => typeof c.text === 'string')
    .map((c) => c.text as string);
  return texts.length ? texts.join('\n') : null;
}

/** The command as a person wrote it: the parsed action when Codex has one, not `bash -lc '…'`. */
function displayCommand(item: Record<string, unknown>): string {
  const actions = Array.isArray(item.commandActions) ? item.commandActions.map((a) => record(a)) : [];
  if (actions.length === 1 && typeof actions[0]!.command === 'string') return actions[0]!.command;
  return typeof item.command === 'string' ? item.command : '';
}

/** The "always" decision Codex offers, preferring the session-wide one. */
function pickAllowAlways(decisions: unknown[] | null): unknown {
  if (!decisions) return 'acceptForSession';
  if (decisions.includes('acceptForSession')) return 'acceptForSession';
  return decisions.find((d) => typeof d === 'object' && d !== null && 'acceptWithExecpolicyAmendment' in d);
}

function allowAlwaysLabel(choice: unknown, command: string): { label: string; description: string } {
  if (choice === 'acceptForSession') return { label: 'Allow for this session', description: `Codex runs \`${command}\` again without asking in this chat` };
  const amendment = record(record(choice).acceptWithExecpolicyAmendment).execpolicy_amendment;
  const prefix = Array.isArray(amendment) ? amendment.join(' ') : command;
  return { label: 'Always allow this command', description: `Codex adds a rule allowing \`${prefix}\`` };
}

function toQuestions(value: unknown): ChatQuestion[] {
  if (!Array.isArray(value)) return [];
  return value
    .map((raw) => record(raw))
    .filter((q) => typeof q.id === 'string' && typeof q.question === 'string')
    .map((q) => ({
      id: q.id as string,
      header: typeof q.header === 'string' ? q.header : '',
      question: q.question as string,
      choices: (Array.isArray(q.options) ? q.options : [])
        .map((o) => record(o))
        .filter((o) => typeof o.label === 'string')
        .map((o) => ({
          label: o.label as string,
          description: typeof o.description === 'string' ? o.description : '',
        })),
      multiSelect: false,
    }));
}

/** What `full` adds beyond the `streamed` prefix; everything when the stream went its own way. */
function remainder(full: string, streamed: string): string {
  if (!streamed) return full;
  return full.startsWith(streamed) ? full.slice(streamed.length) : '';
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * Codex's rate-limit snapshot (`account/rateLimits/updated`, `account/rateLimits/read`) as windows:
 * `primary` and `secondary` of its `limitId` (percent used, minutes long, reset in seconds). Null
 * when it names no window.
 */
export function codexLimits(limits: Record<string, unknown>): Extract<ProviderOutput, { type: 'limits' }> | null {
  const limitId = typeof limits.limitId === 'string' && limits.limitId !== '' ? limits.limitId : 'codex';
  const windows = [];
  for (const key of ['primary', 'secondary'] as const) {
    const window = record(limits[key]);
    if (typeof window.usedPercent !== 'number' || !Number.isFinite(window.usedPercent)) continue;
    const minutes = typeof window.windowDurationMins === 'number' && window.windowDurationMins > 0 ? window.windowDurationMins : null;
    const resetsAt = typeof window.resetsAt === 'number' ? window.resetsAt * 1000 : null;
    windows.push(windowOf(`${limitId}.${key}`, minutes, window.usedPercent / 100, resetsAt));
  }
  const plan = typeof limits.planType === 'string' ? limits.planType : undefined;
  if (windows.length === 0 && plan === undefined) return null;
  return { type: 'limits', windows, ...(plan !== undefined ? { plan } : {}) };
}
