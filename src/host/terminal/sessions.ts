// The sessions people run in their own terminal, as the host learns of them through the CLI's hooks
// (hook-channel.ts) and reads them from the CLI's transcript (claude-transcript.ts): their status
// (`running`, `needs-you`, `idle`, `exited`), folder, title and items, published to every client as
// `session.status`, `session.items` and `session.approvals`; and the permissions they wait on,
// answered from either side.
//
// A session is named by the CLI's own session id (the contracts' SessionId is any nonempty string;
// this one is also what a chat resumes). What a hook says is the person's own CLI talking, but over a
// local socket anything of the person's could write, so its values are checked: the session id must
// be a CLI session id, and the transcript the host will read and publish must be the CLI's own file
// of that session inside a config folder the host installed its hooks in (Claude Code:
// `<config>/projects/<folder>/<id>.jsonl`; Codex: `<CODEX_HOME>/sessions/<y>/<m>/<d>/rollout-…-<id>.jsonl`).
// Codex 0.171 hands its hooks the same JSON as Claude Code (hook_event_name, session_id, cwd,
// transcript_path, tool_name, tool_input, tool_use_id), and takes the same PermissionRequest answer.
//
// Approvals: Claude Code's PermissionRequest hook blocks while the CLI shows its own prompt. Whoever
// answers first wins: a client's answer goes back as the hook's decision; an answer in the terminal
// shows as the tool's result in the transcript (or a PostToolUse, a Stop, the hook going away), and
// settles the client's card; an answer after that gets `accepted: false`. Codex 0.171 shows its own
// prompt only once the hook returned ("Running hook" meanwhile), so a Codex card waits a short time
// (CODEX_APPROVAL_WAIT_MS) before the host lets the hook go and the terminal asks.
//
// Liveness: a CLI that was killed, or whose terminal closed, sends no SessionEnd. The hook client
// names the CLI's process (hook-client.ts); the host notes when that process started (/proc) and
// looks every LIVENESS_INTERVAL_MS whether it still runs: once it does not (or the pid was reused),
// the session is `exited` and its approvals settle. The pid is only looked at, never signalled. For
// Codex 0.171 that process is its app-server daemon, which runs the hooks for the TUI.
//
// Status only: a `gemini` or `copilot` (CLIs whose hooks Tether does not read) is found by its
// process on the same interval (status-only.ts) and listed like the others, `running` while the
// process runs and `exited` after; it has no transcript (`transcriptPath: null`), so no items, no
// approvals, and it cannot be continued as a chat.
//
// What survives a restart: the list of sessions (`terminal-sessions.json`), each `live: false` until
// a hook of it is heard again (a status-only one: until its process is seen again), and resumable as
// a chat (a status-only one is not). The list is bounded (kept.ts): what has nothing left to offer
// is dropped when the host starts and whenever a new session comes.
import { existsSync, readFileSync, realpathSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ProtocolError } from '../../contracts/errors.ts';
import {
  AgentSessionIdSchema,
  TerminalSessionSchema,
  type AgentStatus,
  type ApprovalAnswerPayload,
  type ApprovalAnswerResult,
  type ApprovalChoice,
  type ApprovalRequest,
  type ChatItem,
  type SessionListResult,
  type TerminalSession,
} from '../../contracts/index.ts';
import { replaceFile } from '../disk.ts';
import { titleFromAgent, titleFromMessage } from '../chats/title.ts';
import { APPROVAL_WAIT_MS, type HookTarget } from './hooks-file.ts';
import { HookChannel, type HookCall } from './hook-channel.ts';
import { ClaudeTranscript, TranscriptTail } from './claude-transcript.ts';
import { CodexTranscript } from './codex-transcript.ts';
import { itemBatches, newestThatFit } from './item-batches.ts';
import { sessionsToDrop } from './kept.ts';
import { scanStatusOnly, statusOnlyProcessOf, statusOnlySessionId, type StatusOnlyCommand } from './status-only.ts';

