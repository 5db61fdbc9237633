// The request table: one handler per agent-contracts request, keyed and typed by
// AGENT_REQUEST_SCHEMAS. The runtime validates the payload before a handler runs, so a handler gets
// the parsed payload and answers the result (or throws a ProtocolError with the protocol's code).
// Adding a request is one entry here.
import { ProtocolError } from '../../contracts/errors.ts';
import { narrowerMode } from '../../contracts/index.ts';
import type {
  AgentRequestType,
  ChatAttachResult,
  ChatCheckpointDiff,
  ChatDelivery,
  ChatInfo,
  ChatTurnItem,
  RequestPayload,
  RequestResult,
} from '../../contracts/index.ts';
import type { ClientState, HostCore } from './core.ts';
import { listProviders } from '../providers/roster.ts';
import { admitSessionId, AGENT_SESSION_ID } from '../providers/cli-values.ts';
import { continueOn, forkChat, forkInfo, forkPreamble, summarize } from './forks.ts';
import { newId } from './session.ts';
import type { ChatSession, OutgoingMessage } from './session.ts';
import { storableChatId } from './store.ts';
import { titleFromMessage } from './title.ts';
import { setHooks, stateOfHooks } from '../terminal/hooks.ts';
import { continueTerminalSession } from '../terminal/handover.ts';
import { statusOnlyHooksState } from '../terminal/status-only.ts';
import { listFolder, topFolders } from '../folders.ts';
import { makeWorktree } from './worktrees.ts';

type Handler<T extends AgentRequestType> = (
  payload: RequestPayload<T>,
  client: ClientState | null,
  /** Who a relay frame acts for (LinkRequest.by; the verified signer once the gate checked a signature): recorded for people to see, grants nothing. */
  by: string | null,
) => RequestResult<T> | Promise<RequestResult<T>>;

export type HandlerTable = { [T in AgentRequestType]: Handler<T> };

