// Teams (`/api/teams`) and invitations (`/api/invitations`). A team has members who are its `owner`s,
// `admin`s or plain `member`s; every member holds whatever the team was granted on hosts (grants.ts).
// Owners and admins invite by a single-use link (the token is kept only hashed, for seven days) and
// remove members; only owners make or unmake owners, and a team always keeps one. Accepting while
// signed in joins; accepting signed out with an email, password and name creates the account, joins,
// and signs in. A member who leaves or is removed loses the team's hosts at once (recheckHosts).
import { Hono, type Context } from 'hono';
import {
  INVITATION_TTL_MS, InvitationAcceptRequestSchema, InvitationCreateRequestSchema, ProtocolError, TeamCreateRequestSchema,
  TeamMemberRoleRequestSchema, type Invitation, type TeamDetail, type TeamSummary,
} from '../../contracts/index.ts';
import { hashOpaque, newId, newOpaqueToken } from '../auth/opaque.ts';
import { PasswordSchema, hashPassword } from '../auth/passwords.ts';
import { recheckHosts } from '../auth/revocations.ts';
import { createSession } from '../auth/sessions.ts';
import { record, type AuditEntry } from '../db/audit.ts';
import type { Env } from '../env.ts';
import { parseBody } from './body.ts';
import { clientIp, requireUser, signedInUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };
type TeamRole = TeamSummary['role'];

export const teamsApi = new Hono<App>();

// ---- teams ----

teamsApi.post('/teams', requireUser, async (c) => {
  const user = c.get('user');
  const { name } = await parseBody(c, TeamCreateRequestSchema);
  const id = newId('t_');
  const now = Date.now();
  await c.env.DB.batch([
    c.env.DB.prepare('INSERT INTO teams (id, name, created_by, created_at) VALUES (?, ?, ?, ?)').bind(id, name, user.userId, now),
    c.env.DB.prepare("INSERT INTO team_members (team_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)").bind(id, user.userId, now),
  ]);
  audit(c, { action: 'team.created', detail: { teamId: id, name } });
  return c.json({ id, name, role: 'owner', createdAt: now } satisfies TeamSummary, 201);
});

teamsApi.get('/teams', requireUser, async (c) => {
  const { results } = await c.env.DB.prepare(
    `SELECT t.id, t.name, m.role, t.created_at AS createdAt FROM team_members m JOIN teams t ON t.id = m.team_id
     WHERE m.user_id = ? ORDER BY t.created_at`,
  ).bind(c.get('user').userId).all<TeamSummary>();
  return c.json({ teams: results });
});

teamsApi.get('/teams/:id', requireUser, async (c) => {
  const teamId = c.req.param('id');
  const role = await roleIn(c.env.DB, teamId, c.get('user').userId);
  const team = await c.env.DB.prepare('SELECT id, name, created_at FROM teams WHERE id = ?').bind(teamId).first<{ id: string; name: string; created_at: number }>();
  if (!role || !team) throw new ProtocolError('team-not-found', 'No such team');
  const { results } = await c.env.DB.prepare(
    `SELECT m.user_id AS userId, u.name, u.email, m.role, m.created_at AS joinedAt FROM team_members m JOIN users u ON u.id = m.user_id
     WHERE m.team_id = ? ORDER BY m.created_at`,
  ).bind(teamId).all<TeamDetail['members'][number]>();
  return c.json({ id: team.id, name: team.name, role, createdAt: team.created_at, members: results } satisfies TeamDetail);
});

// ---- members ----

teamsApi.patch('/teams/:id/members/:userId', requireUser, async (c) => {
  const teamId = c.req.param('id');
  const memberId = c.req.param('userId');
  const { role } = await parseBody(c, TeamMemberRoleRequestSchema);
  const mine = await manage(c, teamId);
  const theirs = await roleIn(c.env.DB, teamId, memberId);
  if (!theirs) throw new ProtocolError('user-not-found', 'No such member of this team');
  if ((role === 'owner' || theirs === 'owner') && mine !== 'owner') throw new ProtocolError('forbidden', 'Only an owner may make or unmake owners');
  if (theirs === 'owner' && role !== 'owner') await keepAnOwner(c.env.DB, teamId);
  const hosts = await hostsOfTeam(c.env.DB, teamId);
  const changed = await c.env.DB.prepare(`UPDATE team_members SET role = ?1 WHERE team_id = ?2 AND user_id = ?3 AND (?1 = 'owner' OR ${ANOTHER_OWNER_REMAINS})`)
    .bind(role, teamId, memberId).run();
  if (changed.meta.changes === 0) throw new ProtocolError('forbidden', 'A team keeps at least one owner');
  // A team role changes nothing on hosts today (any member holds the team's grants); checked anyway,
  // so a future rule that does cannot forget it.
  await recheckHosts(c.env, hosts);
  audit(c, { action: 'team.member-role', detail: { teamId, userId: memberId, role, was: theirs } });
  return c.json({ teamId, userId: memberId, role });
});