export interface TerminalLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface TerminalSessionsOptions {
  dataDir: string;
  /** The config folders the host's hooks may be installed in (the transcripts it may read live under them). */
  targets: () => readonly HookTarget[];
  broadcast(event: string, payload: unknown): void;
  log: TerminalLog;
  /** How long an approval waits for a client (ms); default APPROVAL_WAIT_MS. */
  approvalWaitMs?: number;
  /** The same for Codex, whose terminal asks only after (ms); default CODEX_APPROVAL_WAIT_MS. */
  codexApprovalWaitMs?: number;
  /** How often the CLIs' processes are looked at (ms); default LIVENESS_INTERVAL_MS. */
  livenessIntervalMs?: number;
  /**
   * A terminal started or went on with the CLI session `agentSessionId`: a chat that holds the same
   * session (continued here before) lets its idle CLI go, so two CLIs never hold one session.
   */
  tookBack?(agentSessionId: string): void;
  /** The CLIs without hooks the host lists by their process (status-only.ts); default none. */
  statusOnly?: () => readonly StatusOnlyCommand[];
}

/** How often the host looks whether a live session's CLI still runs. */
export const LIVENESS_INTERVAL_MS = 5_000;

/**
 * How long a Codex approval waits for a client before the terminal asks: Codex 0.171 shows its own
 * prompt only once the PermissionRequest hook returned, so this is how long a person at the desk
 * looks at "Running hook" before the prompt comes.
 */
export const CODEX_APPROVAL_WAIT_MS = 60_000;

/** What Claude Code 2.1.197 and Codex 0.171 hand every hook (the fields the host uses; the rest is ignored). */
const HookEventSchema = z.object({
  hook_event_name: z.string().min(1).max(64),
  session_id: AgentSessionIdSchema,
  transcript_path: z.string().min(1).max(4096),
  cwd: z.string().min(1).max(4096),
  prompt: z.string().optional(),
  tool_name: z.string().min(1).max(256).optional(),
  tool_input: z.unknown().optional(),
  tool_use_id: z.string().min(1).max(256).optional(),
  permission_suggestions: z.array(z.record(z.string(), z.unknown())).max(32).optional(),
  notification_type: z.string().max(64).optional(),
});
type HookEvent = z.output<typeof HookEventSchema>;
type CliKind = HookTarget['kind'];

const StoredSchema = z.object({ sessions: z.array(TerminalSessionSchema) });

/** A summary of what a tool call will do, for the approval card (plain text, cut). */
const SUMMARY_MAX = 500;
/** Settled approval ids remembered, to answer a late answer `accepted: false` rather than not-found. */
const SETTLED_KEPT = 1000;

interface Known {
  session: TerminalSession & { agent: NonNullable<TerminalSession['agent']> };
  /** The status the hooks last said, before pending approvals make it `needs-you`. */
  base: AgentStatus;
  tail: TranscriptTail | null;
  watcher: FSWatcher | null;
  /** Tool calls announced by PreToolUse, by tool and input, so a PermissionRequest (which names no id) finds its own. */
  toolUses: Map<string, string[]>;
  titled: boolean;
  /** The CLI's process and when it started (from /proc), while the host knows it. */
  process?: { pid: number; startedAt: string };
  /** Status only: every process of the CLI seen (status-only.ts); it runs while one of them does. */
  members?: Array<{ pid: number; startedAt: string }>;
}

interface Pending {
  request: ApprovalRequest;
  toolUseId: string | null;
  suggestions: Record<string, unknown>[];
  answer(output: object | null): void;
  timer: NodeJS.Timeout;
}

export class TerminalSessions {
  private readonly options: TerminalSessionsOptions;
  private readonly known = new Map<string, Known>();
  private readonly pending = new Map<string, Pending>();
  private readonly settled = new Set<string>();
  /** Sessions loaded as `needs-you`: their approvals died with the previous process (load). */
  private readonly orphaned: string[] = [];
  private readonly file: string;
  private channel: HookChannel | null = null;
  private liveness: NodeJS.Timeout | null = null;
  private writing: Promise<unknown> = Promise.resolve();

  constructor(options: TerminalSessionsOptions) {
    this.options = options;
    this.file = path.join(options.dataDir, 'terminal-sessions.json');
    this.load();
  }

