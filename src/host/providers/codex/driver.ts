// CodexSession: one chat's `codex app-server` process and its turns. It owns the process
// (CliProcess), speaks JSON-RPC to it (JsonRpcPeer) and leaves every reading of Codex's messages to
// the mapper; what it adds is order: initialize, then the thread (start, resume or fork), then turns,
// and never a new turn while Codex still runs the one we interrupted.
//
// The runtime mode becomes Codex's approval policy and sandbox on the thread (CODEX_MODES); what
// Codex confirms in its answer is reported as the chat's effective mode. The account is a config
// folder: `CODEX_HOME`.
import os from 'node:os';
import path from 'node:path';
import type { ProviderChatContext, ProviderEmit, ProviderOutput, ProviderSession, TurnInput } from '../provider.ts';
import { CliProcess } from '../cli-process.ts';
import type { CliExit } from '../cli-process.ts';
import { admitChoice, admitModelSlug, admitOptionValue, admitSessionId, UUID_SESSION_ID } from '../cli-values.ts';
import { CODEX_MODES, CodexMapper, runtimeModeOf } from './mapper.ts';
import type { CodexReply } from './mapper.ts';
import { JsonRpcPeer, RpcError } from './rpc.ts';

/** How to start `codex`: the command, extra arguments and environment, the default account's home. */
export interface CodexLaunch {
  command: string;
  /** Before `app-server` (e.g. a script path when `command` is node). */
  prefixArgs?: string[];
  /** After `app-server` (e.g. `-c key=value`). */
  args?: string[];
  env?: Record<string, string>;
  /** CODEX_HOME of the default account; absent = Codex's own default (`~/.codex`). */
  home?: string;
  clientVersion: string;
}

/** The Codex feature that lets the model ask the person (`request_user_input`) outside plan mode. */
export const QUESTIONS_FEATURE = 'default_mode_request_user_input';

/** The label of a turn Codex started on its own (ProviderChatContext.agentTurn). */
export const AGENT_TURN_LABEL = 'Codex went on by itself';

/** How long an interrupted turn may take to end before the process is replaced. */
const INTERRUPT_GRACE_MS = 5_000;

export function codexArgs(launch: CodexLaunch): string[] {
  return [...(launch.prefixArgs ?? []), 'app-server', '--enable', QUESTIONS_FEATURE, ...(launch.args ?? [])];
}

/** Codex's thread ids (`thread.id`, what `thread/resume` and `thread/fork` take). */
export const CODEX_THREAD_IDS = UUID_SESSION_ID;

/** How one process opens the chat's thread, and what each turn adds; every client value in it checked. */
export interface CodexThreadPlan {
  method: 'thread/start' | 'thread/resume' | 'thread/fork';
  params: Record<string, unknown>;
  /** What a new thread gets when the old one cannot be continued (`thread/start`). */
  settings: Record<string, unknown>;
  /** Added to every `turn/start`. */
  turn: Record<string, unknown>;
}

/**
 * The thread a process opens for `context`: `threadId` resumed (or forked), else a new one. The
 * thread id, the model and the effort came from a client, so each is checked (cli-values.ts) and a
 * value that does not fit throws `bad-request` naming the field, before any process starts.
 * `efforts`: the model's own effort choices, null when the catalog does not know the model.
 */
export function codexThreadPlan(context: ProviderChatContext, threadId: string | null, forking: boolean, efforts: readonly string[] | null): CodexThreadPlan {
  const { approvalPolicy, sandbox } = CODEX_MODES[context.runtimeMode];
  const model = context.selection.model;
  const settings = {
    cwd: context.cwd,
    approvalPolicy,
    sandbox,
    ...(model !== DEFAULT_MODEL ? { model: admitModelSlug('selection.model', model) } : {}),
  };
  const effort = context.selection.options.effort;
  const field = 'selection.options.effort';
  const turn = effort === undefined ? {} : { effort: efforts ? admitChoice(field, effort, efforts) : admitOptionValue(field, effort) };
  if (threadId === null) return { method: 'thread/start', params: settings, settings, turn };
  const id = admitSessionId('resume', threadId, CODEX_THREAD_IDS);
  return { method: forking ? 'thread/fork' : 'thread/resume', params: { threadId: id, ...settings }, settings, turn };
}

export function codexEnv(launch: CodexLaunch, home?: string, extra?: Record<string, string>): NodeJS.ProcessEnv {
  const folder = home ?? launch.home;
  return { ...process.env, ...launch.env, ...extra, ...(folder ? { CODEX_HOME: expandHome(folder) } : {}) };
}

export function expandHome(folder: string): string {
  return folder === '~' || folder.startsWith('~/') ? path.join(os.homedir(), folder.slice(1)) : folder;
}

