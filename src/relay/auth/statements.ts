// Who posted a signed trust statement: the relay takes a grant, vouch or revocation only from the
// person whose own live device signed it, so a client learns at once when its signing is broken and a
// person cannot post statements in another's name. This is the relay's courtesy check, not the
// machine's: every host checks each statement again against what it trusts (src/host/trust/book.ts).
import { ProtocolError, importDevicePublicKey, verifyStatement, type DeviceId, type Signed, type Statement } from '../../contracts/index.ts';
import { deviceById } from '../db/devices.ts';

/** Throws `signature-invalid` unless `by` is a live device of `userId` and its signature over the statement verifies. */
export async function requireSignedBy(d1: D1Database, userId: string, by: DeviceId, signed: Signed<Statement>): Promise<void> {
  const device = await deviceById(d1, by);
  if (!device || device.userId !== userId) throw new ProtocolError('signature-invalid', 'The signing device is not one of yours');
  if (device.device.revoked !== null) throw new ProtocolError('signature-invalid', 'The signing device was revoked');
  if (!(await verifyStatement(await importDevicePublicKey(device.device.publicKey), signed))) {
    throw new ProtocolError('signature-invalid', "The statement's signature does not verify");
  }
}
