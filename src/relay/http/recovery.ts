// Recovery on the machine (`tether host trust <code>`): the host, with a token only it can sign, asks
// which of its owner's devices a code from the app names. The relay answers the device as it holds
// it; the host takes the key only if the key's own thumbprint starts with the code the person typed
// (src/contracts/trust.ts recoveryCodeOf), so what the relay answers cannot swap the key.
import { Hono } from 'hono';
import { ProtocolError, recoveryPrefixOf, type RecoveryLookupResult } from '../../contracts/index.ts';
import { verifyHostToken } from '../auth/host-keys.ts';
import { bearerOf } from '../auth/tokens.ts';
import { devicesOf } from '../db/devices.ts';
import { findUser } from '../db/users.ts';
import type { Env } from '../env.ts';

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const recoveryApi = new Hono<{ Bindings: Env }>().get('/:hostId/:code', async (c) => {
  const token = bearerOf(c.req.raw);
  if (!token) throw new ProtocolError('unauthorized', 'A host token is required in the Authorization header');
  const identity = await verifyHostToken(c.env, token);
  if (identity.hostId !== c.req.param('hostId')) throw new ProtocolError('forbidden', 'Only the host itself may ask');
  const prefix = recoveryPrefixOf(c.req.param('code'));
  if (!prefix) throw new ProtocolError('bad-request', 'A recovery code is the 16 characters the app shows (four groups of four)');
  const device = (await devicesOf(c.env.DB, identity.ownerId)).find((d) => d.revoked === null && d.id.startsWith(prefix));
  if (!device) throw new ProtocolError('device-not-found', "The host's owner has no live device with that code");
  const owner = await findUser(c.env.DB, identity.ownerId);
  const result: RecoveryLookupResult = { userId: identity.ownerId, userName: owner?.name ?? '', device };
  return c.json(result);
});
