// Signed trust statements in workerd with real D1 and the real HostLink: a grant an owner's device
// signed, a device vouch and signed revocations are checked (the caller's own device signed them and
// they say what the request says), kept in D1, and carried to the host over its link: each new one as
// it arrives, and every current one when the link connects. The recovery lookup answers the host's
// owner's device by its code, to the host alone.
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair, vouchFor, type DeviceKey } from '../../src/client/device-key.ts';
import { newGrantId, signGrant, signRevocation } from '../../src/client/trust.ts';
import { LinkTrustSchema, RecoveryLookupResultSchema, recoveryCodeOf, type SignedTrustStatement } from '../../src/contracts/index.ts';
import { FakeHost, OWNER, hostKey, until } from './peers.ts';
import { api, grant, signIn, team, type Person } from './people.ts';

const unique = () => crypto.randomUUID().slice(0, 8);

async function deviceOf(person: Person, name = 'sdk'): Promise<DeviceKey> {
  const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  const made = await api(person, 'POST', '/api/devices', { name, publicKey: key.publicKey });
  expect(made.status).toBe(201);
  return key;
}

/** The statements the host got over its link in trust frames, with whether they came as the whole set. */
function trustFrames(host: FakeHost): { all: boolean; statements: SignedTrustStatement[] }[] {
  return host.received
    .filter((f) => f.link === 'trust')
    .map((f) => {
      const { all, statements } = LinkTrustSchema.parse(f);
      return { all, statements: statements as SignedTrustStatement[] };
    });
}

async function ownedHost(): Promise<{ host: FakeHost; owner: Person; key: DeviceKey }> {
  const owner = await signIn(OWNER);
  const key = await deviceOf(owner, `owner-${unique()}`);
  const host = await new FakeHost(`host-trust-${unique()}`).connect();
  return { host, owner, key };
}

