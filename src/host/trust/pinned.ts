// The owner this machine pinned when it was paired: the approving person and the device that signed
// the approval (`<data>/trust.json`, 0600). It is the root of everything the host trusts (book.ts);
// the relay cannot change it, and pairing again is the way to change it.
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DeviceIdSchema, DevicePublicKeySchema } from '../../contracts/index.ts';
import { readJsonFile } from '../disk.ts';
import type { PinnedOwner } from './book.ts';

const TrustFileSchema = z.object({
  hostId: z.string().min(1),
  owner: z.object({
    userId: z.string().min(1),
    name: z.string(),
    device: z.object({ id: DeviceIdSchema, publicKey: DevicePublicKeySchema }),
  }),
  pinnedAt: z.int().nonnegative(),
});
export type TrustFile = z.output<typeof TrustFileSchema>;

export function trustFile(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'trust.json');
}

/** The pinned owner, or null when this host was paired before owners were pinned. */
export function readPinnedOwner(dataDir: string): { hostId: string; owner: PinnedOwner } | null {
  const file = trustFile(dataDir);
  if (!existsSync(file)) return null;
  const { hostId, owner } = readJsonFile(file, TrustFileSchema, 'trust file');
  return { hostId, owner };
}

export function writePinnedOwner(dataDir: string, trust: TrustFile): void {
  const dir = path.resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = trustFile(dir);
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(TrustFileSchema.parse(trust), null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}
