// Grants (`/api/hosts/:id/grants`): whoever holds `owner` on a host gives a user (by id or email) or a
// team a role on the whole host or on one chat, lists them, and takes them back. A grant that is
// removed or lowered reaches open sockets at once (recheckHosts): they close or go on with less.
import { Hono, type Context } from 'hono';
import { GrantCreateRequestSchema, ProtocolError } from '../../contracts/index.ts';
import { requireHostRole } from '../auth/access.ts';
import { roleAllows } from '../auth/roles.ts';
import { newId } from '../auth/opaque.ts';
import { recheckHosts } from '../auth/revocations.ts';
import { record } from '../db/audit.ts';
import { findGrant, grantsOnHost, putGrant, removeGrant } from '../db/grants.ts';
import { findTeam } from '../db/teams.ts';
import { userExists, verifiedUserIdByEmail } from '../db/users.ts';
import type { Env } from '../env.ts';
import { parseBody } from './body.ts';
import { clientIp, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

export const grantsApi = new Hono<App>();
grantsApi.use('*', requireUser);

/** The host of the route, once the caller is known to hold `owner` on all of it. */
async function managedHost(c: Context<App>): Promise<string> {
  const hostId = c.req.param('id')!;
  await requireHostRole(c.env.DB, c.get('user'), hostId, 'owner');
  return hostId;
}

grantsApi.get('/:id/grants', async (c) => {
  const hostId = await managedHost(c);
  return c.json({ grants: await grantsOnHost(c.env.DB, hostId) });
});

grantsApi.post('/:id/grants', async (c) => {
  const hostId = await managedHost(c);
  const user = c.get('user');
  const body = await parseBody(c, GrantCreateRequestSchema);
  const subjectId = await subjectOf(c.env.DB, body.subject);
  const subject = { type: body.subject.type, id: subjectId };
  const chatId = body.chatId ?? '';
  const before = await findGrant(c.env.DB, hostId, chatId, subject);
  // One grant per (host, chat, subject): giving again changes its role.
  await putGrant(c.env.DB, {
    id: newId('g_'), hostId, chatId, subjectType: subject.type, subjectId, role: body.role, createdBy: user.userId, createdAt: Date.now(),
  });
  const grant = (await findGrant(c.env.DB, hostId, chatId, subject))!;
  if (before && !roleAllows(body.role, before.role)) await recheckHosts(c.env, [hostId]);
  c.executionCtx.waitUntil(record(c.env, {
    actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), action: before ? 'grant.changed' : 'grant.created',
    hostId, chatId: grant.chatId, detail: { grantId: grant.id, subjectType: body.subject.type, subjectId, role: body.role, ...(before ? { was: before.role } : {}) },
  }));
  return c.json(grant, before ? 200 : 201);
});

grantsApi.delete('/:id/grants/:grantId', async (c) => {
  const hostId = await managedHost(c);
  const user = c.get('user');
  const row = await removeGrant(c.env.DB, hostId, c.req.param('grantId'));
  if (!row) throw new ProtocolError('grant-not-found', 'No such grant on this host');
  await recheckHosts(c.env, [hostId]);
  c.executionCtx.waitUntil(record(c.env, {
    actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), action: 'grant.removed', hostId, chatId: row.chatId || null,
    detail: { grantId: row.id, subjectType: row.subjectType, subjectId: row.subjectId, role: row.role },
  }));
  return c.json({ removed: row.id });
});

/** The id of a grant's subject, which must exist: a user by id or email, or a team. */
async function subjectOf(db: D1Database, subject: { type: 'user' | 'team'; id?: string; email?: string }): Promise<string> {
  if (subject.type === 'team') {
    const team = await findTeam(db, subject.id!);
    if (!team) throw new ProtocolError('team-not-found', 'No such team');
    return team.id;
  }
  if (subject.id !== undefined) {
    if (!await userExists(db, subject.id)) throw new ProtocolError('user-not-found', 'No such user');
    return subject.id;
  }
  // Only an address someone proved: an account that merely typed it (an invitation anyone can make and
  // accept) must not receive what the owner meant for the person who reads that mailbox.
  const found = await verifiedUserIdByEmail(db, subject.email!);
  if (!found) throw new ProtocolError('user-not-found', 'No account has verified this email (grant by user id or through a team instead)');
  return found;
}
