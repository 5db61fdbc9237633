// Tickets that ride in an address. Some things of a chat are fetched by the browser itself (a visual's
// page in a frame, an attachment in an <img> or a download link), which cannot send the person's token
// in a header, and a token must never ride in a URL (it ends up in logs and history). So the app asks
// for a ticket with its token (header only) and puts that in the address: it opens one thing of one
// chat, for a short while, and nothing else (each kind has its own audience, so no socket, API or
// other route takes it).
import { z } from 'zod';
import { ProtocolError } from '../../contracts/index.ts';
import type { SigningKeysSource } from './keys.ts';
import { signRelayJwt, verifyRelayJwt, type Identity } from './tokens.ts';

export class ChatTicket {
  private readonly kind: 'visual' | 'attachment';
  readonly seconds: number;
  private readonly audience: string;
  private readonly claims: z.ZodType<{ typ: string; sub: string; sid: string; of: string }>;

  constructor(kind: 'visual' | 'attachment', seconds: number) {
    this.kind = kind;
    this.seconds = seconds;
    this.audience = `tether-${kind}`;
    this.claims = z.object({ typ: z.literal(kind), sub: z.string().min(1), sid: z.string().min(1), of: z.string().min(1) });
  }

  mint(env: SigningKeysSource, user: { userId: string; sessionId: string }, hostId: string, chatId: string, id: string): Promise<string> {
    return signRelayJwt(env, { typ: this.kind, sid: user.sessionId, of: JSON.stringify([hostId, chatId, id]) }, user.userId, this.audience, this.seconds);
  }

  /** The person the ticket was made for, when it names exactly this thing of this chat and has not expired. */
  async verify(env: SigningKeysSource, ticket: string, hostId: string, chatId: string, id: string): Promise<Identity> {
    const claims = this.claims.safeParse(await verifyRelayJwt(env, ticket, this.audience, 'ticket'));
    if (!claims.success || claims.data.of !== JSON.stringify([hostId, chatId, id])) throw new ProtocolError('unauthorized', 'invalid ticket');
    return { kind: 'user', userId: claims.data.sub, sessionId: claims.data.sid };
  }
}

/** A visual page runs an agent's scripts, which can read the page's own URL: its ticket lives a minute. */
export const visualTickets = new ChatTicket('visual', 60);

/**
 * Longer than a visual's minute: no script ever runs on an attachment's response (images, or downloads
 * under a CSP sandbox) that could read the address, and a thread's image is asked for again and again
 * as its row scrolls out of and back into view.
 */
export const attachmentTickets = new ChatTicket('attachment', 5 * 60);
