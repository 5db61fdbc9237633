// The WebSocket doors: a host's link, a client's lobby and a client's chat socket. Each checks the
// token here, in the Worker, and hands the verified identity to its object; objects never read tokens.
import { Hono } from 'hono';
import { ProtocolError } from '../../contracts/index.ts';
import { HostAccess } from '../auth/access.ts';
import { tokenOf, verifyToken, type Identity } from '../auth/tokens.ts';
import type { Env } from '../env.ts';
import { hostLinkOf, lobbyOf, roomOf } from '../objects/stubs.ts';
import { withIdentity } from '../objects/client-sockets.ts';

type App = { Bindings: Env; Variables: { identity: Identity } };

export const sockets = new Hono<App>();

sockets.use('*', async (c, next) => {
  if (c.req.header('Upgrade')?.toLowerCase() !== 'websocket') {
    return c.json({ code: 'bad-request', message: 'Expected a WebSocket upgrade' }, 426);
  }
  const token = tokenOf(c.req.raw);
  if (!token) return c.json({ code: 'unauthorized', message: 'A token is required' }, 401);
  try {
    c.set('identity', await verifyToken(c.env.TETHER_TOKEN_SECRET, token));
  } catch (error) {
    const message = error instanceof ProtocolError ? error.message : 'invalid token';
    return c.json({ code: 'unauthorized', message }, 401);
  }
  await next();
});

sockets.get('/:hostId/link', async (c) => {
  const identity = c.get('identity');
  const hostId = c.req.param('hostId');
  if (identity.kind !== 'host' || identity.hostId !== hostId) {
    return c.json({ code: 'forbidden', message: 'Only the host itself may open its link' }, 403);
  }
  return hostLinkOf(c.env, hostId).fetch(withIdentity(c.req.raw, identity));
});

// A person with no role on the host gets no socket at all: a socket receives pushes (presence, every
// chat's status) before it sends a request that could be refused.
sockets.on('GET', ['/:hostId/lobby', '/:hostId/chats/:chatId'], async (c, next) => {
  if (!(await new HostAccess(c.env.DB).mayConnect(c.get('identity'), c.req.param('hostId')!))) {
    return c.json({ code: 'forbidden', message: 'You have no access to this host' }, 403);
  }
  await next();
});

sockets.get('/:hostId/lobby', async (c) => {
  const hostId = c.req.param('hostId');
  return lobbyOf(c.env, hostId).fetch(withIdentity(c.req.raw, c.get('identity'), { 'X-Tether-Host': hostId }));
});

sockets.get('/:hostId/chats/:chatId', async (c) => {
  const hostId = c.req.param('hostId');
  const chatId = c.req.param('chatId');
  return roomOf(c.env, hostId, chatId).fetch(withIdentity(c.req.raw, c.get('identity'), { 'X-Tether-Host': hostId, 'X-Tether-Chat': chatId }));
});
