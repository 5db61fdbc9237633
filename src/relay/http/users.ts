// The relay's people, for its owner: who has an account, and turning one off. Disabling a user ends
// every session of theirs (their sockets close at once) and keeps their grants and teams, so enabling
// them again restores what they had.
import { Hono } from 'hono';
import { ProtocolError } from '../../contracts/index.ts';
import { revokeSessions } from '../auth/sessions.ts';
import { record } from '../db/audit.ts';
import type { Env } from '../env.ts';
import { clientIp, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

export const usersApi = new Hono<App>();

usersApi.use('*', requireUser, async (c, next) => {
  const row = await c.env.DB.prepare('SELECT is_owner AS isOwner FROM users WHERE id = ?').bind(c.get('user').userId).first<{ isOwner: number }>();
  if (row?.isOwner !== 1) throw new ProtocolError('forbidden', 'Only the relay\'s owner manages users');
  await next();
});

usersApi.get('/', async (c) => {
  const { results } = await c.env.DB.prepare(
    `SELECT id, email, name, is_owner AS isOwner, created_at AS createdAt, disabled_at AS disabledAt,
       password_hash IS NOT NULL AS hasPassword FROM users ORDER BY created_at LIMIT 1000`,
  ).all<{ isOwner: number; hasPassword: number }>();
  return c.json({ users: results.map((u) => ({ ...u, isOwner: u.isOwner === 1, hasPassword: u.hasPassword === 1 })) });
});

usersApi.post('/:id/disable', async (c) => {
  const target = c.req.param('id');
  const { userId, sessionId } = c.get('user');
  if (target === userId) throw new ProtocolError('bad-request', 'id: the relay\'s owner cannot disable themselves');
  const done = await c.env.DB.prepare('UPDATE users SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL RETURNING id').bind(Date.now(), target).first();
  if (!done) {
    const exists = await c.env.DB.prepare('SELECT 1 AS yes FROM users WHERE id = ?').bind(target).first();
    if (!exists) return c.json({ code: 'not-found', message: 'No such user' }, 404);
    return c.json({ ok: true });
  }
  // Ending the sessions re-checks every host the user reaches (revokeSessions), closing their sockets.
  await revokeSessions(c.env, { userId: target }, 'user-disabled');
  await record(c.env, { actor: userId, sessionId, ip: clientIp(c), action: 'user.disabled', detail: { userId: target } });
  return c.json({ ok: true });
});

usersApi.post('/:id/enable', async (c) => {
  const target = c.req.param('id');
  const { userId, sessionId } = c.get('user');
  const done = await c.env.DB.prepare('UPDATE users SET disabled_at = NULL WHERE id = ? RETURNING id').bind(target).first();
  if (!done) return c.json({ code: 'not-found', message: 'No such user' }, 404);
  await record(c.env, { actor: userId, sessionId, ip: clientIp(c), action: 'user.enabled', detail: { userId: target } });
  return c.json({ ok: true });
});
