// HostCore: the host's chat runtime. It serves the agent-contracts requests for every chat on this
// machine, through one handler table (handlers.ts), to any number of clients, and pushes events:
// `chat.status` to every client, `chat.event` (with the chat's `seq`) to the clients attached to
// that chat, and everything to a client connected with `allChats` (the relay link, which is attached
// to every chat for good and also gets `visual.page`).
//
// What it owns: the chats (ChatSession each), their files (ChatStore), the request journal that
// answers a retried mutating request with its first reply, the host policy, provider accounts and
// visuals. What it never does: authenticate anyone (whoever connects a client decided that) or talk
// to the network.
//
// What survives a restart: every chat (record + log), the journal, accounts and visuals. Open with
// `HostCore.open`, connect the clients that must see recovery events, then `resume()`.
import { ProtocolError, toWireError } from '../../contracts/errors.ts';
import { AGENT_REQUEST_SCHEMAS, ChatAttachmentUploadsSchema, isAgentRequestType, narrowerMode, parseRequest, requestsWhere } from '../../contracts/index.ts';
import type {
  AgentKind,
  AgentRequestType,
  ChatEvent,
  ChatInfo,
  ChatItem,
  ChatPreferencesPayload,
  ChatTurnItem,
  ChatVisual,
  HostSetup,
  RequestType,
  RuntimeMode,
} from '../../contracts/index.ts';
import { z } from 'zod';
import { HostPolicy } from '../policy.ts';
import type { Provider } from '../providers/provider.ts';
import { AccountBook } from './accounts.ts';
import { AttachmentStore } from './attachments.ts';
import type { AttachmentLimits } from './attachments.ts';
import { Checkpoints, mayBeInWorkTree } from './checkpoints.ts';
import { createHandlers } from './handlers.ts';
import type { HandlerTable } from './handlers.ts';
import { RequestJournal } from './journal.ts';
import type { JournalReply } from './journal.ts';
import { ChatSession } from './session.ts';
import type { ChatHost } from './session.ts';
import { ChatStore } from './store.ts';
import type { ChatRecord, LogEntry } from './store.ts';
import { ChatVisuals } from './chat-visuals.ts';
import { UsageService } from '../usage/service.ts';
import { LoginWatch } from './login-watch.ts';
import type { HookTarget } from '../terminal/hooks-file.ts';
import type { StatusOnlyCommand } from '../terminal/status-only.ts';
import { TerminalSessions } from '../terminal/sessions.ts';
import { withAccountTargets } from '../terminal/targets.ts';
import type { VisualInput } from './visuals.ts';

export interface HostLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug?(message: string): void;
}

export interface HostCoreOptions {
  /** The host's data folder (chats, attachments, journal, accounts). */
  dataDir: string;
  /** The providers this host serves, in order: the first is the default for `chat.create`. */
  providers: readonly Provider[];
  policy?: HostPolicy;
  /** Delta coalescing window per item (ms); 0 sends every delta as it comes. Default 30. */
  coalesceMs?: number;
  /** Debounce for record checkpoints (ms); the log is written as events happen. Default 1 000. */
  writeDelayMs?: number;
  /** Events kept per chat log. Default 5 000. */
  logLimit?: number;
  /** Request ids remembered for idempotency. Default 2 000. */
  journalLimit?: number;
  /** Uploads one chat keeps on disk (count and bytes); past it the oldest go. Default 200 files, 256 MiB. */
  attachmentLimits?: AttachmentLimits;
  /** How often the CLIs' session files are scanned again while a client follows usage (ms). Default 30 000. */
  usageIntervalMs?: number;
  /** How often accounts.watchLogin asks the CLI again (ms). Default 3 000. */
  loginIntervalMs?: number;
  log?: HostLog;
  /** The CLI config folders the host's hooks may live in (terminal sessions); default none. */
  hookTargets?: readonly HookTarget[];
  /** How long a Codex terminal approval waits for a client (ms); default the sessions' own. */
  codexApprovalWaitMs?: number;
  /** The CLIs without hooks whose terminal sessions are listed by their process, status only; default none. */
  statusOnlyCommands?: readonly StatusOnlyCommand[];
  /** How often the terminal sessions' processes are looked at (ms); default the sessions' own. */
  livenessIntervalMs?: number;
  /**
   * `hooks.set` may install hooks: only when every such request reaching the runtime carries a
   * device's verified signature (the host requires them for it). A relay alone never adds them.
   */
  hooksInstallVerified?: boolean;
  /** Its agents and config file, for `provider.list` (absent when the providers were given directly). */
  setup?: HostSetup;
}

