// ChatSession: one chat on this host. It owns the running turn and the queue, and the provider driver
// that does the work. Everything that changes the thread goes through `emit`, which hands the event to
// the chat's ChatLog (applied, numbered, written) and then to the runtime for delivery: the thread on
// disk, the log and what clients see are the same sequence.
//
// Deltas are coalesced per item for `coalesceMs` (delta-coalescer.ts) before they become events, so clients get fewer,
// larger ones; any other event, an attach or a write flushes them first, so text is in a snapshot or
// in the stream, never both.
//
// What survives a restart: the thread (see ChatLog); a turn that was running is aborted on the next
// start with a `notResumedNote` warning, and whatever it left open is settled.
import { randomBytes } from 'node:crypto';
import { ProtocolError } from '../../contracts/errors.ts';
import type { Thread } from '../../contracts/thread.ts';
import { notResumedNote } from '../../contracts/index.ts';
import type {
  AgentKind,
  ChatAttachment,
  ChatEvent,
  ChatInfo,
  ChatItem,
  ChatQueuedMessage,
  ChatTurnItem,
  ChatTurnLimit,
  RuntimeMode,
} from '../../contracts/index.ts';
import type { Provider, ProviderEmit, ProviderOutput, ProviderSession, TurnInput } from '../providers/provider.ts';
import { turnImages } from './attachments.ts';
import { DeltaCoalescer } from './delta-coalescer.ts';
import { ChatLog } from './chat-log.ts';
import { admitFileReads } from './file-reads.ts';
import { lastLineOf } from './last-line.ts';
import { isPendingRequest, requestSummaries } from './requests.ts';
import type { ChatRecord, ChatStore, LogEntry } from './store.ts';
import type { VisualInput } from './visuals.ts';
import {
  type Assembled,
  assembleOutlived,
  assembleTurn,
  closeStreams,
  isOutlivedWork,
  type OutlivedItems,
  type OutlivedWork,
  openTurn,
  type TurnClock,
  type TurnState,
  type TurnStep,
} from './turn-assembler.ts';
import type { LimitsReading } from '../usage/limits.ts';

/** What a session needs from the runtime around it. */
export interface ChatHost {
  /** Delivers one thread event (with its seq) to the clients that get this chat's events. */
  deliver(chatId: string, event: ChatEvent, seq: number): void;
  /** Tells every client the chat's new info (`chat.status`). */
  status(info: ChatInfo): void;
  publishVisual(chatId: string, input: VisualInput): Promise<unknown>;
  /** The mode a turn may really run in (the chat's ask, narrowed by the host policy now). */
  effectiveMode(mode: RuntimeMode): RuntimeMode;
  warn(message: string): void;
  /** The account a chat runs under: its config folder and variables (absent = the CLI's default). */
  accountFor?(kind: AgentKind, accountId: string): { home?: string; env?: Record<string, string> } | undefined;
  /**
   * A snapshot of the git work tree `cwd` is in (see checkpoints.ts): its tree id, or null when git
   * could not take one; never rejects. Answers null at once (no promise) outside any git work tree.
   */
  checkpoint?(chatId: string, cwd: string): Promise<string | null> | null;
  /** Whether another chat continues the same backend session (a fork not yet branched). */
  sessionShared?(chatId: string, agentSessionId: string): boolean;
  /** Folders besides the chat's own and its uploads where a message may make the agent read files (the policy's roots). */
  readableFolders?(): readonly string[];
  /** The CLI reported its plan's limits for the account this chat runs under. */
  limits?(kind: AgentKind, accountId: string, reading: LimitsReading): void;
}

export interface ChatSessionOptions {
  store: ChatStore;
  host: ChatHost;
  provider: Provider | undefined;
  coalesceMs: number;
  logLimit: number;
  writeDelayMs: number;
}

/** A message on its way into a turn: sent now, or taken from the queue. */
export interface OutgoingMessage {
  text: string;
  /** What the backend gets instead of `text` (a fork's transcript first); the thread shows `text`. Not kept in a queue. */
  prompt?: string;
  turnId?: string;
  mentions?: string[];
  skills?: string[];
  chats?: string[];
  attachments?: ChatAttachment[];
}

interface ActiveTurn {
  id: string;
  /** The backend has the turn (it waits for the work-tree checkpoint before that). */
  started: boolean;
  /** What the turn assembler keeps about it (turn-assembler.ts). */
  state: TurnState;
}

