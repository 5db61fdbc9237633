// Who may do what on a host, asked on every frame. A person's role on (host, chat) is `owner` when
// they own the host, else the highest of the grants on the whole host or on that chat, to them or to
// a team they belong to. A session that ended (revoked, expired, its user disabled) holds no role.
//
// One view per (user, session, host) is read from D1 and kept for at most two seconds, so a check per
// frame costs no D1 read while a change still reaches open sockets within seconds; `recheckHosts`
// (objects/revocations.ts) drops the views at once where it matters: after every grant change, and after the
// other changes that take access away. Besides, a refusal is never decided on a cached view: the view
// is read again first (`check`), as a socket's standing is (ClientSockets), so a raise that no recheck
// announced (a team joined) is still served on the next frame.
import { ProtocolError, REQUEST_RULES, requirementOf, type RequestType } from '../../contracts/index.ts';
import { grantsReaching } from '../db/grants.ts';
import type { Identity } from './tokens.ts';
import { roleAllows, type Role } from './roles.ts';
import { sessionIsLive } from './sessions.ts';
import { disabledAtOf } from '../db/users.ts';

const CACHE_MS = 2_000;
const PRUNE_AT = 512;

/** What one person may do on one host, as read at one moment. */
export interface AccessView {
  /** False once the session ended or its user was disabled: then there is no role at all. */
  readonly live: boolean;
  /** The host row exists (a host the relay has met). */
  readonly known: boolean;
  /** The role on the whole host, if any. */
  readonly hostRole: Role | null;
  /** Roles granted on single chats (already at least `hostRole`). */
  readonly chatRoles: ReadonlyMap<string, Role>;
}

/** The role a view gives on one chat, or host-wide when no chat is named. */
export function roleIn(view: AccessView, chatId?: string): Role | null {
  if (!view.live) return null;
  if (chatId === undefined) return view.hostRole;
  return view.chatRoles.get(chatId) ?? view.hostRole;
}

/** Whether a view holds any role on the host or on one of its chats. */
export function reachesHost(view: AccessView): boolean {
  return view.live && (view.hostRole !== null || view.chatRoles.size > 0);
}

export function higher(a: Role | null, b: Role | null): Role | null {
  if (a === null) return b;
  if (b === null) return a;
  return roleAllows(a, b) ? a : b;
}

/** What should happen to an open socket after its person's access changed. */
export type Standing = 'keep' | 'revoked' | 'ended';

/** The close code and reason a socket gets when it loses its standing. */
export const CLOSE_FOR: Record<Exclude<Standing, 'keep'>, { code: number; reason: string }> = {
  revoked: { code: 4403, reason: 'access revoked' },
  ended: { code: 4401, reason: 'session ended' },
};

/** Whether a socket keeps going under this view: a live session and, for a known host, some role there (on the chat, for a chat's socket). */
export function standingIn(view: AccessView, chatId?: string): Standing {
  if (!view.live) return 'ended';
  if (!view.known) return 'keep';
  const holds = chatId === undefined ? reachesHost(view) : roleIn(view, chatId) !== null;
  return holds ? 'keep' : 'revoked';
}

/** Reads one person's view of a host from D1: the host's owner, their grants and their teams' grants, their session. */
export async function readView(db: D1Database, identity: Identity, hostId: string): Promise<AccessView> {
  if (identity.kind === 'host') return hostsView(identity.hostId === hostId);
  return viewOf(db, identity.userId, hostId, sessionIsLive(db, identity.userId, identity.sessionId));
}

/**
 * A principal's view of a host now, whichever session they used: for what the relay does later on
 * someone's behalf (a send it kept while the host was away). A disabled user holds no role.
 */
export async function readPrincipalView(db: D1Database, principal: string, hostId: string): Promise<AccessView> {
  if (principal.startsWith('host:')) return hostsView(principal === `host:${hostId}`);
  return viewOf(
    db,
    principal,
    hostId,
    disabledAtOf(db, principal).then((user) => user !== null && user.disabledAt === null),
  );
}

/** A host acting for itself owns itself and nothing else. */
function hostsView(own: boolean): AccessView {
  return { live: true, known: own, hostRole: own ? 'owner' : null, chatRoles: new Map() };
}

async function viewOf(db: D1Database, userId: string, hostId: string, liveness: Promise<boolean>): Promise<AccessView> {
  const [live, { ownerId: owner, revoked, grants }] = await Promise.all([liveness, grantsReaching(db, hostId, userId)]);
  // A revoked host is gone for everyone, its owner too: its people's sockets close like a lost grant's.
  if (revoked) return { live, known: true, hostRole: null, chatRoles: new Map() };
  let hostRole: Role | null = owner === userId ? 'owner' : null;
  for (const grant of grants) if (grant.chatId === '') hostRole = higher(hostRole, grant.role);
  const chatRoles = new Map<string, Role>();
  for (const grant of grants) {
    if (grant.chatId !== '') chatRoles.set(grant.chatId, higher(higher(chatRoles.get(grant.chatId) ?? null, grant.role), hostRole)!);
  }
  return { live, known: owner !== null, hostRole, chatRoles };
}

/** Why a view does not cover a request, as the registry rules it (requirementOf), or null when it does. */
export function refusalIn(view: AccessView, type: RequestType, chatId?: string, switches = false): ProtocolError | null {
  if (!view.live) return new ProtocolError('unauthorized', 'Your session has ended; sign in again');
  // A chat list is answered to anyone who may see one of its chats, filtered to those (Lobby).
  if (type === 'chat.list' && chatId === undefined && reachesHost(view)) return null;
  const { role: needed, hostWide } = requirementOf(type, switches);
  const role = roleIn(view, hostWide ? undefined : chatId);
  if (!role) return new ProtocolError('forbidden', chatId === undefined || hostWide ? 'You have no access to this host' : 'You have no access to this chat');
  if (roleAllows(role, needed)) return null;
  const what = switches && REQUEST_RULES[type].switchesAccount ? `${type} onto another account` : type;
  return new ProtocolError('forbidden', `${what} needs the ${needed} role${hostWide ? ' on the whole host' : ''}`);
}

