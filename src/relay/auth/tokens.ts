// Every socket carries a token that jose verifies. Two kinds exist for now: a user's (who may act on
// the hosts they own) and a host's (which may hold its own link). Accounts, pairing with host keys and
// grants replace how these are minted; the identity a socket carries keeps this shape.
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { z } from 'zod';
import { ProtocolError } from '../../contracts/index.ts';

const ISSUER = 'tether';

export type Identity =
  | { kind: 'user'; userId: string }
  | { kind: 'host'; hostId: string; ownerId: string };

const ClaimsSchema = z.discriminatedUnion('typ', [
  z.object({ typ: z.literal('user'), sub: z.string().min(1) }),
  z.object({ typ: z.literal('host'), sub: z.string().min(1), owner: z.string().min(1) }),
]);

function keyOf(secret: string): Uint8Array {
  if (!secret || secret.length < 32) throw new Error('TETHER_TOKEN_SECRET must be at least 32 characters');
  return new TextEncoder().encode(secret);
}

export async function mintToken(secret: string, identity: Identity, ttlSeconds = 60 * 60 * 24 * 30): Promise<string> {
  const claims = identity.kind === 'user'
    ? { typ: 'user' as const }
    : { typ: 'host' as const, owner: identity.ownerId };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setSubject(identity.kind === 'user' ? identity.userId : identity.hostId)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(keyOf(secret));
}

export async function verifyToken(secret: string, token: string): Promise<Identity> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), { issuer: ISSUER, algorithms: ['HS256'] });
    const claims = ClaimsSchema.parse(payload);
    return claims.typ === 'user'
      ? { kind: 'user', userId: claims.sub }
      : { kind: 'host', hostId: claims.sub, ownerId: claims.owner };
  } catch (error) {
    const why = error instanceof joseErrors.JWTExpired ? 'token expired' : 'invalid token';
    throw new ProtocolError('unauthorized', why);
  }
}

/**
 * A visual page runs an agent's scripts, which can read the page's own URL: the URL may carry only a
 * ticket that opens that one page, for a minute, and nothing else (no socket takes it).
 */
export const VISUAL_TICKET_SECONDS = 60;

const VisualClaimsSchema = z.object({ typ: z.literal('visual'), sub: z.string().min(1), page: z.string().min(1) });

const pageOf = (hostId: string, chatId: string, visualId: string) => JSON.stringify([hostId, chatId, visualId]);

export async function mintVisualTicket(secret: string, userId: string, hostId: string, chatId: string, visualId: string): Promise<string> {
  return new SignJWT({ typ: 'visual', page: pageOf(hostId, chatId, visualId) })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setSubject(userId)
    .setIssuedAt()
    .setExpirationTime(`${VISUAL_TICKET_SECONDS}s`)
    .sign(keyOf(secret));
}

/** The user a visual ticket was made for, when it names exactly this page and has not expired. */
export async function verifyVisualTicket(secret: string, ticket: string, hostId: string, chatId: string, visualId: string): Promise<Identity> {
  try {
    const { payload } = await jwtVerify(ticket, keyOf(secret), { issuer: ISSUER, algorithms: ['HS256'] });
    const claims = VisualClaimsSchema.parse(payload);
    if (claims.page !== pageOf(hostId, chatId, visualId)) throw new Error('another page');
    return { kind: 'user', userId: claims.sub };
  } catch (error) {
    throw new ProtocolError('unauthorized', error instanceof joseErrors.JWTExpired ? 'ticket expired' : 'invalid ticket');
  }
}

/** Whom a journal or the host records a request under: a user, or a host acting as a client of its own relay. */
export function principalOf(identity: Identity): string {
  return identity.kind === 'user' ? identity.userId : `host:${identity.hostId}`;
}

/** The token of a request: `Authorization: Bearer …`, or `?access_token=` where a browser socket cannot set headers. */
export function tokenOf(request: Request): string | null {
  const header = request.headers.get('Authorization');
  if (header?.startsWith('Bearer ')) return header.slice(7).trim() || null;
  return new URL(request.url).searchParams.get('access_token');
}
