// Roles the machine can verify, end to end: the real relay (wrangler dev), a real `tether host` that
// requires signatures, its owner pinned by a signed pairing approval, and people on the SDK with their
// own device keys. The owner shares by signed grants (src/client/trust.ts), the relay keeps them and
// carries them to the host, and the host decides from what it verified: a teammate with a signed
// operator grant and a team member are carried out; a viewer is refused by the host even once the
// relay's own grant says operator; after the owner's signed revocation the teammate is refused though
// the relay is made to forward again; a second device added by cross-signing is accepted; a device
// nobody vouched for is refused until its person trusts it on the machine by its code
// (`tether host trust`). The host's own audit says each.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryTokenStore, RelayApi, RelaySocket, relayPaths } from '../../src/client/index.ts';
import { deviceKeyOf, newDeviceKeyPair, signPairingApproval, signRequest, type DeviceKey } from '../../src/client/device-key.ts';
import { addDeviceByCrossSigning, revokeGrantSigned, shareSigned } from '../../src/client/trust.ts';
import { recoveryCodeOf, shortFingerprint } from '../../src/contracts/index.ts';
import { readAudit } from '../../src/host/trust/audit.ts';
import { until } from '../support/until.ts';
import { HostProcess, personId, relayUrl, userToken } from './peers.ts';

const OWNER = 'trust-owner';
const MATE = 'trust-mate';
const VIEWER = 'trust-viewer';
const CREW = 'trust-crew';
const CHAT = 'trust-chat';
const host = new HostProcess('e2e-trust-host', OWNER);
const closers: Array<() => void> = [];
const root = path.resolve(import.meta.dirname, '../..');

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) close();
  await host.stop();
});

interface Person {
  label: string;
  id: string;
  api: RelayApi;
  key: DeviceKey;
}

async function apiOf(label: string): Promise<RelayApi> {
  return new RelayApi(relayUrl(), {
    tokens: new MemoryTokenStore({ sessionId: 'e2e', refreshToken: 'unused', accessToken: await userToken(label), expiresAt: Date.now() + 600_000 }),
  });
}

const newKey = async (): Promise<DeviceKey> => deviceKeyOf(await newDeviceKeyPair(false), Date.now());

/** A person with a first device registered at the relay (no vouch). */
async function person(label: string): Promise<Person> {
  const api = await apiOf(label);
  const key = await newKey();
  await api.registerDevice({ name: `${label} sdk`, publicKey: key.publicKey });
  return { label, id: await personId(label), api, key };
}

let sent = 0;
/** A chat.send signed by `key`, on the person's own chat socket; answers the reply frame. */
async function signedSend(who: Person, key: DeviceKey, text: string): Promise<{ ok: boolean; error?: { code: string; message: string } }> {
  const socket = new RelaySocket(relayPaths.chat(relayUrl(), host.hostId, CHAT), await userToken(who.label));
  closers.push(() => socket.close());
  await socket.opened;
  const frame = { id: `trust-send-${++sent}`, type: 'chat.send', payload: { chatId: CHAT, text } };
  const signature = await signRequest(key, frame, { hostId: host.hostId });
  const reply = new Promise<any>((resolve) =>
    socket.onFrame((f: any) => {
      if (f.id === frame.id && 'ok' in f) resolve(f);
    }),
  );
  socket.send({ ...frame, signature } as never);
  return reply;
}

/** Waits until the host's own audit has a line that `match` picks (what the host decided, not the relay). */
async function audited(match: (e: ReturnType<typeof readAudit>['entries'][number]) => boolean, what: string): Promise<void> {
  await until(() => readAudit(host.dataDir).entries.some(match), `the host's audit to say: ${what}`, {
    ms: 20_000,
    every: 50,
    detail: () => host.output.slice(-3000),
  });
}

const lastSend = () =>
  readAudit(host.dataDir)
    .entries.filter((e) => e.type === 'chat.send')
    .at(-1)!;

