// The devices API (`/api/devices`): a person's device keys. Each client install registers the public
// half of its own Ed25519 key; a later device may bring a vouch, a statement an earlier device of the
// same person signed (cross-signing), which the relay checks before it keeps it. The person lists,
// renames and revokes their devices here (Settings). What counts on a machine is for its host to
// decide from the signed statements; this API only keeps them and says which devices were revoked.
import { Hono } from 'hono';
import {
  DEVICES_PER_USER, DeviceRegisterRequestSchema, DeviceRenameRequestSchema, ProtocolError,
  deviceIdOf, importDevicePublicKey, verifyStatement,
  type DeviceListResult, type DeviceRecord, type DeviceStatement, type Signed,
} from '../../contracts/index.ts';
import { deviceById, devicesOf, insertDevice, liveDeviceCount, renameDevice, revokeDevice } from '../db/devices.ts';
import type { Env } from '../env.ts';
import { parseBody } from './body.ts';
import { requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

export const devicesApi = new Hono<App>();
devicesApi.use('*', requireUser);

devicesApi.get('/', async (c) => {
  const result: DeviceListResult = { devices: await devicesOf(c.env.DB, c.get('user').userId) };
  return c.json(result);
});

devicesApi.post('/', async (c) => {
  const { userId } = c.get('user');
  const body = await parseBody(c, DeviceRegisterRequestSchema);
  const id = await deviceIdOf(body.publicKey);
  const existing = await deviceById(c.env.DB, id);
  if (existing) {
    // The same key again is the same device (a retried registration); anyone else's key is not ours to take.
    if (existing.userId !== userId) throw new ProtocolError('device-taken', 'That device key is registered to someone else');
    if (existing.device.revoked !== null) throw new ProtocolError('forbidden', 'That device was revoked; a revoked key never comes back (make a new one)');
    return c.json(existing.device, 200);
  }
  if (body.vouch) await checkVouch(c.env.DB, userId, id, body, body.vouch);
  if ((await liveDeviceCount(c.env.DB, userId)) >= DEVICES_PER_USER) {
    throw new ProtocolError('bad-request', `You have ${DEVICES_PER_USER} devices already: revoke one in Settings first`);
  }
  const created = Date.now();
  if (!(await insertDevice(c.env.DB, { id, userId, name: body.name, publicKey: body.publicKey, createdAt: created, vouch: body.vouch ?? null }))) {
    // Registered by a concurrent request between the look-up and the insert: answer what is there.
    const now = await deviceById(c.env.DB, id);
    if (!now || now.userId !== userId) throw new ProtocolError('device-taken', 'That device key is registered to someone else');
    return c.json(now.device, 200);
  }
  const device: DeviceRecord = {
    id, name: body.name, publicKey: body.publicKey, created, vouchedBy: body.vouch?.statement.by ?? null, vouch: body.vouch ?? null, revoked: null,
  };
  return c.json(device, 201);
});

devicesApi.patch('/:id', async (c) => {
  const { name } = await parseBody(c, DeviceRenameRequestSchema);
  if (!(await renameDevice(c.env.DB, c.get('user').userId, c.req.param('id'), name))) {
    throw new ProtocolError('device-not-found', 'No such device of yours');
  }
  return c.json({ ok: true });
});

devicesApi.delete('/:id', async (c) => {
  if (!(await revokeDevice(c.env.DB, c.get('user').userId, c.req.param('id'), Date.now()))) {
    throw new ProtocolError('device-not-found', 'No such device of yours');
  }
  return c.json({ ok: true });
});

/**
 * A vouch counts only when it names this person and exactly this key, and an earlier live device of
 * the same person signed it; anything else is refused rather than stored unvouched, so a client
 * learns its cross-signing is broken.
 */
async function checkVouch(
  d1: D1Database, userId: string, id: string, body: { name: string; publicKey: DeviceRecord['publicKey'] }, vouch: Signed<DeviceStatement>,
): Promise<void> {
  const { statement } = vouch;
  if (statement.userId !== userId || statement.device.id !== id || statement.device.publicKey.x !== body.publicKey.x || statement.device.name !== body.name) {
    throw new ProtocolError('signature-invalid', 'The vouch names another person, key or name');
  }
  const voucher = await deviceById(d1, statement.by);
  if (!voucher || voucher.userId !== userId) throw new ProtocolError('signature-invalid', 'The vouching device is not one of yours');
  if (voucher.device.revoked !== null) throw new ProtocolError('signature-invalid', 'The vouching device was revoked');
  if (!(await verifyStatement(await importDevicePublicKey(voucher.device.publicKey), vouch))) {
    throw new ProtocolError('signature-invalid', 'The vouch\'s signature does not verify');
  }
}
