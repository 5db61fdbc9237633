// "Continue here": a session the terminal let go of becomes a chat on the same CLI session. The chat
// is made like any other (`chat.create`, so the policy admits its folder and the session id), resumes
// the CLI's session by its id, and starts with the conversation read from the transcript, followed by
// a note that says where the terminal's part ends.
import { ProtocolError } from '../../contracts/errors.ts';
import type { ChatInfo, ChatItem } from '../../contracts/index.ts';
import type { ClientState, HostCore } from '../chats/core.ts';
import { newId } from '../chats/session.ts';

/** The chat a terminal session continues as: one per session, so asking twice answers the same chat. */
export function chatIdForSession(sessionId: string): string {
  return `terminal-${sessionId}`;
}

export async function continueTerminalSession(core: HostCore, sessionId: string, client: ClientState | null): Promise<ChatInfo> {
  const chatId = chatIdForSession(sessionId);
  const existing = core.sessions.get(chatId);
  if (existing) return existing.info;
  const from = await core.terminal.handover(sessionId);
  const reply = await core.serve({
    id: newId('session.resume'), type: 'chat.create',
    payload: { chatId, provider: from.kind, cwd: from.cwd, resume: from.agentSessionId },
  }, client?.id ?? '');
  if (!reply.ok) throw new ProtocolError(reply.error.code as never, reply.error.message);
  const session = core.session(chatId);
  const note: ChatItem = {
    kind: 'note', id: newId('note'), createdAt: Date.now(), turnId: null, level: 'info',
    text: 'Everything above happened in the terminal; the conversation continues here.',
  };
  session.emit({ type: 'reset', info: session.info, items: [...from.items, note] });
  await session.write();
  return session.info;
}
