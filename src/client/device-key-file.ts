// The SDK's device key in Node: one Ed25519 key pair in a JSON file readable by its user alone (0600,
// in a folder made 0700), made on first use. Node has no non-extractable store that outlives the
// process, so the file is the secret: a file others may read is refused rather than used, the way ssh
// refuses a private key with loose permissions. Not imported by the SDK's index (browsers have no fs).
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DEVICE_KEY_ALGORITHM, DevicePublicKeySchema, deviceIdOf } from '../contracts/index.ts';
import { deviceKeyOf, newDeviceKeyPair, type DeviceKey } from './device-key.ts';

const DeviceKeyFileSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  created: z.int().nonnegative(),
  publicKey: DevicePublicKeySchema,
  privateKey: z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: z.string(), d: z.string().regex(/^[A-Za-z0-9_-]{43}$/) }),
});

/** The device key kept in `file`, made (and written 0600) when there is none yet. */
export async function loadOrCreateDeviceKey(file: string, now = Date.now()): Promise<DeviceKey> {
  return existsSync(file) ? readDeviceKey(file) : createDeviceKey(file, now);
}

export async function readDeviceKey(file: string): Promise<DeviceKey> {
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new Error(`${file} is readable by others (mode ${mode.toString(8)}): a device key must be 0600. Fix it with: chmod 600 ${file}`);
  }
  const parsed = DeviceKeyFileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is not a Tether device key: ${z.prettifyError(parsed.error)}`);
  const { privateKey: jwk, publicKey, created, id } = parsed.data;
  if (jwk.x !== publicKey.x || (await deviceIdOf(publicKey)) !== id) throw new Error(`${file}: the key's halves or id do not match`);
  // Imported non-extractable: once loaded, nothing in this process can write the key out again.
  const privateKey = await crypto.subtle.importKey('jwk', jwk, DEVICE_KEY_ALGORITHM, false, ['sign']);
  return { id, publicKey, created, privateKey };
}

async function createDeviceKey(file: string, now: number): Promise<DeviceKey> {
  const pair = await newDeviceKeyPair(true);
  const key = await deviceKeyOf(pair, now);
  const jwk = (await crypto.subtle.exportKey('jwk', pair.privateKey)) as JsonWebKey;
  const dir = path.dirname(path.resolve(file));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  const body = { version: 1, id: key.id, created: now, publicKey: key.publicKey, privateKey: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d } };
  // flag 'wx': a leftover tmp of another process is not written through; mode applies at creation.
  writeFileSync(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  try {
    // A hard link, unlike a rename, never replaces: of two processes making a key at once, one key wins and both use it.
    linkSync(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(tmp, { force: true });
  }
  // The key in use is the non-extractable re-import, as for one read back later.
  return readDeviceKey(file);
}