export function createHandlers(core: HostCore): HandlerTable {
  /** A chat request this host does not serve: `chat-not-found` first, like every chat request, then `chat-unsupported`. */
  const unsupported =
    (what: string) =>
    (payload: { chatId: string }): never => {
      core.session(payload.chatId);
      throw new ProtocolError('chat-unsupported', `This host does not ${what}`);
    };

  return {
    // Open and read -----------------------------------------------------------------------------
    'chat.create': async (payload, client) => {
      const existing = core.sessions.get(payload.chatId);
      if (existing) return existing.info;
      if (core.unreadable.has(payload.chatId)) core.session(payload.chatId); // throws chat-unreadable
      if (!storableChatId(payload.chatId)) throw new ProtocolError('bad-request', 'This chat id is too long for this host to store');
      const prefs = client?.preferences ?? {};
      const kind = payload.provider ?? core.defaultProvider.kind;
      const provider = core.providers.get(kind);
      if (!provider) throw new ProtocolError('account-unavailable', `This host has no ${kind} provider`);
      // A real folder inside the roots: a chat is never made where no CLI could (or may) work.
      const cwd = core.policy.admitNewFolder(payload.cwd);
      // An explicit ask above the ceiling is refused; a remembered preference is only narrowed; none is supervised.
      const runtimeMode = payload.runtimeMode !== undefined ? core.policy.admitMode(payload.runtimeMode) : core.policy.admitMode(undefined, prefs.runtimeMode);
      if (payload.account !== undefined && !core.accounts.has(kind, payload.account)) {
        throw new ProtocolError('account-unavailable', `No ${kind} account ${payload.account} on this host`);
      }
      // A remembered pick that is gone since (removed, disabled) falls back to the default account.
      const picked = prefs.accounts?.[kind];
      const account = payload.account ?? (picked !== undefined && core.accounts.has(kind, picked) ? picked : undefined);
      // What the account would hand the CLI must pass the policy now (`invalid-account` naming it).
      if (account !== undefined) core.accounts.launchSettings(kind, account);
      // The session to continue reaches the CLI: it must be this backend's own kind of id.
      const resume = payload.resume !== undefined ? admitSessionId('resume', payload.resume, provider.sessionIds ?? AGENT_SESSION_ID) : null;
      if (resume !== null && payload.worktree) throw new ProtocolError('bad-request', 'A resumed session continues in its own folder, not in a new worktree');
      // Made last of what can be refused, so a refusal leaves no worktree behind; checked like any folder.
      const worktree = payload.worktree ? await makeWorktree(core.policy, cwd, payload.worktree.branch) : null;
      const info: ChatInfo = {
        chatId: payload.chatId,
        provider: kind,
        ...(account !== undefined && account !== kind ? { account } : {}),
        cwd: worktree ? core.policy.admitNewFolder(worktree.cwd) : cwd,
        agentSessionId: resume,
        model: null,
        selection: provider.normalizeSelection(payload.selection ?? prefs.selections?.[kind]),
        runtimeMode,
        status: 'idle',
        running: false,
        activeTurnId: null,
        slashCommands: [],
        usage: { contextTokens: 0, contextWindow: null, costUsd: 0, turns: 0 },
        createdAt: Date.now(),
      };
      const session = await core.addChat(info);
      return session.info;
    },
    'chat.list': () => ({ chats: [...core.sessions.values()].map((s) => s.info) }),
    'chat.attach': (payload, client) => {
      const session = core.session(payload.chatId);
      session.flushDeltas();
      // From here on this client gets the chat's events: text is in this answer or in the stream, never both.
      if (client && !client.allChats) client.attached.add(payload.chatId);
      const visuals = core.visualsOf(payload.chatId);
      if (payload.since !== undefined) {
        const events = session.eventsSince(payload.since);
        if (events) return { info: session.info, items: [], events, seq: session.seq, visuals };
      }
      return { ...snapshot(session, payload.historyLimit), visuals };
    },
    'chat.detach': (payload, client) => {
      core.session(payload.chatId);
      client?.attached.delete(payload.chatId);
      return {};
    },
    'chat.history': (payload) => {
      const session = core.session(payload.chatId);
      session.flushDeltas();
      const start = readCursor(payload.cursor, session);
      const from = Math.max(0, start - (payload.limit ?? 50));
      return { items: session.thread.items.slice(from, start), history: page(session, from) };
    },

    // Send and control --------------------------------------------------------------------------
    'chat.send': async (payload) => {
      const session = core.session(payload.chatId);
      // The policy is the host's, now: a chat made under a wider one does not run outside it.
      core.policy.admitFolder(session.info.cwd);
      if (!core.providers.has(session.info.provider)) {
        throw new ProtocolError('account-unavailable', `This host has no ${session.info.provider} provider any more`);
      }
      // The conversation was taken back to a terminal ("continue in terminal"): it is the terminal's until it ends there.
      if (core.terminal.runsInTerminal(session.info.agentSessionId)) {
        throw new ProtocolError('chat-busy', 'A terminal runs this conversation now: end it there (/exit) first, then send here');
      }
      // Every file the text or the mentions would make the CLI read is in the chat's folders, or
      // nothing is kept (the uploads are host-made paths in the chat's own folder, checked again when
      // the turn starts).
      const prompt = forkPreamble(session, payload.text);
      session.admitFileReads({ text: prompt ?? payload.text, attachments: [], ...(payload.mentions ? { mentions: payload.mentions } : {}) });
      const removed = () => core.sessions.get(payload.chatId) !== session;
      const attachments = await core.attachments.save(payload.chatId, payload.attachments ?? []).catch((error: unknown) => {
        // A kill took the chat's folder away mid-write.
        throw removed() ? new ProtocolError('chat-not-found', `Chat ${payload.chatId} was removed`) : error;
      });
      if (removed()) {
        // Killed while the files were written: a turn now would start a backend nothing ever ends.
        await Promise.all(attachments.map((attachment) => core.store.removeAttachment(attachment.path)));
        throw new ProtocolError('chat-not-found', `Chat ${payload.chatId} was removed`);
      }
      if (attachments.length > 0) await keepWithinLimits(core, session, attachments);
      const message = {
        text: payload.text,
        ...(prompt !== null ? { prompt } : {}),
        mentions: payload.mentions,
        skills: payload.skills,
        chats: payload.chats,
        attachments,
      };
      const sent = deliver(session, message, payload.delivery);
      // After the message's own event: the send's first change is its message (journal.ts), not the title.
      nameChat(session, payload.text, attachments);
      return sent;
    },
    'chat.uiChoice': unsupported('serve interface choices'),
    'ui.query': (payload) => {
      core.session(payload.chatId);
      throw new ProtocolError('refused-query', 'This host has no interface sources');
    },
    'chat.unqueue': (payload) => ({ message: core.session(payload.chatId).unqueue(payload.messageId) }),
    'chat.sendNow': (payload) => {
      core.session(payload.chatId).sendNow(payload.messageId);
      return {};
    },
    'chat.cancel': (payload) => {
      core.session(payload.chatId).cancel(true);
      return {};
    },
    'chat.kill': async (payload) => {
      if (!core.sessions.has(payload.chatId) && !core.unreadable.has(payload.chatId)) core.session(payload.chatId);
      await core.removeChat(payload.chatId);
      return {};
    },

    // Answer ------------------------------------------------------------------------------------
    'chat.approve': (payload, _client, by) => {
      core.session(payload.chatId).approve(payload.requestId, payload.decision, payload.message, by);
      return {};
    },
    'chat.answer': (payload) => {
      core.session(payload.chatId).answer(payload.requestId, payload.answers);
      return {};
    },
    'chat.dismiss': (payload) => {
      core.session(payload.chatId).dismiss(payload.itemId);
      return {};
    },

    // Configure ---------------------------------------------------------------------------------
    'chat.configure': (payload) => {
      const session = core.session(payload.chatId);
      const info = session.info;
      core.policy.admitFolder(info.cwd);
      const patch: Partial<ChatInfo> = {};
      if (payload.runtimeMode !== undefined) patch.runtimeMode = core.policy.admitMode(payload.runtimeMode);
      if (payload.account !== undefined) {
        if (payload.account !== info.provider && !core.accounts.has(info.provider, payload.account)) {
          throw new ProtocolError('account-unavailable', `No ${info.provider} account ${payload.account} on this host`);
        }
        core.accounts.launchSettings(info.provider, payload.account);
        patch.account = payload.account === info.provider ? undefined : payload.account;
      }
      if (payload.selection !== undefined) {
        // Only a selection the provider made its own is kept: it reaches the CLI's command line.
        const provider = core.providers.get(info.provider);
        if (!provider) throw new ProtocolError('account-unavailable', `This host has no ${info.provider} provider any more`);
        patch.selection = provider.normalizeSelection(payload.selection);
      }
      if (payload.resumeAtReset !== undefined) patch.resumeAtReset = payload.resumeAtReset;
      session.updateInfo(patch);
      return session.info;
    },
    'chat.setPreferences': (payload, client) => {
      if (client) {
        const prefs = client.preferences;
        // The newest pick wins; a preference without a time is older than any.
        if (prefs.changedAt !== undefined && (payload.changedAt ?? -1) < prefs.changedAt) return {};
        client.preferences = {
          ...prefs,
          ...payload,
          ...(payload.runtimeMode ? { runtimeMode: narrowerMode(payload.runtimeMode, core.policy.modeCeiling) } : {}),
          selections: { ...prefs.selections, ...payload.selections },
          accounts: { ...prefs.accounts, ...payload.accounts },
        };
      }
      return {};
    },
    'chat.compact': (payload) => {
      core.session(payload.chatId).compact();
      return {};
    },
    'chat.clear': async (payload) => {
      const session = core.session(payload.chatId);
      session.clear(payload.force === true);
      await core.dropVisuals(payload.chatId);
      return {};
    },

    // Turns and forks ---------------------------------------------------------------------------
    'chat.turnDiff': async (payload) => {
      const session = core.session(payload.chatId);
      const turn = session.thread.get(payload.turnId);
      if (turn?.kind !== 'turn') throw new ProtocolError('turn-not-found', `No turn ${payload.turnId} in this chat`);
      return { diff: await turnDiff(core, session, turn) };
    },
    'chat.fork': (payload, client) => forkChat(core, payload, client?.preferences),
    'chat.forkInfo': (payload) => forkInfo(core, payload.chatId, payload.turnId),
    'chat.continueOn': (payload) => continueOn(core, payload.chatId, payload.account),
    'chat.summarize': (payload) => summarize(core, payload.chatId),

    // Delegated work ----------------------------------------------------------------------------
    // A subagent's whole work, paged newest first, from the CLI's own records (Claude Code keeps a
    // transcript per subagent, Codex a rollout per subagent thread).
    'chat.subagent': async (payload) => {
      const session = core.session(payload.chatId);
      const row = session.thread.items.find((item) => item.kind === 'subagent' && item.toolUseId === payload.toolUseId);
      if (row?.kind !== 'subagent') throw new ProtocolError('subagent-not-found', `No subagent ${payload.toolUseId} in this chat`);
      const { provider: kind, account, cwd, agentSessionId } = session.info;
      const provider = core.providers.get(kind);
      const launch = account !== undefined ? core.accounts.launchSettings(kind, account) : undefined;
      const work = provider?.subagentItems && agentSessionId ? await provider.subagentItems(agentSessionId, row, launch) : null;
      if (!work) throw new ProtocolError('transcript-missing', `${kind} kept no transcript of subagent ${payload.toolUseId}`);
      const { items, source } = work;
      let end = items.length;
      if (payload.cursor !== undefined) {
        const at = /^sub:(\d+)$/.exec(payload.cursor);
        if (!at || Number(at[1]) > items.length) throw new ProtocolError('history-expired', 'That page of the subagent is no longer available');
        end = Number(at[1]);
      }
      const start = Math.max(0, end - (payload.limit ?? 50));
      return {
        items: items.slice(start, end),
        // A Codex thread's page names no start (agent-contracts: ChatSubagentPage).
        history: { ...(source === 'codex-thread' ? {} : { start }), cursor: start > 0 ? `sub:${start}` : null },
        source,
        context: { provider: kind, cwd, chatId: payload.chatId },
        live: row.status === 'running',
      };
    },
    // Where the CLI can (Claude Code: a subagent is one of its tasks); else the documented refusal, chat-unsupported.
    'chat.stopSubagent': (payload) => {
      core.session(payload.chatId).stopSubagent(payload.toolUseId);
      return {};
    },
    'chat.stopTask': (payload) => {
      core.session(payload.chatId).stopTask(payload.taskId);
      return {};
    },
    // What the chat's CLI would load for its folder and account, read as that CLI reads it (providers/*).
    'skills.list': async (payload) => {
      const session = core.session(payload.chatId);
      const { provider: kind, account, cwd } = session.info;
      core.policy.admitFolder(cwd);
      const provider = core.providers.get(kind);
      if (!provider?.listSkills) return { skills: [] };
      return { skills: await provider.listSkills(cwd, account !== undefined ? core.accounts.launchSettings(kind, account) : undefined) };
    },

    // Bookmarks and visual removal belong to the relay, which answers them itself.
    'chat.addBookmark': unsupported('keep bookmarks (the relay does)'),
    'chat.renameBookmark': unsupported('keep bookmarks (the relay does)'),
    'chat.removeBookmark': unsupported('keep bookmarks (the relay does)'),
    'chat.removeVisual': unsupported('remove visuals (the relay does)'),

    // Providers and accounts --------------------------------------------------------------------
    // Every agent CLI, served or not (roster.ts).
    // With the host's policy (a Tether addition), so clients show the folders and the ceiling.
    // And how it came to serve them, with where its owner changes that (a Tether addition too).
    'provider.list': async () => ({
      providers: await listProviders([...core.providers.values()]),
      policy: core.policy.summary(),
      ...(core.setup ? { setup: core.setup } : {}),
    }),
    'accounts.list': () => core.accounts.snapshot(),
    'accounts.refresh': () => core.accounts.refresh(),
    'accounts.save': async (payload) => {
      const snapshot = await core.accounts.save(payload.accounts);
      core.broadcast('accounts.changed', snapshot);
      return snapshot;
    },
    'accounts.create': async (payload) => {
      const { id, snapshot } = await core.accounts.create(payload.kind, payload.label, payload.color);
      core.broadcast('accounts.changed', snapshot);
      return { ...snapshot, id };
    },
    // Answers at once; the CLI is asked on a clock and every client hears accounts.changed (login-watch.ts).
    'accounts.watchLogin': (payload) => {
      core.logins.watch(payload.id);
      return {};
    },

    // Usage -------------------------------------------------------------------------------------
    // From the CLIs' own session files (usage/): read again, incrementally, before each answer.
    'usage.summary': (payload) => core.usage.summary(payload),
    // A followed host scans on a clock; every client hears `usage.changed` when a scan counts more.
    'usage.subscribe': (_payload, client) => {
      if (client) core.usage.follow(client.id);
      return {};
    },
    'usage.unsubscribe': (_payload, client) => {
      if (client) core.usage.unfollow(client.id);
      return {};
    },
    // What the CLIs reported (their rate-limit events), per account; a refresh asks those that can be asked.
    'usage.limits': () => core.usage.limits(),
    'usage.refreshLimits': () => core.usage.refreshLimits(),

    // Terminal sessions -------------------------------------------------------------------------
    'session.list': () => core.terminal.list(),
    'session.history': async (payload) => ({ items: await core.terminal.history(payload.sessionId, payload.limit) }),
    'session.approve': (payload) => core.terminal.answer(payload),
    // Kept by the relay per socket; a local client gets every approval.
    'session.approvalPreference': () => ({}),
    'session.resume': (payload, client) => continueTerminalSession(core, payload.sessionId, client),
    'hooks.status': async () => ({
      hooks: [
        ...(await Promise.all(core.hookTargetsNow().map((target) => stateOfHooks(core.dataDir, target)))),
        ...core.statusOnlyCommands.map(statusOnlyHooksState),
      ],
    }),
    'hooks.set': async (payload) => {
      const targets = core.hookTargetsNow().filter((target) => target.kind === payload.kind);
      if (targets.length === 0) {
        const statusOnly = core.statusOnlyCommands.some((command) => command.kind === payload.kind);
        throw new ProtocolError(
          'chat-unsupported',
          statusOnly
            ? `This host reads no hooks of ${payload.kind}: its terminal sessions show their status only`
            : `This host installs no hooks for ${payload.kind}`,
        );
      }
      // Consent: a relay that forged this must not add hooks to the person's CLI. Removing is always allowed.
      if (payload.installed && !core.hooksInstallVerified) {
        throw new ProtocolError(
          'forbidden',
          'This host adds its hooks only on a signed request (signatures.require) or on the machine: tether host hooks install',
        );
      }
      const hooks = [];
      for (const target of targets) hooks.push(await setHooks(core.dataDir, target, payload.installed));
      return { hooks };
    },

    // The folder picker (folders.ts): read-only, every path through the policy's roots first.
    'folders.list': (payload) =>
      payload.folder === undefined
        ? topFolders(
            core.policy,
            [...core.sessions.values()]
              .filter((s) => !s.info.hidden)
              .map((s) => ({ cwd: s.info.cwd, at: s.thread.items.at(-1)?.createdAt ?? s.info.createdAt })),
          )
        : listFolder(core.policy, payload.folder),
  };
}