/** Ids and times as the assembler takes them (tests give their own). */
const SESSION_CLOCK: TurnClock = { now: () => Date.now(), newId };

export class ChatSession {
  readonly chatId: string;
  private readonly log: ChatLog;
  private readonly options: ChatSessionOptions;
  provider: Provider | undefined;
  private driver: ProviderSession | null = null;
  /** What the open driver was opened with (see openDriver). */
  private driverSettings = '';
  private turn: ActiveTurn | null = null;
  private failed = false;
  /** The open tools (by their tool use id) and replies (replyKey) of subagents that outlived their turn: their items. */
  private outlivedItems: OutlivedItems = new Map();
  private readonly deltas: DeltaCoalescer;
  private closed = false;

  /** Takes up a chat from its record and the log lines read after it (a new chat: an empty record). */
  constructor(record: Pick<ChatRecord, 'info' | 'items' | 'seq' | 'epoch'>, log: LogEntry[], options: ChatSessionOptions) {
    this.chatId = record.info.chatId;
    this.options = options;
    this.provider = options.provider;
    this.log = new ChatLog(record, log, {
      store: options.store,
      logLimit: options.logLimit,
      writeDelayMs: options.writeDelayMs,
      warn: (message) => options.host.warn(message),
    });
    this.deltas = new DeltaCoalescer(options.coalesceMs, (itemId, text) => this.record({ type: 'delta', itemId, text }));
  }

  get thread(): Thread {
    return this.log.thread;
  }

  /** The seq of the chat's last event. */
  get seq(): number {
    return this.log.seq;
  }

  /** Bumped by every clear: history cursors of an older epoch are expired. */
  get epoch(): number {
    return this.log.epoch;
  }

  get info(): ChatInfo {
    return this.thread.info;
  }

  get activeTurnId(): string | null {
    return this.turn?.id ?? null;
  }

  // ---------------------------------------------------------------------------------------------
  // Events

  /** Applies, numbers, logs and delivers one event. Pending deltas go first, so order holds. */
  emit(event: ChatEvent): void {
    if (this.closed) return;
    this.flushDeltas();
    this.record(event);
  }

  private record(event: ChatEvent): void {
    const seq = this.log.append(event);
    this.options.host.deliver(this.chatId, event, seq);
  }

  /** Text appended to a reply, thought or running tool; coalesced per item for `coalesceMs`. */
  delta(itemId: string, text: string): void {
    if (this.closed) return;
    this.deltas.add(itemId, text);
  }

  /** Sends the streamed text still being joined (delta-coalescer.ts). */
  flushDeltas(): void {
    this.deltas.flush();
  }

  /** Adds or replaces an item; a person's message or an agent's finished reply becomes the chat's last line. */
  upsert(item: ChatItem): void {
    if (this.closed) return;
    const line = lastLineOf(item, this.thread.get(item.id), Date.now());
    this.emit({ type: 'item', item });
    if (line) this.updateInfo({ lastLine: line });
  }

  /** Changes info (status and requests are derived), emits it and tells every client; nothing when unchanged. */
  updateInfo(patch: Partial<ChatInfo> = {}): void {
    const next = this.derive({ ...this.thread.info, ...patch });
    if (JSON.stringify(next) === JSON.stringify(this.thread.info)) return;
    this.emit({ type: 'info', info: next });
    this.options.host.status(next);
  }

  /** Emits the info as it stands (a new chat's first event) and tells every client. */
  announce(): void {
    const info = this.derive(this.thread.info);
    this.emit({ type: 'info', info });
    this.options.host.status(info);
  }

  private derive(info: ChatInfo): ChatInfo {
    const requests = requestSummaries(this.thread.items);
    const out: ChatInfo = { ...info };
    if (requests.length > 0) out.requests = requests;
    else delete out.requests;
    if (!out.queue || out.queue.length === 0) {
      delete out.queue;
      delete out.queuePaused;
    }
    if (out.queuePaused === false) delete out.queuePaused;
    for (const key of Object.keys(out) as Array<keyof ChatInfo>) if (out[key] === undefined) delete out[key];
    out.activeTurnId = this.turn?.id ?? null;
    out.running = this.driver?.running ?? false;
    out.status = requests.length > 0 ? 'needs-you' : this.turn ? 'running' : this.failed ? 'error' : 'idle';
    return out;
  }

