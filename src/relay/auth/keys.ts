// The relay's signing keys: the secret `TETHER_SIGNING_KEYS` is a JSON array of private ES256 JWKs,
// each with a `kid`. The first signs; every one verifies, so rotating is "prepend a new key, drop the
// old one once the tokens it signed have expired" and nobody is signed out by it. Importing a JWK is
// slow next to a verify, so a set is imported once per isolate and kept while the secret is unchanged.
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { z } from 'zod';

export const SIGNING_ALG = 'ES256';

/** What the key set needs of the environment; Node scripts pass just this. */
export interface SigningKeysSource {
  TETHER_SIGNING_KEYS: string;
}

export interface KeySet {
  /** The key that signs new tokens, and its kid. */
  signer: { kid: string; key: CryptoKey };
  /** Every key that may verify, by kid. */
  verifiers: ReadonlyMap<string, CryptoKey>;
  /** The public halves, for `GET /api/auth/jwks`. */
  publicJwks: readonly JWK[];
}

const PrivateJwkSchema = z
  .object({
    kty: z.literal('EC'),
    crv: z.literal('P-256'),
    kid: z.string().min(1),
    x: z.string().min(1),
    y: z.string().min(1),
    d: z.string().min(1),
  })
  .loose();

const KeysSchema = z.array(PrivateJwkSchema).min(1);

let cached: { source: string; keys: Promise<KeySet> } | null = null;

/** The key set of this secret, imported once per isolate (a changed secret is imported again). */
export function keySetOf(env: SigningKeysSource): Promise<KeySet> {
  const source = env.TETHER_SIGNING_KEYS;
  if (cached?.source === source) return cached.keys;
  const keys = importKeySet(source);
  cached = { source, keys };
  // A broken secret must not stay cached as a rejected promise only to be reported once.
  keys.catch(() => {
    if (cached?.keys === keys) cached = null;
  });
  return keys;
}

async function importKeySet(source: string | undefined): Promise<KeySet> {
  if (!source) throw new Error('TETHER_SIGNING_KEYS is not set (a JSON array of private ES256 JWKs)');
  let jwks;
  try {
    jwks = KeysSchema.parse(JSON.parse(source));
  } catch {
    throw new Error('TETHER_SIGNING_KEYS must be a JSON array of private ES256 JWKs (kty EC, crv P-256, kid, d)');
  }
  const verifiers = new Map<string, CryptoKey>();
  const publicJwks: JWK[] = [];
  for (const jwk of jwks) {
    if (verifiers.has(jwk.kid)) throw new Error(`TETHER_SIGNING_KEYS has the kid ${jwk.kid} twice`);
    const pub: JWK = { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: jwk.kid, alg: SIGNING_ALG, use: 'sig' };
    verifiers.set(jwk.kid, (await importJWK(pub, SIGNING_ALG)) as CryptoKey);
    publicJwks.push(pub);
  }
  const first = jwks[0]!;
  const { kid, ...priv } = first;
  const key = (await importJWK({ ...priv, alg: SIGNING_ALG }, SIGNING_ALG)) as CryptoKey;
  return { signer: { kid, key }, verifiers, publicJwks };
}

/** A new private signing JWK (for `npm start`, tests, or an operator rotating keys). */
export async function generateSigningKey(kid = `k-${new Date().toISOString().slice(0, 10)}-${crypto.randomUUID().slice(0, 8)}`): Promise<JWK> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
}
