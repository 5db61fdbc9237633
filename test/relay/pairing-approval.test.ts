// A pairing approved with a signature of the approving device (issue 15): the app looks up the
// pending pairing's host key, signs, and approves; the relay checks the approval before it keeps it
// and hands it to the host on its poll. A broken approval is refused and the pairing stays pending.
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair, signPairingApproval, type DeviceKey } from '../../src/client/device-key.ts';
import { PairPollResultSchema, signStatement, type PairingStatement } from '../../src/contracts/index.ts';
import { newHostKey } from '../../src/host/host-token.ts';
import { api, signIn, type Person } from './people.ts';

const unique = () => crypto.randomUUID().slice(0, 8);

async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await SELF.fetch(`http://relay.test${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'CF-Connecting-IP': `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function startPairing() {
  const key = await newHostKey();
  const started = await post('/api/pair/start', { name: 'studio', publicKey: key.publicJwk });
  return { key, deviceCode: started.body.deviceCode as string, userCode: started.body.userCode as string };
}

async function registeredDevice(person: Person): Promise<DeviceKey> {
  const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  expect((await api(person, 'POST', '/api/devices', { name: 'Browser', publicKey: key.publicKey })).status).toBe(201);
  return key;
}

describe('a signed pairing approval', () => {
  it('is looked up, signed by a registered device, kept, and handed to the host on its poll', async () => {
    const ada = await signIn(`ada-${unique()}`);
    const device = await registeredDevice(ada);
    const { key, deviceCode, userCode } = await startPairing();
    const looked = await api(ada, 'POST', '/api/pair/lookup', { userCode });
    expect(looked).toMatchObject({ status: 200, body: { name: 'studio', publicKey: key.publicJwk } });
    const approval = await signPairingApproval(device, { hostKey: looked.body.publicKey, userCode, userId: ada.userId, userName: 'Ada' });
    expect((await api(ada, 'POST', '/api/pair/approve', { userCode, approval })).status).toBe(200);
    const polled = PairPollResultSchema.parse((await post('/api/pair/poll', { deviceCode })).body);
    expect(polled).toMatchObject({ state: 'approved', approval });
  });

  it("is refused when it names another code, host key or person, or its device is not the approver's, and the pairing stays pending", async () => {
    const [ada, bob] = [await signIn(`ada-${unique()}`), await signIn(`bob-${unique()}`)];
    const device = await registeredDevice(ada);
    const bobs = await registeredDevice(bob);
    const unregistered = await deviceKeyOf(await newDeviceKeyPair(false), 0);
    const { key, deviceCode, userCode } = await startPairing();
    const other = await newHostKey();
    const base = { hostKey: key.publicJwk, userCode, userId: ada.userId, userName: 'Ada' };
    const good = await signPairingApproval(device, base);
    const cases: Record<string, unknown> = {
      'a swapped host key': await signPairingApproval(device, { ...base, hostKey: other.publicJwk }),
      'another code': await signPairingApproval(device, { ...base, userCode: 'ABCD-EFGH' }),
      'another person': await signPairingApproval(device, { ...base, userId: bob.userId }),
      "another person's device": await signPairingApproval(bobs, base),
      'an unregistered device': await signPairingApproval(unregistered, base),
      'a forged signature': { statement: good.statement, sig: (await signStatement(device.privateKey, { ...good.statement, at: 1 } as PairingStatement)).sig },
    };
    for (const [what, approval] of Object.entries(cases)) {
      expect(await api(ada, 'POST', '/api/pair/approve', { userCode, approval }), what).toMatchObject({ status: 400, body: { code: 'signature-invalid' } });
    }
    expect((await post('/api/pair/poll', { deviceCode })).body).toEqual({ state: 'pending' });
    // A device revoked in Settings approves nothing.
    await api(ada, 'DELETE', `/api/devices/${device.id}`);
    expect(await api(ada, 'POST', '/api/pair/approve', { userCode, approval: good })).toMatchObject({ status: 400, body: { code: 'signature-invalid' } });
  });

  it('lookup of a code nobody started is a coded not-found, and needs a signed-in person', async () => {
    const ada = await signIn(`ada-${unique()}`);
    expect(await api(ada, 'POST', '/api/pair/lookup', { userCode: 'ABCD-EFGH' })).toMatchObject({ status: 404, body: { code: 'pairing-not-found' } });
    expect(await api(null, 'POST', '/api/pair/lookup', { userCode: 'ABCD-EFGH' })).toMatchObject({ status: 401 });
  });
});