  /** Events after `since`, when the log still holds every one of them; else null (the client needs a snapshot). */
  eventsSince(since: number): ChatEvent[] | null {
    this.flushDeltas();
    return this.log.since(since);
  }

  pendingRequests(): ChatItem[] {
    return this.thread.items.filter(isPendingRequest);
  }

  // ---------------------------------------------------------------------------------------------
  // Turns

  /**
   * Starts a turn for `message` now; the caller made sure none runs. A backend that cannot start (none
   * configured for this chat's kind any more, or it throws) fails the turn with a note: it never stays
   * open, and a message taken from the queue is never dropped unseen.
   */
  begin(message: OutgoingMessage): string {
    const turnId = message.turnId ?? newId('turn');
    this.open(turnId, message, (driver, emit) => driver.startTurn(turnInput(message, turnId), emit));
    return turnId;
  }

  /**
   * Opens a turn (with the user's message, if any) and hands it to the backend through `start`. In a
   * git work tree a turn that brings a message gets it only once the tree is snapshotted.
   */
  private open(turnId: string, message: OutgoingMessage | null, start: (driver: ProviderSession, emit: ProviderEmit) => void, label?: string): void {
    const turn = this.opened(turnId, message, label ? { label } : {});
    const begin = (): void => {
      turn.started = true;
      try {
        // Checked again as it leaves: a queued message, or a symlink changed since it was sent.
        if (message) this.admitFileReads(fileReadInput(message));
        start(this.openDriver(), (output) => this.onOutput(turnId, output));
      } catch (error) {
        this.finish('error', `The agent could not start: ${describe(error)}`);
      }
    };
    // In a git work tree the backend gets the turn once the tree is snapshotted, before it can touch it.
    const checkpoint = message ? (this.options.host.checkpoint?.(this.chatId, this.info.cwd) ?? null) : null;
    if (!checkpoint) begin();
    else {
      void checkpoint.then((tree) => {
        if (this.turn !== turn || this.closed) return; // cancelled or shut down meanwhile
        const item = this.thread.get(turnId);
        if (tree && item?.kind === 'turn') this.upsert({ ...item, checkpoint: tree });
        begin();
      });
    }
  }

  /** A turn running from now on (with the user's message, if any): its item, the chat's info. */
  private opened(turnId: string, message: OutgoingMessage | null, marks: Pick<ChatTurnItem, 'label' | 'origin'>): ActiveTurn {
    const now = Date.now();
    this.failed = false;
    const turn: ActiveTurn = { id: turnId, started: false, state: openTurn(turnId) };
    this.turn = turn;
    if (message) this.upsert({ id: newId('msg'), kind: 'user', createdAt: now, turnId, ...messageParts(message) });
    this.upsert({ id: turnId, kind: 'turn', createdAt: now, turnId, state: 'running', endedAt: null, costUsd: 0, ...marks });
    this.updateInfo({ limit: undefined });
    return turn;
  }

  /**
   * A turn the backend started on its own (ProviderChatContext.agentTurn): open now, origin `agent`,
   * no message; null while a turn runs (or the chat is shut), so it never takes another turn's place.
   */
  private agentTurn(label: string): ProviderEmit | null {
    if (this.turn || this.closed) return null;
    const turnId = newId('turn');
    this.opened(turnId, null, { origin: 'agent', label }).started = true;
    return (output) => this.onOutput(turnId, output);
  }

  /**
   * The backend for the next turn: the one already open, unless the chat's folder, mode, model or
   * account changed since it was opened (a narrower mode must reach the backend, not wait for a
   * restart); then it is ended and the next one resumes the conversation by its session id.
   */
  private openDriver(): ProviderSession {
    const provider = this.provider;
    if (!provider) throw new Error(`this host has no ${this.info.provider} provider`);
    const info = this.info;
    const runtimeMode = this.options.host.effectiveMode(info.runtimeMode);
    const settings = JSON.stringify([info.cwd, runtimeMode, info.selection, info.account ?? null]);
    if (this.driver && settings !== this.driverSettings) this.endDriver();
    const account = info.account ? this.options.host.accountFor?.(provider.kind, info.account) : undefined;
    this.driver ??= provider.open({
      chatId: this.chatId,
      cwd: info.cwd,
      runtimeMode,
      selection: info.selection,
      account: info.account,
      agentSessionId: info.agentSessionId,
      ...(info.agentSessionId && this.options.host.sessionShared?.(this.chatId, info.agentSessionId) ? { forkSession: true } : {}),
      ...(account?.home ? { accountHome: account.home } : {}),
      ...(account?.env ? { accountEnv: account.env } : {}),
      side: (output) => this.side(output),
      agentTurn: (label) => this.agentTurn(label),
    });
    this.driverSettings = settings;
    return this.driver;
  }

