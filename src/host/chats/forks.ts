// Forks: a new chat that continues another after one of its turns, with the history up to and
// including that turn (`chat.fork`), and the requests built on it: `chat.forkInfo`, `chat.continueOn`
// (a chat that stopped on a limit goes on under another account) and `chat.summarize` (a hidden
// fork writes a summary, delivered back to the chat as a note).
//
// The backend's own conversation is the provider's business (`Provider.fork`); a provider without
// that capability cannot fork, and these requests answer `chat-unsupported`. A fork onto another CLI
// needs no capability: the new CLI gets the conversation as text with the fork's first message.
// This host has no canvas: a fork is its own node and view (`nodeId` = `viewId` = its chat id), and
// no edge is drawn.
import { randomUUID } from 'node:crypto';
import { ProtocolError } from '../../contracts/errors.ts';
import { clipText, SUGGESTED_TITLE_LIMIT } from '../../contracts/index.ts';
import type {
  AgentKind,
  ChatForkInfoResult,
  ChatForkPayload,
  ChatForkResult,
  ChatInfo,
  ChatItem,
  ChatPreferencesPayload,
  ChatForkWorktree,
  ChatTurnItem,
  Worktree,
} from '../../contracts/index.ts';
import { lastLineIn } from './last-line.ts';
import { defaultBranch, makeWorktree } from './worktrees.ts';
import type { HostCore } from './core.ts';
import type { ChatSession } from './session.ts';

/** What the fork's backend is asked to do with the summary turn. */
export const SUMMARY_PROMPT =
  'Summarize this conversation so far for someone who will pick it up later: the goal, what was done and decided, what changed in which files, and what is still open. Reply with the summary only.';

/** Text of a transcript handed to another CLI is cut to this many characters (the newest kept). */
const TRANSCRIPT_MAX = 100_000;

export async function forkChat(core: HostCore, payload: ChatForkPayload, prefs: ChatPreferencesPayload = {}): Promise<ChatForkResult> {
  const source = core.session(payload.chatId);
  core.policy.admitFolder(source.info.cwd);
  const turn = settledTurn(source, payload.turnId);
  const kind = payload.provider ?? source.info.provider;
  const sameCli = kind === source.info.provider;
  const account = payload.account ?? (sameCli ? source.info.account : prefs.accounts?.[kind]);
  const fork = await makeFork(core, source, turn, {
    kind,
    account,
    selection: payload.selection ?? prefs.selections?.[kind] ?? (sameCli ? source.info.selection : undefined),
    title: payload.title,
    ...(payload.worktree ? { worktree: payload.worktree } : {}),
  });
  return forkResult(fork.session, fork.worktree);
}

export async function forkInfo(core: HostCore, chatId: string, turnId: string): Promise<ChatForkInfoResult> {
  const session = core.session(chatId);
  const turn = session.thread.get(turnId);
  if (turn?.kind !== 'turn') throw new ProtocolError('turn-not-found', `No turn ${turnId} in this chat`);
  const branches = await core.checkpoints.branches(session.info.cwd);
  // A worktree starts from the repository's HEAD: a fork's files are never those after the turn here.
  const branch = branches === null ? null : freeBranch(branches, session.info.suggestedTitle);
  return { repository: branches !== null, branches: branches ?? [], branch, filesAfterTurn: false };
}

/** A chat that stopped (on a limit) goes on under `account`: in place when it has no backend conversation yet, else in a fork. */
export async function continueOn(core: HostCore, chatId: string, account: string): Promise<{ chatId: string; fork?: ChatForkResult }> {
  const session = core.session(chatId);
  const info = session.info;
  core.policy.admitFolder(info.cwd);
  if (!core.accounts.has(info.provider, account)) throw new ProtocolError('account-unavailable', `No ${info.provider} account ${account} on this host`);
  core.accounts.launchSettings(info.provider, account);
  if (session.activeTurnId) throw new ProtocolError('chat-busy', 'A turn is running; continue on another account once it stopped');
  if ((info.account ?? info.provider) === account) return { chatId };
  if (info.agentSessionId === null) {
    session.updateInfo({ account: account === info.provider ? undefined : account, limit: undefined, queuePaused: false });
    session.deliverNext();
    return { chatId };
  }
  const { session: fork } = await makeFork(core, session, latestTurn(session), { kind: info.provider, account, selection: info.selection });
  return { chatId: fork.chatId, fork: forkResult(fork) };
}

/**
 * Hidden forks being made, by host and source chat: counted with the ones whose summary runs, so
 * requests arriving together cannot all pass the caps while the first forks are still being made.
 */
const making = new WeakMap<HostCore, Map<string, number>>();

/**
 * Takes a place for one more hidden fork of `chatId`, or refuses (`chat-busy`) past the policy's caps:
 * each is its own CLI process, so a client asking for summaries in a loop must not start one per ask.
 * Answers the function that gives the place back once the fork's turn is running (or failed to start).
 */
