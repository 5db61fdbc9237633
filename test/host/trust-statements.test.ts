// The host's trust book fed with signed statements, as the relay carries them: the cascades (an owner
// grant revoked withdraws what that owner signed unless another owner co-signed it; a device revoked
// withdraws the devices it vouched for), grants superseded by newer ones (a role lowered, a team's
// members re-signed) and never rolled back by a replay, every accepted statement kept in the data
// folder and the same book rebuilt after a restart, refusals audited with {code, message}, a revoked
// person's queued send taken back by the host itself, and recovery by a code checked against the key.
// Real Ed25519 keys, a real HostCore (scripted provider) and real files throughout; the relay's
// recovery answer is a stand-in function here (the real one is in test/relay and the e2e).
import { readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair, signRequest, vouchFor, type DeviceKey } from '../../src/client/device-key.ts';
import { signGrant, signRevocation } from '../../src/client/trust.ts';
import { recoveryCodeOf, signStatement, type AccessRole, type GrantStatement } from '../../src/contracts/index.ts';
import type { HostCore, ReplyFrame } from '../../src/host/chats/core.ts';
import { newHostKey } from '../../src/host/identity.ts';
import { HostAudit, readAudit } from '../../src/host/trust/audit.ts';
import { TrustBook } from '../../src/host/trust/book.ts';
import { TrustIntake } from '../../src/host/trust/intake.ts';
import { openGate } from '../../src/host/trust/open.ts';
import { writePinnedOwner } from '../../src/host/trust/pinned.ts';
import { recoverByCode } from '../../src/host/trust/recover.ts';
import { trustStatementsFile } from '../../src/host/trust/store.ts';
import { openCore, tempDir, until } from './harness.ts';

const HOST = 'host-trust';
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const device = async (): Promise<DeviceKey> => deviceKeyOf(await newDeviceKeyPair(false), Date.now());
const ownerOf = (key: DeviceKey) => ({ userId: 'ada', name: 'Ada', device: { id: key.id, publicKey: key.publicKey } });

let clock = 1_800_000_000_000;
/** A grant signed at a later time than every one before, so supersession follows the order of the test. */
function grant(
  by: DeviceKey,
  grantId: string,
  role: AccessRole,
  subject: GrantStatement['subject'],
  people: Array<[string, DeviceKey]>,
  chatId: string | null = null,
) {
  return signGrant(
    by,
    {
      hostId: HOST,
      grantId: `g_${grantId.padEnd(16, '0')}`,
      chatId,
      subject,
      role,
      devices: people.map(([userId, key]) => ({ userId, id: key.id, publicKey: key.publicKey })),
    },
    ++clock,
  );
}
const gid = (grantId: string) => `g_${grantId.padEnd(16, '0')}`;

async function book(): Promise<{ owner: DeviceKey; book: TrustBook }> {
  const owner = await device();
  return { owner, book: await TrustBook.open(HOST, ownerOf(owner)) };
}