export class CodexSession implements ProviderSession {
  private readonly launch: CodexLaunch;
  private readonly context: ProviderChatContext;
  private readonly mapper = new CodexMapper();
  private process: CliProcess | null = null;
  private peer: JsonRpcPeer | null = null;
  private starting: Promise<void> | null = null;
  private emit: ProviderEmit | null = null;
  /** Resolves when the Codex turn we last started (or interrupted) has completed. */
  private idle: Promise<void> = Promise.resolve();
  private settleIdle: (() => void) | null = null;
  private threadId: string | null;
  /** The thread is another chat's too: the first process branches it (`thread/fork`), later ones resume the branch. */
  private forking: boolean;
  private killed = false;
  /** A `thread/compact/start` was sent and its turn has not shown itself yet. */
  private compacting = false;
  /** The model's own effort choices (null: the catalog does not know it). */
  private readonly efforts: readonly string[] | null;
  /** What every `turn/start` adds, as the last process's plan checked it. */
  private turnParams: Record<string, unknown> = {};
  /**
   * The chat's turn we interrupted, until Codex completes it. The next turn's `emit` is set as soon
   * as it is asked for, while this one may still be settling: what this one still says (its
   * `interrupted` end above all) is not the next turn's.
   */
  private stoppedTurn: string | null = null;

  constructor(launch: CodexLaunch, context: ProviderChatContext, efforts: readonly string[] | null = null) {
    this.launch = launch;
    this.context = context;
    this.efforts = efforts;
    this.threadId = context.agentSessionId;
    this.forking = context.forkSession === true;
  }

  get running(): boolean {
    return this.process?.alive ?? false;
  }

  startTurn(input: TurnInput, emit: ProviderEmit): void {
    this.emit = emit;
    void this.run(input, emit);
  }

  /**
   * Codex compacts on `thread/compact/start`, as a turn of its own that its answer does not name: the
   * turn is taken up from its `turn/started`, and its `contextCompaction` item is the marker.
   */
  compact(_turnId: string, emit: ProviderEmit): void {
    this.emit = emit;
    void this.begin(
      emit,
      async (peer) => {
        this.compacting = true;
        await peer.request('thread/compact/start', { threadId: this.threadId });
      },
      'compact the thread',
    );
  }

  steer(input: TurnInput): boolean {
    const peer = this.peer;
    const turnId = this.mapper.turnId;
    if (!peer || !turnId || !this.threadId || !this.emit) return false;
    const emit = this.emit;
    peer.request('turn/steer', { threadId: this.threadId, input: codexInput(input), expectedTurnId: turnId }).catch((error: unknown) => {
      emit({ type: 'note', level: 'warning', text: `Codex did not take the message into the running turn: ${describe(error)}` });
    });
    return true;
  }

  interrupt(): void {
    this.emit = null;
    const peer = this.peer;
    if (!peer) return;
    this.answer(this.mapper.cancelAll());
    const turnId = this.mapper.turnId;
    if (!turnId || !this.threadId) return;
    // Codex's collab agents run in threads of their own, and interrupting the chat's turn leaves
    // their turns running (0.171): stopping the turn stops every agent it set working too.
    for (const agent of this.mapper.runningAgentTurns(turnId)) {
      this.mapper.stoppingAgent(agent.threadId);
      peer.request('turn/interrupt', agent).catch(() => undefined);
    }
    this.mapper.interrupting();
    this.stoppedTurn = turnId;
    peer.request('turn/interrupt', { threadId: this.threadId, turnId }).catch(() => undefined);
  }

  /**
   * Stops a subagent by interrupting its own thread's turn (`turn/interrupt` on the thread its spawn
   * named); its row ends when that turn completes. Null while Codex has not named its thread; false
   * when it runs no turn or the process is gone.
   */
  stopSubagent(toolUseId: string): boolean | null {
    const peer = this.peer;
    if (!peer) return false;
    const target = this.mapper.agentTurn(toolUseId);
    if (!target) return null;
    const { threadId, turnId } = target;
    if (!turnId) return false;
    this.mapper.stoppingAgent(threadId);
    peer.request('turn/interrupt', { threadId, turnId }).catch((error: unknown) => {
      this.emit?.({ type: 'note', level: 'warning', text: `Codex did not stop the agent: ${describe(error)}` });
    });
    return true;
  }

  answerApproval(requestId: string, decision: 'allow' | 'allow-always' | 'deny'): void {
    const reply = this.mapper.approvalReply(requestId, decision);
    if (reply) this.answer([reply]);
  }

  answerQuestion(requestId: string, answers: Record<string, string> | null): void {
    const reply = this.mapper.questionReply(requestId, answers);
    if (reply) this.answer([reply]);
  }

  async kill(): Promise<void> {
    this.killed = true;
    this.emit = null;
    const process = this.process;
    if (!process) return;
    this.answer(this.mapper.cancelAll());
    await process.end();
  }

