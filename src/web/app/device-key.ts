// This browser's device key: an Ed25519 key pair made on first use with a NON-extractable private key
// and kept in IndexedDB (a CryptoKey survives structured cloning, its secret never leaves the browser's
// key store). The service worker opens the same database, so it signs an approval from a notification
// with the same key the app uses. The page and the worker may both ask for the key at once: the first
// write wins (`add`, not `put`) and both read the key that won.
//
// No DOM types here: this module is shared with the service worker (WebWorker lib).
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { deviceKeyOf, newDeviceKeyPair, type DeviceKey } from '../../client/device-key.ts';

const DB_NAME = 'tether-device';
const KEY = 'device';

interface StoredDeviceKey {
  pair: CryptoKeyPair;
  created: number;
}

interface DeviceDb extends DBSchema {
  keys: { key: string; value: StoredDeviceKey };
}

function open(name: string): Promise<IDBPDatabase<DeviceDb>> {
  return openDB<DeviceDb>(name, 1, { upgrade: (db) => void db.createObjectStore('keys') });
}

/** This browser's device key, made and kept when there is none. `dbName` is for tests. */
export async function browserDeviceKey(dbName = DB_NAME, now = Date.now()): Promise<DeviceKey> {
  const db = await open(dbName);
  try {
    const kept = await db.get('keys', KEY);
    if (kept) return await deviceKeyOf(kept.pair, kept.created);
    const made: StoredDeviceKey = { pair: await newDeviceKeyPair(false), created: now };
    try {
      await db.add('keys', made, KEY);
    } catch (error) {
      // Another context stored its key first: use that one.
      if (!(error instanceof Error && error.name === 'ConstraintError')) throw error;
    }
    const winner = (await db.get('keys', KEY))!;
    return await deviceKeyOf(winner.pair, winner.created);
  } finally {
    db.close();
  }
}

/** Forgets this browser's key (signing out of a device for good); the next call makes a new one. */
export async function forgetBrowserDeviceKey(dbName = DB_NAME): Promise<void> {
  const db = await open(dbName);
  try {
    await db.delete('keys', KEY);
  } finally {
    db.close();
  }
}

/** A readable name for a browser from its user agent (enough to tell one's devices apart). */
export function deviceLabel(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent) ? 'Edge' : /Firefox\//.test(userAgent) ? 'Firefox' : /Chrom(e|ium)\//.test(userAgent) ? 'Chrome' : /Safari\//.test(userAgent) ? 'Safari' : /node|undici/i.test(userAgent) ? 'A program' : 'A browser';
  const system = /iPhone|iPad/.test(userAgent) ? 'iOS' : /Android/.test(userAgent) ? 'Android' : /Mac OS X/.test(userAgent) ? 'macOS' : /Windows/.test(userAgent) ? 'Windows' : /Linux/.test(userAgent) ? 'Linux' : '';
  return system ? `${browser} on ${system}` : browser;
}