describe("the trust book's cascades", () => {
  it('revoking an owner grant withdraws the grants that owner signed, unless another counting owner signed them too', async () => {
    const { owner, book: trust } = await book();
    const [carol, dan, eve] = [await device(), await device(), await device()];
    expect(await trust.addGrant(await grant(owner, 'carol', 'owner', { kind: 'user', userId: 'carol' }, [['carol', carol]]))).toMatchObject({ ok: true });
    // Carol, an owner now, shares with dan and eve.
    expect(await trust.addGrant(await grant(carol, 'dan', 'operator', { kind: 'user', userId: 'dan' }, [['dan', dan]]))).toMatchObject({ ok: true });
    const forEve = await grant(carol, 'eve', 'operator', { kind: 'user', userId: 'eve' }, [['eve', eve]]);
    expect(await trust.addGrant(forEve)).toMatchObject({ ok: true });
    // Ada co-signs eve's grant: the same grant, signed by her own device.
    expect(await trust.addGrant(await signStatement(owner.privateKey, { ...forEve.statement, by: owner.id, at: ++clock }))).toMatchObject({
      ok: true,
      changed: true,
    });
    expect([trust.roleOf('dan', null), trust.roleOf('eve', null)]).toEqual(['operator', 'operator']);

    expect(await trust.addRevocation(await signRevocation(owner, { hostId: HOST, target: { kind: 'grant', grantId: gid('carol') } }))).toMatchObject({
      ok: true,
    });
    expect(trust.roleOf('carol', null)).toBeNull();
    expect(trust.roleOf('dan', null)).toBeNull();
    expect(trust.device(dan.id)).toBeNull();
    expect(trust.roleOf('eve', null)).toBe('operator');
    expect(trust.device(eve.id)?.userId).toBe('eve');
    // Carol signs nothing more here.
    expect(await trust.addGrant(await grant(carol, 'mal', 'owner', { kind: 'user', userId: 'mal' }, []))).toMatchObject({
      ok: false,
      code: 'signature-invalid',
    });
  });

  it('revoking a device withdraws the devices it vouched for, unless another counting device vouched for them', async () => {
    const { owner, book: trust } = await book();
    const [laptop, desk, phone, tablet] = [await device(), await device(), await device(), await device()];
    await trust.addGrant(
      await grant(owner, 'bob', 'operator', { kind: 'user', userId: 'bob' }, [
        ['bob', laptop],
        ['bob', desk],
      ]),
    );
    expect(await trust.addDevice(await vouchFor(laptop, 'bob', { id: phone.id, publicKey: phone.publicKey, name: 'phone' }))).toMatchObject({ ok: true });
    expect(await trust.addDevice(await vouchFor(phone, 'bob', { id: tablet.id, publicKey: tablet.publicKey, name: 'tablet' }))).toMatchObject({ ok: true });
    expect(await trust.addDevice(await vouchFor(desk, 'bob', { id: tablet.id, publicKey: tablet.publicKey, name: 'tablet' }))).toMatchObject({ ok: true });
    expect([phone, tablet].map((k) => trust.device(k.id)?.via)).toEqual(['vouch', 'vouch']);

    // Bob revokes his laptop from his desk: the phone hung on the laptop alone; the tablet also on the desk.
    expect(await trust.addRevocation(await signRevocation(desk, { hostId: null, target: { kind: 'device', deviceId: laptop.id } }))).toMatchObject({
      ok: true,
    });
    expect(trust.device(laptop.id)).toBeNull();
    expect(trust.device(phone.id)).toBeNull();
    expect(trust.device(tablet.id)?.userId).toBe('bob');
    // A vouch for someone else's person, or by a withdrawn device, adds nothing.
    const other = await device();
    expect(await trust.addDevice(await vouchFor(phone, 'bob', { id: other.id, publicKey: other.publicKey, name: 'x' }))).toMatchObject({
      ok: false,
      code: 'signature-invalid',
    });
    expect(await trust.addDevice(await vouchFor(tablet, 'ada', { id: other.id, publicKey: other.publicKey, name: 'x' }))).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
  });

  it('a newer grant for the same person and scope supersedes the older; the older is never taken back', async () => {
    const { owner, book: trust } = await book();
    const bob = await device();
    const high = await grant(owner, 'bob-1', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]]);
    const low = await grant(owner, 'bob-2', 'viewer', { kind: 'user', userId: 'bob' }, [['bob', bob]]);
    await trust.addGrant(high);
    expect(await trust.addGrant(low)).toMatchObject({ ok: true, changed: true });
    expect(trust.roleOf('bob', null)).toBe('viewer');
    // A relay replaying the operator grant does not raise him again.
    expect(await trust.addGrant(high)).toMatchObject({
      ok: false,
      code: 'forbidden',
      message: 'A newer grant for the same person and scope replaced that one',
    });
    const older = await signStatement(owner.privateKey, { ...high.statement, grantId: gid('bob-0'), at: high.statement.at - 10 });
    expect(await trust.addGrant(older)).toMatchObject({ ok: false, message: 'This host holds a newer grant for the same person and scope' });
    expect(trust.roleOf('bob', null)).toBe('viewer');
    // Another scope is another grant: one chat's grant stands beside the host-wide one.
    await trust.addGrant(await grant(owner, 'bob-c', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]], 'c1'));
    expect([trust.roleOf('bob', null), trust.roleOf('bob', 'c1'), trust.roleOf('bob', 'c2')]).toEqual(['viewer', 'operator', 'viewer']);
    // One id, two sets of terms: refused.
    const reused = await signStatement(owner.privateKey, { ...low.statement, role: 'owner', at: ++clock });
    expect(await trust.addGrant(reused)).toMatchObject({ ok: false, code: 'bad-request', message: 'That grant id names another grant' });
  });

  it("a team grant follows the members the owner last signed, not the relay's team", async () => {
    const { owner, book: trust } = await book();
    const [cy, dee] = [await device(), await device()];
    await trust.addGrant(await grant(owner, 'team-1', 'operator', { kind: 'team', teamId: 't1', members: ['cy'] }, [['cy', cy]]));
    expect([trust.roleOf('cy', null), trust.roleOf('dee', null)]).toEqual(['operator', null]);
    // Dee joined and Cy left; the owner signs the team's grant again with the members as they are now.
    await trust.addGrant(await grant(owner, 'team-2', 'operator', { kind: 'team', teamId: 't1', members: ['dee'] }, [['dee', dee]]));
    expect([trust.roleOf('cy', null), trust.roleOf('dee', null)]).toEqual([null, 'operator']);
    expect(trust.device(cy.id)).toBeNull();
    // A grant naming a key as the pinned owner's does not hand that key the owner's rights.
    const fake = await device();
    await trust.addGrant(await grant(owner, 'team-3', 'viewer', { kind: 'team', teamId: 't2', members: ['ada', 'dee'] }, [['ada', fake]]));
    expect(trust.device(fake.id)).toBeNull();
  });
});