  // ---------------------------------------------------------------------------------------------

  private run(input: TurnInput, emit: ProviderEmit): Promise<void> {
    return this.begin(
      emit,
      async (peer) => {
        const result = record(
          await peer.request('turn/start', {
            threadId: this.threadId,
            input: codexInput(input),
            ...this.turnParams,
          }),
        );
        const turnId = record(result.turn).id;
        if (typeof turnId !== 'string') throw new Error('Codex accepted the turn without naming it');
        this.turnStarted(turnId);
      },
      'start the turn',
    );
  }

  /** Starts a Codex turn through `request` once the process and thread are there; a failure ends the turn. */
  private async begin(emit: ProviderEmit, request: (peer: JsonRpcPeer) => Promise<void>, what: string): Promise<void> {
    try {
      await this.afterPreviousTurn();
      await this.ensureStarted(emit);
      if (this.emit !== emit) return; // stopped while starting
      await request(this.peer!);
      // Stopped before Codex named the turn: stop it now that we can.
      if (this.emit !== emit) this.interrupt();
    } catch (error) {
      this.compacting = false;
      if (this.emit === emit) this.finishWith({ type: 'turn-end', state: 'error', message: `Codex could not ${what}: ${describe(error)}` });
    }
  }

  /** Codex runs a turn we asked for: later events name it, and the next turn waits for its end. */
  private turnStarted(turnId: string): void {
    if (this.mapper.turnId === turnId) return;
    this.mapper.turnStarted(turnId);
    this.idle = new Promise((resolve) => {
      this.settleIdle = resolve;
    });
  }

  /** A turn we interrupted must end before the next starts, or it could take the new one's input. */
  private async afterPreviousTurn(): Promise<void> {
    if (!this.mapper.turnId) return;
    const ended = await Promise.race([this.idle.then(() => true), delay(INTERRUPT_GRACE_MS).then(() => false)]);
    if (ended) return;
    // Codex did not settle it: a fresh process resumes the thread.
    const process = this.process;
    this.process = null;
    this.peer?.close('replaced after an interrupt that did not settle');
    this.peer = null;
    this.starting = null;
    this.mapper.turnId = null;
    this.stoppedTurn = null;
    await process?.end();
  }