  /**
   * Refuses (`folder-denied`, naming the path) a message that would make this chat's CLI read a file
   * outside the chat's folder, its uploads and the policy's roots: the attachments it is handed and
   * whatever its prompt processing expands from the text (file-reads.ts, Provider.filesRead).
   */
  admitFileReads(input: Pick<TurnInput, 'text' | 'attachments' | 'mentions'>): void {
    const info = this.info;
    const provider = this.provider;
    provider?.admitInput?.(input);
    const files = provider?.filesRead ? provider.filesRead(input, { cwd: info.cwd, ...this.accountEnvForReads() }) : input.attachments.map((a) => a.path);
    admitFileReads(files, [info.cwd, this.options.store.attachmentDir(this.chatId), ...(this.options.host.readableFolders?.() ?? [])]);
  }

  /** The account's variables (its HOME decides what `~` means to the CLI); an account the policy refuses now fails the turn where the CLI starts, not here. */
  private accountEnvForReads(): { accountEnv?: Record<string, string> } {
    const { account } = this.info;
    if (!account || !this.provider) return {};
    try {
      const env = this.options.host.accountFor?.(this.provider.kind, account)?.env;
      return env ? { accountEnv: env } : {};
    } catch {
      return {};
    }
  }

  /** Hands `message` to the running turn if the backend can take it; answers whether it did. */
  steer(message: OutgoingMessage): boolean {
    const turn = this.turn;
    if (!turn || !turn.started || !this.driver?.steer || !this.provider?.canSteer) return false;
    this.admitFileReads(fileReadInput(message));
    if (!this.driver.steer(turnInput(message, turn.id))) return false;
    this.closeStreams();
    this.upsert({ id: newId('msg'), kind: 'user', createdAt: Date.now(), turnId: turn.id, ...messageParts(message) });
    return true;
  }

  /** Queues `message` behind the running turn; answers the queued message (its turn is reserved). */
  enqueue(message: OutgoingMessage): ChatQueuedMessage {
    const queued: ChatQueuedMessage = { id: newId('queued'), turnId: newId('turn'), createdAt: Date.now(), ...messageParts(message) };
    this.updateInfo({ queue: [...(this.info.queue ?? []), queued] });
    return queued;
  }

  unqueue(messageId: string): ChatQueuedMessage {
    const queue = this.info.queue ?? [];
    const message = queue.find((m) => m.id === messageId);
    if (!message) throw new ProtocolError('request-not-found', 'That message is no longer queued');
    this.updateInfo({ queue: queue.filter((m) => m !== message) });
    return message;
  }

  /** Puts a queued message first and stops the running turn, so it goes next. */
  sendNow(messageId: string): void {
    const queue = this.info.queue ?? [];
    const message = queue.find((m) => m.id === messageId);
    if (!message) throw new ProtocolError('request-not-found', 'That message is no longer queued');
    this.updateInfo({ queue: [message, ...queue.filter((m) => m !== message)], queuePaused: false });
    if (this.turn) this.cancel(false);
    else this.deliverNext();
  }

  /** Stops the running turn and settles its open requests as cancelled; `pauseQueue` holds what is queued. */
  cancel(pauseQueue: boolean): void {
    if (!this.turn) return;
    this.driver?.interrupt();
    this.finish('aborted', undefined, pauseQueue && (this.info.queue?.length ?? 0) > 0);
  }

  /** Starts the next queued message if nothing runs and the queue is not held. */
  deliverNext(): void {
    if (this.turn || this.closed || this.info.queuePaused) return;
    const [next, ...rest] = this.info.queue ?? [];
    if (!next) return;
    this.updateInfo({ queue: rest });
    this.begin(next);
  }

