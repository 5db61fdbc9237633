// Which terminal sessions the host keeps listing. Without a bound the list (and terminal-sessions.json,
// written whole on every status change) grows with every `claude` a person ever ran: a host that runs
// for months would list thousands and rewrite them all on each hook. What is dropped is only what
// has nothing left to offer: a session can be continued as a chat while its transcript exists, and a
// status-only one (no transcript) only says that a CLI ran, which is stale after a day. The CLI's own
// files are never touched: a dropped session is still in the CLI's own `--resume` list.
import { existsSync } from 'node:fs';
import type { TerminalSession } from '../../contracts/index.ts';

/** At most this many sessions are listed; the least recently active go first. */
export const SESSIONS_KEPT = 200;

/** A status-only session that exited is listed this long after (ms). */
export const STATUS_ONLY_KEPT_MS = 24 * 60 * 60 * 1000;

type Listed = Pick<TerminalSession, 'sessionId'> & {
  agent?: Pick<NonNullable<TerminalSession['agent']>, 'status' | 'live' | 'updatedAt' | 'transcriptPath'> | undefined;
};

/**
 * The ids of `sessions` to drop: a status-only session exited over a day ago, one whose transcript
 * is gone (nothing to show or continue), then the least recently active beyond SESSIONS_KEPT. A live
 * session, or one `busy` says a client still waits on (an approval), is never dropped.
 */
export function sessionsToDrop(
  sessions: readonly Listed[],
  now: number,
  { busy = () => false, transcriptExists = existsSync }: { busy?: (sessionId: string) => boolean; transcriptExists?: (file: string) => boolean } = {},
): Set<string> {
  const drop = new Set<string>();
  const droppable: Listed[] = [];
  let kept = 0;
  for (const session of sessions) {
    const agent = session.agent;
    if (!agent || (agent.live && agent.status !== 'exited') || busy(session.sessionId)) {
      kept += 1;
      continue;
    }
    const stale =
      agent.transcriptPath === null ? agent.status === 'exited' && now - agent.updatedAt > STATUS_ONLY_KEPT_MS : !transcriptExists(agent.transcriptPath);
    if (stale) drop.add(session.sessionId);
    else droppable.push(session);
  }
  const over = kept + droppable.length - SESSIONS_KEPT;
  if (over > 0) {
    droppable.sort((a, b) => a.agent!.updatedAt - b.agent!.updatedAt);
    for (const session of droppable.slice(0, over)) drop.add(session.sessionId);
  }
  return drop;
}