/** An event frame as clients receive it. */
export interface HostEventFrame {
  type: 'event';
  event: string;
  payload: unknown;
}

export type ReplyFrame = { id: string; ok: true; result: unknown } | { id: string | null; ok: false; error: { code: string; message: string } };

export interface ConnectOptions {
  /** Gets `chat.event` for every chat without attaching (the relay link). */
  allChats?: boolean;
}

export interface ClientState {
  readonly id: string;
  readonly send: (frame: HostEventFrame) => void;
  readonly allChats: boolean;
  readonly attached: Set<string>;
  preferences: ChatPreferencesPayload;
}

/** Requests that change something: a retried id gets the first reply and never runs twice (the registry's `answeredOnce`). */
const MUTATING: ReadonlySet<RequestType> = requestsWhere((rule) => rule.answeredOnce);
/** Journaled as started by their first chat event, not before they run (journal.ts). */
const MARKED_BY_FIRST_CHANGE: ReadonlySet<RequestType> = requestsWhere((rule) => rule.changesOnlyItsChat);

const silentLog: HostLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

export class HostCore {
  readonly store: ChatStore;
  readonly policy: HostPolicy;
  readonly providers: ReadonlyMap<AgentKind, Provider>;
  readonly accounts: AccountBook;
  readonly attachments: AttachmentStore;
  readonly checkpoints: Checkpoints;
  readonly usage: UsageService;
  readonly logins: LoginWatch;
  /** The sessions people run in their own terminal (its hooks' socket opens with `terminal.start()`). */
  readonly terminal: TerminalSessions;
  readonly hookTargets: readonly HookTarget[];
  readonly statusOnlyCommands: readonly StatusOnlyCommand[];
  readonly hooksInstallVerified: boolean;
  readonly setup: HostSetup | undefined;
  readonly log: HostLog;
  readonly sessions = new Map<string, ChatSession>();
  /** Chats on disk this version cannot read: reason, kept for `chat-unreadable`. */
  readonly unreadable = new Map<string, string>();
  readonly clients = new Map<string, ClientState>();
  private readonly options: HostCoreOptions;
  private readonly journal: RequestJournal;
  private readonly handlers: HandlerTable;
  private readonly visuals: ChatVisuals;
  private readonly turnWatchers = new Map<string, (turn: ChatTurnItem) => void>();
  private closing: Promise<void> | null = null;

  private constructor(options: HostCoreOptions) {
    if (options.providers.length === 0) throw new Error('A host needs at least one provider');
    this.options = options;
    this.log = options.log ?? silentLog;
    this.policy = options.policy ?? new HostPolicy();
    this.providers = new Map(options.providers.map((p) => [p.kind, p]));
    this.store = new ChatStore(options.dataDir);
    this.visuals = new ChatVisuals({
      store: this.store,
      toAllChats: (frame) => {
        for (const client of this.clients.values()) if (client.allChats) this.sendTo(client, frame);
      },
      toChat: (chatId, frame) => {
        for (const client of this.clients.values()) if (client.allChats || client.attached.has(chatId)) this.sendTo(client, frame);
      },
      lifeOf: (chatId) => {
        const session = this.session(chatId);
        const epoch = session.epoch;
        return () => this.sessions.get(chatId) === session && session.epoch === epoch;
      },
    });
    this.journal = new RequestJournal(options.dataDir, options.journalLimit ?? 2_000);
    this.accounts = new AccountBook(options.dataDir, [...this.providers.keys()], this.policy);
    this.attachments = new AttachmentStore(this.store, options.attachmentLimits);
    this.checkpoints = new Checkpoints(options.dataDir);
    this.usage = new UsageService({
      dataDir: options.dataDir,
      providers: this.providers,
      accounts: this.accounts,
      broadcast: (event, payload) => this.broadcast(event, payload),
      warn: (message) => this.log.warn(message),
      ...(options.usageIntervalMs !== undefined ? { followIntervalMs: options.usageIntervalMs } : {}),
    });
    this.hookTargets = options.hookTargets ?? [];
    this.statusOnlyCommands = options.statusOnlyCommands ?? [];
    this.hooksInstallVerified = options.hooksInstallVerified === true;
    this.setup = options.setup;
    this.terminal = new TerminalSessions({
      dataDir: options.dataDir,
      targets: () => this.hookTargetsNow(),
      broadcast: (event, payload) => this.broadcast(event, payload),
      log: this.log,
      ...(options.codexApprovalWaitMs !== undefined ? { codexApprovalWaitMs: options.codexApprovalWaitMs } : {}),
      // A turn the chat runs goes on (the person at the terminal sees the session is busy); an idle CLI goes.
      tookBack: (agentSessionId) => {
        for (const session of this.sessions.values()) if (session.info.agentSessionId === agentSessionId) session.releaseBackend();
      },
      ...(options.livenessIntervalMs !== undefined ? { livenessIntervalMs: options.livenessIntervalMs } : {}),
      statusOnly: () => this.statusOnlyCommands,
    });
    this.logins = new LoginWatch({
      accounts: this.accounts,
      providers: this.providers,
      changed: () => this.broadcast('accounts.changed', this.accounts.snapshot()),
      warn: (message) => this.log.warn(message),
      ...(options.loginIntervalMs !== undefined ? { intervalMs: options.loginIntervalMs } : {}),
    });
    this.handlers = createHandlers(this);
  }

