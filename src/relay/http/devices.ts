// The devices API (`/api/devices`): a person's device keys. Each client install registers the public
// half of its own Ed25519 key; a later device may bring a vouch, a statement an earlier device of the
// same person signed (cross-signing), which the relay checks before it keeps it. The person lists,
// renames and revokes their devices here (Settings). What counts on a machine is for its host to
// decide from the signed statements; this API only keeps them and says which devices were revoked.
//
// The hosts a person reaches hear of their devices from the signed statements alone: a vouch when the
// device registers, a signed revocation (RevocationStatement, by one of the person's own devices) when
// it is revoked. Both go to every host the person reaches now (db/grants.ts reachableHosts) and to any
// other with the rest of its statements when it connects. An owner names a teammate's devices in the
// grant it signs for them from `GET /api/devices/of/:userId` (public keys and vouches only).
import { Hono } from 'hono';
import {
  DEVICES_PER_USER,
  DeviceRegisterRequestSchema,
  DeviceRenameRequestSchema,
  DeviceVouchRequestSchema,
  ProtocolError,
  RevocationRequestSchema,
  deviceIdOf,
  importDevicePublicKey,
  verifyStatement,
  type DeviceListResult,
  type DeviceRecord,
  type DeviceStatement,
  type PeerDevice,
  type RevocationStatement,
  type Signed,
} from '../../contracts/index.ts';
import { requireSignedBy } from '../auth/statements.ts';
import { deviceById, devicesOf, insertDevice, liveDeviceCount, renameDevice, revokeDevice, vouchDevice } from '../db/devices.ts';
import { reachableHosts } from '../db/grants.ts';
import { insertRevocation } from '../db/trust.ts';
import { deliverTrust } from '../objects/host-link.ts';
import type { Env } from '../env.ts';
import { jsonBody, optionalJsonBody } from './body.ts';
import { requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const devicesApi = new Hono<App>()
  .use('*', requireUser)

  .get('/', async (c) => {
    const result: DeviceListResult = { devices: await devicesOf(c.env.DB, c.get('user').userId) };
    return c.json(result);
  })

  /** Another person's device keys (public halves and vouches), for the grant an owner signs for them. */
  .get('/of/:userId', async (c) => {
    const devices: PeerDevice[] = (await devicesOf(c.env.DB, c.req.param('userId'))).map(({ id, publicKey, created, vouchedBy, vouch, revoked }) => ({
      id,
      publicKey,
      created,
      vouchedBy,
      vouch,
      revoked,
    }));
    return c.json({ devices });
  })

  .post('/', jsonBody(DeviceRegisterRequestSchema), async (c) => {
    const { userId } = c.get('user');
    const body = c.req.valid('json');
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
      id,
      name: body.name,
      publicKey: body.publicKey,
      created,
      vouchedBy: body.vouch?.statement.by ?? null,
      vouch: body.vouch ?? null,
      revoked: null,
    };
    if (body.vouch) {
      const vouch = body.vouch;
      c.executionCtx.waitUntil(reachableHosts(c.env.DB, userId).then((hosts) => deliverTrust(c.env, hosts, [vouch])));
    }
    return c.json(device, 201);
  })

  /**
   * Cross-signing after the fact: a device that registered unvouched (a person's new browser, waiting
   * in Settings) gets its vouch from another live device of the same person, over its key and name as
   * listed. The hosts the person reaches hear of it as of a vouch given at registration.
   */
  .post('/:id/vouch', jsonBody(DeviceVouchRequestSchema), async (c) => {
    const { userId } = c.get('user');
    const id = c.req.param('id');
    const { vouch } = c.req.valid('json');
    const held = await deviceById(c.env.DB, id);
    if (!held || held.userId !== userId) throw new ProtocolError('device-not-found', 'No such device of yours');
    if (held.device.revoked !== null) throw new ProtocolError('forbidden', 'That device was revoked; a revoked key never comes back');
    if (held.device.vouchedBy !== null) throw new ProtocolError('bad-request', 'That device is vouched for already');
    if (vouch.statement.by === id) throw new ProtocolError('signature-invalid', 'A device cannot vouch for itself');
    await checkVouch(c.env.DB, userId, id, held.device, vouch);
    if (!(await vouchDevice(c.env.DB, userId, id, vouch)))
      throw new ProtocolError('bad-request', 'That device is vouched for already, or was revoked meanwhile');
    c.executionCtx.waitUntil(reachableHosts(c.env.DB, userId).then((hosts) => deliverTrust(c.env, hosts, [vouch])));
    const device: DeviceRecord = { ...held.device, vouchedBy: vouch.statement.by, vouch };
    return c.json(device);
  })

  .patch('/:id', jsonBody(DeviceRenameRequestSchema), async (c) => {
    const { name } = c.req.valid('json');
    if (!(await renameDevice(c.env.DB, c.get('user').userId, c.req.param('id'), name))) {
      throw new ProtocolError('device-not-found', 'No such device of yours');
    }
    return c.json({ ok: true });
  })

  // A body is optional: the signed revocation of a device that signs.
  .delete('/:id', optionalJsonBody(RevocationRequestSchema), async (c) => {
    const { userId } = c.get('user');
    const id = c.req.param('id');
    const { revocation } = c.req.valid('json');
    if (revocation) await checkDeviceRevocation(c.env.DB, userId, id, revocation);
    if (!(await revokeDevice(c.env.DB, userId, id, Date.now()))) {
      throw new ProtocolError('device-not-found', 'No such device of yours');
    }
    if (revocation) {
      await insertRevocation(c.env.DB, revocation, userId, Date.now());
      c.executionCtx.waitUntil(reachableHosts(c.env.DB, userId).then((hosts) => deliverTrust(c.env, hosts, [revocation])));
    }
    return c.json({ ok: true });
  });

/**
 * A signed device revocation names this device and no host (a device is revoked everywhere), and one
 * of the caller's own live devices signed it (the device itself may sign its own revocation).
 */
async function checkDeviceRevocation(d1: D1Database, userId: string, id: string, signed: Signed<RevocationStatement>): Promise<void> {
  const { statement } = signed;
  if (statement.target.kind !== 'device' || statement.target.deviceId !== id || statement.hostId !== null) {
    throw new ProtocolError('bad-request', 'The signed revocation names another device than the request, or a host');
  }
  await requireSignedBy(d1, userId, statement.by, signed);
}

/**
 * A vouch counts only when it names this person and exactly this key, and an earlier live device of
 * the same person signed it; anything else is refused rather than stored unvouched, so a client
 * learns its cross-signing is broken.
 */
async function checkVouch(
  d1: D1Database,
  userId: string,
  id: string,
  body: { name: string; publicKey: DeviceRecord['publicKey'] },
  vouch: Signed<DeviceStatement>,
): Promise<void> {
  const { statement } = vouch;
  if (statement.userId !== userId || statement.device.id !== id || statement.device.publicKey.x !== body.publicKey.x || statement.device.name !== body.name) {
    throw new ProtocolError('signature-invalid', 'The vouch names another person, key or name');
  }
  const voucher = await deviceById(d1, statement.by);
  if (!voucher || voucher.userId !== userId) throw new ProtocolError('signature-invalid', 'The vouching device is not one of yours');
  if (voucher.device.revoked !== null) throw new ProtocolError('signature-invalid', 'The vouching device was revoked');
  if (!(await verifyStatement(await importDevicePublicKey(voucher.device.publicKey), vouch))) {
    throw new ProtocolError('signature-invalid', "The vouch's signature does not verify");
  }
}