describe('signed trust statements on the relay', () => {
  it('a signed grant is kept under its own id, reaches the connected host at once, and again with everything when it reconnects', async () => {
    const { host, owner, key } = await ownedHost();
    const bob = await signIn(`bob-${unique()}`);
    const bobKey = await deviceOf(bob);
    const signed = await signGrant(key, {
      hostId: host.hostId,
      subject: { kind: 'user', userId: bob.userId },
      role: 'operator',
      devices: [{ userId: bob.userId, id: bobKey.id, publicKey: bobKey.publicKey }],
    });
    const made = await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'user', id: bob.userId }, role: 'operator', signed });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ id: signed.statement.grantId, role: 'operator' });
    // The relay's own grant holds too: bob reaches the host.
    expect((await api(bob, 'GET', '/api/hosts')).body.hosts.map((h: { id: string }) => h.id)).toContain(host.hostId);

    await until(() => trustFrames(host).length === 1, 'the grant on the link');
    expect(trustFrames(host)[0]).toEqual({ all: false, statements: [signed] });

    // A bob's second device, vouched by his first: carried to the host bob reaches now.
    const phone = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    const vouch = await vouchFor(bobKey, bob.userId, { id: phone.id, publicKey: phone.publicKey, name: 'phone' });
    expect((await api(bob, 'POST', '/api/devices', { name: 'phone', publicKey: phone.publicKey, vouch })).status).toBe(201);
    await until(() => trustFrames(host).length === 2, 'the vouch on the link');
    expect(trustFrames(host)[1]).toEqual({ all: false, statements: [vouch] });

    // The link connects again: every current statement, vouches first, then grants.
    host.disconnect();
    host.received.length = 0;
    await host.connect();
    await until(() => trustFrames(host).length === 1, 'the whole set on connect');
    expect(trustFrames(host)[0]).toEqual({ all: true, statements: [vouch, signed] });
    host.disconnect();
  });

  it('a signed revocation of a grant removes it, is kept, and reaches the host now and after a reconnect', async () => {
    const { host, owner, key } = await ownedHost();
    const bob = await signIn(`bob-${unique()}`);
    const signed = await signGrant(key, { hostId: host.hostId, subject: { kind: 'user', userId: bob.userId }, role: 'viewer', devices: [] });
    await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'user', id: bob.userId }, role: 'viewer', signed });
    const grantId = signed.statement.grantId;
    const revocation = await signRevocation(key, { hostId: host.hostId, target: { kind: 'grant', grantId } });
    const removed = await api(owner, 'DELETE', `/api/hosts/${host.hostId}/grants/${grantId}`, { revocation });
    expect(removed).toMatchObject({ status: 200, body: { removed: grantId } });
    expect((await api(bob, 'GET', '/api/hosts')).body.hosts.map((h: { id: string }) => h.id)).not.toContain(host.hostId);
    await until(() => trustFrames(host).some((f) => f.statements.some((s) => s.sig === revocation.sig)), 'the revocation on the link');

    // Signed again for a grant the relay no longer holds: kept once (the host may hold the grant).
    expect((await api(owner, 'DELETE', `/api/hosts/${host.hostId}/grants/${grantId}`, { revocation })).status).toBe(200);
    // Unsigned, for a grant that is gone: nothing to do.
    expect(await api(owner, 'DELETE', `/api/hosts/${host.hostId}/grants/${grantId}`)).toMatchObject({ status: 404, body: { code: 'grant-not-found' } });

    host.disconnect();
    host.received.length = 0;
    await host.connect();
    await until(() => trustFrames(host).length === 1, 'the whole set on connect');
    // The revoked grant is gone from the set; its revocation stays in it, once.
    expect(trustFrames(host)[0]).toEqual({ all: true, statements: [revocation] });
    host.disconnect();
  });

  it('a device revoked with a signature is revoked on every host its person reaches', async () => {
    const { host, owner } = await ownedHost();
    const bob = await signIn(`bob-${unique()}`);
    await grant(owner, host.hostId, { type: 'user', id: bob.userId }, 'operator');
    const [laptop, old] = [await deviceOf(bob, 'laptop'), await deviceOf(bob, 'old')];
    const revocation = await signRevocation(laptop, { hostId: null, target: { kind: 'device', deviceId: old.id } });
    expect((await api(bob, 'DELETE', `/api/devices/${old.id}`, { revocation })).status).toBe(200);
    await until(() => trustFrames(host).length === 1, 'the device revocation on the link');
    expect(trustFrames(host)[0]).toEqual({ all: false, statements: [revocation] });
    // A revocation that names another device, or a host, is refused and revokes nothing.
    const other = await deviceOf(bob, 'other');
    const wrong = await signRevocation(laptop, { hostId: host.hostId, target: { kind: 'device', deviceId: other.id } });
    expect(await api(bob, 'DELETE', `/api/devices/${other.id}`, { revocation: wrong })).toMatchObject({ status: 400, body: { code: 'bad-request' } });
    const elsewhere = await signRevocation(laptop, { hostId: null, target: { kind: 'device', deviceId: old.id } });
    expect(await api(bob, 'DELETE', `/api/devices/${other.id}`, { revocation: elsewhere })).toMatchObject({ status: 400, body: { code: 'bad-request' } });
    // Signed by a device that is not bob's: refused.
    const ownersKey = await deviceOf(owner, `o-${unique()}`);
    const notHis = await signRevocation(ownersKey, { hostId: null, target: { kind: 'device', deviceId: other.id } });
    expect(await api(bob, 'DELETE', `/api/devices/${other.id}`, { revocation: notHis })).toMatchObject({ status: 400, body: { code: 'signature-invalid' } });
    const listed = (await api(bob, 'GET', '/api/devices')).body.devices as { id: string; revoked: number | null }[];
    expect(listed.find((d) => d.id === other.id)?.revoked).toBeNull();

    host.disconnect();
    host.received.length = 0;
    await host.connect();
    await until(() => trustFrames(host).length === 1, 'the whole set on connect');
    expect(trustFrames(host)[0]!.statements.map((s) => s.sig)).toContain(revocation.sig);
    host.disconnect();
  });

  it("refuses a signed grant that says something else than the request, or that the caller's device did not sign, and keeps nothing", async () => {
    const { host, owner, key } = await ownedHost();
    const bob = await signIn(`bob-${unique()}`);
    const mallory = await signIn(`mallory-${unique()}`);
    const malloryKey = await deviceOf(mallory);
    const stranger = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    const base = { hostId: host.hostId, subject: { kind: 'user' as const, userId: bob.userId }, role: 'operator' as const, devices: [] };
    const body = (signed: unknown) => ({ subject: { type: 'user', id: bob.userId }, role: 'operator', signed });
    const forged = await signGrant(key, base);
    const cases: [string, unknown, string][] = [
      ['a higher role than asked', await signGrant(key, { ...base, role: 'owner' }), 'bad-request'],
      ['another host', await signGrant(key, { ...base, hostId: 'elsewhere' }), 'bad-request'],
      ['another person', await signGrant(key, { ...base, subject: { kind: 'user', userId: mallory.userId } }), 'bad-request'],
      ['one chat, asked for the host', await signGrant(key, { ...base, chatId: 'c1' }), 'bad-request'],
      ['an id the relay cannot keep', await signGrant(key, { ...base, grantId: 'g-1' }), 'bad-request'],
      ["someone else's device", await signGrant(malloryKey, base), 'signature-invalid'],
      ['an unregistered device', await signGrant(stranger, base), 'signature-invalid'],
      ['a forged signature', { ...forged, statement: { ...forged.statement, grantId: newGrantId() } }, 'signature-invalid'],
    ];
    for (const [what, signed, code] of cases) {
      expect(await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, body(signed)), what).toMatchObject({ status: 400, body: { code } });
    }
    expect((await api(owner, 'GET', `/api/hosts/${host.hostId}/grants`)).body.grants).toEqual([]);
    // Not an owner of the host: refused before anything is read.
    expect((await api(mallory, 'POST', `/api/hosts/${host.hostId}/grants`, body(await signGrant(malloryKey, base)))).status).toBe(403);
    expect(trustFrames(host)).toEqual([]);
    host.disconnect();
  });

  it("a signed team grant names the team's members as they are; a newer one for the same team replaces it", async () => {
    const { host, owner, key } = await ownedHost();
    const [ann, ben] = [await signIn(`ann-${unique()}`), await signIn(`ben-${unique()}`)];
    const teamId = await team(owner, `crew-${unique()}`, [ann]);
    const members = [owner.userId, ann.userId];
    const stale = await signGrant(key, { hostId: host.hostId, subject: { kind: 'team', teamId, members: [owner.userId] }, role: 'operator', devices: [] });
    expect(
      await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: teamId }, role: 'operator', signed: stale }),
    ).toMatchObject({ status: 409, body: { code: 'team-changed' } });
    const first = await signGrant(key, { hostId: host.hostId, subject: { kind: 'team', teamId, members }, role: 'operator', devices: [] });
    expect(
      (await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: teamId }, role: 'operator', signed: first })).status,
    ).toBe(201);

    // Ben joins; the owner signs the team's grant again with him in it: the relay keeps the newer one.
    const invitation = await api(owner, 'POST', `/api/teams/${teamId}/invitations`, { role: 'member' });
    await api(ben, 'POST', `/api/invitations/${invitation.body.token}/accept`);
    const again = await signGrant(key, {
      hostId: host.hostId,
      subject: { kind: 'team', teamId, members: [...members, ben.userId] },
      role: 'operator',
      devices: [],
    });
    expect(
      (await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: teamId }, role: 'operator', signed: again })).status,
    ).toBe(200);
    const grants = (await api(owner, 'GET', `/api/hosts/${host.hostId}/grants`)).body.grants as { id: string }[];
    expect(grants.map((g) => g.id)).toEqual([again.statement.grantId]);

    host.disconnect();
    host.received.length = 0;
    await host.connect();
    await until(() => trustFrames(host).length === 1, 'the whole set on connect');
    expect(trustFrames(host)[0]!.statements).toEqual([again]);
    host.disconnect();
  });

  it("lists another person's device keys without their names", async () => {
    const [ada, bob] = [await signIn(`ada-${unique()}`), await signIn(`bob-${unique()}`)];
    const key = await deviceOf(bob, "Bob's secret laptop name");
    const listed = await api(ada, 'GET', `/api/devices/of/${bob.userId}`);
    expect(listed.status).toBe(200);
    expect(listed.body.devices).toEqual([{ id: key.id, publicKey: key.publicKey, created: expect.any(Number), vouchedBy: null, vouch: null, revoked: null }]);
  });

  it("the recovery lookup answers the host's owner's live device by its code, to the host alone", async () => {
    const hostId = `host-recovery-${unique()}`;
    const ownerId = `owner-${unique()}`;
    const signer = await hostKey(hostId, ownerId);
    const owner = await signIn(ownerId);
    const fresh = await deviceOf(owner, 'new phone');
    const ask = async (code: string, token: string | null) => {
      const res = await SELF.fetch(`http://relay.test/v1/recovery/${hostId}/${encodeURIComponent(code)}`, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const found = await ask(recoveryCodeOf(fresh.id), await signer.sign());
    expect(found.status).toBe(200);
    expect(RecoveryLookupResultSchema.parse(found.body)).toMatchObject({ userId: ownerId, device: { id: fresh.id, publicKey: fresh.publicKey } });
    expect(await ask('AAAA-AAAA-AAAA-AAAA', await signer.sign())).toMatchObject({ status: 404, body: { code: 'device-not-found' } });
    expect(await ask('short', await signer.sign())).toMatchObject({ status: 400, body: { code: 'bad-request' } });
    // A person's token is no host token; another person's device is not the owner's.
    expect((await ask(recoveryCodeOf(fresh.id), owner.token)).status).toBe(401);
    const stranger = await deviceOf(await signIn(`x-${unique()}`));
    expect((await ask(recoveryCodeOf(stranger.id), await signer.sign())).status).toBe(404);
    // A revoked device is not recovered.
    await api(owner, 'DELETE', `/api/devices/${fresh.id}`);
    expect((await ask(recoveryCodeOf(fresh.id), await signer.sign())).status).toBe(404);
  });
});
