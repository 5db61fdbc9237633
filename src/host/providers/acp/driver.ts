// AcpSession: one chat's ACP agent process and its turns. It owns the order of things —
// `initialize`, then the session (`session/load` to continue one, else `session/new`), then its
// mode, then one `session/prompt` per turn — and leaves every reading of the agent's messages to
// the mapper.
//
// A turn is one `session/prompt`; its answer ends it. Updates the agent sends while no prompt is out
// (a loaded session's history, its command list) only feed the mapper's state: the runtime already
// has that history. Stopping a turn sends `session/cancel` and answers every waiting permission
// `cancelled` (ACP requires both); the next turn waits for the cancelled prompt's answer, and a
// process that does not give it in time is replaced (the session is loaded again).
import os from 'node:os';
import path from 'node:path';
import type {
  ContentBlock,
  CreateElicitationResponse,
  InitializeResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from '@agentclientprotocol/sdk';
import { methods, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import type { ModelInfo } from '../../../contracts/index.ts';
import type { ProviderChatContext, ProviderEmit, ProviderOutput, ProviderSession, TurnInput } from '../provider.ts';
import type { CliExit } from '../cli-process.ts';
import { admitSessionId, AGENT_SESSION_ID } from '../cli-values.ts';
import { AcpPeer } from './connection.ts';
import { AcpMapper, record } from './mapper.ts';
import type { AcpFailure } from './mapper.ts';
import type { AcpAgentSpec } from './spec.ts';

/** How long a cancelled prompt may take to answer before the process is replaced. */
const CANCEL_GRACE_MS = 5_000;
/** A replay after `session/load` is over once the agent said nothing for this long (see AcpQuirks.replaysAfterLoad). */
const REPLAY_QUIET_MS = 300;
const REPLAY_MAX_MS = 5_000;

export interface AcpSessionOptions {
  clientVersion: string;
  /** Told the models the agent offers, when a session names them. */
  onModels?(models: ModelInfo[]): void;
  /** When this host created each session (shared by a provider's drivers; see AcpQuirks.loadNeedsNewMinute). */
  created?: Map<string, number>;
}

export class AcpSession implements ProviderSession {
  private readonly spec: AcpAgentSpec;
  private readonly context: ProviderChatContext;
  private readonly options: AcpSessionOptions;
  private readonly mapper: AcpMapper;
  private peer: AcpPeer | null = null;
  private starting: Promise<void> | null = null;
  private sessionId: string | null;
  private capabilities: NonNullable<InitializeResponse['agentCapabilities']> = {};
  /** Where the running turn's outputs go; null between turns and once it was stopped. */
  private emit: ProviderEmit | null = null;
  /** A `session/prompt` is out: updates now belong to the turn. */
  private prompting = false;
  /** Settles when the last prompt sent was answered (or its process went). */
  private idle: Promise<void> = Promise.resolve();
  /** Answers for requests waiting on a person, by request id. */
  private readonly answers = new Map<string, (reply: RequestPermissionResponse | CreateElicitationResponse) => void>();
  private lastUpdateAt = 0;
  private killed = false;
  /** The agent's session mode as it last confirmed it, and the model it named. */
  private mode: { id: string | null } = { id: null };
  private model: string | null = null;
  /** Counts processes: JSON-RPC ids restart with each one. */
  private processSerial = 0;

  constructor(spec: AcpAgentSpec, context: ProviderChatContext, options: AcpSessionOptions) {
    this.spec = spec;
    this.context = context;
    this.options = options;
    this.mapper = new AcpMapper(spec);
    this.sessionId = context.agentSessionId;
  }

  get running(): boolean {
    return this.peer?.alive ?? false;
  }

  startTurn(input: TurnInput, emit: ProviderEmit): void {
    this.emit = emit;
    void this.run(input, emit);
  }

  interrupt(): void {
    this.emit = null;
    this.cancelRequests();
    const peer = this.peer;
    if (peer && this.sessionId && this.prompting) {
      peer.agent.notify(methods.agent.session.cancel, { sessionId: this.sessionId }).catch(() => undefined);
    }
  }

  answerApproval(requestId: string, decision: 'allow' | 'allow-always' | 'deny'): void {
    const answer = this.mapper.permissionReply(requestId, decision);
    if (!answer) return;
    this.deliver(answer.outputs);
    this.settle(requestId, answer.reply);
  }

  answerQuestion(requestId: string, answers: Record<string, string> | null): void {
    const reply = this.mapper.elicitationReply(requestId, answers);
    if (reply) this.settle(requestId, reply);
  }

  async kill(): Promise<void> {
    this.killed = true;
    this.emit = null;
    this.cancelRequests();
    await this.peer?.end();
  }

  // ---------------------------------------------------------------------------------------------

  private async run(input: TurnInput, emit: ProviderEmit): Promise<void> {
    try {
      await this.afterPreviousPrompt();
      await this.ensureStarted(emit);
      if (this.emit !== emit) return; // stopped while starting
      const peer = this.peer!;
      const sessionId = this.sessionId!;
      this.mapper.turnStarted();
      emit(this.sessionOutput());
      this.prompting = true;
      let settleIdle!: () => void;
      this.idle = new Promise((resolve) => {
        settleIdle = resolve;
      });
      let outputs: ProviderOutput[];
      try {
        const response = await peer.agent.request(methods.agent.session.prompt, { sessionId, prompt: this.promptBlocks(input) });
        outputs = this.mapper.promptDone(response);
        const used = this.spec.quirks?.modelUsed?.(response);
        if (used && used !== this.model) {
          this.model = used;
          outputs.unshift(this.sessionOutput());
        }
      } catch (error) {
        outputs = this.mapper.promptFailed(failureOf(error));
      } finally {
        this.prompting = false;
        settleIdle();
      }
      if (this.emit === emit) this.deliver(outputs);
    } catch (error) {
      if (this.emit === emit)
        this.finish({ type: 'turn-end', state: 'error', message: `${this.spec.name} could not start the turn: ${failureOf(error).message}` });
    }
  }

  /** A prompt we cancelled must be answered before the next goes out, or the agent may fold them together. */
  private async afterPreviousPrompt(): Promise<void> {
    if (!this.prompting) return;
    const answered = await Promise.race([this.idle.then(() => true), delay(CANCEL_GRACE_MS).then(() => false)]);
    if (answered) return;
    const peer = this.peer;
    this.peer = null;
    this.starting = null;
    this.prompting = false;
    await peer?.end();
  }

  private ensureStarted(emit: ProviderEmit): Promise<void> {
    if (this.starting && this.peer?.alive) return this.starting;
    this.starting = this.start(emit);
    this.starting.catch(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async start(emit: ProviderEmit): Promise<void> {
    if (this.killed) throw new Error(`this chat's ${this.spec.name} was ended`);
    // Every client value is checked before the process starts: the session to load, then (in the
    // spec's command line) the model. A refusal is a `bad-request` naming the field.
    if (this.sessionId !== null) admitSessionId('resume', this.sessionId, this.spec.sessionIds ?? AGENT_SESSION_ID);
    const commandLine = this.spec.commandLine({
      selection: this.context.selection,
      runtimeMode: this.context.runtimeMode,
      ...(this.context.accountHome ? { accountHome: expandHome(this.context.accountHome) } : {}),
      ...(this.context.accountEnv ? { accountEnv: this.context.accountEnv } : {}),
    });
    const peer: AcpPeer = new AcpPeer(commandLine, this.context.cwd, {
      onUpdate: (params) => this.updated(params),
      onPermission: (id, params, signal) => this.permission(id, params, signal),
      onElicitation: (id, params, signal) => this.elicitation(id, params, signal),
      onMalformed: (line, reason) => this.deliver(this.mapper.malformed(line, reason)),
      onExit: (exit, stderr) => this.exited(peer, exit, stderr),
    });
    this.peer = peer;
    const init = await peer.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: false, writeTextFile: false },
        terminal: false,
        elicitation: { form: {}, url: {} },
      },
      clientInfo: { name: 'tether', title: 'Tether', version: this.options.clientVersion },
    });
    this.capabilities = init.agentCapabilities ?? {};
    const cwd = this.context.cwd;
    let opened: Record<string, unknown> | null = null;
    if (this.sessionId) {
      if (this.capabilities.loadSession) {
        try {
          await this.outOfCreationMinute(this.sessionId);
          opened = record(await peer.agent.request(methods.agent.session.load, { sessionId: this.sessionId, cwd, mcpServers: [] }));
          if (this.spec.quirks?.replaysAfterLoad) await this.replayQuiet();
        } catch (error) {
          emit({
            type: 'note',
            level: 'warning',
            text: `${this.spec.name} could not continue its session ${this.sessionId} (${failureOf(error).message}); this turn starts a new one`,
          });
        }
      } else {
        emit({ type: 'note', level: 'warning', text: `${this.spec.name} cannot load an earlier session; this turn starts a new one` });
      }
    }
    if (!opened) {
      opened = record(await peer.agent.request(methods.agent.session.new, { cwd, mcpServers: [] }));
      if (typeof opened.sessionId !== 'string') throw new Error(`${this.spec.name} opened a session without naming it`);
      this.sessionId = opened.sessionId;
      this.options.created?.set(opened.sessionId, Date.now());
    }
    await this.applyMode(peer, record(opened.modes));
    this.readModels(record(opened.models));
  }

  private async applyMode(peer: AcpPeer, modes: Record<string, unknown>): Promise<void> {
    const available = Array.isArray(modes.availableModes)
      ? modes.availableModes.map((m) => record(m).id).filter((id): id is string => typeof id === 'string')
      : [];
    let current = typeof modes.currentModeId === 'string' ? modes.currentModeId : null;
    const wanted = this.spec.modes[this.context.runtimeMode];
    if (current !== wanted && available.includes(wanted)) {
      await peer.agent.request(methods.agent.session.setMode, { sessionId: this.sessionId!, modeId: wanted });
      current = wanted;
    }
    this.mode = { id: current };
  }

  /** `models` on a session answer is an unstable ACP field Gemini fills: the catalog it really offers. */
  private readModels(models: Record<string, unknown>): void {
    if (typeof models.currentModelId === 'string') this.model = models.currentModelId;
    if (!Array.isArray(models.availableModels) || !this.options.onModels) return;
    const infos: ModelInfo[] = [];
    for (const raw of models.availableModels) {
      const m = record(raw);
      if (typeof m.modelId !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(m.modelId)) continue;
      infos.push({ slug: m.modelId, name: typeof m.name === 'string' && m.name ? m.name : m.modelId, legacy: false, isDefault: false, options: [] });
    }
    if (infos.length) this.options.onModels(infos);
  }

  private sessionOutput(): ProviderOutput {
    const id = this.mode.id;
    const effective = id ? this.spec.runtimeModeOf(id) : undefined;
    return {
      type: 'session',
      agentSessionId: this.sessionId!,
      model: this.model ?? this.context.selection.model,
      ...(id ? { permissionMode: id, ...(effective ? { effectiveRuntimeMode: effective } : {}) } : {}),
      ...(this.mapper.slashCommands ? { slashCommands: this.mapper.slashCommands } : {}),
    };
  }

  private async outOfCreationMinute(sessionId: string): Promise<void> {
    const created = this.options.created?.get(sessionId);
    if (!this.spec.quirks?.loadNeedsNewMinute || created === undefined) return;
    const nextMinute = Math.floor(created / 60_000) * 60_000 + 60_000;
    // A little past the turn of the minute: the agent's clock is read a moment after ours.
    if (Date.now() < nextMinute) await delay(nextMinute - Date.now() + 250);
  }

  /** Waits until the agent has said nothing for a while (its replay of a loaded session is over). */
  private async replayQuiet(): Promise<void> {
    const until = Date.now() + REPLAY_MAX_MS;
    this.lastUpdateAt = Date.now();
    while (Date.now() < until) {
      const wait = this.lastUpdateAt + REPLAY_QUIET_MS - Date.now();
      if (wait <= 0) return;
      await delay(wait);
    }
  }

  private promptBlocks(input: TurnInput): ContentBlock[] {
    const blocks: ContentBlock[] = [{ type: 'text', text: input.text }];
    const images = this.capabilities.promptCapabilities?.image ? (input.images ?? []) : [];
    const inline = new Set(images.map((i) => i.attachmentId));
    for (const image of images) blocks.push({ type: 'image', data: image.data, mimeType: image.mime });
    for (const file of input.attachments) {
      if (inline.has(file.id)) continue;
      // A link is the one file reference every ACP agent takes.
      blocks.push({ type: 'resource_link', uri: `file://${file.path}`, name: path.basename(file.path), mimeType: file.mime });
    }
    return blocks;
  }

  private updated(params: unknown): void {
    this.lastUpdateAt = Date.now();
    const outputs = this.mapper.update(params);
    if (!this.prompting) {
      // Between prompts only the agent's mode is news.
      for (const output of outputs) if (output.type === 'mode') this.mode = { id: output.permissionMode };
      return;
    }
    for (const output of outputs) if (output.type === 'mode') this.mode = { id: output.permissionMode };
    this.deliver(outputs);
  }

  private permission(id: string, params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    return this.ask(id, (requestId) => this.mapper.permission(requestId, params), signal, { outcome: { outcome: 'cancelled' } });
  }

  private elicitation(id: string, params: unknown, signal: AbortSignal): Promise<CreateElicitationResponse> {
    return this.ask(id, (requestId) => this.mapper.elicitation(requestId, params), signal, { action: 'cancel' });
  }

  /** A request the agent made: answered now when the mapper says so, else shown until the person answers. */
  private ask<T extends RequestPermissionResponse | CreateElicitationResponse>(
    id: string,
    read: (requestId: string) => { outputs: ProviderOutput[]; reply?: T },
    signal: AbortSignal,
    cancelled: T,
  ): Promise<T> {
    const requestId = this.requestKey(id);
    const { outputs, reply } = read(requestId);
    if (!reply) return this.wait(requestId, outputs, signal, cancelled);
    this.deliver(outputs);
    return Promise.resolve(reply);
  }

  /** Shows a request and resolves with the person's answer; with nobody to ask it is cancelled at once. */
  private wait<T extends RequestPermissionResponse | CreateElicitationResponse>(
    requestId: string,
    outputs: ProviderOutput[],
    signal: AbortSignal,
    cancelled: T,
  ): Promise<T> {
    if (!this.emit) {
      // Nobody is there to decide (the turn was stopped): the agent hears a cancel at once.
      this.cancelRequests();
      return Promise.resolve(cancelled);
    }
    return new Promise<T>((resolve) => {
      this.answers.set(requestId, resolve as (reply: RequestPermissionResponse | CreateElicitationResponse) => void);
      signal.addEventListener(
        'abort',
        () => {
          if (!this.answers.delete(requestId)) return;
          this.emit?.({ type: 'request-cancelled', requestId });
          resolve(cancelled);
        },
        { once: true },
      );
      this.deliver(outputs);
    });
  }

  private settle(requestId: string, reply: RequestPermissionResponse | CreateElicitationResponse): void {
    const resolve = this.answers.get(requestId);
    this.answers.delete(requestId);
    resolve?.(reply);
  }

  /** Every waiting request answered as cancelled. */
  private cancelRequests(): void {
    for (const { requestId, kind } of this.mapper.cancelAll()) {
      this.settle(requestId, kind === 'permission' ? { outcome: { outcome: 'cancelled' } } : { action: 'cancel' });
    }
  }

  private requestKey(id: string): string {
    // JSON-RPC ids restart with every process; the session and the sequence make them unique in the chat.
    return `acp:${this.sessionId ?? 'none'}:${this.processSerial}:${id}`;
  }

  private deliver(outputs: ProviderOutput[]): void {
    for (const output of outputs) {
      if (output.type === 'turn-end') this.finish(output);
      else this.emit?.(output);
    }
  }

  private finish(output: ProviderOutput): void {
    const emit = this.emit;
    this.emit = null;
    emit?.(output);
  }

  private exited(peer: AcpPeer, exit: CliExit, stderr: string): void {
    if (this.peer !== peer) return;
    this.peer = null;
    this.starting = null;
    this.processSerial += 1;
    this.cancelRequests();
    if (this.killed || !this.emit) return;
    const how = exit.error ? exit.error.message : exit.signal ? `signal ${exit.signal}` : `code ${String(exit.code)}`;
    const tail = stderr.trim().split('\n').slice(-3).join('\n');
    this.finish({ type: 'turn-end', state: 'error', message: `${this.spec.name} exited (${how})${tail ? `: ${tail}` : ''}` });
  }
}

/** Whatever a request failed with, as `{code, message}` (the SDK's RequestError has both). */
function failureOf(error: unknown): AcpFailure {
  const e = record(error);
  const code = typeof e.code === 'number' ? e.code : -32603;
  const message = error instanceof Error ? error.message : typeof e.message === 'string' ? e.message : String(error);
  return { code, message, ...(e.data !== undefined ? { data: e.data } : {}) };
}

export function expandHome(folder: string): string {
  return folder === '~' || folder.startsWith('~/') ? path.join(os.homedir(), folder.slice(1)) : folder;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