  /** Sessions a previous process knew: resumable only, until one of their hooks is heard again. */
  private load(): void {
    if (!existsSync(this.file)) return;
    try {
      const stored = StoredSchema.parse(JSON.parse(readFileSync(this.file, 'utf8')));
      for (const session of stored.sessions) {
        if (!session.agent) continue;
        // The approvals a previous process held went with it (the hook that waited is gone, so the
        // CLI asks in its own prompt), and a status of `needs-you` was only theirs: `idle` until a
        // hook says more. Such a session is told again once the relay's client is connected
        // (resume), so the relay settles what it kept and a notification stops offering buttons.
        const orphaned = session.agent.status === 'needs-you';
        // A status-only session whose process is gone ended while no host looked; one whose process
        // still runs is seen again by the first scan (live again then).
        const gone = session.agent.transcriptPath === null && !runs(statusOnlyProcessOf(session.sessionId));
        const agent = { ...session.agent, live: false, ...(orphaned ? { status: 'idle' as const } : {}), ...(gone ? { status: 'exited' as const } : {}) };
        this.known.set(session.sessionId, {
          session: { ...session, agent },
          base: agent.status,
          tail: null,
          watcher: null,
          toolUses: new Map(),
          titled: agent.suggestedTitle !== undefined,
        });
        if (orphaned) this.orphaned.push(session.sessionId);
      }
      if (this.trim() > 0) void this.save();
    } catch (error) {
      this.options.log.warn(`terminal sessions: ${this.file} not readable, starting empty (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  /** Drops what kept.ts says has nothing left to offer; answers how many. */
  private trim(): number {
    const busy = (sessionId: string) => [...this.pending.values()].some((p) => p.request.sessionId === sessionId);
    const drop = sessionsToDrop(
      [...this.known.values()].map((k) => k.session),
      Date.now(),
      { busy },
    );
    for (const sessionId of drop) {
      this.known.get(sessionId)?.watcher?.close();
      this.known.delete(sessionId);
    }
    if (drop.size > 0) this.options.log.info(`terminal sessions: ${drop.size} no longer listed (exited, their transcript gone, or beyond the newest kept)`);
    return drop.size;
  }

  /** Opens the hooks' socket. */
  async start(): Promise<void> {
    this.channel = await HookChannel.open(
      this.options.dataDir,
      (call) => this.handle(call),
      (message) => this.options.log.warn(message),
    );
    this.liveness = setInterval(() => {
      this.checkLiveness();
      this.scanStatusOnly();
    }, this.options.livenessIntervalMs ?? LIVENESS_INTERVAL_MS);
    this.liveness.unref();
    this.scanStatusOnly();
  }

  /**
   * Lists each new process of a CLI without hooks (status-only.ts). Without hooks the host cannot
   * know whether it works, waits on a prompt or asks a permission: it is `running` while the process
   * runs, and checkLiveness makes it `exited` once the process is gone (or its pid is another's).
   */
  private scanStatusOnly(): void {
    const commands = this.options.statusOnly?.() ?? [];
    if (commands.length === 0) return;
    const same = (a: { pid: number; startedAt: string }, b: { pid: number; startedAt: string }) => a.pid === b.pid && a.startedAt === b.startedAt;
    const live = [...this.known.values()].filter((known) => known.members && known.process && known.session.agent.live && known.base !== 'exited');
    for (const found of scanStatusOnly(commands)) {
      // A CLI already listed, seen again (perhaps by another of its processes: its first one ended).
      const listed = live.find((known) => known.members!.some((member) => found.members.some((seen) => same(member, seen))));
      if (listed) {
        for (const seen of found.members) if (!listed.members!.some((member) => same(member, seen))) listed.members!.push(seen);
        continue;
      }
      const sessionId = statusOnlySessionId(found);
      const now = Date.now();
      const session = {
        sessionId,
        cwd: found.cwd,
        agent: { kind: found.kind, agentSessionId: sessionId, transcriptPath: null, status: 'running' as const, live: true, updatedAt: now },
      };
      this.known.set(sessionId, {
        session,
        base: 'running',
        tail: null,
        watcher: null,
        toolUses: new Map(),
        titled: false,
        process: { pid: found.pid, startedAt: found.startedAt },
        members: [...found.members],
      });
      this.options.log.info(`terminal session ${sessionId} (${found.kind}, status only: no hooks) in ${found.cwd}`);
      this.trim();
      this.changed(this.known.get(sessionId)!);
    }
  }

  /** Sessions whose CLI's process is gone (or is another process now) end here: no SessionEnd will come. */
  private checkLiveness(): void {
    for (const known of this.known.values()) {
      if (!known.process || !known.session.agent.live || known.base === 'exited') continue;
      if (known.members) {
        known.members = known.members.filter((member) => runs(member));
        if (known.members.length > 0) continue;
      } else if (processStart(known.process.pid) === known.process.startedAt) continue;
      this.options.log.info(`terminal session ${known.session.sessionId}: its CLI (pid ${known.process.pid}) ended without a SessionEnd`);
      known.process = undefined;
      known.session.agent.updatedAt = Date.now();
      this.end(known, 'the CLI ended');
      this.changed(known);
    }
  }

  private end(known: Known, why: string): void {
    known.base = 'exited';
    this.settleSession(known, why);
    known.watcher?.close();
    known.watcher = null;
  }

  /**
   * Says of each session a previous process left waiting that it waits no more (its approvals list
   * empty, its status without `needs-you`). Called once the clients that must hear it are connected
   * (HostCore.resume), as the events go out only to connected clients (the relay's through the outbox).
   */
  resume(): void {
    for (const sessionId of this.orphaned.splice(0)) {
      const known = this.known.get(sessionId);
      if (!known) continue;
      this.sendApprovals(sessionId);
      this.changed(known);
    }
  }

  async close(): Promise<void> {
    if (this.liveness) clearInterval(this.liveness);
    this.liveness = null;
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      pending.answer(null);
    }
    this.pending.clear();
    for (const known of this.known.values()) known.watcher?.close();
    await this.channel?.close();
    this.channel = null;
    await this.save();
  }

  // ---- what clients ask ----

  list(): SessionListResult {
    return { sessions: [...this.known.values()].map((k) => k.session), approvals: [...this.pending.values()].map((p) => p.request) };
  }

  /** The newest `limit` items, as many of them as fit one reply on the link (item-batches.ts). */
  async history(sessionId: string, limit = 200): Promise<ChatItem[]> {
    const items = await this.allItems(this.get(sessionId));
    return newestThatFit(items.slice(Math.max(0, items.length - limit)));
  }

  private async allItems(known: Known): Promise<ChatItem[]> {
    const tail = this.tailOf(known);
    if (tail) await tail.read();
    return tail ? [...tail.transcript.items.values()] : [];
  }

  /** A client's answer. First answer wins: after the terminal's (or another client's, or the expiry) it is `accepted: false`. */
  answer(payload: ApprovalAnswerPayload): ApprovalAnswerResult {
    const pending = this.pending.get(payload.requestId);
    if (!pending || pending.request.sessionId !== payload.sessionId) {
      if (this.settled.has(payload.requestId)) return { accepted: false };
      throw new ProtocolError('request-not-found', `No approval ${payload.requestId} in session ${payload.sessionId}`);
    }
    const choice = pending.request.choices.find((c) => c.id === payload.choiceId);
    if (!choice) throw new ProtocolError('bad-request', `Approval ${payload.requestId} offers no choice ${payload.choiceId}`);
    const decision =
      choice.kind === 'deny'
        ? { behavior: 'deny', message: 'Denied from Tether.' }
        : choice.kind === 'remember'
          ? { behavior: 'allow', updatedPermissions: pending.suggestions }
          : { behavior: 'allow' };
    pending.answer({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } });
    this.settle(payload.requestId, `answered from a client (${choice.kind})`);
    return { accepted: true };
  }

  /**
   * What a chat needs to take the session over: only once the terminal let go of it (the CLI ended,
   * or the host restarted since and has not heard of it again), so two CLIs never write one session.
   */
  async handover(sessionId: string): Promise<{ kind: CliKind; cwd: string; agentSessionId: string; items: ChatItem[] }> {
    const known = this.get(sessionId);
    const { agent } = known.session;
    if (agent.transcriptPath === null) {
      throw new ProtocolError(
        'chat-unsupported',
        `Tether sees this ${agent.kind} session by its process only (it reads no hooks of ${agent.kind}): it knows no CLI session to continue here; go on in its terminal`,
      );
    }
    if (agent.live && agent.status !== 'exited') {
      throw new ProtocolError('chat-busy', 'The terminal still runs this session: end it there (/exit) first, then continue it here');
    }
    const items = await this.allItems(known);
    return { kind: agent.kind === 'codex' ? 'codex' : 'claude', cwd: known.session.cwd, agentSessionId: agent.agentSessionId, items };
  }

  /**
   * Whether a terminal runs this CLI session now (its hooks said so and it has not ended): a chat on
   * the same session must not start its own CLI on it meanwhile, or two CLIs write one transcript.
   */
  runsInTerminal(agentSessionId: string | null): boolean {
    if (!agentSessionId) return false;
    for (const known of this.known.values()) {
      const { agent } = known.session;
      if (agent.agentSessionId === agentSessionId && agent.live && agent.status !== 'exited') return true;
    }
    return false;
  }

  private get(sessionId: string): Known {
    const known = this.known.get(sessionId);
    if (!known) throw new ProtocolError('session-not-found', `No terminal session ${sessionId}`);
    return known;
  }

  // ---- what the hooks say ----

  private handle(call: HookCall): void {
    const parsed = HookEventSchema.safeParse(call.event);
    if (!parsed.success) {
      this.options.log.warn(`terminal hook refused: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}`);
      return call.answer(null);
    }
    const hook = parsed.data;
    const transcript = this.admitTranscript(call.cli, hook);
    if (transcript === null) {
      this.options.log.warn(
        `terminal hook refused: transcript ${JSON.stringify(hook.transcript_path)} is not a transcript of a config folder with the host's hooks`,
      );
      return call.answer(null);
    }
    const known = this.touch(call.cli, hook, transcript);
    if (call.pid !== undefined && known.process?.pid !== call.pid) {
      const startedAt = processStart(call.pid);
      known.process = startedAt === null ? undefined : { pid: call.pid, startedAt };
    }
    switch (hook.hook_event_name) {
      case 'SessionStart':
        known.base = 'idle';
        this.options.tookBack?.(known.session.agent.agentSessionId);
        break;
      case 'UserPromptSubmit':
        known.base = 'running';
        this.options.tookBack?.(known.session.agent.agentSessionId);
        this.settleSession(known, 'the terminal took a new prompt');
        // The first prompt names the session until the CLI gives it a title of its own.
        if (!known.titled && !known.session.agent.suggestedTitle && hook.prompt) {
          const title = titleFromMessage(hook.prompt);
          if (title) known.session.agent.suggestedTitle = title;
        }
        break;
      case 'PreToolUse':
        known.base = 'running';
        if (hook.tool_use_id && hook.tool_name) {
          const key = toolKey(hook.tool_name, hook.tool_input);
          known.toolUses.set(key, [...(known.toolUses.get(key) ?? []), hook.tool_use_id]);
        }
        break;
      case 'PermissionRequest':
        return this.ask(known, hook, call);
      case 'PostToolUse':
      case 'PostToolUseFailure':
        known.base = 'running';
        if (hook.tool_use_id) this.settleTool(known, hook.tool_use_id);
        break;
      case 'Notification':
        if (hook.notification_type === 'idle_prompt') known.base = 'idle';
        break;
      case 'Stop':
        known.base = 'idle';
        this.settleSession(known, 'the turn ended');
        break;
      case 'SessionEnd':
        this.end(known, 'the session ended');
        break;
      default:
        break;
    }
    call.answer(null);
    this.changed(known);
    void this.follow(known);
  }

  /**
   * The transcript path when it is one the host may read, symlinks resolved: Claude Code's
   * `<config>/projects/<folder>/<session id>.jsonl`, Codex's `<home>/sessions/<y>/<m>/<d>/rollout-<time>-<session id>.jsonl`,
   * in a config folder of that CLI with the host's hooks.
   */
  private admitTranscript(kind: CliKind, hook: HookEvent): string | null {
    const file = path.resolve(hook.transcript_path);
    const name = path.basename(file);
    const named = kind === 'codex' ? name.startsWith('rollout-') && name.endsWith(`-${hook.session_id}.jsonl`) : name === `${hook.session_id}.jsonl`;
    if (!named) return null;
    const real = realOrSelf(file);
    for (const target of this.options.targets()) {
      if (target.kind !== kind) continue;
      const folder = path.join(realOrSelf(target.configDir), kind === 'codex' ? 'sessions' : 'projects') + path.sep;
      if (real.startsWith(folder) && path.relative(folder, real).split(path.sep).length === (kind === 'codex' ? 4 : 2)) return real;
    }
    return null;
  }

  private touch(kind: CliKind, hook: HookEvent, transcript: string): Known {
    let known = this.known.get(hook.session_id);
    const now = Date.now();
    if (!known || known.session.agent.transcriptPath !== transcript) {
      known?.watcher?.close();
      const previous = known;
      known = {
        session: {
          sessionId: hook.session_id,
          cwd: hook.cwd,
          agent: {
            kind,
            agentSessionId: hook.session_id,
            transcriptPath: transcript,
            status: 'idle',
            live: true,
            updatedAt: now,
            ...(previous?.session.agent.suggestedTitle ? { suggestedTitle: previous.session.agent.suggestedTitle } : {}),
          },
        },
        base: 'idle',
        tail: null,
        watcher: null,
        toolUses: new Map(),
        titled: previous?.titled ?? false,
      };
      this.known.set(hook.session_id, known);
      this.options.log.info(`terminal session ${hook.session_id} (${kind}) in ${hook.cwd}`);
      if (!previous) this.trim();
    }
    known.session.cwd = hook.cwd;
    known.session.agent.live = true;
    known.session.agent.updatedAt = now;
    return known;
  }

  private ask(known: Known, hook: HookEvent, call: HookCall): void {
    const toolName = hook.tool_name ?? 'tool';
    const key = toolKey(toolName, hook.tool_input);
    const ids = known.toolUses.get(key);
    const toolUseId = ids?.shift() ?? null;
    if (ids && ids.length === 0) known.toolUses.delete(key);
    const requestId = toolUseId && !this.pending.has(toolUseId) && !this.settled.has(toolUseId) ? toolUseId : randomUUID();
    // Codex fails closed on a decision with updatedPermissions, and offers none to remember.
    const codex = known.session.agent.kind === 'codex';
    const suggestions = codex ? [] : (hook.permission_suggestions ?? []);
    const choices: ApprovalChoice[] = [
      { id: 'allow', kind: 'allow', label: 'Allow once' },
      ...(suggestions.length > 0 ? [{ id: 'remember', kind: 'remember' as const, label: 'Allow and remember' }] : []),
      { id: 'deny', kind: 'deny', label: 'Deny' },
    ];
    const createdAt = Date.now();
    const wait = codex ? (this.options.codexApprovalWaitMs ?? CODEX_APPROVAL_WAIT_MS) : (this.options.approvalWaitMs ?? APPROVAL_WAIT_MS);
    const request: ApprovalRequest = {
      requestId,
      sessionId: known.session.sessionId,
      toolName,
      summary: summaryOf(toolName, hook.tool_input),
      choices,
      createdAt,
      expiresAt: createdAt + wait,
    };
    const timer = setTimeout(() => {
      // Past its expiry the card goes; the CLI's own prompt stays (Codex's now comes) for the person at the terminal.
      this.pending.get(requestId)?.answer(null);
      this.settle(requestId, 'expired');
    }, wait);
    timer.unref();
    this.pending.set(requestId, { request, toolUseId, suggestions, answer: (output) => call.answer(output), timer });
    call.onGone(() => this.settle(requestId, 'the hook went away'));
    this.changed(known);
    this.sendApprovals(known.session.sessionId);
    void this.follow(known);
  }

  private settle(requestId: string, why: string): void {
    const pending = this.pending.get(requestId);
    if (!pending) return;
    clearTimeout(pending.timer);
    pending.answer(null);
    this.pending.delete(requestId);
    this.settled.add(requestId);
    if (this.settled.size > SETTLED_KEPT) this.settled.delete(this.settled.values().next().value!);
    this.options.log.info(`terminal approval ${requestId} settled: ${why}`);
    const known = this.known.get(pending.request.sessionId);
    this.sendApprovals(pending.request.sessionId);
    if (known) this.changed(known);
  }

  private settleTool(known: Known, toolUseId: string): void {
    for (const [id, pending] of this.pending) {
      if (pending.request.sessionId === known.session.sessionId && pending.toolUseId === toolUseId) this.settle(id, 'the tool call went on in the terminal');
    }
  }

  private settleSession(known: Known, why: string): void {
    for (const [id, pending] of this.pending) if (pending.request.sessionId === known.session.sessionId) this.settle(id, why);
  }

  private sendApprovals(sessionId: string): void {
    const approvals = [...this.pending.values()].filter((p) => p.request.sessionId === sessionId).map((p) => p.request);
    this.options.broadcast('session.approvals', { sessionId, approvals });
  }

  /** Publishes the session's status (pending approvals make it `needs-you`) and keeps the list on disk. */
  private changed(known: Known): void {
    const waiting = [...this.pending.values()].some((p) => p.request.sessionId === known.session.sessionId);
    known.session.agent.status = waiting && known.base !== 'exited' ? 'needs-you' : known.base;
    this.options.broadcast('session.status', known.session);
    void this.save();
  }

  private save(): Promise<void> {
    const text = JSON.stringify({ sessions: [...this.known.values()].map((k) => k.session) });
    const next = this.writing.then(() => replaceFile(this.file, text));
    this.writing = next.catch((error) => this.options.log.warn(`terminal sessions not written: ${error instanceof Error ? error.message : String(error)}`));
    return this.writing as Promise<void>;
  }

  // ---- the transcript ----

  private tailOf(known: Known): TranscriptTail | null {
    const file = known.session.agent.transcriptPath;
    if (!file) return null;
    known.tail ??= new TranscriptTail(file, known.session.agent.kind === 'codex' ? new CodexTranscript() : new ClaudeTranscript());
    return known.tail;
  }

  /** Reads what the transcript added, and watches it for more while the CLI runs. */
  private async follow(known: Known): Promise<void> {
    const tail = this.tailOf(known);
    if (!tail) return;
    const file = known.session.agent.transcriptPath!;
    if (!known.watcher && known.base !== 'exited' && existsSync(file)) {
      try {
        known.watcher = watch(file, () => void this.follow(known));
        known.watcher.on('error', () => {
          known.watcher?.close();
          known.watcher = null;
        });
      } catch {
        known.watcher = null;
      }
    }
    const change = await tail.read().catch(() => null);
    if (!change) return;
    for (const toolUseId of change.settledToolUseIds) this.settleTool(known, toolUseId);
    if (change.title) {
      const title = titleFromAgent(change.title);
      if (title) {
        known.titled = true;
        known.session.agent.suggestedTitle = title;
        this.changed(known);
      }
    }
    // In order, in batches that each fit the link (a long transcript read at once is many).
    for (const items of itemBatches(change.items)) this.options.broadcast('session.items', { sessionId: known.session.sessionId, items });
  }
}

