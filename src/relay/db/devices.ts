// People's device keys in D1: register (idempotent for the same person and key), list, rename and
// revoke. The relay stores public keys and vouches only; whether a device counts is for each host to
// decide from the signed statements, not from this table.
import { and, asc, count, eq, isNull } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { DevicePublicKeySchema, SignedDeviceSchema, type DeviceRecord, type DeviceStatement, type Signed } from '../../contracts/index.ts';
import { devices } from './schema.ts';

type DeviceRow = typeof devices.$inferSelect;

function recordOf(row: DeviceRow): DeviceRecord {
  return {
    id: row.id,
    name: row.name,
    publicKey: DevicePublicKeySchema.parse(JSON.parse(row.publicKey)),
    created: row.createdAt,
    vouchedBy: row.vouchedBy,
    vouch: row.vouch === null ? null : SignedDeviceSchema.parse(JSON.parse(row.vouch)),
    revoked: row.revokedAt,
  };
}

/** A person's devices, revoked ones too, oldest first. */
export async function devicesOf(d1: D1Database, userId: string): Promise<DeviceRecord[]> {
  const rows = await drizzle(d1).select().from(devices).where(eq(devices.userId, userId)).orderBy(asc(devices.createdAt), asc(devices.id));
  return rows.map(recordOf);
}

/** One device by id, whoever it belongs to, with its owner; null when unknown. */
export async function deviceById(d1: D1Database, id: string): Promise<{ userId: string; device: DeviceRecord } | null> {
  const [row] = await drizzle(d1).select().from(devices).where(eq(devices.id, id)).limit(1);
  return row ? { userId: row.userId, device: recordOf(row) } : null;
}

export async function liveDeviceCount(d1: D1Database, userId: string): Promise<number> {
  const [row] = await drizzle(d1)
    .select({ n: count() })
    .from(devices)
    .where(and(eq(devices.userId, userId), isNull(devices.revokedAt)));
  return row?.n ?? 0;
}

export interface NewDevice {
  id: string;
  userId: string;
  name: string;
  publicKey: DeviceRecord['publicKey'];
  createdAt: number;
  vouch: Signed<DeviceStatement> | null;
}

/** Inserts a device; false when a row with that id exists already (nothing changed). */
export async function insertDevice(d1: D1Database, device: NewDevice): Promise<boolean> {
  const inserted = await drizzle(d1)
    .insert(devices)
    .values({
      id: device.id,
      userId: device.userId,
      name: device.name,
      publicKey: JSON.stringify(device.publicKey),
      createdAt: device.createdAt,
      vouchedBy: device.vouch?.statement.by ?? null,
      vouch: device.vouch === null ? null : JSON.stringify(device.vouch),
    })
    .onConflictDoNothing()
    .returning({ id: devices.id });
  return inserted.length === 1;
}

/** Renames one of this person's devices; false when they have none by that id. */
export async function renameDevice(d1: D1Database, userId: string, id: string, name: string): Promise<boolean> {
  const changed = await drizzle(d1)
    .update(devices)
    .set({ name })
    .where(and(eq(devices.id, id), eq(devices.userId, userId)))
    .returning({ id: devices.id });
  return changed.length === 1;
}

/** Revokes one of this person's devices (kept, marked); false when they have none by that id. Revoking twice keeps the first time. */
export async function revokeDevice(d1: D1Database, userId: string, id: string, now: number): Promise<boolean> {
  const db = drizzle(d1);
  const [row] = await db
    .select({ revokedAt: devices.revokedAt })
    .from(devices)
    .where(and(eq(devices.id, id), eq(devices.userId, userId)))
    .limit(1);
  if (!row) return false;
  if (row.revokedAt === null) await db.update(devices).set({ revokedAt: now }).where(eq(devices.id, id));
  return true;
}

/**
 * Keeps a vouch for one of this person's live devices that had none (cross-signing after it
 * registered); false when there is no such device, it was revoked, or it is vouched for already
 * (the first vouch stays).
 */
export async function vouchDevice(d1: D1Database, userId: string, id: string, vouch: Signed<DeviceStatement>): Promise<boolean> {
  const changed = await drizzle(d1)
    .update(devices)
    .set({ vouchedBy: vouch.statement.by, vouch: JSON.stringify(vouch) })
    .where(and(eq(devices.id, id), eq(devices.userId, userId), isNull(devices.revokedAt), isNull(devices.vouchedBy)))
    .returning({ id: devices.id });
  return changed.length === 1;
}