  /** `by`: who answered (the verified signer, see trust/gate.ts; null from a local client), kept on the card for every device to see. */
  approve(requestId: string, decision: 'allow' | 'allow-always' | 'deny', message?: string, by?: string | null): void {
    const item = this.thread.items.find((i) => i.kind === 'approval' && i.requestId === requestId && i.decision === 'pending');
    if (!item || item.kind !== 'approval') throw new ProtocolError('request-not-found', 'Nothing waits for that approval any more');
    this.upsert({ ...item, decision, ...(by ? { answeredBy: by } : {}), ...(decision === 'deny' && message ? { reason: message } : {}) });
    this.updateInfo();
    this.driver?.answerApproval(requestId, decision, message);
  }

  answer(requestId: string, answers: Record<string, string>): void {
    const item = this.thread.items.find((i) => i.kind === 'question' && i.requestId === requestId && i.state === 'pending');
    if (!item || item.kind !== 'question') throw new ProtocolError('request-not-found', 'Nothing waits for that answer any more');
    this.upsert({ ...item, answers, state: 'answered' });
    this.updateInfo();
    this.driver?.answerQuestion(requestId, answers);
  }

  dismiss(itemId: string): void {
    const item = this.thread.get(itemId);
    if (!item || item.kind !== 'question' || item.state !== 'pending' || !item.async) {
      throw new ProtocolError('request-not-found', 'No question that can be dismissed waits there');
    }
    this.upsert({ ...item, state: 'dismissed' });
    this.updateInfo();
    this.driver?.answerQuestion(item.requestId, null);
  }

  /**
   * Folds the backend's context, as the backend does it, in a turn labelled `Compact` (the client
   * sees it run, and the backend's own compaction marker in it); answers its turn id. Only between
   * turns; a chat whose backend has said nothing yet has nothing to fold, and no CLI is started for it.
   */
  compact(): string | null {
    if (this.turn) throw new ProtocolError('chat-busy', 'A turn is running; compact once it settled');
    if (!this.info.agentSessionId) return null;
    let driver: ProviderSession;
    try {
      driver = this.openDriver();
    } catch (error) {
      throw new ProtocolError('chat-unsupported', `This chat cannot compact: ${describe(error)}`);
    }
    if (!driver.compact) throw new ProtocolError('chat-unsupported', `${this.provider?.info().name ?? 'This backend'} cannot compact on request`);
    const turnId = newId('turn');
    this.open(
      turnId,
      null,
      (backend, emit) => {
        if (!backend.compact) throw new Error('the backend can no longer compact');
        backend.compact(turnId, emit);
      },
      'Compact',
    );
    return turnId;
  }

  /** Empties the thread and starts the backend session again; `force` stops a running turn first. */
  clear(force: boolean): void {
    if (this.turn && !force) throw new ProtocolError('chat-busy', 'A turn is running; stop it or clear with force');
    // The queue goes with the thread; emptied first so stopping the turn delivers nothing.
    this.updateInfo({ queue: undefined, queuePaused: undefined });
    if (this.turn) this.cancel(false);
    this.endDriver();
    this.failed = false;
    const info = this.info;
    const fresh: ChatInfo = this.derive({
      ...info,
      agentSessionId: null,
      model: null,
      queue: undefined,
      queuePaused: undefined,
      limit: undefined,
      // The thread is gone, and with it what the list showed of it.
      lastLine: undefined,
      effectiveRuntimeMode: undefined,
      permissionMode: undefined,
      usage: { contextTokens: 0, contextWindow: info.usage.contextWindow, costUsd: 0, turns: 0 },
    });
    this.outlivedItems = new Map();
    // The reset starts a new epoch in the log (see ChatLog): cursors from before it expire.
    this.emit({ type: 'reset', info: fresh, items: [] });
    this.options.host.status(this.info);
  }

  /** After a restart: a turn left running is aborted with a warning note, whatever it left open is settled, and the queue goes on. */
  recover(reason: string): boolean {
    // Background commands ended with the process that ran them.
    if (this.info.background) this.updateInfo({ background: undefined });
    const running = this.thread.items.filter((i): i is ChatTurnItem => i.kind === 'turn' && i.state === 'running');
    // A subagent that outlived its turn (Codex's collab agents) ran in the CLI the restart ended: no
    // report of its end can come any more, so its row is settled here like the turn's own open work.
    const orphans = this.thread.items.some((i) => i.kind === 'subagent' && i.status === 'running');
    const stale = this.info.activeTurnId !== null || this.info.running || running.length > 0 || orphans || this.pendingRequests().length > 0;
    if (!stale) return false;
    const now = Date.now();
    for (const turn of running) {
      this.upsert({ id: newId('note'), kind: 'note', createdAt: now, turnId: turn.id, level: 'warning', text: notResumedNote(reason) });
    }
    this.settleOpen();
    for (const turn of running) {
      this.upsert({ ...turn, state: 'aborted', endedAt: now });
      this.checkpointAfter(turn.id);
    }
    this.updateInfo();
    this.deliverNext();
    return running.length > 0;
  }

