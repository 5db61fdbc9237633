// Grants: a role a host's owner gave a user or a team, on the whole host (`chatId` '') or one chat.
// One grant per (host, chat, subject): giving again changes its role.
import { and, asc, eq, inArray, or, sql } from 'drizzle-orm';
import { drizzle, type DrizzleD1Database } from 'drizzle-orm/d1';
import { union } from 'drizzle-orm/sqlite-core';
import type { Grant } from '../../contracts/index.ts';
import { grants, hosts, teamMembers } from './schema.ts';

type GrantRow = Omit<typeof grants.$inferSelect, 'statement'>;
export type GrantSubject = { type: 'user' | 'team'; id: string };

/** The subject's display name: a user's email (else name), or a team's name. */
const subjectName = sql<string | null>`CASE ${grants.subjectType}
    WHEN 'user' THEN (SELECT COALESCE(u.email, u.name) FROM users u WHERE u.id = ${grants.subjectId})
    ELSE (SELECT t.name FROM teams t WHERE t.id = ${grants.subjectId}) END`;

function grantOf(row: GrantRow & { subjectName: string | null }): Grant {
  return {
    id: row.id, hostId: row.hostId, chatId: row.chatId === '' ? null : row.chatId,
    subject: { type: row.subjectType, id: row.subjectId, name: row.subjectName },
    role: row.role, createdBy: row.createdBy, createdAt: row.createdAt,
  };
}

function named(d1: D1Database) {
  const { id, hostId, chatId, subjectType, subjectId, role, createdBy, createdAt } = grants;
  return drizzle(d1).select({ id, hostId, chatId, subjectType, subjectId, role, createdBy, createdAt, subjectName }).from(grants);
}

/** A grant's condition for being the user's: to them, or to a team they belong to. */
export function grantedTo(db: DrizzleD1Database, userId: string) {
  return or(
    and(eq(grants.subjectType, 'user'), eq(grants.subjectId, userId)),
    and(eq(grants.subjectType, 'team'), inArray(grants.subjectId, db.select({ teamId: teamMembers.teamId }).from(teamMembers).where(eq(teamMembers.userId, userId)))),
  );
}

function bySubject(hostId: string, chatId: string, subject: GrantSubject) {
  return and(eq(grants.hostId, hostId), eq(grants.chatId, chatId), eq(grants.subjectType, subject.type), eq(grants.subjectId, subject.id));
}

export async function grantsOnHost(d1: D1Database, hostId: string): Promise<Grant[]> {
  const rows = await named(d1).where(eq(grants.hostId, hostId)).orderBy(asc(grants.createdAt));
  return rows.map(grantOf);
}

/** The subject's grant on this host or chat, if any. */
export async function findGrant(d1: D1Database, hostId: string, chatId: string, subject: GrantSubject): Promise<Grant | null> {
  const [row] = await named(d1).where(bySubject(hostId, chatId, subject)).limit(1);
  return row ? grantOf(row) : null;
}

/** Gives the subject a role, or changes the role of the grant it holds there already. */
export async function putGrant(d1: D1Database, grant: Omit<GrantRow, 'id'> & { id: string }): Promise<void> {
  await drizzle(d1).insert(grants).values(grant).onConflictDoUpdate({
    target: [grants.hostId, grants.chatId, grants.subjectType, grants.subjectId],
    // A role the owner's device did not sign: the signed statement (of the old role) is no longer this grant's.
    set: { role: sql`excluded.role`, statement: sql`CASE WHEN ${grants.role} = excluded.role THEN ${grants.statement} ELSE NULL END` },
  });
}

/** Removes a grant on this host, returning what it was; null when there is none. */
export async function removeGrant(d1: D1Database, hostId: string, grantId: string): Promise<GrantRow | null> {
  const [row] = await drizzle(d1).delete(grants).where(and(eq(grants.id, grantId), eq(grants.hostId, hostId))).returning();
  return row ?? null;
}

/** The hosts a team was granted anything on. */
export async function hostsGrantedToTeam(d1: D1Database, teamId: string): Promise<string[]> {
  const rows = await drizzle(d1).selectDistinct({ hostId: grants.hostId }).from(grants)
    .where(and(eq(grants.subjectType, 'team'), eq(grants.subjectId, teamId)));
  return rows.map((row) => row.hostId);
}

/**
 * What decides one person's roles on a host, in one round trip: the host's owner (null for a host the
 * relay never met) and the grants on it to them or to a team of theirs.
 */
export async function grantsReaching(d1: D1Database, hostId: string, userId: string): Promise<{ ownerId: string | null; revoked: boolean; grants: { chatId: string; role: Grant['role'] }[] }> {
  const db = drizzle(d1);
  const [owners, reaching] = await db.batch([
    db.select({ ownerId: hosts.ownerId, revokedAt: hosts.revokedAt }).from(hosts).where(eq(hosts.id, hostId)),
    db.select({ chatId: grants.chatId, role: grants.role }).from(grants).where(and(eq(grants.hostId, hostId), grantedTo(db, userId))),
  ]);
  return { ownerId: owners[0]?.ownerId ?? null, revoked: owners[0]?.revokedAt != null, grants: reaching };
}

/** Every host a user may reach now: owned, granted to them, or granted to a team of theirs. */
export async function reachableHosts(d1: D1Database, userId: string): Promise<string[]> {
  const db = drizzle(d1);
  const rows = await union(
    db.select({ hostId: hosts.id }).from(hosts).where(eq(hosts.ownerId, userId)),
    db.select({ hostId: grants.hostId }).from(grants).where(and(eq(grants.subjectType, 'user'), eq(grants.subjectId, userId))),
    db.select({ hostId: grants.hostId }).from(grants)
      .innerJoin(teamMembers, and(eq(grants.subjectType, 'team'), eq(grants.subjectId, teamMembers.teamId)))
      .where(eq(teamMembers.userId, userId)),
  );
  return rows.map((row) => row.hostId);
}