function reserveSummary(core: HostCore, chatId: string): () => void {
  const caps = core.policy.hiddenForks;
  let pending = making.get(core);
  if (!pending) making.set(core, (pending = new Map()));
  let host = 0;
  let chat = pending.get(chatId) ?? 0;
  for (const count of pending.values()) host += count;
  for (const session of core.sessions.values()) {
    if (!session.info.hidden || session.activeTurnId === null) continue;
    host += 1;
    if (session.info.forkOf?.chatId === chatId) chat += 1;
  }
  if (chat >= caps.chat)
    throw new ProtocolError(
      'chat-busy',
      `This chat already has ${chat} summar${chat === 1 ? 'y' : 'ies'} being written (this host allows ${caps.chat} at once per chat); ask again once it is done`,
    );
  if (host >= caps.host) throw new ProtocolError('chat-busy', `This host already writes ${host} summaries at once (its limit); ask again once one is done`);
  const map = pending;
  map.set(chatId, (map.get(chatId) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (map.get(chatId) ?? 1) - 1;
    if (left > 0) map.set(chatId, left);
    else map.delete(chatId);
  };
}

/** A hidden fork writes a summary of the chat; when its turn is done, the summary reaches the chat as a note. */
export async function summarize(core: HostCore, chatId: string): Promise<{ turnId: string }> {
  const source = core.session(chatId);
  core.policy.admitFolder(source.info.cwd);
  const latest = latestTurn(source);
  const release = reserveSummary(core, chatId);
  let fork: ChatSession;
  let turnId: string;
  try {
    ({ session: fork } = await makeFork(core, source, latest, {
      kind: source.info.provider,
      account: source.info.account,
      selection: source.info.selection,
      hidden: true,
    }));
    turnId = fork.begin({ text: SUMMARY_PROMPT });
  } finally {
    // From here the fork's running turn holds its place (core.sessions), until it settles or is killed.
    release();
  }
  const item = fork.thread.get(turnId);
  if (item?.kind === 'turn') fork.upsert({ ...item, summaryFor: chatId });
  core.whenTurnSettles(fork.chatId, turnId, (turn) => {
    // Its CLI process is not kept for a chat nobody sees: a later turn there resumes by session id.
    fork.releaseBackend();
    const target = core.sessions.get(chatId);
    if (!target || turn.state !== 'done') return;
    const reply = fork.thread.items
      .filter((i) => i.kind === 'assistant' && i.turnId === turnId)
      .map((i) => (i.kind === 'assistant' ? i.text : ''))
      .join('\n\n')
      .trim();
    if (!reply) return;
    target.upsert({ id: `note-${randomUUID()}`, kind: 'note', createdAt: Date.now(), turnId: null, level: 'info', text: reply, from: fork.chatId });
  });
  return { turnId };
}

/**
 * The text a fork's first message carries to a backend that has none of the conversation (another
 * CLI, or a source that never reached one): the history as a transcript, then the message. Null when
 * the backend has the conversation (or the fork already ran a turn of its own).
 */
export function forkPreamble(session: ChatSession, text: string): string | null {
  const info = session.info;
  if (!info.forkOf || info.agentSessionId !== null) return null;
  const items = session.thread.items;
  const at = items.findIndex((i) => i.id === info.forkOf!.turnId);
  if (at === -1 || items.slice(at + 1).some((i) => i.kind === 'turn')) return null;
  const lines: string[] = [];
  for (const item of items) {
    if (item.kind === 'user') lines.push(`User: ${item.text}`);
    else if (item.kind === 'assistant' && !item.parentToolUseId) lines.push(`Assistant: ${item.text}`);
  }
  if (lines.length === 0) return null;
  let transcript = lines.join('\n\n');
  if (transcript.length > TRANSCRIPT_MAX) transcript = `…${transcript.slice(transcript.length - TRANSCRIPT_MAX)}`;
  return `This conversation continues one held elsewhere. Its transcript so far:\n\n<transcript>\n${transcript}\n</transcript>\n\n${text}`;
}

interface ForkOptions {
  kind: AgentKind;
  account: string | undefined;
  selection: ChatInfo['selection'] | undefined;
  title?: string;
  hidden?: boolean;
  /** Work in a new git worktree of the source's repository (worktrees.ts). */
  worktree?: ChatForkWorktree;
}

async function makeFork(core: HostCore, source: ChatSession, turn: ChatTurnItem, options: ForkOptions): Promise<{ session: ChatSession; worktree?: Worktree }> {
  const provider = core.providers.get(options.kind);
  if (!provider) throw new ProtocolError('account-unavailable', `This host has no ${options.kind} provider`);
  const account = options.account !== undefined && options.account !== options.kind ? options.account : undefined;
  if (account !== undefined && !core.accounts.has(options.kind, account)) {
    throw new ProtocolError('account-unavailable', `No ${options.kind} account ${account} on this host`);
  }
  if (account !== undefined) core.accounts.launchSettings(options.kind, account);
  const items = historyThrough(source, turn.id);
  const title = options.title ?? source.info.suggestedTitle;
  // Made last of what can be refused, so a refusal leaves no worktree behind.
  const made = options.worktree ? await makeWorktree(core.policy, source.info.cwd, options.worktree.branch, title) : null;
  const cwd = made ? core.policy.admitNewFolder(made.cwd) : source.info.cwd;
  let agentSessionId: string | null = null;
  // In a worktree the CLI's own fork would look for its session under another folder (Claude Code keeps
  // them per folder), so it gets the conversation as text, as another CLI would (forkPreamble).
  if (!made && options.kind === source.info.provider && source.info.agentSessionId !== null) {
    if (!provider.fork) throw new ProtocolError('chat-unsupported', `${provider.info().name} cannot fork its conversation on this host`);
    agentSessionId = await provider.fork({
      agentSessionId: source.info.agentSessionId,
      cwd: source.info.cwd,
      turnId: turn.id,
      ...(turn.native ? { native: turn.native } : {}),
      latest: latestTurnOf(source)?.id === turn.id,
      ...(account !== undefined ? { account } : {}),
    });
  }
  const chatId = randomUUID();
  const now = Date.now();
  // The fork's row shows the last line of the history it copied, not the source's newer one.
  const lastLine = lastLineIn(items);
  const info: ChatInfo = {
    chatId,
    provider: options.kind,
    ...(account !== undefined ? { account } : {}),
    cwd,
    agentSessionId,
    model: null,
    selection: provider.normalizeSelection(options.selection),
    runtimeMode: core.policy.admitMode(undefined, source.info.runtimeMode),
    status: 'idle',
    running: false,
    activeTurnId: null,
    slashCommands: [],
    usage: { contextTokens: 0, contextWindow: null, costUsd: 0, turns: 0 },
    ...(title ? { suggestedTitle: clipText(title, SUGGESTED_TITLE_LIMIT) } : {}),
    ...(options.hidden ? { hidden: true } : {}),
    forkOf: { chatId: source.chatId, turnId: turn.id, at: now },
    ...(lastLine ? { lastLine } : {}),
    createdAt: now,
  };
  const copied = await core.attachments.copy(source.chatId, chatId, items);
  const fork = await core.addChat(info, copied);
  const turnIds = new Set(items.filter((i) => i.kind === 'turn').map((i) => i.id));
  await core.copyVisuals(source.chatId, chatId, (visual) => (visual.turnId !== undefined ? turnIds.has(visual.turnId) : visual.at <= (turn.endedAt ?? now)));
  return { session: fork, ...(made ? { worktree: made.worktree } : {}) };
}

function forkResult(fork: ChatSession, worktree?: Worktree): ChatForkResult {
  return { info: fork.info, nodeId: fork.chatId, viewId: fork.chatId, edgeId: null, ...(worktree ? { worktree } : {}) };
}

/** A branch name not among `taken`, after the chat's title. */
function freeBranch(taken: readonly string[], title: string | undefined): string {
  for (;;) {
    const name = defaultBranch(title);
    if (!taken.includes(name)) return name;
  }
}

/** A turn a fork can continue after: it exists and has settled. */
function settledTurn(session: ChatSession, turnId: string): ChatTurnItem {
  const turn = session.thread.get(turnId);
  if (turn?.kind !== 'turn') throw new ProtocolError('turn-not-found', `No turn ${turnId} in this chat`);
  if (turn.state === 'running') throw new ProtocolError('chat-busy', 'That turn is still running; fork it once it settled');
  return turn;
}

/** The newest settled turn, which a summary or a move to another account continues after. */
function latestTurn(session: ChatSession): ChatTurnItem {
  const turn = session.thread.items.findLast((i): i is ChatTurnItem => i.kind === 'turn' && i.state !== 'running');
  if (!turn) throw new ProtocolError('turn-not-found', 'This chat has no finished turn yet');
  return turn;
}

function latestTurnOf(session: ChatSession): ChatTurnItem | undefined {
  return session.thread.items.findLast((i): i is ChatTurnItem => i.kind === 'turn');
}

/** The items up to and including the last one of `turnId` (its reply, tools, notes). */
function historyThrough(session: ChatSession, turnId: string): ChatItem[] {
  const items = session.thread.items;
  let end = items.findIndex((i) => i.id === turnId);
  for (let i = end + 1; i < items.length; i += 1) if (items[i].turnId === turnId) end = i;
  // A copy each: the fork's thread must never share objects with the source's.
  return items.slice(0, end + 1).map((item) => structuredClone(item));
}
