// Revocation reaching open sockets. A change that takes access away (a grant removed or lowered, a
// team membership ended, a session revoked, a user disabled, a host revoked) is written to D1 first,
// then every object holding sockets of the affected hosts is asked to check them again at once:
// sockets whose person lost access close (4403), those whose session ended close (4401), the rest
// keep going under their new role. Per-frame checks would catch it within their 2 s cache anyway;
// this makes it immediate and reaches sockets that only listen. A grant added or raised is rechecked
// too (http/grants.ts), so a lobby lists and hears the newly granted chats at once.
// It lives with the objects since it calls them; auth/sessions.ts's refreshSession is handed
// revokeSessions by its route, since auth sits below the objects (DEVELOPERS.md, Layers).
import { chatIdsOf } from '../db/chats.ts';
import { reachableHosts } from '../db/grants.ts';
import { endSessions } from '../db/sessions.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import { hostLinkOf, lobbyOf, roomOf } from './stubs.ts';
import { failureText } from '../db/failures.ts';

/** Re-checks every open socket (lobby, chat rooms, host link) of these hosts now: closes those that lost access, downgrades the rest. */
export async function recheckHosts(env: Env, hostIds: Iterable<string>): Promise<void> {
  await Promise.all([...new Set(hostIds)].map((hostId) => recheckHost(env, hostId)));
}

async function recheckHost(env: Env, hostId: string): Promise<void> {
  const failed = (what: string) => (error: unknown) => {
    log.error('recheck failed', { hostId, what, error: failureText(error) });
  };
  // Rooms with people connected, as HostLink knows them, and every chat in the index: a room that
  // holds sockets is in one or the other.
  const [watched, indexed] = await Promise.all([
    hostLinkOf(env, hostId)
      .recheck()
      .catch((error: unknown) => {
        failed('host link')(error);
        return [] as string[];
      }),
    chatIdsOf(env.DB, hostId),
  ]);
  const chats = new Set([...watched, ...indexed]);
  await Promise.all([
    lobbyOf(env, hostId).recheck().catch(failed('lobby')),
    ...[...chats].map((chatId) =>
      roomOf(env, hostId, chatId)
        .recheck()
        .catch(failed(`chat ${chatId}`)),
    ),
  ]);
}

/** Every host a user may currently reach (owned, granted directly, granted to a team of theirs): call BEFORE a change that removes access. */
export async function hostsReachableBy(db: D1Database, userId: string): Promise<string[]> {
  return reachableHosts(db, userId);
}

/**
 * Ends sessions (one, or all of a user's, or one of a user's when both are given) and their unused
 * socket tickets, then has every host their people reach re-check its open sockets, so the ended
 * sessions' sockets close now (4401). Answers the ids it ended; sessions already ended stay as they were.
 */
export async function revokeSessions(env: Env, where: { sessionId?: string; userId?: string }, why: string): Promise<string[]> {
  if (where.sessionId === undefined && where.userId === undefined) throw new Error('revokeSessions needs a session or a user');
  const ended = await endSessions(env.DB, where, why, Date.now());
  const ids = ended.map((r) => r.id);
  if (ids.length === 0) return ids;
  const people = [...new Set(ended.map((r) => r.userId))];
  const reached = await Promise.all(people.map((userId) => hostsReachableBy(env.DB, userId)));
  await recheckHosts(env, reached.flat());
  return ids;
}