describe('signed grants, vouches and revocations through the relay to a host that requires them', () => {
  it('the host follows what the owner signed, and only that', async () => {
    const [owner, mate, viewer, crew] = [await person(OWNER), await person(MATE), await person(VIEWER), await person(CREW)];

    writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({ signatures: { require: true } }));
    host.approveWith = async (userCode) => {
      const pending = await owner.api.lookupPairing(userCode);
      const me = await owner.api.me();
      const approval = await signPairingApproval(owner.key, { hostKey: pending.publicKey, userCode, userId: me.id, userName: me.name });
      await owner.api.call('POST', '/api/pair/approve', { userCode, approval });
    };
    await host.start();
    const created = await signedCreate(owner);
    expect(created).toMatchObject({ ok: true });

    // A teammate with a signed operator grant: the host carries out his signed send.
    const mateGrant = await shareSigned(owner.api, owner.key, host.hostId, { subject: { type: 'user', id: mate.id }, role: 'operator' });
    await audited((e) => e.type === 'trust.grant' && e.id === mateGrant.id && e.outcome === 'done', "the teammate's grant accepted");
    expect(await signedSend(mate, mate.key, 'hello from the teammate')).toMatchObject({ ok: true });
    expect(lastSend()).toMatchObject({ outcome: 'done', userId: mate.id, device: mate.key.id });

    // A viewer: the owner signs viewer, then the relay's own grant is made operator (unsigned, as a
    // relay that raised it would have it): the relay forwards the viewer's send, the host refuses it.
    const viewerGrant = await shareSigned(owner.api, owner.key, host.hostId, { subject: { type: 'user', id: viewer.id }, role: 'viewer' });
    await audited((e) => e.type === 'trust.grant' && e.id === viewerGrant.id && e.outcome === 'done', "the viewer's grant accepted");
    await owner.api.grant(host.hostId, { subject: { type: 'user', id: viewer.id }, role: 'operator' });
    expect(await signedSend(viewer, viewer.key, 'a viewer trying to send')).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(lastSend()).toMatchObject({ outcome: 'refused', code: 'forbidden', userId: null });

    // A team grant: the team's members as they are now, signed; a member's send is carried out.
    const team = await owner.api.createTeam('trust crew');
    const invitation = await owner.api.invite(team.id, { role: 'member' });
    await crew.api.acceptInvitation(invitation.token);
    const teamGrant = await shareSigned(owner.api, owner.key, host.hostId, { subject: { type: 'team', id: team.id }, role: 'operator' });
    await audited((e) => e.type === 'trust.grant' && e.id === teamGrant.id && e.outcome === 'done', "the team's grant accepted");
    expect(await signedSend(crew, crew.key, 'hello from the crew')).toMatchObject({ ok: true });
    expect(lastSend()).toMatchObject({ outcome: 'done', userId: crew.id });

    // The owner revokes the teammate's grant with a signature; the relay is then made to forward his
    // sends again (an unsigned grant of its own): the host refuses him all the same.
    await revokeGrantSigned(owner.api, owner.key, host.hostId, mateGrant.id);
    await audited((e) => e.type === 'trust.revocation' && e.id === `grant:${mateGrant.id}` && e.outcome === 'done', 'the revocation accepted');
    await owner.api.grant(host.hostId, { subject: { type: 'user', id: mate.id }, role: 'operator' });
    // His device counted only through the revoked grant: the host follows it to nobody now.
    expect(await signedSend(mate, mate.key, 'after the revocation')).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    expect(lastSend()).toMatchObject({ outcome: 'refused', userId: null });

    // A second device of the owner, added by cross-signing from the first: the host follows the vouch.
    const second = await newKey();
    await addDeviceByCrossSigning(owner.api, owner.key, second, 'owner second', owner.id);
    await audited((e) => e.type === 'trust.device' && e.id === second.id && e.outcome === 'done', 'the vouch accepted');
    expect(await signedSend(owner, second, 'from the second device')).toMatchObject({ ok: true });
    expect(lastSend()).toMatchObject({ outcome: 'done', userId: owner.id, device: second.id });

    // A device nobody vouched for (the owner lost the others): refused, until trusted on the machine by its code.
    const lost = await newKey();
    await owner.api.registerDevice({ name: 'owner new phone', publicKey: lost.publicKey });
    expect(await signedSend(owner, lost, 'before recovery')).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(root, 'bin', 'tether.js'), 'host', 'trust', recoveryCodeOf(lost.id), '--data', host.dataDir],
      { cwd: root },
    );
    expect(stdout).toContain(shortFingerprint(lost.id));
    expect(stdout).toContain(owner.id);
    expect(readAudit(host.dataDir).entries.find((e) => e.type === 'trust.recover')).toMatchObject({ outcome: 'done', userId: owner.id, device: lost.id });
    // The running host follows its store (it says so in its log): the recovered device now signs for the owner.
    await until(
      () => host.output.includes(`trust: the owner's device ${lost.id}, trusted on this machine, counts now`),
      'the running host to take the recovery',
      {
        ms: 20_000,
        every: 50,
        detail: () => host.output.slice(-3000),
      },
    );
    const after = await signedSend(owner, lost, 'after recovery');
    expect(after).toMatchObject({ ok: true });
    expect(lastSend()).toMatchObject({ outcome: 'done', userId: owner.id, device: lost.id });
    expect(readAudit(host.dataDir).broken).toBeNull();
  }, 120_000);
});

/** The owner's signed chat.create on the lobby socket. */
async function signedCreate(owner: Person): Promise<{ ok: boolean }> {
  const socket = new RelaySocket(relayPaths.lobby(relayUrl(), host.hostId), await userToken(owner.label));
  closers.push(() => socket.close());
  await socket.opened;
  const frame = { id: 'trust-create', type: 'chat.create', payload: { chatId: CHAT } };
  const signature = await signRequest(owner.key, frame, { hostId: host.hostId });
  // The host may still be connecting: the relay answers host-offline until it is there.
  return until(
    async () => {
      const reply = await new Promise<any>((resolve) => {
        const stop = socket.onFrame((f: any) => {
          if (f.id === frame.id && 'ok' in f) {
            stop();
            resolve(f);
          }
        });
        socket.send({ ...frame, signature } as never);
      });
      return (reply.ok || reply.error?.code !== 'host-offline') && reply;
    },
    'the relay to reach the host with the signed chat.create',
    { ms: 20_000, every: 200, detail: () => host.output.slice(-3000) },
  );
}
