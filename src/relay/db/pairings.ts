// Pairings: a host asking to be paired, approved or denied by a signed-in person. Approving is one
// batch: the host row is made from the pending pairing and the pairing marked approved under the same
// condition, so the host exists exactly when the pairing says it was approved.
import { and, desc, eq, gt, lt, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { audit, hosts, pairings } from './schema.ts';

export type NewPairing = Omit<typeof pairings.$inferInsert, 'state' | 'approvedBy' | 'hostId' | 'approval'>;

/** Drops pairings that expired before `before`. */
export async function deleteExpiredPairings(d1: D1Database, before: number): Promise<void> {
  await drizzle(d1).delete(pairings).where(lt(pairings.expiresAt, before));
}

/** Records a pending pairing; false when its user code is taken already. */
export async function startPairing(d1: D1Database, pairing: NewPairing): Promise<boolean> {
  const inserted = await drizzle(d1)
    .insert(pairings)
    .values({ ...pairing, state: 'pending' })
    .onConflictDoNothing({ target: pairings.userCode })
    .run();
  return inserted.meta.changes === 1;
}

export async function findPairing(
  d1: D1Database,
  deviceCodeHash: string,
): Promise<{ state: string; expiresAt: number; hostId: string | null; approval: string | null } | null> {
  const [row] = await drizzle(d1)
    .select({ state: pairings.state, expiresAt: pairings.expiresAt, hostId: pairings.hostId, approval: pairings.approval })
    .from(pairings)
    .where(eq(pairings.deviceCodeHash, deviceCodeHash))
    .limit(1);
  return row ?? null;
}

/** The pending, unexpired pairing with this user code: its name and the host's public key (JSON). */
export async function pendingPairing(d1: D1Database, userCode: string, now: number): Promise<{ name: string; publicKey: string } | null> {
  const [row] = await drizzle(d1).select({ name: pairings.name, publicKey: pairings.publicKey }).from(pairings).where(pendingByCode(userCode, now)).limit(1);
  return row ?? null;
}

/** The host learnt its id. */
export async function markPairingClaimed(d1: D1Database, deviceCodeHash: string): Promise<void> {
  await drizzle(d1)
    .update(pairings)
    .set({ state: 'claimed' })
    .where(and(eq(pairings.deviceCodeHash, deviceCodeHash), eq(pairings.state, 'approved')));
}

function pendingByCode(userCode: string, now: number) {
  return and(eq(pairings.userCode, userCode), eq(pairings.state, 'pending'), gt(pairings.expiresAt, now));
}

/**
 * Approves the pending pairing with this code, creating its host (named `name`, else as the host asked)
 * owned by `ownerId`; false when no pending, unexpired pairing has the code.
 */
export async function approvePairing(
  d1: D1Database,
  a: { userCode: string; ownerId: string; hostId: string; name: string | null; now: number; approval: string | null },
): Promise<boolean> {
  const db = drizzle(d1);
  const [, approved] = await db.batch([
    db.insert(hosts).select(
      db
        .select({
          id: sql<string>`${a.hostId}`.as('id'),
          ownerId: sql<string>`${a.ownerId}`.as('owner_id'),
          name: sql<string>`COALESCE(${a.name}, ${pairings.name})`.as('name'),
          version: sql<string | null>`NULL`.as('version'),
          createdAt: sql<number>`${a.now}`.as('created_at'),
          lastSeenAt: sql<number | null>`NULL`.as('last_seen_at'),
          publicKey: pairings.publicKey,
          revokedAt: sql<number | null>`NULL`.as('revoked_at'),
        })
        .from(pairings)
        .where(pendingByCode(a.userCode, a.now)),
    ),
    db.update(pairings).set({ state: 'approved', approvedBy: a.ownerId, hostId: a.hostId, approval: a.approval }).where(pendingByCode(a.userCode, a.now)),
  ]);
  return approved.meta.changes === 1;
}

/** Denies the pending pairing with this code; false when no pending, unexpired pairing has it. */
export async function denyPairing(d1: D1Database, userCode: string, deniedBy: string, now: number): Promise<boolean> {
  const denied = await drizzle(d1).update(pairings).set({ state: 'denied', approvedBy: deniedBy }).where(pendingByCode(userCode, now)).run();
  return denied.meta.changes === 1;
}

/** When this person's latest wrong codes (at most `limit`, since `since`) were entered, newest first. */
export async function recentWrongCodes(d1: D1Database, userId: string, since: number, limit: number): Promise<number[]> {
  const rows = await drizzle(d1)
    .select({ at: audit.at })
    .from(audit)
    .where(and(eq(audit.actor, userId), eq(audit.action, 'pairing.wrong-code'), gt(audit.at, since)))
    .orderBy(desc(audit.id))
    .limit(limit);
  return rows.map((row) => row.at);
}
