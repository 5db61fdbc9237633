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
  private readonly cache = new Map<string, { role: Role | null; at: number }>();
  private readonly db: D1Database;
  constructor(db: D1Database) {
    this.db = db;
  }

  async roleOf(identity: Identity, hostId: string): Promise<Role | null> {
    if (identity.kind === 'host') return identity.hostId === hostId ? 'owner' : null;
    const key = `${identity.userId}\n${hostId}`;
    const hit = this.cache.get(key);
    const now = Date.now();
    if (hit && now - hit.at < CACHE_MS) return hit.role;
    const [row] = await drizzle(this.db).select({ ownerId: hosts.ownerId }).from(hosts).where(eq(hosts.id, hostId)).limit(1);
    const role: Role | null = row && row.ownerId === identity.userId ? 'owner' : null;
    this.cache.set(key, { role, at: now });
    return role;
  }

  /** Throws `forbidden` unless the identity's role on the host covers the request. */
  async check(identity: Identity, hostId: string, type: AgentRequestType): Promise<void> {
    const role = await this.roleOf(identity, hostId);
    if (!role) throw new ProtocolError('forbidden', 'You have no access to this host');
    const needed = MINIMAL_ROLE[type];
    if (!roleAllows(role, needed)) throw new ProtocolError('forbidden', `${type} needs the ${needed} role`);
  }
}
