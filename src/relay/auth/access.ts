// Who may do what on a host. For now a host's owner holds the `owner` role on it and nobody else holds
// any; teams and grants widen this later without changing the callers. Answers are cached briefly so a
// check per frame costs no D1 read, while a change still reaches open sockets within seconds.
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { ProtocolError, type AgentRequestType } from '../../contracts/index.ts';
import { hosts } from '../db/schema.ts';
import type { Identity } from './tokens.ts';
import { MINIMAL_ROLE, roleAllows, type Role } from './roles.ts';

const CACHE_MS = 2_000;

export class HostAccess {
  private readonly owners = new Map<string, { owner: string | null; at: number }>();
  private readonly db: D1Database;
  constructor(db: D1Database) {
    this.db = db;
  }

  async roleOf(identity: Identity, hostId: string): Promise<Role | null> {
    if (identity.kind === 'host') return identity.hostId === hostId ? 'owner' : null;
    return (await this.ownerOf(hostId)) === identity.userId ? 'owner' : null;
  }

  /**
   * Whether a socket may open: for someone with a role on the host, or for a host the relay has not
   * met yet (an app opened before its machine first connected), which has nothing to show. What such a
   * socket may hear later is checked again, push by push.
   */
  async mayConnect(identity: Identity, hostId: string): Promise<boolean> {
    if (identity.kind === 'host') return identity.hostId === hostId;
    const owner = await this.ownerOf(hostId);
    return owner === null || owner === identity.userId;
  }

  /** The host's owner, or null for a host the relay has not met. */
  private async ownerOf(hostId: string): Promise<string | null> {
    const hit = this.owners.get(hostId);
    const now = Date.now();
    if (hit && now - hit.at < CACHE_MS) return hit.owner;
    const [row] = await drizzle(this.db).select({ ownerId: hosts.ownerId }).from(hosts).where(eq(hosts.id, hostId)).limit(1);
    const owner = row?.ownerId ?? null;
    this.owners.set(hostId, { owner, at: now });
    return owner;
  }

  /** Throws `forbidden` unless the identity's role on the host covers the request. */
  async check(identity: Identity, hostId: string, type: AgentRequestType): Promise<void> {
    const role = await this.roleOf(identity, hostId);
    if (!role) throw new ProtocolError('forbidden', 'You have no access to this host');
    const needed = MINIMAL_ROLE[type];
    if (!roleAllows(role, needed)) throw new ProtocolError('forbidden', `${type} needs the ${needed} role`);
  }
}
