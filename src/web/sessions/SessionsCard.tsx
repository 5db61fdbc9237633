// The host page's card of the sessions people run in their own terminal there (kept apart from the
// session page, so the host page does not load the chat's item views).
import { useEffect, useState } from 'preact/hooks';
import type { TerminalSession } from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { hostConnection } from '../app/session.ts';

const STATUS_TEXT: Record<string, string> = { running: 'Running', 'needs-you': 'Needs you', idle: 'Idle', error: 'Error', exited: 'Ended' };

/**
 * A session the host sees by its process only (a CLI whose hooks it does not read, e.g. Gemini CLI):
 * it has no transcript, so no conversation to show and none to continue.
 */
export function isStatusOnly(session: TerminalSession): boolean {
  return session.agent?.transcriptPath === null;
}

export function statusOf(session: TerminalSession): string {
  if (!session.agent) return 'Gone';
  const text = STATUS_TEXT[session.agent.status] ?? session.agent.status;
  if (session.agent.live) return text;
  return isStatusOnly(session) ? `${text} (before the host restarted)` : `${text} (before the host restarted; resumable)`;
}

export function titleOf(session: TerminalSession): string {
  return session.agent?.suggestedTitle ?? session.cwd;
}

/** Redraws on every change of this host's terminal sessions. */
export function useTerminal(hostId: string): { sessions: TerminalSession[]; error: string | null } {
  const connection = hostConnection(hostId);
  const [, setTick] = useState(0);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const off = connection.onTerminal(() => setTick((n) => n + 1));
    connection.terminalSessions().then(
      () => setTick((n) => n + 1),
      (failure: unknown) => setError(errorText(failure)),
    );
    return off;
  }, [hostId]);
  return { sessions: [...connection.terminal.sessions.values()], error };
}

/** The host page's card: every terminal session, newest first. */
export function TerminalSessionsCard({ hostId }: { hostId: string }) {
  const { sessions, error } = useTerminal(hostId);
  if (error)
    return (
      <p class="notice error" role="alert">
        {error}
      </p>
    );
  if (sessions.length === 0) return null;
  const sorted = sessions.sort((a, b) => (b.agent?.updatedAt ?? 0) - (a.agent?.updatedAt ?? 0));
  return (
    <div class="card stack" aria-label="Terminal sessions" data-testid="terminal-sessions">
      <h2>In your terminal</h2>
      <ul class="stack">
        {sorted.map((session) => (
          <li key={session.sessionId}>
            <a href={`/hosts/${encodeURIComponent(hostId)}/sessions/${encodeURIComponent(session.sessionId)}`}>{titleOf(session)}</a>
            <span class="muted small">
              {' '}
              · {statusOf(session)} · <code>{session.cwd}</code>
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
