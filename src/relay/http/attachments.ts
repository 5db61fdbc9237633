// A chat's attachments, on a route of their own: what a person attached, for the thread to show. The
// app first asks for a ticket with its token in a header, then the address carries only that ticket
// (an <img> cannot send a header). The bytes come from the host, through the chat's room, which finds
// the attachment in the chat's own thread (objects/chat-room/room-attachments.ts).
//
// An attachment is whatever someone uploaded, so the relay's origin must never run or render it as a
// page: only the image types every browser decodes safely are served as themselves, inline; anything
// else (HTML and SVG included) is a download of opaque bytes, and every answer carries nosniff and a CSP
// sandbox in case a browser is asked to show it anyway.
import { Hono } from 'hono';
import { ProtocolError, attachmentImageMime, LINK_ATTACHMENT_READ } from '../../contracts/index.ts';
import { HostAccess } from '../auth/access.ts';
import { attachmentTickets } from '../auth/chat-tickets.ts';
import type { Env } from '../env.ts';
import { roomOf } from '../objects/stubs.ts';
import { signedInUser } from './identity.ts';

/** Attachment ids are the host's own (`att-` and random base64url): nothing that could name a path. */
const ATTACHMENT_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

function checkedId(attachmentId: string): string {
  if (!ATTACHMENT_ID.test(attachmentId)) throw new ProtocolError('bad-request', 'attachmentId: not an attachment id');
  return attachmentId;
}

/** RFC 6266 / 8187: a plain ASCII fallback name and the exact name in UTF-8. */
function dispositionName(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `filename="${fallback}"; filename*=UTF-8''${exact}`;
}

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const attachmentFiles = new Hono<{ Bindings: Env }>()

  .post('/:hostId/:chatId/:attachmentId/ticket', async (c) => {
    const user = await signedInUser(c.env, c.req.raw);
    if (!user) throw new ProtocolError('unauthorized', 'A valid access token is required in the Authorization header');
    const { hostId, chatId } = c.req.param();
    const attachmentId = checkedId(c.req.param('attachmentId'));
    await new HostAccess(c.env.DB).check({ kind: 'user', ...user }, hostId, LINK_ATTACHMENT_READ, chatId);
    const ticket = await attachmentTickets.mint(c.env, user, hostId, chatId, attachmentId);
    const url = new URL(`/v1/attachments/${[hostId, chatId, attachmentId].map(encodeURIComponent).join('/')}`, c.req.url);
    url.searchParams.set('ticket', ticket);
    return c.json({ url: url.toString(), expiresAt: Date.now() + attachmentTickets.seconds * 1000 });
  })

  .get('/:hostId/:chatId/:attachmentId', async (c) => {
    const ticket = c.req.query('ticket');
    if (!ticket) throw new ProtocolError('unauthorized', 'An attachment ticket is required');
    const { hostId, chatId } = c.req.param();
    const attachmentId = checkedId(c.req.param('attachmentId'));
    const identity = await attachmentTickets.verify(c.env, ticket, hostId, chatId, attachmentId);
    // Read afresh (the room's views are kept for seconds): a role taken away closes a ticket already handed out.
    await new HostAccess(c.env.DB).check(identity, hostId, LINK_ATTACHMENT_READ, chatId);
    const file = await roomOf(c.env, hostId, chatId).attachmentFile(attachmentId, identity);
    if (file === 'forbidden') throw new ProtocolError('forbidden', 'You may not see this chat');
    if ('error' in file) throw new ProtocolError(file.error.code as never, file.error.message);
    const image = attachmentImageMime(file);
    return new Response(file.bytes, {
      headers: {
        'Content-Type': image ?? 'application/octet-stream',
        'Content-Disposition': `${image ? 'inline' : 'attachment'}; ${dispositionName(file.name)}`,
        'Content-Length': String(file.bytes.byteLength),
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "sandbox; default-src 'none'; img-src 'self'",
        'Referrer-Policy': 'no-referrer',
        // The ticket makes the address one person's; the bytes behind it never change (stored by content hash).
        'Cache-Control': `private, max-age=${attachmentTickets.seconds}`,
      },
    });
  });
