// Hosts: paired machines, each owned by one user and known by the public half of its key. A revoked
// host stays (its id keeps naming it in the audit log) but opens nothing.
import { and, asc, desc, eq, isNull, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { hosts } from './schema.ts';

export type HostRow = typeof hosts.$inferSelect;

export async function createHost(d1: D1Database, host: { id: string; ownerId: string; name: string; createdAt: number; publicKey: string }): Promise<void> {
  await drizzle(d1).insert(hosts).values(host);
}

/** Any host, revoked or not, for checking a link token against its key. */
export async function findHost(d1: D1Database, hostId: string): Promise<HostRow | null> {
  const [row] = await drizzle(d1).select().from(hosts).where(eq(hosts.id, hostId)).limit(1);
  return row ?? null;
}

/** The newest host paired with this key, revoked or not. */
export async function hostByPublicKey(d1: D1Database, publicKey: string): Promise<HostRow | null> {
  const [row] = await drizzle(d1).select().from(hosts).where(eq(hosts.publicKey, publicKey)).orderBy(desc(hosts.createdAt)).limit(1);
  return row ?? null;
}

/** An unrevoked host. */
export async function liveHost(d1: D1Database, hostId: string): Promise<HostRow | null> {
  const [row] = await drizzle(d1)
    .select()
    .from(hosts)
    .where(and(eq(hosts.id, hostId), isNull(hosts.revokedAt)))
    .limit(1);
  return row ?? null;
}

/**
 * The unrevoked hosts among these ids, oldest first. The ids go as one JSON parameter: D1 binds at most
 * 100 parameters to a statement, and a person may reach more hosts than that.
 */
export async function liveHostsAmong(d1: D1Database, ids: string[]): Promise<HostRow[]> {
  return drizzle(d1)
    .select()
    .from(hosts)
    .where(and(isNull(hosts.revokedAt), sql`${hosts.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`))
    .orderBy(asc(hosts.createdAt));
}

export async function renameHost(d1: D1Database, hostId: string, name: string): Promise<void> {
  await drizzle(d1).update(hosts).set({ name }).where(eq(hosts.id, hostId));
}

export async function revokeHost(d1: D1Database, hostId: string, at: number): Promise<void> {
  await drizzle(d1)
    .update(hosts)
    .set({ revokedAt: at })
    .where(and(eq(hosts.id, hostId), isNull(hosts.revokedAt)));
}

/**
 * When the host was revoked (null while it is not), or undefined for a host the relay does not know.
 * The host link asks it on each connection and each recheck, so a revocation that lands after the
 * door let a socket through still wins.
 */
export async function hostRevokedAt(d1: D1Database, hostId: string): Promise<number | null | undefined> {
  const [row] = await drizzle(d1).select({ revokedAt: hosts.revokedAt }).from(hosts).where(eq(hosts.id, hostId)).limit(1);
  return row?.revokedAt;
}

/** The host was heard at `at`; at its hello it also tells its software version. */
export async function markHostSeen(d1: D1Database, hostId: string, at: number, version?: string): Promise<void> {
  await drizzle(d1)
    .update(hosts)
    .set(version === undefined ? { lastSeenAt: at } : { version, lastSeenAt: at })
    .where(eq(hosts.id, hostId));
}
