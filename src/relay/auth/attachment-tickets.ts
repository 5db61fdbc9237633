// The ticket in an attachment's address. An <img> or a download link cannot send the person's token
// in a header, and a token must never ride in a URL (it ends up in logs and history), so the app asks
// for a ticket with its token (header only) and puts that in the address: it opens one attachment of
// one chat, for a few minutes, and nothing else (its audience is its own, so no socket or API takes it).
//
// Longer than a visual's minute: no script ever runs on these responses (images, or downloads under a
// CSP sandbox) that could read the address, and a thread's image is asked for again and again as its
// row scrolls out of and back into view.
import { z } from 'zod';
import { ProtocolError } from '../../contracts/index.ts';
import type { SigningKeysSource } from './keys.ts';
import { signRelayJwt, verifyRelayJwt, type Identity } from './tokens.ts';

const AUDIENCE = 'tether-attachment';
export const ATTACHMENT_TICKET_SECONDS = 5 * 60;

const ClaimsSchema = z.object({ typ: z.literal('attachment'), sub: z.string().min(1), sid: z.string().min(1), file: z.string().min(1) });

const fileOf = (hostId: string, chatId: string, attachmentId: string) => JSON.stringify([hostId, chatId, attachmentId]);

export function mintAttachmentTicket(
  env: SigningKeysSource, user: { userId: string; sessionId: string }, hostId: string, chatId: string, attachmentId: string,
): Promise<string> {
  const claims = { typ: 'attachment', sid: user.sessionId, file: fileOf(hostId, chatId, attachmentId) };
  return signRelayJwt(env, claims, user.userId, AUDIENCE, ATTACHMENT_TICKET_SECONDS);
}

/** The person an attachment ticket was made for, when it names exactly this attachment and has not expired. */
export async function verifyAttachmentTicket(env: SigningKeysSource, ticket: string, hostId: string, chatId: string, attachmentId: string): Promise<Identity> {
  const claims = ClaimsSchema.safeParse(await verifyRelayJwt(env, ticket, AUDIENCE, 'ticket'));
  if (!claims.success || claims.data.file !== fileOf(hostId, chatId, attachmentId)) throw new ProtocolError('unauthorized', 'invalid ticket');
  return { kind: 'user', userId: claims.data.sub, sessionId: claims.data.sid };
}