/**
 * After new uploads, the chat's files on disk are kept within the host's limits: the oldest go
 * (never this message's nor a queued one's), and the chat gets a note saying so.
 */
async function keepWithinLimits(core: HostCore, session: ChatSession, attachments: readonly { path: string }[]): Promise<void> {
  const keep = new Set(attachments.map((a) => a.path));
  for (const queued of session.info.queue ?? []) for (const a of queued.attachments ?? []) keep.add(a.path);
  const dropped = await core.attachments.prune(session.chatId, keep);
  if (dropped.files === 0) return;
  const { files, bytes } = core.attachments.limits;
  session.upsert({
    id: newId('note'),
    kind: 'note',
    createdAt: Date.now(),
    turnId: null,
    level: 'info',
    text: `${dropped.files} older attachment${dropped.files === 1 ? ' was' : 's were'} removed from the host (${Math.ceil(dropped.bytes / 1024)} KiB): a chat keeps at most ${files} files and ${Math.round(bytes / (1024 * 1024))} MiB of uploads there. Earlier messages still show their names.`,
  });
}

/**
 * A chat nobody named is called after its first message, once a message is accepted: the first one
 * in its thread (a chat from before titles), else this one. An agent's own title replaces it later.
 */
/** Steers, queues or starts a turn with `message`: the answer of chat.send. */
function deliver(session: ChatSession, message: OutgoingMessage, delivery: ChatDelivery | undefined): RequestResult<'chat.send'> {
  if (session.activeTurnId) {
    if (delivery === 'steer' && session.steer(message)) return { queued: false, turnId: session.activeTurnId };
    const queued = session.enqueue(message);
    return { queued: true, turnId: queued.turnId };
  }
  if ((session.info.queue?.length ?? 0) > 0) {
    // A held queue goes first: this message takes its place behind it.
    const queued = session.enqueue(message);
    session.updateInfo({ queuePaused: false });
    session.deliverNext();
    return { queued: true, turnId: queued.turnId };
  }
  return { queued: false, turnId: session.begin(message) };
}

