// The sessions people run in their own terminal on one host: a card on the host's page lists them
// with their live status, and each opens as a page drawn with the chat's own item views, with the
// approvals it waits on (answered from here or in the terminal: the first answer wins) and the two
// handovers: continue here as a chat (once the terminal let go), or the command to resume it in a
// terminal. What the CLI wrote (titles, text) is shown as plain text or through the chat's views.
import { useEffect, useState } from 'preact/hooks';
import { resumeCommandFor, type ApprovalRequest, type ChatItem } from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { navigate } from '../app/router.ts';
import { hostConnection } from '../app/session.ts';
import { AssistantMessage, Note, Thinking, UserMessage } from '../chat/items/Messages.tsx';
import { ToolCall } from '../chat/items/ToolCall.tsx';
import '../chat/chat.css'; // the item views' own styles

import { isStatusOnly, statusOf, titleOf, useTerminal } from './SessionsCard.tsx';

function SessionItem({ item, hostId }: { item: ChatItem; hostId: string }) {
  switch (item.kind) {
    case 'user':
      return <UserMessage item={item} />;
    case 'assistant':
      return <AssistantMessage item={item} />;
    case 'thinking':
      return <Thinking item={item} />;
    case 'tool':
      return <ToolCall item={item} />;
    case 'note':
      return <Note item={item} hostId={hostId} />;
    default:
      return null;
  }
}

function Approval({ hostId, approval }: { hostId: string; approval: ApprovalRequest }) {
  const [state, setState] = useState<string | null>(null);
  const answer = async (choiceId: string) => {
    setState('Sending…');
    try {
      const { accepted } = await hostConnection(hostId).request('session.approve', { sessionId: approval.sessionId, requestId: approval.requestId, choiceId });
      setState(accepted ? 'Answered' : 'Already answered elsewhere');
    } catch (failure) {
      setState(errorText(failure));
    }
  };
  return (
    <div class="card stack" role="group" aria-label={`Approval: ${approval.toolName}`} data-testid="terminal-approval">
      <p>
        <strong>{approval.toolName}</strong> wants to run
      </p>
      <pre>{approval.summary}</pre>
      <p class="muted small">Also asked in the terminal; the first answer wins. Until {new Date(approval.expiresAt).toLocaleTimeString()}.</p>
      <div class="row">
        {approval.choices.map((choice) => (
          <button key={choice.id} type="button" class={choice.kind === 'deny' ? '' : 'primary'} onClick={() => void answer(choice.id)}>
            {choice.label}
          </button>
        ))}
      </div>
      {state && <p role="status">{state}</p>}
    </div>
  );
}

/** `/hosts/:hostId/sessions/:sessionId`. */
export function TerminalSessionPage({ hostId, sessionId }: { hostId: string; sessionId: string }) {
  const connection = hostConnection(hostId);
  const { sessions, error } = useTerminal(hostId);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [handover, setHandover] = useState<string | null>(null);
  const [resumeCommand, setResumeCommand] = useState<string | null>(null);
  const [, setLoaded] = useState(0);
  useEffect(() => {
    connection.request('session.history', { sessionId }).then(
      ({ items }) => {
        connection.terminal.upsert(sessionId, items);
        setLoaded((n) => n + 1);
      },
      (failure: unknown) => setLoadError(errorText(failure)),
    );
    connection.request('provider.list', {}).then(
      ({ providers }) => {
        const claude = providers.find((p) => p.kind === 'claude');
        if (claude?.resumeCommand) setResumeCommand(resumeCommandFor(claude.resumeCommand, sessionId));
      },
      () => undefined,
    );
  }, [hostId, sessionId]);
  const session = sessions.find((s) => s.sessionId === sessionId);
  if (error || loadError)
    return (
      <section class="page">
        <p class="notice error" role="alert">
          {error ?? loadError}
        </p>
      </section>
    );
  if (!session)
    return (
      <p class="loading" aria-busy="true">
        Loading…
      </p>
    );
  const continueHere = async () => {
    setHandover('Opening…');
    try {
      const info = await connection.request('session.resume', { sessionId });
      navigate(`/hosts/${encodeURIComponent(hostId)}/chats/${encodeURIComponent(info.chatId)}`);
    } catch (failure) {
      setHandover(errorText(failure));
    }
  };
  return (
    <section class="page stack" aria-labelledby="session-title">
      <a href={`/hosts/${encodeURIComponent(hostId)}`}>Back to the host</a>
      <h1 id="session-title">{titleOf(session)}</h1>
      <p class="muted" role="status" data-testid="terminal-status">
        {statusOf(session)} · <code>{session.cwd}</code>
      </p>
      <div class="stack" aria-label="Conversation">
        {connection.terminal.itemsOf(sessionId).map((item) => (
          <SessionItem key={item.id} item={item} hostId={hostId} />
        ))}
      </div>
      {connection.terminal.approvalsOf(sessionId).map((approval) => (
        <Approval key={approval.requestId} hostId={hostId} approval={approval} />
      ))}
      {isStatusOnly(session) ? (
        <p class="muted small" data-testid="status-only">
          The host sees this {session.agent?.kind ?? ''} session by its process only (it reads no hooks of that CLI): its status and folder, no conversation,
          and it goes on only in its terminal.
        </p>
      ) : (
        <div class="card stack">
          <button type="button" onClick={() => void continueHere()}>
            Continue here
          </button>
          <p class="muted small">Once the terminal let go of it (/exit there), it goes on here as a chat with its history.</p>
          {handover && <p role="status">{handover}</p>}
          {resumeCommand && (
            <p>
              Continue in a terminal: <code data-testid="resume-command">{resumeCommand}</code>
            </p>
          )}
        </div>
      )}
    </section>
  );
}
