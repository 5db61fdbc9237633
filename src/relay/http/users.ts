// The relay's people, for its owner: who has an account, and turning one off. Disabling a user ends
// every session of theirs (their sockets close at once) and keeps their grants and teams, so enabling
// them again restores what they had.
import { Hono } from 'hono';
import { ProtocolError } from '../../contracts/index.ts';
import { revokeSessions } from '../objects/revocations.ts';
import { record } from '../db/audit.ts';
import { disableUser, enableUser, isRelayOwner, listUsers, userExists } from '../db/users.ts';
import type { Env } from '../env.ts';
import { clientIp, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const usersApi = new Hono<App>()

  .use('*', requireUser, async (c, next) => {
    if (!(await isRelayOwner(c.env.DB, c.get('user').userId))) throw new ProtocolError('forbidden', "Only the relay's owner manages users");
    await next();
  })

  .get('/', async (c) => {
    return c.json({ users: await listUsers(c.env.DB) });
  })

  .post('/:id/disable', async (c) => {
    const target = c.req.param('id');
    const { userId, sessionId } = c.get('user');
    if (target === userId) throw new ProtocolError('bad-request', "id: the relay's owner cannot disable themselves");
    if (!(await disableUser(c.env.DB, target, Date.now()))) {
      if (!(await userExists(c.env.DB, target))) return c.json({ code: 'user-not-found', message: 'No such user' }, 404);
      return c.json({ ok: true });
    }
    // Ending the sessions re-checks every host the user reaches (revokeSessions), closing their sockets.
    await revokeSessions(c.env, { userId: target }, 'user-disabled');
    await record(c.env.DB, { actor: userId, sessionId, ip: clientIp(c), action: 'user.disabled', detail: { userId: target } });
    return c.json({ ok: true });
  })

  .post('/:id/enable', async (c) => {
    const target = c.req.param('id');
    const { userId, sessionId } = c.get('user');
    if (!(await enableUser(c.env.DB, target))) return c.json({ code: 'user-not-found', message: 'No such user' }, 404);
    await record(c.env.DB, { actor: userId, sessionId, ip: clientIp(c), action: 'user.enabled', detail: { userId: target } });
    return c.json({ ok: true });
  });
