// The shape of Tether's Ed25519 public keys as JWKs: a host's own key and every device key have it.
// On its own so that the host API (hosts.ts) and the signed statements (signing.ts) share it without
// importing each other.
import { z } from 'zod';

/**
 * The public half of a host's Ed25519 key, as a JWK. A private part (`d`) is refused rather than
 * stripped: a host that sends it has a bug that leaks its key, and must hear about it.
 */
export const HostPublicKeySchema = z.strictObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  /** 32 bytes, base64url. */
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'x must be 32 bytes of base64url'),
  kid: z.string().max(200).optional(),
  alg: z.literal('EdDSA').optional(),
  use: z.literal('sig').optional(),
});
export type HostPublicKey = z.output<typeof HostPublicKeySchema>;
