// Revocation reaching open sockets. A change that takes access away (a grant removed or lowered, a
// team membership ended, a session revoked, a user disabled, a host revoked) is written to D1 first,
// then every object holding sockets of the affected hosts is asked to check them again at once:
// sockets whose person lost access close (4403), those whose session ended close (4401), the rest
// keep going under their new role. Per-frame checks would catch it within their 2 s cache anyway;
// this makes it immediate and reaches sockets that only listen. A grant added or raised is rechecked
// too (http/grants.ts), so a lobby lists and hears the newly granted chats at once.
import { chatIdsOf } from '../db/chats.ts';
import { reachableHosts } from '../db/grants.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import { hostLinkOf, lobbyOf, roomOf } from '../objects/stubs.ts';
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
    hostLinkOf(env, hostId).recheck().catch((error: unknown) => { failed('host link')(error); return [] as string[]; }),
    chatIdsOf(env.DB, hostId),
  ]);
  const chats = new Set([...watched, ...indexed]);
  await Promise.all([
    lobbyOf(env, hostId).recheck(hostId).catch(failed('lobby')),
    ...[...chats].map((chatId) => roomOf(env, hostId, chatId).recheck(hostId, chatId).catch(failed(`chat ${chatId}`))),
  ]);
}

/** Every host a user may currently reach (owned, granted directly, granted to a team of theirs): call BEFORE a change that removes access. */
export async function hostsReachableBy(db: D1Database, userId: string): Promise<string[]> {
  return reachableHosts(db, userId);
}
