// The host's key and the tokens it signs with it, in WebCrypto and jose only (no file system), so the
// relay's tests sign exactly what a real host signs. identity.ts keeps the key on disk.
import { SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';
import { z } from 'zod';
import { HOST_TOKEN_AUDIENCE, HOST_TOKEN_SECONDS, HostPublicKeySchema, type HostPublicKey } from '../contracts/hosts.ts';

export const PrivateJwkSchema = z.looseObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().min(1),
  d: z.string().min(1),
});
export type HostPrivateJwk = z.output<typeof PrivateJwkSchema>;

export interface HostKeyPair {
  privateJwk: HostPrivateJwk;
  publicJwk: HostPublicKey;
}

/** A new Ed25519 key pair, as JWKs (the private one extractable only so it can be kept on disk). */
export async function newHostKey(): Promise<HostKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const privateJwk = PrivateJwkSchema.parse(await exportJWK(privateKey));
  const { kty, crv, x } = HostPublicKeySchema.parse(await exportJWK(publicKey));
  return { privateJwk, publicJwk: { kty, crv, x } };
}

/**
 * Signs host tokens for the link: `alg EdDSA`, `kid` = `sub` = the host id, `aud` tether-link, a
 * minute of life and a unique `jti`. The key is imported once; each call signs a fresh token, so a
 * reconnect never presents an expired or already-seen one.
 */
export function hostTokenSigner(identity: { hostId: string; privateJwk: HostPrivateJwk }): () => Promise<string> {
  const key = importJWK(identity.privateJwk, 'EdDSA');
  return async () =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA', kid: identity.hostId, typ: 'JWT' })
      .setSubject(identity.hostId)
      .setAudience(HOST_TOKEN_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${HOST_TOKEN_SECONDS}s`)
      .setJti(crypto.randomUUID())
      .sign(await key);
}