teamsApi.delete('/teams/:id/members/:userId', requireUser, async (c) => {
  const teamId = c.req.param('id');
  const memberId = c.req.param('userId');
  const leaving = memberId === c.get('user').userId;
  const mine = leaving ? await roleIn(c.env.DB, teamId, memberId) : await manage(c, teamId);
  const theirs = leaving ? mine : await roleIn(c.env.DB, teamId, memberId);
  if (!mine || !theirs) throw new ProtocolError(mine ? 'user-not-found' : 'team-not-found', mine ? 'No such member of this team' : 'No such team');
  if (theirs === 'owner' && mine !== 'owner') throw new ProtocolError('forbidden', 'Only an owner may remove an owner');
  if (theirs === 'owner') await keepAnOwner(c.env.DB, teamId);
  // The hosts are read before the membership goes: afterwards nothing links the member to them.
  const hosts = await hostsOfTeam(c.env.DB, teamId);
  const removed = await c.env.DB.prepare(`DELETE FROM team_members WHERE team_id = ? AND user_id = ? AND ${ANOTHER_OWNER_REMAINS}`).bind(teamId, memberId).run();
  if (removed.meta.changes === 0) throw new ProtocolError('forbidden', 'A team keeps at least one owner');
  await recheckHosts(c.env, hosts);
  audit(c, { action: 'team.member-removed', detail: { teamId, userId: memberId, role: theirs } });
  return c.json({ removed: memberId });
});

// ---- invitations ----