  /** What the backend says about the chat between or during turns: its background tasks, its plan's limits. */
  private side(output: ProviderOutput): void {
    if (this.closed) return;
    try {
      if (output.type === 'background') {
        const now = this.info.background ?? [];
        if (now.length === 0 && output.tasks.length === 0) return;
        this.updateInfo({ background: output.tasks.length > 0 ? output.tasks : undefined });
      } else if (isOutlivedWork(output)) {
        this.outlived(output);
      } else if (output.type === 'limits') {
        this.options.host.limits?.(this.info.provider, this.info.account ?? this.info.provider, {
          ...(output.plan !== undefined ? { plan: output.plan } : {}),
          windows: output.windows,
        });
      }
    } catch (error) {
      this.options.host.warn(`chat ${this.chatId}: provider output ${output.type} failed: ${describe(error)}`);
    }
  }

  /** The work of a subagent that outlived its turn, as the assembler places it (assembleOutlived). */
  private outlived(work: OutlivedWork): void {
    const assembled = assembleOutlived(work, this.outlivedItems, this.thread, this.turn?.id ?? null, SESSION_CLOCK);
    this.outlivedItems = assembled.items;
    this.steps(assembled.steps);
  }

  /** Stops a background task the backend reported (`task-not-found` otherwise; `chat-unsupported` when it cannot). */
  stopTask(taskId: string): void {
    if (!(this.info.background ?? []).some((task) => task.id === taskId))
      throw new ProtocolError('task-not-found', `No background task ${taskId} in this chat`);
    const driver = this.driver;
    if (!driver?.stopTask) throw new ProtocolError('chat-unsupported', `${this.info.provider} cannot stop a background task`);
    if (!driver.stopTask(taskId)) throw new ProtocolError('task-not-found', `Background task ${taskId} ended with its CLI`);
  }

  /**
   * Stops one running subagent through its CLI (Claude Code: `stop_task` on the subagent's task;
   * Codex: `turn/interrupt` on the agent's own thread);
   * the row settles when the CLI reports it stopped. `subagent-not-found` for no such row or one that
   * finished; `chat-unsupported` where the CLI cannot stop one on its own (the turn's cancel can).
   */
  stopSubagent(toolUseId: string): void {
    const row = this.thread.items.find((item) => item.kind === 'subagent' && item.toolUseId === toolUseId);
    if (row?.kind !== 'subagent') throw new ProtocolError('subagent-not-found', `No subagent ${toolUseId} in this chat`);
    if (row.status !== 'running')
      throw new ProtocolError('subagent-not-found', `Subagent ${toolUseId} already ${row.status === 'done' ? 'finished' : 'failed'}`);
    const unsupported = `${this.info.provider} cannot stop one subagent on its own here; stop the turn (chat.cancel with subagents)`;
    if (row.origin === 'ruimte') throw new ProtocolError('chat-unsupported', 'A subagent the host opened stops with its own chat');
    const driver = this.driver;
    if (!driver?.stopSubagent) throw new ProtocolError('chat-unsupported', unsupported);
    const stopped = driver.stopSubagent(toolUseId);
    if (stopped === null)
      throw new ProtocolError(
        'chat-unsupported',
        `${this.info.provider} has named no way to stop subagent ${toolUseId} (yet); stop the turn (chat.cancel with subagents)`,
      );
    if (!stopped) throw new ProtocolError('subagent-not-found', `Subagent ${toolUseId} ended with its CLI`);
  }

  private onOutput(turnId: string, output: ProviderOutput): void {
    const turn = this.turn;
    if (!turn || turn.id !== turnId || this.closed) return; // a turn already settled: late output is dropped
    try {
      this.apply(turn, output);
    } catch (error) {
      this.options.host.warn(`chat ${this.chatId}: provider output ${output.type} failed: ${describe(error)}`);
    }
  }

