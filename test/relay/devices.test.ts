// The devices API in workerd with real D1: registering a key (idempotent, one person per key),
// cross-signing checked before it is kept, listing, renaming and revoking, and every refusal coded.
import { describe, expect, it } from 'vitest';
import {
  DEVICE_KEY_ALGORITHM,
  DeviceListResultSchema,
  DeviceRecordSchema,
  deviceIdOf,
  signStatement,
  type DevicePublicKey,
  type DeviceStatement,
} from '../../src/contracts/index.ts';
import { api, signIn, type Person } from './people.ts';

const unique = () => crypto.randomUUID().slice(0, 8);

async function newDevice(): Promise<{ keys: CryptoKeyPair; publicKey: DevicePublicKey; id: string }> {
  const keys = (await crypto.subtle.generateKey(DEVICE_KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const { x } = (await crypto.subtle.exportKey('jwk', keys.publicKey)) as JsonWebKey;
  const publicKey = { kty: 'OKP', crv: 'Ed25519', x: x! } as const;
  return { keys, publicKey, id: await deviceIdOf(publicKey) };
}

type Device = Awaited<ReturnType<typeof newDevice>>;

async function vouch(by: Device, person: Person, device: Device, name: string, over: Partial<DeviceStatement> = {}) {
  return signStatement(by.keys.privateKey, {
    kind: 'tether.device/1',
    userId: person.userId,
    device: { id: device.id, publicKey: device.publicKey, name },
    at: Date.now(),
    by: by.id,
    ...over,
  } as DeviceStatement);
}

describe('devices', () => {
  it('a person registers a first device, sees it listed with its thumbprint id, renames and revokes it', async () => {
    const ada = await signIn(`ada-${unique()}`);
    const laptop = await newDevice();
    const made = await api(ada, 'POST', '/api/devices', { name: 'Laptop', publicKey: laptop.publicKey });
    expect(made.status).toBe(201);
    expect(DeviceRecordSchema.parse(made.body)).toMatchObject({ id: laptop.id, name: 'Laptop', vouchedBy: null, vouch: null, revoked: null });

    // Registering the same key again is the same device, not a second one.
    expect((await api(ada, 'POST', '/api/devices', { name: 'Laptop again', publicKey: laptop.publicKey })).status).toBe(200);
    expect(DeviceListResultSchema.parse((await api(ada, 'GET', '/api/devices')).body).devices.map((d) => d.id)).toEqual([laptop.id]);

    expect((await api(ada, 'PATCH', `/api/devices/${laptop.id}`, { name: 'Work laptop' })).status).toBe(200);
    expect((await api(ada, 'DELETE', `/api/devices/${laptop.id}`)).status).toBe(200);
    const [listed] = DeviceListResultSchema.parse((await api(ada, 'GET', '/api/devices')).body).devices;
    expect(listed).toMatchObject({ id: laptop.id, name: 'Work laptop' });
    expect(listed.revoked).toBeTypeOf('number');

    // A revoked key never comes back.
    const again = await api(ada, 'POST', '/api/devices', { name: 'Laptop', publicKey: laptop.publicKey });
    expect(again).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  it('a second device brings a vouch its first device signed, and the relay keeps it', async () => {
    const ada = await signIn(`ada-${unique()}`);
    const [laptop, phone] = [await newDevice(), await newDevice()];
    await api(ada, 'POST', '/api/devices', { name: 'Laptop', publicKey: laptop.publicKey });
    const signed = await vouch(laptop, ada, phone, 'Phone');
    const made = await api(ada, 'POST', '/api/devices', { name: 'Phone', publicKey: phone.publicKey, vouch: signed });
    expect(made.status).toBe(201);
    expect(DeviceRecordSchema.parse(made.body)).toMatchObject({ id: phone.id, vouchedBy: laptop.id, vouch: signed });
  });

  it("a device that registered unvouched (waiting) is vouched for afterwards by another of the person's devices, once; a vouch that does not hold is refused and nothing kept", async () => {
    const ada = await signIn(`ada-${unique()}`);
    const bob = await signIn(`bob-${unique()}`);
    const [laptop, phone, stranger] = [await newDevice(), await newDevice(), await newDevice()];
    await api(ada, 'POST', '/api/devices', { name: 'Laptop', publicKey: laptop.publicKey });
    await api(ada, 'POST', '/api/devices', { name: 'Phone', publicKey: phone.publicKey });
    await api(bob, 'POST', '/api/devices', { name: 'Bob’s', publicKey: stranger.publicKey });
    const listed = async () => DeviceListResultSchema.parse((await api(ada, 'GET', '/api/devices')).body).devices.find((d) => d.id === phone.id)!;
    expect(await listed()).toMatchObject({ vouchedBy: null, vouch: null });

    // Refused, each with its code, and the phone still waits.
    const refusals = [
      [await vouch(laptop, ada, phone, 'Another name'), 'signature-invalid'],
      [await vouch(stranger, ada, phone, 'Phone'), 'signature-invalid'],
      [await vouch(phone, ada, phone, 'Phone'), 'signature-invalid'],
      [{ ...(await vouch(laptop, ada, phone, 'Phone')), sig: (await vouch(laptop, ada, laptop, 'Phone')).sig }, 'signature-invalid'],
    ] as const;
    for (const [body, code] of refusals) {
      expect((await api(ada, 'POST', `/api/devices/${phone.id}/vouch`, { vouch: body })).body.code).toBe(code);
    }
    expect((await api(bob, 'POST', `/api/devices/${phone.id}/vouch`, { vouch: await vouch(laptop, ada, phone, 'Phone') })).body.code).toBe('device-not-found');
    expect(await listed()).toMatchObject({ vouchedBy: null, vouch: null });

    const signed = await vouch(laptop, ada, phone, 'Phone');
    const done = await api(ada, 'POST', `/api/devices/${phone.id}/vouch`, { vouch: signed });
    expect(done.status).toBe(200);
    expect(DeviceRecordSchema.parse(done.body)).toMatchObject({ id: phone.id, vouchedBy: laptop.id, vouch: signed });
    expect(await listed()).toMatchObject({ vouchedBy: laptop.id, vouch: signed });
    // The first vouch stays.
    expect((await api(ada, 'POST', `/api/devices/${phone.id}/vouch`, { vouch: await vouch(laptop, ada, phone, 'Phone') })).body.code).toBe('bad-request');
  });

  it('refuses a vouch that does not hold, and keeps nothing', async () => {
    const [ada, bob] = [await signIn(`ada-${unique()}`), await signIn(`bob-${unique()}`)];
    const [laptop, phone, bobs] = [await newDevice(), await newDevice(), await newDevice()];
    await api(ada, 'POST', '/api/devices', { name: 'Laptop', publicKey: laptop.publicKey });
    await api(bob, 'POST', '/api/devices', { name: 'Bob', publicKey: bobs.publicKey });
    const cases = {
      'another person': await vouch(laptop, ada, phone, 'Phone', { userId: bob.userId }),
      'another key': await vouch(laptop, ada, bobs, 'Phone'),
      'another name': await vouch(laptop, ada, phone, 'Tablet'),
      'a device of someone else': await vouch(bobs, ada, phone, 'Phone'),
      'a device never registered': await vouch(phone, ada, phone, 'Phone'),
      'a forged signature': { ...(await vouch(laptop, ada, phone, 'Phone')), sig: (await vouch(laptop, ada, phone, 'Phone', { at: 1 })).sig },
    };
    for (const [what, signed] of Object.entries(cases)) {
      const reply = await api(ada, 'POST', '/api/devices', { name: 'Phone', publicKey: phone.publicKey, vouch: signed });
      expect(reply, what).toMatchObject({ status: 400, body: { code: 'signature-invalid' } });
    }
    expect(DeviceListResultSchema.parse((await api(ada, 'GET', '/api/devices')).body).devices.map((d) => d.id)).toEqual([laptop.id]);

    // A revoked device vouches for nothing.
    await api(ada, 'DELETE', `/api/devices/${laptop.id}`);
    const late = await api(ada, 'POST', '/api/devices', { name: 'Phone', publicKey: phone.publicKey, vouch: await vouch(laptop, ada, phone, 'Phone') });
    expect(late).toMatchObject({ status: 400, body: { code: 'signature-invalid', message: 'The vouching device was revoked' } });
  });

  it("one key belongs to one person; nobody sees, renames or revokes another's devices", async () => {
    const [ada, mallory] = [await signIn(`ada-${unique()}`), await signIn(`mallory-${unique()}`)];
    const laptop = await newDevice();
    await api(ada, 'POST', '/api/devices', { name: 'Laptop', publicKey: laptop.publicKey });
    expect(await api(mallory, 'POST', '/api/devices', { name: 'Mine', publicKey: laptop.publicKey })).toMatchObject({
      status: 409,
      body: { code: 'device-taken' },
    });
    expect((await api(mallory, 'GET', '/api/devices')).body).toEqual({ devices: [] });
    expect(await api(mallory, 'PATCH', `/api/devices/${laptop.id}`, { name: 'x' })).toMatchObject({ status: 404, body: { code: 'device-not-found' } });
    expect(await api(mallory, 'DELETE', `/api/devices/${laptop.id}`)).toMatchObject({ status: 404, body: { code: 'device-not-found' } });
    const [listed] = DeviceListResultSchema.parse((await api(ada, 'GET', '/api/devices')).body).devices;
    expect(listed).toMatchObject({ name: 'Laptop', revoked: null });
  });

  it('answers bad input with a coded 400 and a signed-out caller with 401', async () => {
    const ada = await signIn(`ada-${unique()}`);
    const laptop = await newDevice();
    expect(await api(null, 'GET', '/api/devices')).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    for (const body of [
      { name: '', publicKey: laptop.publicKey },
      { name: 'x'.repeat(101), publicKey: laptop.publicKey },
      { name: 'Laptop', publicKey: { ...laptop.publicKey, x: 'short' } },
      { name: 'Laptop', publicKey: { ...laptop.publicKey, d: 'A'.repeat(43) } },
      { name: 'Laptop', publicKey: { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43) } },
      { name: 'Laptop', publicKey: laptop.publicKey, vouch: { statement: {}, sig: 'x' } },
    ]) {
      expect(await api(ada, 'POST', '/api/devices', body), JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'bad-request' } });
    }
    expect(await api(ada, 'PATCH', `/api/devices/${laptop.id}`, { name: '  ' })).toMatchObject({ status: 400, body: { code: 'bad-request' } });
  });
});
