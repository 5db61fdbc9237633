// Grants: a role a host's owner gave a user or a team, on the whole host (`chatId` '') or one chat.
// One grant per (host, chat, subject): giving again changes its role. A signed team grant is read
// with its drift from the team as it is now (`resign`: who joined and who left since it was signed),
// so an owner sees when the host follows other people than the relay does.
import { and, asc, eq, inArray, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { drizzle, type DrizzleD1Database } from 'drizzle-orm/d1';
import { union } from 'drizzle-orm/sqlite-core';
import { SignedGrantSchema, resignOf, type Grant, type GrantPerson } from '../../contracts/index.ts';
import { grants, hosts, teamMembers, users } from './schema.ts';

type GrantRow = Omit<typeof grants.$inferSelect, 'statement'>;
type ReadRow = GrantRow & { subjectName: string | null; statement: string | null };
export type GrantSubject = { type: 'user' | 'team'; id: string };

/** The subject's display name: a user's email (else name), or a team's name. */
const subjectName = sql<string | null>`CASE ${grants.subjectType}
    WHEN 'user' THEN (SELECT COALESCE(u.email, u.name) FROM users u WHERE u.id = ${grants.subjectId})
    ELSE (SELECT t.name FROM teams t WHERE t.id = ${grants.subjectId}) END`;

function named(d1: D1Database) {
  const { id, hostId, chatId, subjectType, subjectId, role, createdBy, createdAt, statement } = grants;
  return drizzle(d1).select({ id, hostId, chatId, subjectType, subjectId, role, createdBy, createdAt, subjectName, statement }).from(grants);
}

/** The members a signed team grant names, or null for a grant that is not one (or whose statement no longer parses). */
function signedMembers(row: ReadRow): string[] | null {
  if (row.subjectType !== 'team' || row.statement === null) return null;
  const signed = SignedGrantSchema.safeParse(JSON.parse(row.statement));
  return signed.success && signed.data.statement.subject.kind === 'team' ? signed.data.statement.subject.members : null;
}

/**
 * The grants as the API answers them, each signed team grant with its drift from the team as it is
 * now (`resign`): one read of the teams' members and of the names of those who left, whatever the
 * number of grants.
 */
async function answered(d1: D1Database, rows: ReadRow[]): Promise<Grant[]> {
  const signedTeams = rows.flatMap((row) => {
    const members = signedMembers(row);
    return members ? [{ row, members }] : [];
  });
  const members = new Map<string, GrantPerson[]>();
  const names = new Map<string, string | null>();
  if (signedTeams.length > 0) {
    const db = drizzle(d1);
    const teamIds = [...new Set(signedTeams.map((t) => t.row.subjectId))];
    const signedIds = [...new Set(signedTeams.flatMap((t) => t.members))];
    const person = { userId: users.id, name: users.name };
    const [current, signedPeople] = await db.batch([
      db
        .select({ teamId: teamMembers.teamId, ...person })
        .from(teamMembers)
        .innerJoin(users, eq(users.id, teamMembers.userId))
        .where(inArray(teamMembers.teamId, teamIds))
        .orderBy(asc(teamMembers.createdAt)),
      db.select(person).from(users).where(inArray(users.id, signedIds)),
    ]);
    for (const { teamId, userId, name } of current) members.set(teamId, [...(members.get(teamId) ?? []), { userId, name }]);
    for (const { userId, name } of signedPeople) names.set(userId, name);
  }
  const drift = new Map(
    signedTeams.map(({ row, members: signed }) => [row.id, resignOf(signed, members.get(row.subjectId) ?? [], (id) => names.get(id) ?? null)]),
  );
  return rows.map((row) => ({
    id: row.id,
    hostId: row.hostId,
    chatId: row.chatId === '' ? null : row.chatId,
    subject: { type: row.subjectType, id: row.subjectId, name: row.subjectName },
    role: row.role,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    signed: row.statement !== null,
    resign: drift.get(row.id) ?? null,
  }));
}

/** A grant's condition for being the user's: to them, or to a team they belong to. */
export function grantedTo(db: DrizzleD1Database, userId: string) {
  return or(
    and(eq(grants.subjectType, 'user'), eq(grants.subjectId, userId)),
    and(
      eq(grants.subjectType, 'team'),
      inArray(grants.subjectId, db.select({ teamId: teamMembers.teamId }).from(teamMembers).where(eq(teamMembers.userId, userId))),
    ),
  );
}

function bySubject(hostId: string, chatId: string, subject: GrantSubject) {
  return and(eq(grants.hostId, hostId), eq(grants.chatId, chatId), eq(grants.subjectType, subject.type), eq(grants.subjectId, subject.id));
}

export async function grantsOnHost(d1: D1Database, hostId: string): Promise<Grant[]> {
  return answered(d1, await named(d1).where(eq(grants.hostId, hostId)).orderBy(asc(grants.createdAt)));
}

/**
 * For each of these hosts, how many of its signed team grants name members the team no longer has
 * (an owner signs them again on the host's page); hosts with none are left out. One read of the
 * signed team grants, then one of their teams' members.
 */
export async function teamGrantsToSign(d1: D1Database, hostIds: string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (hostIds.length === 0) return counts;
  const rows = await named(d1).where(and(inArray(grants.hostId, hostIds), eq(grants.subjectType, 'team'), isNotNull(grants.statement)));
  for (const grant of await answered(d1, rows)) if (grant.resign) counts.set(grant.hostId, (counts.get(grant.hostId) ?? 0) + 1);
  return counts;
}

/**
 * The signed grants of one team that name members the team no longer has, on hosts not revoked, each
 * with its host's name: where an owner must sign the team's grant again (the team's page, the push
 * after a change of members).
 */
export async function staleGrantsOfTeam(d1: D1Database, teamId: string): Promise<(Grant & { hostName: string })[]> {
  const rows = await named(d1)
    .where(and(eq(grants.subjectType, 'team'), eq(grants.subjectId, teamId), isNotNull(grants.statement)))
    .orderBy(asc(grants.createdAt));
  const stale = (await answered(d1, rows)).filter((grant) => grant.resign !== null);
  if (stale.length === 0) return [];
  const live = await drizzle(d1)
    .select({ id: hosts.id, name: hosts.name })
    .from(hosts)
    .where(and(inArray(hosts.id, [...new Set(stale.map((g) => g.hostId))]), isNull(hosts.revokedAt)));
  const names = new Map(live.map((h) => [h.id, h.name]));
  return stale.flatMap((grant) => (names.has(grant.hostId) ? [{ ...grant, hostName: names.get(grant.hostId)! }] : []));
}

/** The grants on this host that reach one person: to them, or to a team they belong to. */
export async function grantsOnHostTo(d1: D1Database, hostId: string, userId: string): Promise<Grant[]> {
  return answered(
    d1,
    await named(d1)
      .where(and(eq(grants.hostId, hostId), grantedTo(drizzle(d1), userId)))
      .orderBy(asc(grants.createdAt)),
  );
}

/** The subject's grant on this host or chat, if any. */
export async function findGrant(d1: D1Database, hostId: string, chatId: string, subject: GrantSubject): Promise<Grant | null> {
  const rows = await named(d1)
    .where(bySubject(hostId, chatId, subject))
    .limit(1);
  return (await answered(d1, rows))[0] ?? null;
}

/** Gives the subject a role, or changes the role of the grant it holds there already. */
export async function putGrant(d1: D1Database, grant: Omit<GrantRow, 'id'> & { id: string }): Promise<void> {
  await drizzle(d1)
    .insert(grants)
    .values(grant)
    .onConflictDoUpdate({
      target: [grants.hostId, grants.chatId, grants.subjectType, grants.subjectId],
      // A role the owner's device did not sign: the signed statement (of the old role) is no longer this grant's.
      set: { role: sql`excluded.role`, statement: sql`CASE WHEN ${grants.role} = excluded.role THEN ${grants.statement} ELSE NULL END` },
    });
}

/** Removes a grant on this host, returning what it was; null when there is none. */
export async function removeGrant(d1: D1Database, hostId: string, grantId: string): Promise<GrantRow | null> {
  const [row] = await drizzle(d1)
    .delete(grants)
    .where(and(eq(grants.id, grantId), eq(grants.hostId, hostId)))
    .returning();
  return row ?? null;
}

/** Whether the team holds any grant on this host (the whole host or one chat). */
export async function teamHoldsGrantOn(d1: D1Database, hostId: string, teamId: string): Promise<boolean> {
  const rows = await drizzle(d1)
    .select({ id: grants.id })
    .from(grants)
    .where(and(eq(grants.hostId, hostId), eq(grants.subjectType, 'team'), eq(grants.subjectId, teamId)))
    .limit(1);
  return rows.length > 0;
}

/** The hosts a team was granted anything on. */
export async function hostsGrantedToTeam(d1: D1Database, teamId: string): Promise<string[]> {
  const rows = await drizzle(d1)
    .selectDistinct({ hostId: grants.hostId })
    .from(grants)
    .where(and(eq(grants.subjectType, 'team'), eq(grants.subjectId, teamId)));
  return rows.map((row) => row.hostId);
}

/**
 * What decides one person's roles on a host, in one round trip: the host's owner (null for a host the
 * relay never met) and the grants on it to them or to a team of theirs.
 */
export async function grantsReaching(
  d1: D1Database,
  hostId: string,
  userId: string,
): Promise<{ ownerId: string | null; revoked: boolean; grants: { chatId: string; role: Grant['role'] }[] }> {
  const db = drizzle(d1);
  const [owners, reaching] = await db.batch([
    db.select({ ownerId: hosts.ownerId, revokedAt: hosts.revokedAt }).from(hosts).where(eq(hosts.id, hostId)),
    db
      .select({ chatId: grants.chatId, role: grants.role })
      .from(grants)
      .where(and(eq(grants.hostId, hostId), grantedTo(db, userId))),
  ]);
  return { ownerId: owners[0]?.ownerId ?? null, revoked: owners[0]?.revokedAt != null, grants: reaching };
}

/** Every host a user may reach now: owned, granted to them, or granted to a team of theirs. */
export async function reachableHosts(d1: D1Database, userId: string): Promise<string[]> {
  const db = drizzle(d1);
  const rows = await union(
    db.select({ hostId: hosts.id }).from(hosts).where(eq(hosts.ownerId, userId)),
    db
      .select({ hostId: grants.hostId })
      .from(grants)
      .where(and(eq(grants.subjectType, 'user'), eq(grants.subjectId, userId))),
    db
      .select({ hostId: grants.hostId })
      .from(grants)
      .innerJoin(teamMembers, and(eq(grants.subjectType, 'team'), eq(grants.subjectId, teamMembers.teamId)))
      .where(eq(teamMembers.userId, userId)),
  );
  return rows.map((row) => row.hostId);
}