  private ensureStarted(emit: ProviderEmit): Promise<void> {
    if (this.starting && this.process?.alive) return this.starting;
    this.starting = this.start(emit);
    this.starting.catch(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async start(emit: ProviderEmit): Promise<void> {
    if (this.killed) throw new Error("this chat's Codex was ended");
    // First, as it may refuse a value: no process is started then.
    const plan = codexThreadPlan(this.context, this.threadId, this.forking, this.efforts);
    this.turnParams = plan.turn;
    const launch = this.launch;
    let peer!: JsonRpcPeer;
    const process = new CliProcess({
      command: launch.command,
      args: codexArgs(launch),
      cwd: this.context.cwd,
      env: codexEnv(launch, this.context.accountHome, this.context.accountEnv),
      onLine: (line) => peer.receive(line),
      onExit: (exit) => this.exited(process, exit),
    });
    peer = new JsonRpcPeer({
      write: (line) => {
        process.writeLine(line);
      },
      onNotification: (method, params) => this.notified(method, params),
      onRequest: (id, method, params) => this.asked(id, method, params),
      onMalformed: (line, reason) => this.deliver(this.mapper.malformed(line, reason)),
    });
    this.process = process;
    this.peer = peer;
    await peer.request('initialize', {
      clientInfo: { name: 'tether', title: 'Tether', version: launch.clientVersion },
      capabilities: { experimentalApi: true },
    });
    peer.notify('initialized');
    let result: Record<string, unknown>;
    if (plan.method !== 'thread/start') {
      try {
        result = record(await peer.request(plan.method, plan.params));
      } catch (error) {
        if (!(error instanceof RpcError)) throw error;
        emit({ type: 'note', level: 'warning', text: `Codex could not continue its session ${this.threadId} (${error.message}); this turn starts a new one` });
        result = record(await peer.request('thread/start', plan.settings));
      }
    } else {
      result = record(await peer.request('thread/start', plan.settings));
    }
    const threadId = record(result.thread).id;
    if (typeof threadId !== 'string') throw new Error('Codex opened a thread without naming it');
    this.threadId = threadId;
    this.forking = false;
    this.mapper.threadId = threadId;
    const confirmed = runtimeModeOf(result.approvalPolicy, result.sandbox);
    emit({
      type: 'session',
      agentSessionId: threadId,
      model: typeof result.model === 'string' ? result.model : null,
      permissionMode: `${String(result.approvalPolicy)}/${sandboxName(result.sandbox)}`,
      ...(confirmed ? { effectiveRuntimeMode: confirmed } : {}),
    });
  }

  private notified(method: string, params: unknown): void {
    if (method === 'turn/started') this.turnBegun(record(params));
    const p = record(params);
    const stale = this.stoppedTurn !== null && p.threadId === this.threadId && (p.turnId ?? record(p.turn).id) === this.stoppedTurn;
    const outputs = this.mapper.notification(method, params);
    if (method === 'turn/completed' && !this.mapper.turnId) {
      this.settleIdle?.();
      this.settleIdle = null;
    }
    if (stale && method === 'turn/completed') this.stoppedTurn = null;
    if (!stale) this.deliver(outputs);
    // An agent that outlived its turn reports to the chat, whichever turn (if any) runs now.
    for (const output of this.mapper.outlived.splice(0)) this.context.side?.(output);
  }

  /**
   * A turn began in the chat's thread that no `turn/start` of ours named: the compaction we asked
   * for (its answer does not name its turn), or one Codex started on its own. The latter happens
   * with the features `multi_agent_v2` and `wake_on_agent_messages` (a user's config.toml may enable
   * them; the host does not): when an agent finishes while the thread is idle, Codex wakes the
   * thread with a turn of its own (learned from the pinned 0.171 against the scripted model server,
   * codex-subagent.test). It is shown as the runtime's agent turn, when no turn of the chat is on
   * its way; else it is not shown.
   */
  private turnBegun(p: Record<string, unknown>): void {
    const turnId = record(p.turn).id;
    if (typeof turnId !== 'string' || p.threadId !== this.threadId || this.mapper.turnId) return;
    if (this.compacting) {
      this.compacting = false;
      this.turnStarted(turnId);
      return;
    }
    if (this.emit) return; // a turn of ours is on its way (turn/start not answered yet)
    const emit = this.context.agentTurn?.(AGENT_TURN_LABEL);
    if (!emit) return;
    this.emit = emit;
    this.turnStarted(turnId);
  }

  private asked(id: number | string, method: string, params: unknown): void {
    const { outputs, reply } = this.mapper.request(id, method, params);
    if (reply) this.answer([reply]);
    if (!this.emit) {
      // Nobody is there to decide (the turn was stopped): Codex hears a cancel at once.
      this.answer(this.mapper.cancelAll());
      return;
    }
    this.deliver(outputs);
  }

  private deliver(outputs: ProviderOutput[]): void {
    for (const output of outputs) {
      if (output.type === 'turn-end') this.finishWith(output);
      else this.emit?.(output);
    }
  }

  private finishWith(output: ProviderOutput): void {
    const emit = this.emit;
    this.emit = null;
    emit?.(output);
  }

  private answer(replies: CodexReply[]): void {
    const peer = this.peer;
    if (!peer) return;
    for (const reply of replies) {
      if ('error' in reply) peer.respondError(reply.id, reply.error);
      else peer.respond(reply.id, reply.result);
    }
  }

  private exited(process: CliProcess, exit: CliExit): void {
    if (this.process !== process) return;
    this.process = null;
    this.starting = null;
    this.peer?.close('Codex exited');
    this.peer = null;
    this.mapper.turnId = null;
    this.stoppedTurn = null;
    this.compacting = false;
    this.mapper.cancelAll();
    this.settleIdle?.();
    this.settleIdle = null;
    for (const output of this.mapper.agentsGone(this.killed ? "Its chat's Codex was ended" : 'Codex exited')) this.context.side?.(output);
    if (this.killed || !this.emit) return;
    const how = exit.error ? exit.error.message : exit.signal ? `signal ${exit.signal}` : `code ${String(exit.code)}`;
    const tail = process.stderr.trim().split('\n').slice(-3).join('\n');
    this.finishWith({ type: 'turn-end', state: 'error', message: `Codex exited (${how})${tail ? `: ${tail}` : ''}` });
  }
}

/** The catalog entry that leaves the model to Codex's own config (config.toml or its default). */
export const DEFAULT_MODEL = 'default';

/** A turn's input as Codex takes it: the text, images as local image input, other files named. */
export function codexInput(input: TurnInput): unknown[] {
  const images = input.attachments.filter((a) => a.mime.startsWith('image/'));
  const files = input.attachments.filter((a) => !a.mime.startsWith('image/'));
  const text = files.length ? `${input.text}\n\n${files.map((f) => `Attached file: ${f.path}`).join('\n')}` : input.text;
  return [{ type: 'text', text, text_elements: [] }, ...images.map((image) => ({ type: 'localImage', path: image.path }))];
}

function sandboxName(sandbox: unknown): string {
  if (typeof sandbox === 'string') return sandbox;
  const type = record(sandbox).type;
  return typeof type === 'string' ? type : 'unknown';
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
