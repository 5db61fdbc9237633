// Sign-in through someone else's proof of who a person is: Cloudflare Access in front of the relay
// (this file) or an OIDC provider (oidc.ts). Either ends in an email the provider vouches for; the
// relay finds the account with that email or creates one, with no grants, so a newcomer sees nothing
// until a host's owner shares something.
import { createRemoteJWKSet, jwtVerify, errors as joseErrors } from 'jose';
import { ProtocolError } from '../../contracts/index.ts';
import { accountByEmail, insertUserUnlessEmailTaken, releaseUnverifiedEmail } from '../db/users.ts';
import type { Env } from '../env.ts';
import { newId } from './opaque.ts';

/**
 * The signature algorithms accepted from a provider: asymmetric ones only, so a token signed with a
 * shared secret (or `alg: none`) is refused whatever its header says.
 */
export const PROVIDER_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

type KeySet = ReturnType<typeof createRemoteJWKSet>;
const keySets = new Map<string, KeySet>();

/** A provider's published keys, fetched on first use and kept per isolate (jose refetches on an unknown kid, at most every 30 s). */
export function remoteKeys(url: string): KeySet {
  let keys = keySets.get(url);
  if (!keys) keySets.set(url, (keys = createRemoteJWKSet(new URL(url))));
  return keys;
}

/** Trims a configured issuer or team domain to its canonical form (no trailing slash). */
export function canonicalIssuer(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

export function accessConfigured(env: Env): boolean {
  return Boolean(env.ACCESS_TEAM_DOMAIN?.trim() && env.ACCESS_AUD?.trim());
}

/** Why a provider's token was refused, in words a person can act on (never the token itself). */
export function refusal(error: unknown, what: string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof joseErrors.JWTExpired) return new ProtocolError('unauthorized', `The ${what} has expired`);
  if (error instanceof joseErrors.JWTClaimValidationFailed) return new ProtocolError('unauthorized', `The ${what} is not for this relay (${error.claim})`);
  if (error instanceof joseErrors.JOSEError) return new ProtocolError('unauthorized', `The ${what} is not valid`);
  return new ProtocolError('unauthorized', `The ${what} could not be checked`);
}

/**
 * The email a `Cf-Access-Jwt-Assertion` vouches for: signed by a key the team publishes, issued by the
 * team domain, for this application's audience tag, not expired.
 */
export async function verifyAccessAssertion(env: Env, assertion: string): Promise<string> {
  if (!accessConfigured(env)) throw new Error('Cloudflare Access is not configured');
  const team = canonicalIssuer(env.ACCESS_TEAM_DOMAIN!);
  try {
    const { payload } = await jwtVerify(assertion, remoteKeys(`${team}/cdn-cgi/access/certs`), {
      issuer: team,
      audience: env.ACCESS_AUD!.trim(),
      algorithms: PROVIDER_ALGORITHMS,
      requiredClaims: ['exp', 'iat'],
    });
    if (typeof payload.email !== 'string' || !payload.email.includes('@')) {
      // A service token's assertion names no person.
      throw new ProtocolError('unauthorized', 'The Access assertion names no email');
    }
    return payload.email;
  } catch (error) {
    throw refusal(error, 'Access assertion');
  }
}

/** What a provider sign-in did to the accounts, for the audit log. */
export interface ProviderAccount {
  userId: string;
  /** The account that had only typed this address (an invitation accepted signed out) and lost it to this sign-in. */
  releasedFrom: string | null;
}

/**
 * The account for an email a provider vouched for: the one whose address is verified, or a new one
 * (no password, no grants). An account that holds the address without having proved it (a password
 * account made by accepting an invitation, which anyone signed in can make for any address) never
 * receives this sign-in: the address is taken from it and the person who proved it gets a new account.
 * So inviting `ceo@corp` and accepting it yourself buys nothing. A disabled account stays disabled
 * whichever way its person signs in.
 */
export async function userForEmail(db: D1Database, email: string, name: string | null): Promise<ProviderAccount> {
  const normalized = email.trim().toLowerCase();
  let releasedFrom: string | null = null;
  const held = await accountByEmail(db, normalized);
  if (held && held.emailVerifiedAt === null && (await releaseUnverifiedEmail(db, held.id, normalized))) releasedFrom = held.id;
  // Racing first sign-ins of the same person create one account: the insert does nothing the second time.
  await insertUserUnlessEmailTaken(db, {
    id: newId('u_'),
    email: normalized,
    name: (name?.trim() || normalized.split('@')[0]!).slice(0, 120),
    createdAt: Date.now(),
  });
  const row = await accountByEmail(db, normalized);
  if (!row) throw new Error('user row missing after insert');
  // Only a verified holder is ever answered: a racing invitation cannot slip an unverified row in between.
  if (row.emailVerifiedAt === null) throw new ProtocolError('email-taken', 'An unverified account took this address meanwhile; sign in again');
  if (row.disabledAt !== null) throw new ProtocolError('forbidden', 'This account is disabled');
  return { userId: row.id, releasedFrom };
}
