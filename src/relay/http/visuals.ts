// A visual's page, on a route of its own. The page is an agent's HTML: it is served with a CSP
// sandbox (an opaque origin: no cookies, no storage, no same-origin access to the app) and may be
// framed only by the app.
import { Hono } from 'hono';
import { ProtocolError } from '../../contracts/index.ts';
import { tokenOf, verifyToken } from '../auth/tokens.ts';
import type { Env } from '../env.ts';
import { roomName } from '../objects/host-link.ts';

export const visualPages = new Hono<{ Bindings: Env }>();

visualPages.get('/:hostId/:chatId/:visualId', async (c) => {
  const token = tokenOf(c.req.raw);
  if (!token) return c.json({ code: 'unauthorized', message: 'A token is required' }, 401);
  const { hostId, chatId, visualId } = c.req.param();
  const room = c.env.CHAT_ROOM.get(c.env.CHAT_ROOM.idFromName(roomName(hostId, chatId)));
  let identity;
  try {
    identity = await verifyToken(c.env.TETHER_TOKEN_SECRET, token);
  } catch (error) {
    return c.json({ code: 'unauthorized', message: error instanceof ProtocolError ? error.message : 'invalid token' }, 401);
  }
  const page = await room.visualPage(hostId, chatId, visualId, identity);
  if (page === 'forbidden') return c.json({ code: 'forbidden', message: 'You may not see this visual' }, 403);
  const { html } = page;
  if (html === null) return c.json({ code: 'item-not-found', message: 'No such visual' }, 404);
  const ancestors = c.env.APP_ORIGINS?.trim() || "'self'";
  return new Response(html, {
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': `sandbox allow-scripts allow-forms; frame-ancestors ${ancestors}`,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'private, no-store',
    },
  });
});
