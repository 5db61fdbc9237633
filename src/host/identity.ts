// Who this host is to its relay: an Ed25519 key pair it made itself, and the id the relay gave it when
// a person approved the pairing. The private half never leaves `<data>/identity.json` (mode 0600, in a
// folder of mode 0700); the relay keeps only the public half, so nothing it stores lets anyone else
// act as this host. Every link connection carries a fresh short-lived JWT signed with the key.
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { HostPublicKeySchema } from '../contracts/hosts.ts';
import { readJsonFile } from './disk.ts';
import { PrivateJwkSchema } from './host-token.ts';

export { hostTokenSigner, newHostKey, type HostKeyPair, type HostPrivateJwk } from './host-token.ts';

const HostIdentitySchema = z.object({
  relayUrl: z.string().min(1),
  hostId: z.string().min(1),
  privateJwk: PrivateJwkSchema,
  publicJwk: HostPublicKeySchema,
});
export type HostIdentity = z.output<typeof HostIdentitySchema>;

export function identityFile(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'identity.json');
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