  /** Takes the steps the turn assembler answers for one output, in order. */
  private apply(turn: ActiveTurn, output: ProviderOutput): void {
    this.take(turn, assembleTurn(turn.state, output, this.thread, SESSION_CLOCK));
  }

  private take(turn: ActiveTurn, assembled: Assembled): void {
    // The state first: `finish` (a step) reads the turn's cost and closes what is still open.
    turn.state = assembled.turn;
    this.steps(assembled.steps, turn.id);
  }

  /** The assembler's steps, in order; `turnId`: the turn a failed visual's note goes under. */
  private steps(steps: readonly TurnStep[], turnId: string | null = null): void {
    for (const step of steps) {
      switch (step.type) {
        case 'upsert':
          this.upsert(step.item);
          break;
        case 'delta':
          this.delta(step.itemId, step.text);
          break;
        case 'close':
          this.closeItem(step.itemId);
          break;
        case 'update': {
          this.flushDeltas();
          const item = this.thread.get(step.itemId);
          if (item) this.upsert(step.change(item));
          break;
        }
        case 'info':
          this.updateInfo(step.patch);
          break;
        case 'visual': {
          const epoch = this.epoch;
          this.options.host.publishVisual(this.chatId, step.input).catch((error: unknown) => {
            // A clear meanwhile took the turn with it: nothing to say in the new thread.
            if (this.epoch !== epoch) return;
            this.upsert({
              id: newId('note'),
              kind: 'note',
              createdAt: Date.now(),
              turnId,
              level: 'warning',
              text: `A visual could not be published: ${describe(error)}`,
            });
          });
          break;
        }
        case 'side':
          this.side(step.output);
          break;
        case 'finish':
          this.finish(step.state, step.message, false, step.limit, step.outliving);
          break;
      }
    }
  }

  /** Settles the running turn: streams closed, open requests cancelled, cost counted, the queue moved on. */
  private finish(state: 'done' | 'error' | 'aborted', message?: string, pauseQueue = false, limit?: ChatTurnLimit, outliving: readonly string[] = []): void {
    const turn = this.turn;
    if (!turn) return;
    const now = Date.now();
    this.closeStreams();
    this.settleOpen(new Set(outliving), turn.id);
    if (state === 'error' && message) {
      this.upsert({ id: newId('note'), kind: 'note', createdAt: now, turnId: turn.id, level: 'error', text: message });
    }
    const item = this.thread.get(turn.id);
    if (item?.kind === 'turn') this.upsert({ ...item, state, endedAt: now, costUsd: turn.state.costUsd, ...(limit ? { limit } : {}) });
    this.turn = null;
    this.failed = state === 'error';
    const usage = this.info.usage;
    this.updateInfo({
      usage: { ...usage, costUsd: usage.costUsd + turn.state.costUsd, turns: usage.turns + 1 },
      ...(pauseQueue ? { queuePaused: true } : {}),
      ...(limit ? { limit } : {}),
    });
    // Asked before the next turn's "before", so the two are taken in order.
    this.checkpointAfter(turn.id);
    this.deliverNext();
  }

  /** The work tree once a turn settled, beside the one it started from (`chat.turnDiff` diffs the two). */
  private checkpointAfter(turnId: string): void {
    const item = this.thread.get(turnId);
    if (item?.kind !== 'turn' || !item.checkpoint) return;
    const epoch = this.epoch;
    void this.options.host.checkpoint?.(this.chatId, this.info.cwd)?.then((tree) => {
      const current = this.thread.get(turnId);
      if (!tree || this.closed || this.epoch !== epoch || current?.kind !== 'turn') return;
      this.upsert({ ...current, checkpointAfter: tree });
    });
  }

