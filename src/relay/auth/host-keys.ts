// A host proves who it is with a short JWT it signs with its own Ed25519 key; the relay checks it
// against the public key it stored when the host was paired. Nothing the relay keeps would let anyone
// else sign as the host, and a revoked host's key stops opening anything at once.
import { errors as joseErrors, importJWK, jwtVerify, type CryptoKey, type JWTHeaderParameters } from 'jose';
import { HOST_TOKEN_AUDIENCE, HOST_TOKEN_MAX_SECONDS, HostPublicKeySchema, ProtocolError } from '../../contracts/index.ts';
import { findHost } from '../db/hosts.ts';
import { spendLinkToken } from '../db/link-tokens.ts';
import type { Env } from '../env.ts';
import type { Identity } from './tokens.ts';

export type HostIdentity = Extract<Identity, { kind: 'host' }>;

/** Imported public keys by their JWK text: a reconnecting host costs one D1 read, not an import. */
const imported = new Map<string, Promise<CryptoKey>>();

function keyOf(publicKey: string): Promise<CryptoKey> {
  let key = imported.get(publicKey);
  if (!key) {
    if (imported.size > 1_000) imported.clear();
    key = importJWK(HostPublicKeySchema.parse(JSON.parse(publicKey)), 'EdDSA') as Promise<CryptoKey>;
    imported.set(publicKey, key);
    key.catch(() => imported.delete(publicKey));
  }
  return key;
}

/** A refusal whose reason may be told to the caller (the rest are all "invalid host token"). */
class Refused extends Error {}

/**
 * The host a link token speaks for: `alg` EdDSA only, `kid` = `sub` = a paired, unrevoked host, `aud`
 * tether-link, with `iat`, `exp` and `jti`, living at most five minutes, and never presented before
 * (its jti is remembered until it expires, so a captured token cannot open a second link and
 * displace the host). Anything else is `unauthorized`.
 */
export async function verifyHostToken(env: Pick<Env, 'DB'>, token: string): Promise<HostIdentity> {
  let host: { id: string; ownerId: string } | null = null;
  const resolve = async (header: JWTHeaderParameters) => {
    if (!header.kid) throw new Refused('the host token names no host (kid)');
    const row = await findHost(env.DB, header.kid);
    if (!row?.publicKey) throw new Refused('unknown host');
    if (row.revokedAt !== null) throw new Refused('host revoked');
    host = row;
    return keyOf(row.publicKey);
  };
  try {
    const { payload } = await jwtVerify(token, resolve, {
      audience: HOST_TOKEN_AUDIENCE,
      algorithms: ['EdDSA'],
      requiredClaims: ['sub', 'iat', 'exp', 'jti'],
      maxTokenAge: HOST_TOKEN_MAX_SECONDS,
    });
    const found = host as { id: string; ownerId: string } | null;
    if (!found || payload.sub !== found.id) throw new Refused("the token's subject is not the host that signed it");
    if (payload.exp! - payload.iat! > HOST_TOKEN_MAX_SECONDS) throw new Refused(`a host token may live ${HOST_TOKEN_MAX_SECONDS} s at most`);
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 200)
      throw new Refused("the host token's jti must be a string of 1 to 200 characters");
    // Last, after the signature: only a token the host really signed can spend its jti.
    if (!(await spendLinkToken(env.DB, found.id, payload.jti, payload.exp! * 1000, Date.now())))
      throw new Refused('this host token was used already (a host signs a fresh one for every connection)');
    return { kind: 'host', hostId: found.id, ownerId: found.ownerId };
  } catch (error) {
    if (error instanceof Refused) throw new ProtocolError('unauthorized', error.message);
    throw new ProtocolError('unauthorized', error instanceof joseErrors.JWTExpired ? 'host token expired' : 'invalid host token');
  }
}