function keyOf(identity: Identity, hostId: string): string {
  return identity.kind === 'user' ? `u\n${identity.userId}\n${identity.sessionId}\n${hostId}` : `h\n${identity.hostId}\n${hostId}`;
}

export class HostAccess {
  private readonly views = new Map<string, { at: number; view: Promise<AccessView>; value?: AccessView }>();
  private readonly db: D1Database;
  constructor(db: D1Database) {
    this.db = db;
  }

  /** Forgets every cached view (or one person's view of one host): the next question reads D1 again. */
  forget(one?: { identity: Identity; hostId: string }): void {
    if (one) this.views.delete(keyOf(one.identity, one.hostId));
    else this.views.clear();
  }

  /** The person's view of the host, from the cache while it is younger than two seconds. */
  view(identity: Identity, hostId: string): Promise<AccessView> {
    return this.viewAndSource(identity, hostId).view;
  }

  /** The person's view of the host read from D1 now (and cached for the next questions). */
  reread(identity: Identity, hostId: string): Promise<AccessView> {
    this.forget({ identity, hostId });
    return this.view(identity, hostId);
  }

  /** The view, and whether it came from the cache rather than from a read this call started. */
  private viewAndSource(identity: Identity, hostId: string): { view: Promise<AccessView>; cached: boolean } {
    const key = keyOf(identity, hostId);
    const now = Date.now();
    const hit = this.views.get(key);
    if (hit && now - hit.at < CACHE_MS) return { view: hit.view, cached: true };
    if (this.views.size >= PRUNE_AT) {
      // Sessions come and go for the life of an object: stale views are dropped rather than kept for ever.
      for (const [k, v] of this.views) if (now - v.at >= CACHE_MS) this.views.delete(k);
    }
    const view = readView(this.db, identity, hostId);
    const entry: { at: number; view: Promise<AccessView>; value?: AccessView } = { at: now, view };
    this.views.set(key, entry);
    view.then(
      (value) => {
        entry.value = value;
      },
      () => {
        // A failed read is not kept: the next frame asks again.
        if (this.views.get(key) === entry) this.views.delete(key);
      },
    );
    return { view, cached: false };
  }

  /**
   * The cached view without waiting, for paths that must not await (a chat's event fan-out): the last
   * view read, and whether it is still fresh. Undefined when none was read yet.
   */
  peek(identity: Identity, hostId: string): { view: AccessView; fresh: boolean } | undefined {
    const hit = this.views.get(keyOf(identity, hostId));
    if (!hit?.value) return undefined;
    return { view: hit.value, fresh: Date.now() - hit.at < CACHE_MS };
  }

  /** The role on a chat (or host-wide when no chat is named), or null. */
  async roleOf(identity: Identity, hostId: string, chatId?: string): Promise<Role | null> {
    return roleIn(await this.view(identity, hostId), chatId);
  }

  /**
   * Whether a socket may open: a lobby for someone with a role on the host or on one of its chats, a
   * chat's socket for someone with a role on that chat. A host the relay does not know opens nothing:
   * host ids are made by the relay when a host pairs, so only a made-up id is unknown, and it must not
   * make objects (with storage) for whoever asks. What an open socket hears is checked push by push.
   */
  async mayConnect(identity: Identity, hostId: string, chatId?: string): Promise<boolean> {
    const view = await this.view(identity, hostId);
    if (!view.live || !view.known) return false;
    return chatId === undefined ? reachesHost(view) : roleIn(view, chatId) !== null;
  }

  /** Whether an open socket keeps going: its session must be live and, for a known host, it must hold some role there (on the chat, for a chat socket). */
  async standing(identity: Identity, hostId: string, chatId?: string): Promise<Standing> {
    return standingIn(await this.view(identity, hostId), chatId);
  }

  /**
   * Throws `unauthorized` for an ended session, `forbidden` unless the role covers the request as the
   * registry says (requirementOf): on the named chat for a chat's request, on the whole host for a
   * host request, one that makes chats, or one that moves a chat onto another account (`switches`).
   */
  async check(identity: Identity, hostId: string, type: RequestType, chatId?: string, switches = false): Promise<void> {
    const { view, cached } = this.viewAndSource(identity, hostId);
    let refusal = refusalIn(await view, type, chatId, switches);
    // A cached view may predate a grant that added or raised access since (those recheck nothing): a
    // person raised back to operator would otherwise be refused on the sockets that stayed open until
    // the view aged out. Refusals are rare, so reading D1 again for one costs little (and frames are
    // rate-limited per socket and per person).
    if (refusal && cached) refusal = refusalIn(await this.reread(identity, hostId), type, chatId, switches);
    if (refusal) throw refusal;
  }
}

/** For the HTTP API: throws `forbidden` unless the signed-in person holds at least `needed` on the whole host. */
export async function requireHostRole(db: D1Database, user: { userId: string; sessionId: string }, hostId: string, needed: Role): Promise<Role> {
  const role = roleIn(await readView(db, { kind: 'user', ...user }, hostId));
  if (!role || !roleAllows(role, needed)) throw new ProtocolError('forbidden', `This needs the ${needed} role on the host`);
  return role;
}
