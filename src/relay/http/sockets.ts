// The WebSocket doors: a host's link, a client's lobby and a client's chat socket. Each checks who is
// calling here, in the Worker, and hands the verified identity to its object; objects never read tokens.
// A person opens a socket with a single-use ticket (`?ticket=`, what a browser uses) or an access token
// in `Authorization: Bearer` (what a program may use); tokens never ride in URLs. A browser always sends
// `Origin`: it must be the web app's or the relay's own, so another site cannot open sockets as you.
import { Hono } from 'hono';
import { ProtocolError } from '../../contracts/index.ts';
import { HostAccess } from '../auth/access.ts';
import { verifyHostToken } from '../auth/host-keys.ts';
import { sessionIsLive } from '../auth/sessions.ts';
import { redeemSocketTicket } from '../auth/tickets.ts';
import { bearerOf, verifyAccessToken, type Identity } from '../auth/tokens.ts';
import type { Env } from '../env.ts';
import { hostLinkOf, lobbyOf, roomOf } from '../objects/stubs.ts';
import { withIdentity } from '../objects/client-sockets.ts';
import { appOrigins } from './identity.ts';

type App = { Bindings: Env; Variables: { identity: Identity } };

export const sockets = new Hono<App>();

const refusal = (error: unknown) => ({ code: 'unauthorized', message: error instanceof ProtocolError ? error.message : 'invalid token' });

sockets.use('*', async (c, next) => {
  if (c.req.header('Upgrade')?.toLowerCase() !== 'websocket') {
    return c.json({ code: 'bad-request', message: 'Expected a WebSocket upgrade' }, 426);
  }
  const origin = c.req.header('Origin');
  if (origin !== undefined && origin !== new URL(c.req.url).origin && !appOrigins(c.env).includes(origin)) {
    return c.json({ code: 'forbidden', message: `Sockets may not be opened from ${origin}` }, 403);
  }
  await next();
});

sockets.get('/:hostId/link', async (c) => {
  const hostId = c.req.param('hostId');
  const token = bearerOf(c.req.raw);
  if (!token) return c.json({ code: 'unauthorized', message: 'A host token is required in the Authorization header' }, 401);
  let identity: Identity;
  try {
    identity = await verifyHostToken(c.env, token);
  } catch (error) {
    if (error instanceof ProtocolError && error.code === 'forbidden') return c.json(error.toWire(), 403);
    return c.json(refusal(error), 401);
  }
  if (identity.hostId !== hostId) {
    return c.json({ code: 'forbidden', message: 'Only the host itself may open its link' }, 403);
  }
  return hostLinkOf(c.env, hostId).fetch(withIdentity(c.req.raw, identity));
});

/** The person opening a client socket: by ticket (spent now) or by a bearer access token of a live session. */
async function personOf(env: Env, request: Request): Promise<Identity> {
  const ticket = new URL(request.url).searchParams.get('ticket');
  if (ticket) return { kind: 'user', ...(await redeemSocketTicket(env, ticket)) };
  const token = bearerOf(request);
  if (!token) throw new ProtocolError('unauthorized', 'A ticket (?ticket=) or an access token (Authorization: Bearer) is required');
  const user = await verifyAccessToken(env, token);
  if (!(await sessionIsLive(env.DB, user.userId, user.sessionId))) throw new ProtocolError('unauthorized', 'The session has ended');
  return { kind: 'user', ...user };
}

// A person with no role on the host gets no socket at all: a socket receives pushes (presence, every
// chat's status) before it sends a request that could be refused.
sockets.on('GET', ['/:hostId/lobby', '/:hostId/chats/:chatId'], async (c, next) => {
  try {
    c.set('identity', await personOf(c.env, c.req.raw));
  } catch (error) {
    return c.json(refusal(error), 401);
  }
  if (!(await new HostAccess(c.env.DB).mayConnect(c.get('identity'), c.req.param('hostId')!, c.req.param('chatId')))) {
    return c.json({ code: 'forbidden', message: 'You have no access to this host' }, 403);
  }
  await next();
});

sockets.get('/:hostId/lobby', async (c) => {
  const hostId = c.req.param('hostId');
  return lobbyOf(c.env, hostId).fetch(withIdentity(c.req.raw, c.get('identity')));
});

sockets.get('/:hostId/chats/:chatId', async (c) => {
  const hostId = c.req.param('hostId');
  const chatId = c.req.param('chatId');
  return roomOf(c.env, hostId, chatId).fetch(withIdentity(c.req.raw, c.get('identity')));
});
