// VAPID (RFC 8292): the relay proves to a push service that a push comes from the application server a
// browser subscribed with. `TETHER_VAPID_KEYS` is a JSON array of private ES256 JWKs (P-256); the
// first is the one browsers subscribe with from now on, and every key in the list still signs for the
// subscriptions made with it (each subscription keeps the public key it was made with), so a new key
// can be put first without cutting off the browsers subscribed under the old one.
//
// The Authorization header is `vapid t=<JWT>, k=<public key>`: an ES256 JWT (jose) whose audience is
// the push service's origin, good for at most 24 hours (we use 12), naming a contact: `PUSH_SUBJECT`
// when set; otherwise the relay's own origin when it is https (RFC 8292 §2.1 takes an https URL, and a
// push service that has a problem with our pushes finds the operator there), as the browser reached it
// when it subscribed (the relay has no configured URL of its own, and pushes leave from a Durable
// Object that no request of the browser reaches); a mailto of no one for a relay on plain http.
import { SignJWT, base64url, importJWK, type CryptoKey } from 'jose';
import { z } from 'zod';

export interface VapidSource {
  TETHER_VAPID_KEYS?: string;
  PUSH_SUBJECT?: string;
}

interface VapidKey {
  /** The uncompressed P-256 point, base64url: what a browser passes as `applicationServerKey`. */
  publicKey: string;
  privateKey: CryptoKey;
}

export interface VapidKeys {
  /** The key new subscriptions are made with. */
  current: VapidKey;
  byPublicKey: ReadonlyMap<string, VapidKey>;
}

const JWT_SECONDS = 12 * 60 * 60;
const FALLBACK_SUBJECT = 'mailto:push@tether.invalid';

const PrivateJwkSchema = z
  .object({
    kty: z.literal('EC'),
    crv: z.literal('P-256'),
    x: z.string().min(1),
    y: z.string().min(1),
    d: z.string().min(1),
  })
  .loose();
const KeysSchema = z.union([z.array(PrivateJwkSchema).min(1), PrivateJwkSchema.transform((key) => [key])]);

let cached: { source: string; keys: Promise<VapidKeys> } | null = null;

/** The relay's VAPID keys, imported once per isolate; null when push is not configured. */
export function vapidKeysOf(env: VapidSource): Promise<VapidKeys> | null {
  const source = env.TETHER_VAPID_KEYS;
  if (!source) return null;
  if (cached?.source === source) return cached.keys;
  const keys = importKeys(source);
  cached = { source, keys };
  keys.catch(() => {
    if (cached?.keys === keys) cached = null;
  });
  return keys;
}

async function importKeys(source: string): Promise<VapidKeys> {
  let jwks;
  try {
    jwks = KeysSchema.parse(JSON.parse(source));
  } catch {
    throw new Error('TETHER_VAPID_KEYS must be a JSON array of private ES256 JWKs (kty EC, crv P-256, x, y, d)');
  }
  const byPublicKey = new Map<string, VapidKey>();
  for (const jwk of jwks) {
    const { kty, crv, x, y, d } = jwk;
    const privateKey = (await importJWK({ kty, crv, x, y, d, alg: 'ES256' }, 'ES256')) as CryptoKey;
    const publicKey = publicKeyOf(x, y);
    if (!byPublicKey.has(publicKey)) byPublicKey.set(publicKey, { publicKey, privateKey });
  }
  return { current: byPublicKey.values().next().value!, byPublicKey };
}

/** The uncompressed point 0x04 || x || y of a JWK's coordinates, base64url. */
function publicKeyOf(x: string, y: string): string {
  const point = new Uint8Array(65);
  point[0] = 4;
  point.set(base64url.decode(x), 1);
  point.set(base64url.decode(y), 33);
  return base64url.encode(point);
}

/** The VAPID contact: PUSH_SUBJECT, else the relay's https origin (`relayOrigin`, null when unknown), else a mailto. */
export function vapidSubject(env: VapidSource, relayOrigin: string | null): string {
  if (env.PUSH_SUBJECT) return env.PUSH_SUBJECT;
  return relayOrigin?.startsWith('https://') ? relayOrigin : FALLBACK_SUBJECT;
}

/** The `Authorization` header for one push to `endpoint`, signed by `key`, naming `subject` as the contact. */
export async function vapidAuthorization(key: VapidKey, endpoint: string, subject: string): Promise<string> {
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setAudience(new URL(endpoint).origin)
    .setSubject(subject)
    .setExpirationTime(`${JWT_SECONDS}s`)
    .sign(key.privateKey);
  return `vapid t=${jwt}, k=${key.publicKey}`;
}