describe('the host keeps what it accepted', () => {
  it('writes accepted statements to its data folder (0600), audits refusals with their code and message, and rebuilds the same book after a restart', async () => {
    const { dir, cleanup } = tempDir('tether-trust-');
    cleanups.push(cleanup);
    const owner = await device();
    const [bob, phone, eve] = [await device(), await device(), await device()];
    const audit = HostAudit.open(dir);
    cleanups.push(() => audit.close());
    const intake = await TrustIntake.open({ book: await TrustBook.open(HOST, ownerOf(owner)), dataDir: dir, audit, log });
    const forBob = await grant(owner, 'bob', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]]);
    const forEve = await grant(owner, 'eve', 'operator', { kind: 'user', userId: 'eve' }, [['eve', eve]]);
    const vouch = await vouchFor(bob, 'bob', { id: phone.id, publicKey: phone.publicKey, name: 'phone' });
    const byEve = await grant(eve, 'eve-2', 'owner', { kind: 'user', userId: 'eve' }, []);
    const raised = { ...forBob, statement: { ...forBob.statement, role: 'owner' as const } };
    // The vouch comes before the grant that makes its voucher count: taken all the same.
    await intake.take([vouch, forBob, forEve, byEve, raised, { junk: true }]);
    await intake.take([await signRevocation(owner, { hostId: HOST, target: { kind: 'grant', grantId: gid('eve') } })]);
    expect(intake.book.device(phone.id)?.userId).toBe('bob');
    expect(intake.book.roleOf('eve', null)).toBeNull();
    expect(statSync(trustStatementsFile(dir)).mode & 0o777).toBe(0o600);

    const lines = readAudit(dir).entries.map((e) => [e.type, e.outcome, e.code ?? null, e.userId, e.message ?? null]);
    // In the order decided: what is no statement at once, the grants, the vouch on the second pass,
    // then what still fails once nothing more is accepted.
    expect(lines).toEqual([
      ['trust.statement', 'refused', 'bad-request', null, 'Not a signed grant, device vouch or revocation'],
      ['trust.grant', 'done', null, 'ada', null],
      ['trust.grant', 'done', null, 'ada', null],
      ['trust.device', 'done', null, 'bob', null],
      ['trust.grant', 'refused', 'forbidden', null, 'Only an owner of this host signs grants'],
      ['trust.grant', 'refused', 'bad-request', null, 'That grant id names another grant'],
      ['trust.revocation', 'done', null, 'ada', null],
    ]);
    // The same set again (the relay sends it on every connect): nothing new kept, nothing new audited.
    const kept = readFileSync(trustStatementsFile(dir), 'utf8');
    await intake.take([vouch, forBob, byEve, raised]);
    expect(readFileSync(trustStatementsFile(dir), 'utf8')).toBe(kept);
    expect(readAudit(dir).entries).toHaveLength(lines.length);

    // A restart: a fresh book from the same folder believes the same, the revocation's cascade included.
    const again = await TrustIntake.open({ book: await TrustBook.open(HOST, ownerOf(owner)), dataDir: dir, audit, log });
    expect(again.book.device(phone.id)?.userId).toBe('bob');
    expect([again.book.roleOf('bob', null), again.book.roleOf('eve', null)]).toEqual(['operator', null]);
    // And the revoked grant stays revoked whatever the relay sends after the restart.
    await again.take([forEve]);
    expect(again.book.roleOf('eve', null)).toBeNull();
  });

  it("a revoked person's queued send is taken back by the host itself, and the relay's unsigned take-back is refused", async () => {
    const { dir, cleanup } = tempDir('tether-trust-queue-');
    cleanups.push(cleanup);
    const core: HostCore = await openCore(dir);
    cleanups.push(() => core.close());
    core.connect('relay', () => undefined, { allChats: true });
    const owner = await device();
    const bob = await device();
    writePinnedOwner(dir, { hostId: HOST, owner: ownerOf(owner), pinnedAt: 1 });
    const serveOwn = (frame: unknown): Promise<ReplyFrame> => core.serve(frame, 'relay');
    const { gate, intake, close } = await openGate(core, dir, { signatures: { require: true, allowUnsigned: [] } }, HOST, log, serveOwn);
    cleanups.push(close);
    const serve = async (key: DeviceKey, frame: { id: string; type: string; payload: unknown }) =>
      gate.serve({ ...frame, signature: await signRequest(key, frame, { hostId: HOST }) }, serveOwn);

    expect(await serve(owner, { id: 'c-1', type: 'chat.create', payload: { chatId: 'c1' } })).toMatchObject({ ok: true });
    await intake!.take([await grant(owner, 'bob', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]])]);
    // Ada's turn waits for an approval; bob's send queues behind it.
    expect(await serve(owner, { id: 's-1', type: 'chat.send', payload: { chatId: 'c1', text: 'approve' } })).toMatchObject({ ok: true });
    await until(() => core.session('c1').pendingRequests().length > 0, 'the approval');
    const queued = await serve(bob, { id: 's-2', type: 'chat.send', payload: { chatId: 'c1', text: 'bob later' } });
    expect(queued).toMatchObject({ ok: true, result: { queued: true } });
    expect(core.session('c1').info.queue?.map((m) => m.text)).toEqual(['bob later']);

    // The relay's own take-back, unsigned: refused like any unsigned request.
    const messageId = core.session('c1').info.queue![0]!.id;
    expect(await gate.serve({ id: 'u-1', type: 'chat.unqueue', payload: { chatId: 'c1', messageId }, by: 'bob' }, serveOwn)).toMatchObject({
      ok: false,
      error: { code: 'signature-required' },
    });
    expect(core.session('c1').info.queue).toHaveLength(1);

    // The owner's signed revocation of bob's grant: the host takes his queued send back itself.
    await intake!.take([await signRevocation(owner, { hostId: HOST, target: { kind: 'grant', grantId: gid('bob') } })]);
    expect(core.session('c1').info.queue ?? []).toEqual([]);
    const takeBack = readAudit(dir).entries.find((e) => e.type === 'chat.unqueue' && e.outcome === 'done');
    expect(takeBack).toMatchObject({ userId: 'bob', device: bob.id, chatId: 'c1', message: expect.stringContaining('Taken back by this host') });
  });
});

