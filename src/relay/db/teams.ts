// Teams and their members. A team always keeps an owner: the writes that could take its last one
// carry that condition inside the statement itself, so two owners stepping down at once cannot both
// pass a check made before it.
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { alias } from 'drizzle-orm/sqlite-core';
import type { TeamDetail, TeamSummary } from '../../contracts/index.ts';
import { teamMembers, teams, users } from './schema.ts';

export type TeamRole = TeamSummary['role'];

/** Makes a team with its creator as its first owner, in one batch. */
export async function createTeam(d1: D1Database, team: { id: string; name: string; createdBy: string; createdAt: number }): Promise<void> {
  const db = drizzle(d1);
  await db.batch([
    db.insert(teams).values(team),
    db.insert(teamMembers).values({ teamId: team.id, userId: team.createdBy, role: 'owner', createdAt: team.createdAt }),
  ]);
}

/** The teams a user belongs to, with their role in each, oldest team first. */
export async function teamsOf(d1: D1Database, userId: string): Promise<TeamSummary[]> {
  return drizzle(d1)
    .select({ id: teams.id, name: teams.name, role: teamMembers.role, createdAt: teams.createdAt })
    .from(teamMembers)
    .innerJoin(teams, eq(teams.id, teamMembers.teamId))
    .where(eq(teamMembers.userId, userId))
    .orderBy(asc(teams.createdAt));
}

export async function findTeam(d1: D1Database, teamId: string): Promise<{ id: string; name: string; createdAt: number } | null> {
  const [row] = await drizzle(d1).select({ id: teams.id, name: teams.name, createdAt: teams.createdAt }).from(teams).where(eq(teams.id, teamId)).limit(1);
  return row ?? null;
}

export async function membersOf(d1: D1Database, teamId: string): Promise<TeamDetail['members']> {
  return drizzle(d1)
    .select({ userId: teamMembers.userId, name: users.name, email: users.email, role: teamMembers.role, joinedAt: teamMembers.createdAt })
    .from(teamMembers)
    .innerJoin(users, eq(users.id, teamMembers.userId))
    .where(eq(teamMembers.teamId, teamId))
    .orderBy(asc(teamMembers.createdAt));
}

export async function roleIn(d1: D1Database, teamId: string, userId: string): Promise<TeamRole | null> {
  const [row] = await drizzle(d1)
    .select({ role: teamMembers.role })
    .from(teamMembers)
    .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId)))
    .limit(1);
  return row?.role ?? null;
}

export async function ownerCount(d1: D1Database, teamId: string): Promise<number> {
  const [row] = await drizzle(d1)
    .select({ owners: count() })
    .from(teamMembers)
    .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.role, 'owner')));
  return row?.owners ?? 0;
}

// Named in the fragment below as `team_members other`; an aliased table renders only as its alias there.
const other = alias(teamMembers, 'other');

/** The row being written is not an owner's, or another owner of its team stays. */
const anotherOwnerRemains = sql`(${teamMembers.role} != 'owner' OR EXISTS (SELECT 1 FROM team_members other
  WHERE ${other.teamId} = ${teamMembers.teamId} AND ${other.role} = 'owner' AND ${other.userId} != ${teamMembers.userId}))`;

function member(teamId: string, userId: string) {
  return and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId));
}

/** Sets a member's role; false when it changed nothing (no such member, or it would leave no owner). */
export async function setMemberRoleKeepingAnOwner(d1: D1Database, teamId: string, userId: string, role: TeamRole): Promise<boolean> {
  const changed = await drizzle(d1)
    .update(teamMembers)
    .set({ role })
    .where(role === 'owner' ? member(teamId, userId) : and(member(teamId, userId), anotherOwnerRemains))
    .run();
  return changed.meta.changes > 0;
}

/** Removes a member; false when it removed nothing (no such member, or it would leave no owner). */
export async function removeMemberKeepingAnOwner(d1: D1Database, teamId: string, userId: string): Promise<boolean> {
  const removed = await drizzle(d1)
    .delete(teamMembers)
    .where(and(member(teamId, userId), anotherOwnerRemains))
    .run();
  return removed.meta.changes > 0;
}
