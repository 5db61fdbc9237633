// Who this host is to its relay: an Ed25519 key pair it made itself, and the id the relay gave it when
// a person approved the pairing. The private half never leaves `<data>/identity.json` (mode 0600, in a
// folder of mode 0700); the relay keeps only the public half, so nothing it stores lets anyone else
// act as this host. Every link connection carries a fresh short-lived JWT signed with the key.
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';
import { z } from 'zod';
import { HOST_TOKEN_AUDIENCE, HOST_TOKEN_SECONDS, HostPublicKeySchema, type HostPublicKey } from '../contracts/hosts.ts';
import { readJsonFile } from './disk.ts';

const PrivateJwkSchema = z.looseObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().min(1),
  d: z.string().min(1),
});
export type HostPrivateJwk = z.output<typeof PrivateJwkSchema>;

const HostIdentitySchema = z.object({
  relayUrl: z.string().min(1),
  hostId: z.string().min(1),
  privateJwk: PrivateJwkSchema,
  publicJwk: HostPublicKeySchema,
});
export type HostIdentity = z.output<typeof HostIdentitySchema>;

export interface HostKeyPair {
  privateJwk: HostPrivateJwk;
  publicJwk: HostPublicKey;
}

export function identityFile(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'identity.json');
}

/** A new Ed25519 key pair, as JWKs (the private one extractable only so it can be kept on disk). */
export async function newHostKey(): Promise<HostKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const privateJwk = PrivateJwkSchema.parse(await exportJWK(privateKey));
  const { kty, crv, x } = HostPublicKeySchema.parse(await exportJWK(publicKey));
  return { privateJwk, publicJwk: { kty, crv, x } };
}

/** The identity kept in the data folder, or null when this host has not been paired. A damaged file is an error, not "unpaired". */
export function readHostIdentity(dataDir: string): HostIdentity | null {
  const file = identityFile(dataDir);
  if (!existsSync(file)) return null;
  return readJsonFile(file, HostIdentitySchema, 'host identity');
}

/** Writes identity.json atomically, readable by this user alone (the folder too). */
export function writeHostIdentity(dataDir: string, identity: HostIdentity): void {
  const dir = path.resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = identityFile(dir);
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(HostIdentitySchema.parse(identity), null, 2)}\n`, { mode: 0o600 });
  // `mode` applies only when the file is created: a leftover tmp keeps whatever mode it had.
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/**
 * Signs host tokens for the link: `alg EdDSA`, `kid` = `sub` = the host id, `aud` tether-link, a
 * minute of life and a unique `jti`. The key is imported once; each call signs a fresh token, so a
 * reconnect never presents an expired or already-seen one.
 */
export function hostTokenSigner(identity: Pick<HostIdentity, 'hostId' | 'privateJwk'>): () => Promise<string> {
  const key = importJWK(identity.privateJwk, 'EdDSA');
  return async () => new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', kid: identity.hostId, typ: 'JWT' })
    .setSubject(identity.hostId)
    .setAudience(HOST_TOKEN_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${HOST_TOKEN_SECONDS}s`)
    .setJti(randomUUID())
    .sign(await key);
}