teamsApi.post('/teams/:id/invitations', requireUser, async (c) => {
  const teamId = c.req.param('id');
  const body = await parseBody(c, InvitationCreateRequestSchema);
  const mine = await manage(c, teamId);
  if (body.role === 'owner' && mine !== 'owner') throw new ProtocolError('forbidden', 'Only an owner may invite an owner');
  const token = newOpaqueToken();
  const id = newId('i_');
  const now = Date.now();
  const email = body.email?.toLowerCase() ?? null;
  await c.env.DB.prepare(
    'INSERT INTO invitations (token_hash, id, team_id, role, email, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).bind(await hashOpaque(token), id, teamId, body.role, email, c.get('user').userId, now, now + INVITATION_TTL_MS).run();
  audit(c, { action: 'team.invited', detail: { teamId, invitationId: id, role: body.role, ...(email ? { email } : {}) } });
  const acceptUrl = new URL(`/api/invitations/${token}/accept`, c.req.url).toString();
  return c.json({ id, token, acceptUrl, teamId, role: body.role, email, expiresAt: now + INVITATION_TTL_MS } satisfies Invitation, 201);
});

interface InvitationRow {
  id: string;
  team_id: string | null;
  role: TeamRole;
  email: string | null;
  expires_at: number;
  used_at: number | null;
  team_name: string | null;
}

/** What an invitation is for, so a page can show it before the person accepts. */
teamsApi.get('/invitations/:token', async (c) => {
  const invitation = await usableInvitation(c.env.DB, await hashOpaque(c.req.param('token')));
  return c.json({ teamId: invitation.team_id, teamName: invitation.team_name, role: invitation.role, email: invitation.email, expiresAt: invitation.expires_at });
});

teamsApi.post('/invitations/:token/accept', async (c) => {
  const tokenHash = await hashOpaque(c.req.param('token'));
  const invitation = await usableInvitation(c.env.DB, tokenHash);
  const signedIn = await signedInUser(c.env, c.req.raw);
  const now = Date.now();
  let userId: string;
  let account: { email: string; name: string; passwordHash: string } | null = null;
  if (signedIn) {
    userId = signedIn.userId;
    if (invitation.email) {
      const me = await c.env.DB.prepare('SELECT email FROM users WHERE id = ?').bind(userId).first<{ email: string | null }>();
      if (me?.email?.toLowerCase() !== invitation.email) throw new ProtocolError('forbidden', 'This invitation is for another email address');
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
    const taken = await c.env.DB.prepare('SELECT 1 AS taken FROM users WHERE lower(email) = ?').bind(email).first();
    if (taken) throw new ProtocolError('email-taken', 'An account with this email exists: sign in, then accept the invitation');
    userId = newId('u_');
    account = { email, name: body.name, passwordHash: await hashPassword(body.password) };
  }
  // One step: the invitation is taken only if still unused and unexpired, and the account and the
  // membership are written only if this request is the one that took it.
  const ours = 'EXISTS (SELECT 1 FROM invitations WHERE token_hash = ? AND used_by = ? AND used_at = ?)';
  const steps = [
    c.env.DB.prepare('UPDATE invitations SET used_at = ?, used_by = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?')
      .bind(now, userId, tokenHash, now),
  ];
  if (account) {
    steps.push(c.env.DB.prepare(`INSERT INTO users (id, email, name, created_at, password_hash) SELECT ?, ?, ?, ?, ? WHERE ${ours}`)
      .bind(userId, account.email, account.name, now, account.passwordHash, tokenHash, userId, now));
  }
  if (invitation.team_id) {
    steps.push(c.env.DB.prepare(`INSERT INTO team_members (team_id, user_id, role, created_at) SELECT ?, ?, ?, ? WHERE ${ours}
      ON CONFLICT (team_id, user_id) DO NOTHING`).bind(invitation.team_id, userId, invitation.role, now, tokenHash, userId, now));
  }
  const [taken] = await c.env.DB.batch(steps);
  if (taken!.meta.changes !== 1) throw new ProtocolError('invitation-expired', 'This invitation was used already or has expired');
  const actor = { actor: userId, ip: clientIp(c) };
  c.executionCtx.waitUntil(record(c.env, { ...actor, sessionId: signedIn?.sessionId ?? null, action: 'team.joined', detail: { teamId: invitation.team_id, invitationId: invitation.id, role: invitation.role } }));
  const joined = { userId, teamId: invitation.team_id, role: invitation.role };
  if (!account) return c.json(joined);
  const session = await createSession(c.env, userId, 'invitation', { ip: clientIp(c), userAgent: c.req.header('User-Agent') ?? null });
  return c.json({ ...joined, ...session }, 201);
});

// ---- plumbing ----

async function roleIn(db: D1Database, teamId: string, userId: string): Promise<TeamRole | null> {
  const row = await db.prepare('SELECT role FROM team_members WHERE team_id = ? AND user_id = ?').bind(teamId, userId).first<{ role: TeamRole }>();
  return row?.role ?? null;
}

/** The caller's role when they may manage the team (owner or admin); `team-not-found` for outsiders. */
async function manage(c: Context<App>, teamId: string): Promise<TeamRole> {
  const role = await roleIn(c.env.DB, teamId, c.get('user').userId);
  if (!role) throw new ProtocolError('team-not-found', 'No such team');
  if (role === 'member') throw new ProtocolError('forbidden', 'Only the team\'s owners and admins may do this');
  return role;
}

/**
 * The row being changed is not an owner's, or another owner stays. Part of the write itself, so two
 * owners stepping down at once cannot both pass a check made before it.
 */
const ANOTHER_OWNER_REMAINS = `(team_members.role != 'owner' OR EXISTS (SELECT 1 FROM team_members other
  WHERE other.team_id = team_members.team_id AND other.role = 'owner' AND other.user_id != team_members.user_id))`;

async function keepAnOwner(db: D1Database, teamId: string): Promise<void> {
  const row = await db.prepare("SELECT count(*) AS owners FROM team_members WHERE team_id = ? AND role = 'owner'").bind(teamId).first<{ owners: number }>();
  if ((row?.owners ?? 0) <= 1) throw new ProtocolError('forbidden', 'A team keeps at least one owner');
}

async function hostsOfTeam(db: D1Database, teamId: string): Promise<string[]> {
  const { results } = await db.prepare("SELECT DISTINCT host_id FROM grants WHERE subject_type = 'team' AND subject_id = ?").bind(teamId).all<{ host_id: string }>();
  return results.map((row) => row.host_id);
}

async function usableInvitation(db: D1Database, tokenHash: string): Promise<InvitationRow> {
  const row = await db.prepare(
    'SELECT i.id, i.team_id, i.role, i.email, i.expires_at, i.used_at, t.name AS team_name FROM invitations i LEFT JOIN teams t ON t.id = i.team_id WHERE i.token_hash = ?',
  ).bind(tokenHash).first<InvitationRow>();
  if (!row) throw new ProtocolError('invitation-not-found', 'No such invitation');
  if (row.used_at !== null || row.expires_at <= Date.now()) throw new ProtocolError('invitation-expired', 'This invitation was used already or has expired');
  return row;
}

function audit(c: Context<App>, entry: Omit<AuditEntry, 'actor'>): void {
  const user = c.get('user');
  c.executionCtx.waitUntil(record(c.env, { actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), ...entry }));
}