  /** Loads every chat from disk. Nothing runs until `resume()`. */
  static async open(options: HostCoreOptions): Promise<HostCore> {
    const core = new HostCore(options);
    for (const loaded of core.store.loadAll()) {
      if (!loaded.ok) {
        core.unreadable.set(loaded.chatId, loaded.reason);
        core.log.warn(`chat ${loaded.chatId}: record not readable by this version, left as it is (${loaded.reason.split('\n')[0]})`);
        continue;
      }
      const { record, log } = loaded;
      core.sessions.set(record.info.chatId, core.makeSession(record, log));
    }
    return core;
  }

  /** The host's data folder. */
  get dataDir(): string {
    return this.options.dataDir;
  }

  /** The default provider: the first configured one. */
  get defaultProvider(): Provider {
    return this.options.providers[0];
  }

  /**
   * Takes up what a previous process left: interrupted turns are aborted with a note, queues go on,
   * and terminal sessions left waiting on an approval are said to wait no more.
   */
  resume(reason = 'the host restarted while it ran'): void {
    this.terminal.resume();
    for (const session of this.sessions.values()) {
      try {
        if (session.recover(reason)) this.log.warn(`chat ${session.chatId}: an interrupted turn was aborted`);
      } catch (error) {
        this.log.error(`chat ${session.chatId}: recovery failed: ${describe(error)}`);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Clients

  /** Connects one client; answers the function that disconnects it. */
  connect(clientId: string, send: (frame: HostEventFrame) => void, options: ConnectOptions = {}): () => void {
    const client: ClientState = {
      id: clientId,
      send,
      allChats: options.allChats === true,
      attached: new Set(),
      preferences: {},
    };
    this.clients.set(clientId, client);
    return () => {
      if (this.clients.get(clientId) !== client) return;
      this.clients.delete(clientId);
      this.usage.release(clientId);
    };
  }

  /** Serves one request frame from `clientId`; answers the reply frame. Never throws. */
  async serve(frame: unknown, clientId: string): Promise<ReplyFrame> {
    const parsed = parseRequest(frame);
    if (!parsed.ok) return { id: readableId(frame), ok: false, error: { code: 'bad-request', message: parsed.message } };
    const { id, type, payload } = parsed.value;
    // A relay frame names the person it acts for (LinkRequest.by); only shown on what they answered.
    const claimedBy = (frame as { by?: unknown }).by;
    const by = typeof claimedBy === 'string' && claimedBy.length > 0 && claimedBy.length <= 200 ? claimedBy : null;
    if (!isAgentRequestType(type)) return { id, ok: false, error: { code: 'unknown-request', message: `Unknown request type: ${type}` } };
    // Refused before the journal, so the same request id runs once the host is back.
    if (this.closing) return { id, ok: false, error: { code: 'host-offline', message: 'The host is shutting down' } };
    let reply: JournalReply;
    try {
      reply = MUTATING.has(type)
        ? await this.journal.once(
            RequestJournal.key(type, id),
            () => this.run(type, payload, clientId, by),
            MARKED_BY_FIRST_CHANGE.has(type) ? 'first-change' : 'start',
          )
        : await this.run(type, payload, clientId, by);
    } catch (error) {
      this.log.error(`request ${type} failed: ${describe(error)}`);
      reply = { ok: false, error: { code: 'internal', message: 'Request failed' } };
    }
    return reply.ok ? { id, ok: true, result: reply.result } : { id, ok: false, error: reply.error ?? { code: 'internal', message: 'Request failed' } };
  }

  private async run(type: AgentRequestType, payload: unknown, clientId: string, by: string | null = null): Promise<JournalReply> {
    try {
      if (type === 'chat.send' && typeof payload === 'object' && payload !== null && 'attachments' in payload && payload.attachments !== undefined) {
        const uploads = ChatAttachmentUploadsSchema.safeParse(payload.attachments);
        if (!uploads.success) throw new ProtocolError('invalid-attachments', uploads.error.issues[0]?.message ?? 'Invalid attachments');
      }
      const parsed = AGENT_REQUEST_SCHEMAS[type].payload.safeParse(payload ?? {});
      if (!parsed.success) {
        return { ok: false, error: { code: 'bad-request', message: `Invalid payload for ${type}: ${z.prettifyError(parsed.error)}` } };
      }
      const client = this.clients.get(clientId) ?? null;
      const handler = this.handlers[type] as (payload: unknown, client: ClientState | null, by: string | null) => unknown;
      const result = await handler(parsed.data, client, by);
      return { ok: true, result };
    } catch (error) {
      const wire = toWireError(error);
      if (wire.code === 'internal') this.log.error(`request ${type} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      return { ok: false, error: wire };
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Chats

  /** The session of `chatId`; `chat-unreadable` or `chat-not-found` otherwise. */
  session(chatId: string): ChatSession {
    const session = this.sessions.get(chatId);
    if (session) return session;
    if (this.unreadable.has(chatId)) throw new ProtocolError('chat-unreadable', `Chat ${chatId} is stored in a form this host cannot read`);
    throw new ProtocolError('chat-not-found', `No chat ${chatId}`);
  }

  /**
   * Registers a new chat (already admitted by the policy), writes it at once and tells every client.
   * A fork starts with `items` (its history), given to clients as the thread's first reset.
   */
  async addChat(info: ChatInfo, items: ChatItem[] = []): Promise<ChatSession> {
    const session = this.makeSession({ info, items: [], seq: 0, epoch: 0 }, []);
    this.sessions.set(info.chatId, session);
    session.announce();
    if (items.length > 0) session.emit({ type: 'reset', info: session.info, items });
    await session.write();
    return session;
  }

  /** Calls `settled` once the turn `turnId` of `chatId` settles in this process (not across a restart). */
  whenTurnSettles(chatId: string, turnId: string, settled: (turn: ChatTurnItem) => void): void {
    this.turnWatchers.set(`${chatId}\0${turnId}`, settled);
  }

  async removeChat(chatId: string): Promise<void> {
    const session = this.sessions.get(chatId);
    if (session) {
      session.dispose();
      this.sessions.delete(chatId);
    }
    this.unreadable.delete(chatId);
    this.visuals.forget(chatId);
    for (const client of this.clients.values()) client.attached.delete(chatId);
    await this.store.remove(chatId);
  }

  /** Narrows a chat's mode to what the policy allows now (the policy may have changed since it was made). */
  effectiveMode(mode: RuntimeMode): RuntimeMode {
    return narrowerMode(mode, this.policy.modeCeiling);
  }

  private makeSession(record: Pick<ChatRecord, 'info' | 'items' | 'seq' | 'epoch'>, log: LogEntry[]): ChatSession {
    const host: ChatHost = {
      deliver: (chatId, event, eventSeq) => this.deliver(chatId, event, eventSeq),
      status: (next) => this.broadcast('chat.status', { chatId: next.chatId, info: next }),
      publishVisual: (chatId, input) => this.publishVisual(chatId, input),
      effectiveMode: (mode) => this.effectiveMode(mode),
      warn: (message) => this.log.warn(message),
      accountFor: (kind, accountId) => this.accounts.launchSettings(kind, accountId),
      checkpoint: (chatId, cwd) => (mayBeInWorkTree(cwd) ? this.checkpoints.take(chatId, cwd) : null),
      readableFolders: () => this.policy.roots,
      limits: (kind, accountId, reading) => this.usage.recordLimits(kind, accountId, reading),
      sessionShared: (chatId, agentSessionId) => {
        for (const other of this.sessions.values()) {
          if (other.chatId !== chatId && other.info.agentSessionId === agentSessionId) return true;
        }
        return false;
      },
    };
    const provider = this.providers.get(record.info.provider);
    // Named after the agent that serves it now: a new chat, and one made before the name was kept or under another config.
    const named = provider ? { ...record, info: { ...record.info, agentName: provider.info().name } } : record;
    return new ChatSession(named, log, {
      store: this.store,
      host,
      provider,
      coalesceMs: this.options.coalesceMs ?? 30,
      logLimit: this.options.logLimit ?? 5_000,
      writeDelayMs: this.options.writeDelayMs ?? 1_000,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Events

  private deliver(chatId: string, event: ChatEvent, seq: number): void {
    if (this.turnWatchers.size > 0 && event.type === 'item' && event.item.kind === 'turn' && event.item.state !== 'running') {
      const key = `${chatId}\0${event.item.id}`;
      const settled = this.turnWatchers.get(key);
      if (settled) {
        this.turnWatchers.delete(key);
        const turn = event.item;
        // After this event reached everyone, so what the watcher adds is numbered after it.
        queueMicrotask(() => settled(turn));
      }
    }
    const frame: HostEventFrame = { type: 'event', event: 'chat.event', payload: { chatId, event, seq } };
    for (const client of this.clients.values()) {
      if (client.allChats || client.attached.has(chatId)) this.sendTo(client, frame);
    }
  }

  /** Sends an event to every client. */
  /** Where the host's hooks may be (and its terminal sessions' transcripts read): the config's targets and the accounts' folders. */
  hookTargetsNow(): HookTarget[] {
    return withAccountTargets(this.hookTargets, this.accounts);
  }

  broadcast(event: string, payload: unknown): void {
    const frame: HostEventFrame = { type: 'event', event, payload };
    for (const client of this.clients.values()) this.sendTo(client, frame);
  }

  private sendTo(client: ClientState, frame: HostEventFrame): void {
    try {
      client.send(frame);
    } catch (error) {
      this.log.warn(`client ${client.id}: ${frame.event} not delivered: ${describe(error)}`);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Visuals (chat-visuals.ts)

  visualsOf(chatId: string): ChatVisual[] {
    return this.visuals.of(chatId);
  }

  publishVisual(chatId: string, input: VisualInput): Promise<ChatVisual> {
    return this.visuals.publish(chatId, input);
  }

  copyVisuals(fromChatId: string, toChatId: string, keep: (visual: ChatVisual) => boolean): Promise<void> {
    return this.visuals.copy(fromChatId, toChatId, keep);
  }

  dropVisuals(chatId: string): Promise<void> {
    return this.visuals.drop(chatId);
  }

  // ---------------------------------------------------------------------------------------------
  // Shutdown

  /**
   * Writes every chat and ends every backend, all chats at once (a CLI may take seconds to end);
   * idempotent (the same promise). Clients are disconnected; requests from here on are refused.
   * A write that fails is rethrown after every backend has ended.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // Text still being coalesced goes out first, so clients (the relay's outbox) and the logs agree.
      for (const session of this.sessions.values()) session.flushDeltas();
      await this.terminal.close();
      this.clients.clear();
      const usageClosed = this.usage.close();
      this.logins.close();
      const sessions = [...this.sessions.values()];
      const results = await Promise.allSettled(sessions.map((session) => session.close()));
      let failure: unknown = null;
      results.forEach((result, i) => {
        if (result.status === 'fulfilled') return;
        failure ??= result.reason;
        this.log.error(`chat ${sessions[i].chatId}: could not be written on shutdown: ${describe(result.reason)}`);
      });
      await this.store.settled();
      this.journal.close();
      this.store.close();
      await usageClosed;
      if (failure) throw failure;
    })();
    return this.closing;
  }
}

/** The id of a frame that failed the envelope, when it has a usable one. */
function readableId(frame: unknown): string | null {
  try {
    if (typeof frame === 'object' && frame !== null && 'id' in frame) {
      const id = (frame as { id: unknown }).id;
      if (typeof id === 'string' && id.length > 0) return id;
    }
  } catch {
    // a hostile getter
  }
  return null;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
