// The relay's own tokens, all ES256 JWTs signed by the key set (keys.ts) and verified by kid:
// a person's access token (10 minutes, names its session so revoking the session reaches it), the
// tickets in an address (chat-tickets.ts) and push action tokens (push/action-token.ts). Refresh tokens and socket tickets are opaque and live
// in D1 (sessions.ts, tickets.ts); hosts sign their own tokens with their own keys.
import { SignJWT, jwtVerify, errors as joseErrors, type JWTHeaderParameters } from 'jose';
import { z } from 'zod';
import { ProtocolError } from '../../contracts/index.ts';
import { SIGNING_ALG, keySetOf, type SigningKeysSource } from './keys.ts';

export const ISSUER = 'tether';
export const ACCESS_AUDIENCE = 'tether-api';
export const ACCESS_TOKEN_SECONDS = 10 * 60;

export type Identity = { kind: 'user'; userId: string; sessionId: string } | { kind: 'host'; hostId: string; ownerId: string };

/** The verifying key a token's header names; an unknown kid fails like a bad signature. */
function keyByKid(env: SigningKeysSource) {
  return async (header: JWTHeaderParameters) => {
    const keys = await keySetOf(env);
    const key = header.kid === undefined ? undefined : keys.verifiers.get(header.kid);
    if (!key) throw new ProtocolError('unauthorized', 'unknown signing key');
    return key;
  };
}

async function sign(env: SigningKeysSource, claims: Record<string, unknown>, subject: string, audience: string, seconds: number): Promise<string> {
  const { signer } = await keySetOf(env);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: SIGNING_ALG, kid: signer.kid, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(`${seconds}s`)
    .sign(signer.key);
}

/** Verifies signature (ES256 only, by kid), issuer, audience, exp and nbf; answers the payload. */
async function verify(env: SigningKeysSource, token: string, audience: string, what: string): Promise<Record<string, unknown>> {
  try {
    const { payload } = await jwtVerify(token, keyByKid(env), {
      issuer: ISSUER,
      audience,
      algorithms: [SIGNING_ALG],
      requiredClaims: ['exp', 'iat', 'sub'],
    });
    return payload;
  } catch (error) {
    throw new ProtocolError('unauthorized', error instanceof joseErrors.JWTExpired ? `${what} expired` : `invalid ${what}`);
  }
}

const AccessClaimsSchema = z.object({ typ: z.literal('access'), sub: z.string().min(1), sid: z.string().min(1) });

/** A person's access token for one session: 10 minutes; refresh for another. */
export function mintAccessToken(env: SigningKeysSource, userId: string, sessionId: string): Promise<string> {
  return sign(env, { typ: 'access', sid: sessionId }, userId, ACCESS_AUDIENCE, ACCESS_TOKEN_SECONDS);
}

/**
 * Who an access token was minted for. Checks only the token itself: whether its session still lives
 * is `sessionIsLive` (sessions.ts), which every door asks too.
 */
export async function verifyAccessToken(env: SigningKeysSource, token: string): Promise<{ userId: string; sessionId: string }> {
  const claims = AccessClaimsSchema.safeParse(await verify(env, token, ACCESS_AUDIENCE, 'token'));
  if (!claims.success) throw new ProtocolError('unauthorized', 'invalid token');
  return { userId: claims.data.sub, sessionId: claims.data.sid };
}

/** Whom a journal or the host records a request under: a user, or a host acting as a client of its own relay. */
export function principalOf(identity: Identity): string {
  return identity.kind === 'user' ? identity.userId : `host:${identity.hostId}`;
}

/** The bearer token of a request's `Authorization` header. Tokens never ride in URLs (they end up in logs). */
export function bearerOf(request: Request): string | null {
  const header = request.headers.get('Authorization');
  if (!header || !/^bearer /i.test(header)) return null;
  return header.slice(7).trim() || null;
}

/** For the relay's other single-purpose tokens (push actions): signed and checked like these, under their own audience. */
export { sign as signRelayJwt, verify as verifyRelayJwt };
