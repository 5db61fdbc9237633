// "Continue here": a session the terminal let go of becomes a chat on the same CLI session. The chat
// is made like any other (`chat.create`, so the policy admits its folder and the session id), resumes
// the CLI's session by its id, and starts with the conversation read from the transcript, followed by
// a note that says where the terminal's part ends. Taken back to the terminal and continued here
// again, the same chat gets what the terminal added since, between two notes.
import { ProtocolError } from '../../contracts/errors.ts';
import type { ChatInfo, ChatItem } from '../../contracts/index.ts';
import type { ClientState, HostCore } from '../chats/core.ts';
import { newId, type ChatSession } from '../chats/session.ts';

/** The chat a terminal session continues as: one per session, so asking twice answers the same chat. */
export function chatIdForSession(sessionId: string): string {
  return `terminal-${sessionId}`;
}

export async function continueTerminalSession(core: HostCore, sessionId: string, client: ClientState | null): Promise<ChatInfo> {
  const chatId = chatIdForSession(sessionId);
  const existing = core.sessions.get(chatId);
  // Only once the terminal let go, the first time and every time after (`chat-busy` until then).
  const from = await core.terminal.handover(sessionId);
  if (existing) return catchUp(existing, from.items);
  const reply = await core.serve(
    {
      id: newId('session.resume'),
      type: 'chat.create',
      payload: { chatId, provider: from.kind, cwd: from.cwd, resume: from.agentSessionId },
    },
    client?.id ?? '',
  );
  if (!reply.ok) throw new ProtocolError(reply.error.code as never, reply.error.message);
  const session = core.session(chatId);
  session.emit({
    type: 'reset',
    info: session.info,
    items: [...from.items, note('Everything above happened in the terminal; the conversation continues here.')],
  });
  await session.write();
  return session.info;
}

/**
 * The chat was continued here before, then in the terminal again: what the terminal added since the
 * chat's last item (by time: the chat's own turns are in the transcript too, under other ids) goes
 * after it, with a note that says where that part happened.
 */
async function catchUp(session: ChatSession, transcript: ChatItem[]): Promise<ChatInfo> {
  const held = session.thread.items;
  const last = held.reduce((at, item) => Math.max(at, item.createdAt), 0);
  const since = transcript.filter((item) => item.createdAt > last);
  if (since.length === 0) return session.info;
  const stamp = new Date(since[0]!.createdAt).toISOString().replace('T', ' ').slice(0, 16);
  const items = [
    ...held,
    note(`Back in the terminal from ${stamp} UTC:`),
    ...since,
    note('The part above happened in the terminal; the conversation continues here.'),
  ];
  session.emit({ type: 'reset', info: session.info, items });
  await session.write();
  return session.info;
}

function note(text: string): ChatItem {
  return { kind: 'note', id: newId('note'), createdAt: Date.now(), turnId: null, level: 'info', text };
}
