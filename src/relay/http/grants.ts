// Grants (`/api/hosts/:id/grants`): whoever holds `owner` on a host gives a user (by id or email) or a
// team a role on the whole host or on one chat, lists them, and takes them back. A grant that is
// removed or lowered reaches open sockets at once (recheckHosts): they close or go on with less.
import { Hono, type Context } from 'hono';
import { GrantCreateRequestSchema, ProtocolError, type Grant } from '../../contracts/index.ts';
import { requireHostRole } from '../auth/access.ts';
import { roleAllows } from '../auth/roles.ts';
import { newId } from '../auth/opaque.ts';
import { recheckHosts } from '../auth/revocations.ts';
import { record } from '../db/audit.ts';
import type { Env } from '../env.ts';
import { parseBody } from './body.ts';
import { clientIp, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

interface GrantRow {
  id: string;
  host_id: string;
  chat_id: string;
  subject_type: 'user' | 'team';
  subject_id: string;
  role: Grant['role'];
  created_by: string;
  created_at: number;
  subject_name: string | null;
}

const SELECT_GRANTS = `SELECT g.*, CASE g.subject_type
    WHEN 'user' THEN (SELECT COALESCE(u.email, u.name) FROM users u WHERE u.id = g.subject_id)
    ELSE (SELECT t.name FROM teams t WHERE t.id = g.subject_id) END AS subject_name
  FROM grants g`;

function grantOf(row: GrantRow): Grant {
  return {
    id: row.id, hostId: row.host_id, chatId: row.chat_id === '' ? null : row.chat_id,
    subject: { type: row.subject_type, id: row.subject_id, name: row.subject_name },
    role: row.role, createdBy: row.created_by, createdAt: row.created_at,
  };
}

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
  const { results } = await c.env.DB.prepare(`${SELECT_GRANTS} WHERE g.host_id = ? ORDER BY g.created_at`).bind(hostId).all<GrantRow>();
  return c.json({ grants: results.map(grantOf) });
});

grantsApi.post('/:id/grants', async (c) => {
  const hostId = await managedHost(c);
  const user = c.get('user');
  const body = await parseBody(c, GrantCreateRequestSchema);
  const subjectId = await subjectOf(c.env.DB, body.subject);
  const chatId = body.chatId ?? '';
  const before = await c.env.DB.prepare('SELECT id, role FROM grants WHERE host_id = ? AND chat_id = ? AND subject_type = ? AND subject_id = ?')
    .bind(hostId, chatId, body.subject.type, subjectId).first<{ id: string; role: Grant['role'] }>();
  // One grant per (host, chat, subject): giving again changes its role.
  await c.env.DB.prepare(
    `INSERT INTO grants (id, host_id, chat_id, subject_type, subject_id, role, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (host_id, chat_id, subject_type, subject_id) DO UPDATE SET role = excluded.role`,
  ).bind(newId('g_'), hostId, chatId, body.subject.type, subjectId, body.role, user.userId, Date.now()).run();
  const row = await c.env.DB.prepare(`${SELECT_GRANTS} WHERE g.host_id = ? AND g.chat_id = ? AND g.subject_type = ? AND g.subject_id = ?`)
    .bind(hostId, chatId, body.subject.type, subjectId).first<GrantRow>();
  const grant = grantOf(row!);
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
  const row = await c.env.DB.prepare('DELETE FROM grants WHERE id = ? AND host_id = ? RETURNING *').bind(c.req.param('grantId'), hostId).first<GrantRow>();
  if (!row) throw new ProtocolError('grant-not-found', 'No such grant on this host');
  await recheckHosts(c.env, [hostId]);
  c.executionCtx.waitUntil(record(c.env, {
    actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), action: 'grant.removed', hostId, chatId: row.chat_id || null,
    detail: { grantId: row.id, subjectType: row.subject_type, subjectId: row.subject_id, role: row.role },
  }));
  return c.json({ removed: row.id });
});

/** The id of a grant's subject, which must exist: a user by id or email, or a team. */
async function subjectOf(db: D1Database, subject: { type: 'user' | 'team'; id?: string; email?: string }): Promise<string> {
  if (subject.type === 'team') {
    const team = await db.prepare('SELECT id FROM teams WHERE id = ?').bind(subject.id).first<{ id: string }>();
    if (!team) throw new ProtocolError('team-not-found', 'No such team');
    return team.id;
  }
  const found = subject.id !== undefined
    ? await db.prepare('SELECT id FROM users WHERE id = ?').bind(subject.id).first<{ id: string }>()
    : await db.prepare('SELECT id FROM users WHERE lower(email) = lower(?)').bind(subject.email).first<{ id: string }>();
  if (!found) throw new ProtocolError('user-not-found', 'No such user');
  return found.id;
}
