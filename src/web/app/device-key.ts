// This browser's device key: an Ed25519 key pair made on first use with a NON-extractable private key
// and kept in IndexedDB (a CryptoKey survives structured cloning, its secret never leaves the browser's
// key store). One key per person signed in on this browser: a device is one person's (the relay
// refuses a key registered to someone else), and two people may share a browser. The page records who
// is signed in (`current`), and the service worker, which opens the same database, signs an approval
// from a notification with that person's key, the same one the app uses. The page and the worker may
// both ask for a key at once: the first write wins (`add`, not `put`) and both read the key that won.
//
// No DOM types here: this module is shared with the service worker (WebWorker lib).
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { deviceKeyOf, newDeviceKeyPair, type DeviceKey } from '../../client/device-sign.ts';

const DB_NAME = 'tether-device';
const CURRENT = 'current';
const keyOf = (userId: string) => `device:${userId}`;

interface StoredDeviceKey {
  pair: CryptoKeyPair;
  created: number;
}

interface DeviceDb extends DBSchema {
  /** `device:<user id>`: that person's key here; `current`: who is signed in on this browser. */
  keys: { key: string; value: StoredDeviceKey | { userId: string } };
}

const isKey = (value: unknown): value is StoredDeviceKey => typeof value === 'object' && value !== null && 'pair' in value;

function open(name: string): Promise<IDBPDatabase<DeviceDb>> {
  return openDB<DeviceDb>(name, 1, { upgrade: (db) => void db.createObjectStore('keys') });
}

/** `userId`'s device key in this browser, made and kept when there is none. `dbName` is for tests. */
export async function browserDeviceKey(userId: string, options: { dbName?: string; now?: number } = {}): Promise<DeviceKey> {
  const db = await open(options.dbName ?? DB_NAME);
  try {
    const kept = await db.get('keys', keyOf(userId));
    if (isKey(kept)) return await deviceKeyOf(kept.pair, kept.created);
    const made: StoredDeviceKey = { pair: await newDeviceKeyPair(false), created: options.now ?? Date.now() };
    try {
      await db.add('keys', made, keyOf(userId));
    } catch (error) {
      // Another context stored its key first: use that one.
      if (!(error instanceof Error && error.name === 'ConstraintError')) throw error;
    }
    const winner = await db.get('keys', keyOf(userId));
    if (!isKey(winner)) throw new Error('The device key store holds something else');
    return await deviceKeyOf(winner.pair, winner.created);
  } finally {
    db.close();
  }
}

/** Forgets `userId`'s key here (it was revoked: a revoked key never comes back); the next call makes a new one. */
export async function forgetBrowserDeviceKey(userId: string, dbName = DB_NAME): Promise<void> {
  const db = await open(dbName);
  try {
    await db.delete('keys', keyOf(userId));
  } finally {
    db.close();
  }
}

/** Records who is signed in on this browser (null: nobody), for the service worker. */
export async function setCurrentUser(userId: string | null, dbName = DB_NAME): Promise<void> {
  const db = await open(dbName);
  try {
    if (userId === null) await db.delete('keys', CURRENT);
    else await db.put('keys', { userId }, CURRENT);
  } finally {
    db.close();
  }
}

/**
 * The key of whoever is signed in on this browser, as the service worker asks for it; null when nobody
 * is or they have no key here yet (the worker never makes one: the app registers keys with the relay).
 */
export async function currentDeviceKey(dbName = DB_NAME): Promise<DeviceKey | null> {
  const db = await open(dbName);
  try {
    const current = await db.get('keys', CURRENT);
    if (!current || isKey(current)) return null;
    const kept = await db.get('keys', keyOf(current.userId));
    return isKey(kept) ? await deviceKeyOf(kept.pair, kept.created) : null;
  } finally {
    db.close();
  }
}

/** A readable name for a browser from its user agent (enough to tell one's devices apart). */
export function deviceLabel(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : /node|undici/i.test(userAgent)
            ? 'A program'
            : 'A browser';
  const system = /iPhone|iPad/.test(userAgent)
    ? 'iOS'
    : /Android/.test(userAgent)
      ? 'Android'
      : /Mac OS X/.test(userAgent)
        ? 'macOS'
        : /Windows/.test(userAgent)
          ? 'Windows'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : '';
  return system ? `${browser} on ${system}` : browser;
}