function nameChat(session: ChatSession, text: string, attachments: readonly { name: string }[]): void {
  if (session.info.suggestedTitle) return;
  const first = session.thread.items.find((item) => item.kind === 'user');
  const title =
    first?.kind === 'user' ? (titleFromMessage(first.text, first.attachments) ?? titleFromMessage(text, attachments)) : titleFromMessage(text, attachments);
  if (title) session.updateInfo({ suggestedTitle: title });
}

/** A whole thread, or with `historyLimit` its newest page plus `history` and every waiting request. */
function snapshot(session: ChatSession, historyLimit: number | undefined): ChatAttachResult {
  const items = session.thread.items;
  // A copy: an in-process client must never hold the host's own array.
  if (historyLimit === undefined) return { info: session.info, items: items.slice(), seq: session.seq };
  const from = Math.max(0, items.length - historyLimit);
  const out: ChatAttachResult = { info: session.info, items: items.slice(from), history: page(session, from), seq: session.seq };
  const pending = session.pendingRequests();
  if (pending.length > 0) out.pending = pending;
  return out;
}

function page(session: ChatSession, start: number): { start: number; cursor: string | null } {
  return { start, cursor: start > 0 ? Buffer.from(JSON.stringify([session.epoch, start])).toString('base64url') : null };
}

/** The item index a cursor points before; `history-expired` for anything this chat did not hand out. */
function readCursor(cursor: string, session: ChatSession): number {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2) {
      const [epoch, start] = value as unknown[];
      if (epoch === session.epoch && Number.isInteger(start) && (start as number) > 0 && (start as number) <= session.thread.items.length) {
        return start as number;
      }
    }
  } catch {
    // not one of ours
  }
  throw new ProtocolError('history-expired', 'That history page is no longer available; attach again');
}

/**
 * What a turn changed: between the work tree's snapshots around it (so far, for a running turn),
 * else what its backend reported; null when neither exists.
 */
async function turnDiff(core: HostCore, session: ChatSession, turn: ChatTurnItem): Promise<ChatCheckpointDiff | null> {
  if (turn.checkpoint) {
    const after = turn.checkpointAfter ?? (turn.state === 'running' ? await core.checkpoints.take(session.chatId, session.info.cwd) : null);
    const diff = after ? await core.checkpoints.diff(session.info.cwd, turn.checkpoint, after) : null;
    if (diff) return diff;
  }
  return turn.checkpointDiff ?? null;
}
