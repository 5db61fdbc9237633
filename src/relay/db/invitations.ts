// Single-use invitation links, kept only as hashes. Accepting is one batch: the invitation is taken
// only while still unused and unexpired, and the account and membership are written only when this
// request is the one that took it (each insert selects from the invitation row it just marked).
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { invitations, teamMembers, teams, users } from './schema.ts';
import type { TeamRole } from './teams.ts';

export type InvitationRow = typeof invitations.$inferInsert;

export async function createInvitation(d1: D1Database, invitation: InvitationRow): Promise<void> {
  await drizzle(d1).insert(invitations).values(invitation);
}

export interface InvitationView {
  id: string;
  teamId: string | null;
  role: TeamRole;
  email: string | null;
  expiresAt: number;
  usedAt: number | null;
  teamName: string | null;
}

/** An invitation with its team's name (null for an account-only invitation). */
export async function findInvitation(d1: D1Database, tokenHash: string): Promise<InvitationView | null> {
  const [row] = await drizzle(d1)
    .select({
      id: invitations.id,
      teamId: invitations.teamId,
      role: invitations.role,
      email: invitations.email,
      expiresAt: invitations.expiresAt,
      usedAt: invitations.usedAt,
      teamName: teams.name,
    })
    .from(invitations)
    .leftJoin(teams, eq(teams.id, invitations.teamId))
    .where(eq(invitations.tokenHash, tokenHash))
    .limit(1);
  return row ?? null;
}

export interface Acceptance {
  tokenHash: string;
  userId: string;
  now: number;
  /** A new account to make for `userId` (accepting signed out). */
  account: { email: string; name: string; passwordHash: string } | null;
  /** The team to join, with the invitation's role; null for an account-only invitation. */
  team: { id: string; role: TeamRole } | null;
}

/** Takes the invitation and writes what it grants, atomically; false when it was used already or expired. */
export async function acceptInvitation(d1: D1Database, a: Acceptance): Promise<boolean> {
  const db = drizzle(d1);
  // The row this request marked as taken: present only if this request is the one that took it.
  const ours = and(eq(invitations.tokenHash, a.tokenHash), eq(invitations.usedBy, a.userId), eq(invitations.usedAt, a.now));
  const take = db
    .update(invitations)
    .set({ usedAt: a.now, usedBy: a.userId })
    .where(and(eq(invitations.tokenHash, a.tokenHash), isNull(invitations.usedAt), gt(invitations.expiresAt, a.now)));
  const account =
    a.account &&
    db.insert(users).select(
      db
        .select({
          id: sql<string>`${a.userId}`.as('id'),
          email: sql<string>`${a.account.email}`.as('email'),
          // The relay sends no mail: whoever accepted typed this address, nobody proved it (users.emailVerifiedAt).
          emailVerifiedAt: sql<number | null>`NULL`.as('email_verified_at'),
          name: sql<string>`${a.account.name}`.as('name'),
          createdAt: sql<number>`${a.now}`.as('created_at'),
          passwordHash: sql<string>`${a.account.passwordHash}`.as('password_hash'),
          isOwner: sql<boolean>`0`.as('is_owner'),
          disabledAt: sql<number | null>`NULL`.as('disabled_at'),
        })
        .from(invitations)
        .where(ours),
    );
  const membership =
    a.team &&
    db
      .insert(teamMembers)
      .select(
        db
          .select({
            teamId: sql<string>`${a.team.id}`.as('team_id'),
            userId: sql<string>`${a.userId}`.as('user_id'),
            role: sql<TeamRole>`${a.team.role}`.as('role'),
            createdAt: sql<number>`${a.now}`.as('created_at'),
          })
          .from(invitations)
          .where(ours),
      )
      .onConflictDoNothing({ target: [teamMembers.teamId, teamMembers.userId] });
  const [taken] = await db.batch([take, ...(account ? [account] : []), ...(membership ? [membership] : [])]);
  return taken.meta.changes === 1;
}