describe('recovery on the machine', () => {
  it("trusts the owner's new device only when the key the relay answers matches the code, and records it", async () => {
    const { dir, cleanup } = tempDir('tether-trust-recover-');
    cleanups.push(cleanup);
    const [owner, fresh, swapped] = [await device(), await device(), await device()];
    writePinnedOwner(dir, { hostId: HOST, owner: ownerOf(owner), pinnedAt: 1 });
    const key = await newHostKey();
    const identity = { relayUrl: 'http://127.0.0.1:9', hostId: HOST, privateJwk: key.privateJwk, publicJwk: key.publicJwk };
    const relayAnswers = (answer: DeviceKey, userId = 'ada') =>
      (async () =>
        new Response(
          JSON.stringify({
            userId,
            userName: 'Ada',
            device: { id: answer.id, name: 'new phone', publicKey: answer.publicKey, created: 1, vouchedBy: null, vouch: null, revoked: null },
          }),
          { status: 200 },
        )) as unknown as typeof fetch;
    const audit = HostAudit.open(dir);
    cleanups.push(() => audit.close());
    const intake = await TrustIntake.open({ book: await TrustBook.open(HOST, ownerOf(owner)), dataDir: dir, audit, log });

    // The relay hands over another key for the code: refused, nothing kept.
    await expect(recoverByCode({ dataDir: dir, identity, code: recoveryCodeOf(fresh.id), fetch: relayAnswers(swapped) })).rejects.toThrow(
      /does not match the code/,
    );
    await expect(recoverByCode({ dataDir: dir, identity, code: recoveryCodeOf(fresh.id), fetch: relayAnswers(fresh, 'mallory') })).rejects.toThrow(
      /owner is ada/,
    );
    await expect(recoverByCode({ dataDir: dir, identity, code: 'not a code', fetch: relayAnswers(fresh) })).rejects.toThrow(/16 characters/);
    await intake.pickUpStore();
    expect(intake.book.device(swapped.id)).toBeNull();

    const done = await recoverByCode({ dataDir: dir, identity, code: recoveryCodeOf(fresh.id), fetch: relayAnswers(fresh) });
    expect(done).toMatchObject({ added: true, recovered: { userId: 'ada', device: { id: fresh.id } } });
    // The running host picks it up from its store; the audit (written by the command, chained on) says so.
    await intake.pickUpStore();
    expect(intake.book.device(fresh.id)).toMatchObject({ userId: 'ada', via: 'recovered' });
    audit.record({
      at: 1,
      type: 'chat.send',
      id: 'after',
      chatId: null,
      outcome: 'done',
      userId: null,
      device: null,
      signedAt: null,
      payload: null,
      relaySays: null,
    });
    const reading = readAudit(dir);
    expect(reading.broken).toBeNull();
    expect(reading.entries.map((e) => [e.type, e.device])).toEqual([
      ['trust.recover', fresh.id],
      ['chat.send', null],
    ]);
    expect((await recoverByCode({ dataDir: dir, identity, code: recoveryCodeOf(fresh.id), fetch: relayAnswers(fresh) })).added).toBe(false);
  });
});
