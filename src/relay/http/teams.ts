// Teams (`/api/teams`) and invitations (`/api/invitations`). A team has members who are its `owner`s,
// `admin`s or plain `member`s; every member holds whatever the team was granted on hosts (grants.ts).
// Owners and admins invite by a single-use link (the token is kept only hashed, for seven days) and
// remove members; only owners make or unmake owners, and a team always keeps one. Accepting while
// signed in joins; accepting signed out with an email, password and name creates the account, joins,
// and signs in. A member who leaves or is removed loses the team's hosts at once (recheckHosts).
import { Hono, type Context } from 'hono';
import {
  INVITATION_TTL_MS,
  InvitationAcceptRequestSchema,
  InvitationCreateRequestSchema,
  ProtocolError,
  TeamCreateRequestSchema,
  TeamMemberRoleRequestSchema,
  type Invitation,
  type TeamDetail,
  type TeamGrantsToSign,
  type TeamSummary,
} from '../../contracts/index.ts';
import { hashOpaque, newId, newOpaqueToken } from '../auth/opaque.ts';
import { PasswordSchema, hashPassword } from '../auth/passwords.ts';
import { recheckHosts } from '../objects/revocations.ts';
import { createSession } from '../auth/sessions.ts';
import { record, type AuditEntry } from '../db/audit.ts';
import { hostsGrantedToTeam, staleGrantsOfTeam } from '../db/grants.ts';
import { readView } from '../auth/access.ts';
import { acceptInvitation, createInvitation, findInvitation, type InvitationView } from '../db/invitations.ts';
import {
  createTeam,
  findTeam,
  membersOf,
  ownerCount,
  removeMemberKeepingAnOwner,
  roleIn,
  setMemberRoleKeepingAnOwner,
  teamsOf,
  type TeamRole,
} from '../db/teams.ts';
import { emailOf, userIdByEmail } from '../db/users.ts';
import { pushConfigured, pushTeamChanged } from '../push/send.ts';
import type { Env } from '../env.ts';
import { jsonBody, parseBody } from './body.ts';
import { clientIp, requireUser, signedInUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const teamsApi = new Hono<App>()

  // ---- teams ----

  .post('/teams', requireUser, jsonBody(TeamCreateRequestSchema), async (c) => {
    const user = c.get('user');
    const { name } = c.req.valid('json');
    const id = newId('t_');
    const now = Date.now();
    await createTeam(c.env.DB, { id, name, createdBy: user.userId, createdAt: now });
    audit(c, { action: 'team.created', detail: { teamId: id, name } });
    return c.json({ id, name, role: 'owner', createdAt: now } satisfies TeamSummary, 201);
  })

  .get('/teams', requireUser, async (c) => {
    return c.json({ teams: await teamsOf(c.env.DB, c.get('user').userId) });
  })

  .get('/teams/:id', requireUser, async (c) => {
    const teamId = c.req.param('id');
    const role = await roleIn(c.env.DB, teamId, c.get('user').userId);
    const team = await findTeam(c.env.DB, teamId);
    if (!role || !team) throw new ProtocolError('team-not-found', 'No such team');
    const members = await membersOf(c.env.DB, teamId);
    return c.json({ id: team.id, name: team.name, role, createdAt: team.createdAt, members } satisfies TeamDetail);
  })

  // Where this member must sign the team's grant again: the hosts they own on which the team's signed
  // grant names members it no longer has. Only the caller's own hosts (whole-host owner, as the Hosts
  // list decides it): a member who owns none sees nothing, and no one learns of another's hosts here.
  .get('/teams/:id/grants-to-sign', requireUser, async (c) => {
    const teamId = c.req.param('id');
    const user = c.get('user');
    if (!(await roleIn(c.env.DB, teamId, user.userId))) throw new ProtocolError('team-not-found', 'No such team');
    const byHost = new Map<string, { hostId: string; hostName: string; grants: number }>();
    for (const grant of await staleGrantsOfTeam(c.env.DB, teamId)) {
      const entry = byHost.get(grant.hostId) ?? { hostId: grant.hostId, hostName: grant.hostName, grants: 0 };
      entry.grants += 1;
      byHost.set(grant.hostId, entry);
    }
    const owned = await Promise.all(
      [...byHost.values()].map(async (entry) => ((await readView(c.env.DB, { kind: 'user', ...user }, entry.hostId)).hostRole === 'owner' ? [entry] : [])),
    );
    return c.json({ hosts: owned.flat() } satisfies TeamGrantsToSign);
  })

  // ---- members ----

  .patch('/teams/:id/members/:userId', requireUser, jsonBody(TeamMemberRoleRequestSchema), async (c) => {
    const teamId = c.req.param('id');
    const memberId = c.req.param('userId');
    const { role } = c.req.valid('json');
    const mine = await manage(c, teamId);
    const theirs = await roleIn(c.env.DB, teamId, memberId);
    if (!theirs) throw new ProtocolError('user-not-found', 'No such member of this team');
    if ((role === 'owner' || theirs === 'owner') && mine !== 'owner') throw new ProtocolError('forbidden', 'Only an owner may make or unmake owners');
    if (theirs === 'owner' && role !== 'owner') await keepAnOwner(c.env.DB, teamId);
    const hosts = await hostsGrantedToTeam(c.env.DB, teamId);
    if (!(await setMemberRoleKeepingAnOwner(c.env.DB, teamId, memberId, role))) throw new ProtocolError('forbidden', 'A team keeps at least one owner');
    // A team role changes nothing on hosts today (any member holds the team's grants); checked anyway,
    // so a future rule that does cannot forget it.
    await recheckHosts(c.env, hosts);
    audit(c, { action: 'team.member-role', detail: { teamId, userId: memberId, role, was: theirs } });
    return c.json({ teamId, userId: memberId, role });
  })

  .delete('/teams/:id/members/:userId', requireUser, async (c) => {
    const teamId = c.req.param('id');
    const memberId = c.req.param('userId');
    const leaving = memberId === c.get('user').userId;
    const mine = leaving ? await roleIn(c.env.DB, teamId, memberId) : await manage(c, teamId);
    const theirs = leaving ? mine : await roleIn(c.env.DB, teamId, memberId);
    if (!mine || !theirs) throw new ProtocolError(mine ? 'user-not-found' : 'team-not-found', mine ? 'No such member of this team' : 'No such team');
    if (theirs === 'owner' && mine !== 'owner') throw new ProtocolError('forbidden', 'Only an owner may remove an owner');
    if (theirs === 'owner') await keepAnOwner(c.env.DB, teamId);
    // The hosts are read before the membership goes: afterwards nothing links the member to them.
    const hosts = await hostsGrantedToTeam(c.env.DB, teamId);
    if (!(await removeMemberKeepingAnOwner(c.env.DB, teamId, memberId))) throw new ProtocolError('forbidden', 'A team keeps at least one owner');
    await recheckHosts(c.env, hosts);
    audit(c, { action: 'team.member-removed', detail: { teamId, userId: memberId, role: theirs } });
    c.executionCtx.waitUntil(teamChanged(c.env, teamId));
    return c.json({ removed: memberId });
  })

  // ---- invitations ----

  .post('/teams/:id/invitations', requireUser, jsonBody(InvitationCreateRequestSchema), async (c) => {
    const teamId = c.req.param('id');
    const body = c.req.valid('json');
    const mine = await manage(c, teamId);
    if (body.role === 'owner' && mine !== 'owner') throw new ProtocolError('forbidden', 'Only an owner may invite an owner');
    const token = newOpaqueToken();
    const id = newId('i_');
    const now = Date.now();
    const email = body.email?.toLowerCase() ?? null;
    await createInvitation(c.env.DB, {
      tokenHash: await hashOpaque(token),
      id,
      teamId,
      role: body.role,
      email,
      createdBy: c.get('user').userId,
      createdAt: now,
      expiresAt: now + INVITATION_TTL_MS,
    });
    audit(c, { action: 'team.invited', detail: { teamId, invitationId: id, role: body.role, ...(email ? { email } : {}) } });
    const acceptUrl = new URL(`/api/invitations/${token}/accept`, c.req.url).toString();
    return c.json({ id, token, acceptUrl, teamId, role: body.role, email, expiresAt: now + INVITATION_TTL_MS } satisfies Invitation, 201);
  })

  /** What an invitation is for, so a page can show it before the person accepts. */
  .get('/invitations/:token', async (c) => {
    const invitation = await usableInvitation(c.env.DB, await hashOpaque(c.req.param('token')));
    return c.json({
      teamId: invitation.teamId,
      teamName: invitation.teamName,
      role: invitation.role,
      email: invitation.email,
      expiresAt: invitation.expiresAt,
    });
  })

  // The body is read only when signed out (the new account's email, password and name): signed in, it is ignored.
  .post('/invitations/:token/accept', async (c) => {
    const tokenHash = await hashOpaque(c.req.param('token'));
    const invitation = await usableInvitation(c.env.DB, tokenHash);
    const signedIn = await signedInUser(c.env, c.req.raw);
    const now = Date.now();
    let userId: string;
    let account: { email: string; name: string; passwordHash: string } | null = null;
    if (signedIn) {
      userId = signedIn.userId;
      if (invitation.email) {
        const email = await emailOf(c.env.DB, userId);
        if (email?.toLowerCase() !== invitation.email) throw new ProtocolError('forbidden', 'This invitation is for another email address');
      }
    } else {
      const body = await parseBody(c, InvitationAcceptRequestSchema);
      const password = PasswordSchema.safeParse(body.password);
      if (!password.success) throw new ProtocolError('bad-request', `password: ${password.error.issues[0]?.message ?? 'invalid'}`);
      // Only a link made for an address may make an account with it: an open link would let whoever holds
      // it claim anyone's address, which grants by email and Access/OIDC sign-ins would then trust.
      if (!invitation.email) throw new ProtocolError('unauthorized', 'This invitation names no email: sign in first, then accept it');
      const email = body.email.toLowerCase();
      if (invitation.email !== email) throw new ProtocolError('forbidden', 'This invitation is for another email address');
      if ((await userIdByEmail(c.env.DB, email)) !== null)
        throw new ProtocolError('email-taken', 'An account with this email exists: sign in, then accept the invitation');
      userId = newId('u_');
      account = { email, name: body.name, passwordHash: await hashPassword(body.password) };
    }
    // One step: the invitation is taken only if still unused and unexpired, and the account and the
    // membership are written only if this request is the one that took it.
    const team = invitation.teamId ? { id: invitation.teamId, role: invitation.role } : null;
    if (!(await acceptInvitation(c.env.DB, { tokenHash, userId, now, account, team }))) {
      throw new ProtocolError('invitation-expired', 'This invitation was used already or has expired');
    }
    const actor = { actor: userId, ip: clientIp(c) };
    c.executionCtx.waitUntil(
      record(c.env.DB, {
        ...actor,
        sessionId: signedIn?.sessionId ?? null,
        action: 'team.joined',
        detail: { teamId: invitation.teamId, invitationId: invitation.id, role: invitation.role },
      }),
    );
    if (invitation.teamId) c.executionCtx.waitUntil(teamChanged(c.env, invitation.teamId));
    const joined = { userId, teamId: invitation.teamId, role: invitation.role };
    // The status named, so the type of this answer stays apart from the 201's with the session in it.
    if (!account) return c.json(joined, 200);
    const session = await createSession(c.env, userId, 'invitation', { ip: clientIp(c), userAgent: c.req.header('User-Agent') ?? null });
    return c.json({ ...joined, ...session }, 201);
  });

// ---- plumbing ----

/** The caller's role when they may manage the team (owner or admin); `team-not-found` for outsiders. */
async function manage(c: Context<App>, teamId: string): Promise<TeamRole> {
  const role = await roleIn(c.env.DB, teamId, c.get('user').userId);
  if (!role) throw new ProtocolError('team-not-found', 'No such team');
  if (role === 'member') throw new ProtocolError('forbidden', "Only the team's owners and admins may do this");
  return role;
}

/** After a member joined or left: the owners of hosts where the team's signed grant went stale are told (push/send.ts). */
async function teamChanged(env: Env, teamId: string): Promise<void> {
  if (!pushConfigured(env)) return;
  const team = await findTeam(env.DB, teamId);
  if (team) await pushTeamChanged(env, teamId, team.name);
}

async function keepAnOwner(db: D1Database, teamId: string): Promise<void> {
  if ((await ownerCount(db, teamId)) <= 1) throw new ProtocolError('forbidden', 'A team keeps at least one owner');
}

async function usableInvitation(db: D1Database, tokenHash: string): Promise<InvitationView> {
  const row = await findInvitation(db, tokenHash);
  if (!row) throw new ProtocolError('invitation-not-found', 'No such invitation');
  if (row.usedAt !== null || row.expiresAt <= Date.now()) throw new ProtocolError('invitation-expired', 'This invitation was used already or has expired');
  return row;
}

function audit(c: Context<App>, entry: Omit<AuditEntry, 'actor'>): void {
  const user = c.get('user');
  c.executionCtx.waitUntil(record(c.env.DB, { actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), ...entry }));
}
