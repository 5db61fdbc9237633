// A visual's page, on a route of its own. The page is an agent's HTML: it is served with a CSP
// sandbox (an opaque origin: no cookies, no storage, no same-origin access to the app) and may be
// framed only by the app. It is one self-contained page: it loads nothing from anywhere (scripts,
// styles, images and fonts only inline or as data:/blob:), cannot connect anywhere (fetch, XHR,
// WebSocket, EventSource, beacons) and cannot submit a form anywhere, so what it shows (an agent may
// put anything from the chat in it) cannot leave through it. Its scripts can still read the page's URL, so the URL never carries the
// person's token: the app first asks for a ticket (with its token in a header) that opens this one
// page for a minute.
import { Hono } from 'hono';
import { ProtocolError, ROUTE_VISUAL_PAGE } from '../../contracts/index.ts';
import { HostAccess } from '../auth/access.ts';
import { visualTickets } from '../auth/chat-tickets.ts';
import type { Env } from '../env.ts';
import { roomOf } from '../objects/stubs.ts';
import { appOrigins, signedInUser } from './identity.ts';

/** What a visual's page may load and reach, beside its sandbox: only itself. */
export const VISUAL_PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'unsafe-inline' 'unsafe-eval' data: blob:",
  "style-src 'unsafe-inline' data: blob:",
  'img-src data: blob:',
  'font-src data:',
  'media-src data: blob:',
  "connect-src 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "worker-src 'none'",
  "base-uri 'none'",
].join('; ');

const unauthorized = (error: unknown) => ({ code: 'unauthorized', message: error instanceof ProtocolError ? error.message : 'invalid token' });

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const visualPages = new Hono<{ Bindings: Env }>()

  .post('/:hostId/:chatId/:visualId/ticket', async (c) => {
    const user = await signedInUser(c.env, c.req.raw);
    if (!user) return c.json({ code: 'unauthorized', message: 'A valid access token is required in the Authorization header' }, 401);
    const { hostId, chatId, visualId } = c.req.param();
    const identity = { kind: 'user' as const, ...user };
    try {
      await new HostAccess(c.env.DB).check(identity, hostId, ROUTE_VISUAL_PAGE, chatId);
    } catch (error) {
      return c.json({ code: 'forbidden', message: error instanceof ProtocolError ? error.message : 'forbidden' }, 403);
    }
    const ticket = await visualTickets.mint(c.env, user, hostId, chatId, visualId);
    const url = new URL(`/v1/visuals/${encodeURIComponent(hostId)}/${encodeURIComponent(chatId)}/${encodeURIComponent(visualId)}`, c.req.url);
    url.searchParams.set('ticket', ticket);
    return c.json({ url: url.toString(), expiresAt: Date.now() + visualTickets.seconds * 1000 });
  })

  .get('/:hostId/:chatId/:visualId', async (c) => {
    const ticket = c.req.query('ticket');
    if (!ticket) return c.json({ code: 'unauthorized', message: 'A visual ticket is required' }, 401);
    const { hostId, chatId, visualId } = c.req.param();
    let identity;
    try {
      identity = await visualTickets.verify(c.env, ticket, hostId, chatId, visualId);
    } catch (error) {
      return c.json(unauthorized(error), 401);
    }
    const page = await roomOf(c.env, hostId, chatId).visualPage(visualId, identity);
    if (page === 'forbidden') return c.json({ code: 'forbidden', message: 'You may not see this visual' }, 403);
    const { html } = page;
    if (html === null) return c.json({ code: 'item-not-found', message: 'No such visual' }, 404);
    const ancestors = appOrigins(c.env).join(' ') || "'self'";
    return new Response(html, {
      headers: {
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': `sandbox allow-scripts allow-forms; ${VISUAL_PAGE_POLICY}; frame-ancestors ${ancestors}`,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Cache-Control': 'private, no-store',
      },
    });
  });