/** Whether that process still runs (the same pid, started at the same time). */
function runs(process: { pid: number; startedAt: string } | null): boolean {
  return process !== null && processStart(process.pid) === process.startedAt;
}

/** When the process started (its start time in clock ticks, /proc/<pid>/stat field 22); null when there is none (or it is a zombie: it ended). */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? null : (fields[19] ?? null);
  } catch {
    return null;
  }
}

function realOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    // Not written yet: its folder must be real and inside, then.
    try {
      return path.join(realpathSync(path.dirname(file)), path.basename(file));
    } catch {
      return file;
    }
  }
}

/**
 * A tool call by its name and input, to pair a PermissionRequest (which names no id) with its
 * PreToolUse. Codex adds the model's justification to the PermissionRequest's input as
 * `description`, which its PreToolUse lacks; it is left out of the key.
 */
function toolKey(toolName: string, input: unknown): string {
  const fields = typeof input === 'object' && input !== null && !Array.isArray(input) ? { ...(input as Record<string, unknown>) } : input;
  if (typeof fields === 'object' && fields !== null && 'description' in fields) delete (fields as Record<string, unknown>).description;
  return `${toolName}\0${JSON.stringify(fields ?? null)}`;
}

/** What the card says the tool will do: the command, the file, else the input as JSON; cut. */
function summaryOf(toolName: string, input: unknown): string {
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const text =
    typeof fields.command === 'string'
      ? fields.command
      : typeof fields.file_path === 'string'
        ? fields.file_path
        : typeof fields.url === 'string'
          ? fields.url
          : JSON.stringify(input ?? {});
  const line = `${toolName}: ${text}`;
  return line.length > SUMMARY_MAX ? `${line.slice(0, SUMMARY_MAX - 1)}…` : line;
}