  /**
   * Whatever a turn that ended left open is settled: requests cancelled, streams finished as they
   * stand, tools still running failed. Only one turn runs at a time, so anything open is its, except
   * the subagents its CLI says go on (`outliving`), and their tools and replies: those end when the
   * CLI says so. `ending`: the turn that ended; a row an earlier turn left running outlived that one
   * and is not this turn's to settle (a cancel names no `outliving`). Absent (a restart): all is settled.
   */
  private settleOpen(outliving: ReadonlySet<string> = new Set(), ending?: string): void {
    const goesOn = new Set(outliving);
    if (ending !== undefined) {
      for (const item of this.thread.items) if (item.kind === 'subagent' && item.status === 'running' && item.turnId !== ending) goesOn.add(item.toolUseId);
    }
    for (const item of this.thread.items.slice()) {
      if (item.kind === 'subagent' && goesOn.has(item.toolUseId)) continue;
      if ((item.kind === 'tool' || item.kind === 'assistant') && item.parentToolUseId && goesOn.has(item.parentToolUseId)) continue;
      if (isPendingRequest(item)) {
        this.upsert(item.kind === 'approval' ? { ...item, decision: 'cancelled' } : { ...item, state: 'cancelled' });
      } else if ((item.kind === 'assistant' || item.kind === 'thinking') && item.streaming) {
        this.closeItem(item.id);
      } else if (item.kind === 'tool' && item.state === 'running') {
        this.upsert({ ...item, state: 'error' });
      } else if (item.kind === 'subagent' && item.status === 'running') {
        this.upsert({ ...item, status: 'failed', finishedAt: Date.now() });
      }
    }
    if (ending === undefined) this.outlivedItems = new Map();
  }

  private closeStreams(): void {
    if (this.turn) this.take(this.turn, closeStreams(this.turn.state));
  }

  private closeItem(id: string): void {
    this.flushDeltas();
    const item = this.thread.get(id);
    if (item?.kind === 'assistant' && item.streaming) this.upsert({ ...item, streaming: false });
    else if (item?.kind === 'thinking' && item.streaming) this.upsert({ ...item, streaming: false, endedAt: Date.now() });
  }

  // ---------------------------------------------------------------------------------------------
  // Disk and lifetime

  /** Writes the record (the checkpoint) now; the log is already on disk. */
  write(): Promise<void> {
    return this.log.write();
  }

  /** For shutdown: deltas flushed, the record written, the backend ended. A running turn stays `running` on disk, so the next start reads it as interrupted. */
  async close(): Promise<void> {
    this.flushDeltas();
    this.closed = true;
    this.log.stop();
    const driver = this.driver;
    this.driver = null;
    let failure: unknown = null;
    try {
      await this.write();
    } catch (error) {
      failure = error;
    }
    if (driver) {
      driver.interrupt();
      await driver.kill().catch(() => undefined);
    }
    if (failure) throw failure;
  }

  /** For kill: everything stops, nothing more is written. */
  dispose(): void {
    this.closed = true;
    this.log.stop();
    this.deltas.discard();
    this.turn = null;
    this.endDriver();
  }

  /** The backend's process is up (started by a turn, kept between turns until released). */
  get backendRunning(): boolean {
    return this.driver !== null;
  }

  /** Ends the backend's process while no turn runs (a hidden fork's, once its summary is written; a chat's whose session a terminal took back); the next turn resumes by session id. */
  releaseBackend(): void {
    if (!this.turn) this.endDriver();
  }

  private endDriver(): void {
    const driver = this.driver;
    this.driver = null;
    if (!driver) return;
    driver.interrupt();
    void driver.kill().catch(() => undefined);
  }
}

/** The parts of a message a user item and a queued message both carry; empty lists are left out. */
function messageParts(message: OutgoingMessage): Pick<ChatQueuedMessage, 'text' | 'mentions' | 'skills' | 'chats' | 'attachments'> {
  return {
    text: message.text,
    ...(message.mentions?.length ? { mentions: message.mentions } : {}),
    ...(message.skills?.length ? { skills: message.skills } : {}),
    ...(message.chats?.length ? { chats: message.chats } : {}),
    ...(message.attachments?.length ? { attachments: message.attachments } : {}),
  };
}

/** What a message hands the CLI, as far as which files it makes it read (no image bytes read yet). */
export function fileReadInput(message: OutgoingMessage): Pick<TurnInput, 'text' | 'attachments' | 'mentions'> {
  return { text: message.prompt ?? message.text, attachments: message.attachments ?? [], ...(message.mentions ? { mentions: message.mentions } : {}) };
}

function turnInput(message: OutgoingMessage, turnId: string): TurnInput {
  const attachments = message.attachments ?? [];
  const images = turnImages(attachments);
  return { turnId, text: message.prompt ?? message.text, attachments, mentions: message.mentions, ...(images.length > 0 ? { images } : {}) };
}

export function newId(prefix: string): string {
  return `${prefix}-${randomBytes(9).toString('base64url')}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
