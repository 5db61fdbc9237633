// `npm start`'s own host (scripts/local-host.ts, which scripts/start.ts runs after it started the relay),
// against the real relay (the shared wrangler dev): it pairs the signed way, the person's device
// approving, pins that person and device, and runs requiring signatures: the person's signed requests
// are carried out, an unsigned one is refused by the host. (start.ts itself also starts its own wrangler
// dev on the repository's .wrangler/ and .dev.vars, which a test must not touch; what it adds to this is
// the banner.)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { HostConnection, MemoryTokenStore, RelayApi, RelaySocket, relayPaths } from '../../src/client/index.ts';
import { deviceKeyOf, newDeviceKeyPair, signPairingApproval, type DeviceKey } from '../../src/client/device-key.ts';
import { ProtocolError } from '../../src/contracts/index.ts';
import { readHostIdentity } from '../../src/host/identity.ts';
import { pairWithSetupSecret } from '../../src/host/pairing.ts';
import { readAudit } from '../../src/host/trust/audit.ts';
import { readPinnedOwner } from '../../src/host/trust/pinned.ts';
import { startLocalHost, type LocalHost } from '../../scripts/local-host.ts';
import { personCall, relayUrl, userToken } from './peers.ts';

const PERSON = 'local-host-owner';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const running: LocalHost[] = [];
const closers: Array<() => void> = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) close();
  for (const local of running.splice(0)) await local.host.close();
});

const call = (method: string, route: string, body?: unknown) => personCall(PERSON, method, route, body);

/** The person's device (the web app's, here the SDK's), registered with the relay. */
async function device(): Promise<DeviceKey> {
  const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  await call('POST', '/api/devices', { name: 'local-host e2e', publicKey: key.publicKey });
  return key;
}

/** What the app's pairing page does: look the code up, sign the approval with the device key, approve. */
async function approveSigned(key: DeviceKey, userCode: string): Promise<void> {
  const [pending, me] = await Promise.all([call('POST', '/api/pair/lookup', { userCode }), call('GET', '/api/me')]);
  const approval = await signPairingApproval(key, { hostKey: pending.publicKey, userCode, userId: me.id, userName: me.name });
  await call('POST', '/api/pair/approve', { userCode, approval });
}

/** A data folder whose config serves the scripted agent (npm start's would serve the CLIs on PATH). */
function dataFolder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tether-local-host-'));
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ providers: { claude: { backend: 'script' } } }));
  return dir;
}

/** Starts the local host as start.ts does; `approve` answers each code it shows (in order). */
async function start(dataDir: string, approve: Array<(userCode: string) => Promise<void>>): Promise<{ local: LocalHost; codes: string[]; said: string[] }> {
  const codes: string[] = [];
  const said: string[] = [];
  const local = await startLocalHost({
    relayUrl: relayUrl(),
    dataDir,
    name: 'e2e-local-host',
    log: quiet,
    say: (line) => said.push(line),
    onCode: ({ userCode, verificationUrl }) => {
      codes.push(userCode);
      expect(verificationUrl).toBe(`${relayUrl()}/pair?code=${userCode}`);
      const next = approve[codes.length - 1];
      if (!next) throw new Error(`no approval for code ${codes.length}`);
      void next(userCode);
    },
  });
  running.push(local);
  return { local, codes, said };
}

async function online(hostId: string, key: DeviceKey): Promise<HostConnection> {
  const api = new RelayApi(relayUrl(), {
    tokens: new MemoryTokenStore({ sessionId: 'e2e', refreshToken: 'unused', accessToken: await userToken(PERSON), expiresAt: Date.now() + 600_000 }),
  });
  const lobby = new HostConnection(api, hostId, { deviceKey: key });
  closers.push(() => lobby.close());
  await new Promise<void>((resolve) => {
    if (lobby.online) return resolve();
    const stop = lobby.onPresence((up) => {
      if (up) {
        stop();
        resolve();
      }
    });
  });
  return lobby;
}

describe("npm start's local host", () => {
  it("pairs by the person's signed approval, pins them, and refuses an unsigned request", async () => {
    const key = await device();
    const dataDir = dataFolder();
    const { local, codes, said } = await start(dataDir, [(code) => approveSigned(key, code)]);
    expect(codes).toHaveLength(1);
    expect(local.paired).toBe(true);
    expect(local.host.signatures).toEqual({ require: true, allowUnsigned: [] });
    expect(readPinnedOwner(dataDir)).toMatchObject({
      hostId: local.identity.hostId,
      owner: { userId: (await call('GET', '/api/me')).id, device: { id: key.id } },
    });
    // The terminal says who approved, with the fingerprint Settings shows.
    expect(said.join('\n')).toMatch(/Approved by local-host-owner/);

    // The person's signed request is carried out...
    const lobby = await online(local.identity.hostId, key);
    expect((await lobby.request('chat.create', { chatId: 'local-signed' })).chatId).toBe('local-signed');
    // ...an unsigned one, which the relay lets through (the person's role allows it), is not.
    const plain = new RelaySocket(relayPaths.lobby(relayUrl(), local.identity.hostId), await userToken(PERSON));
    closers.push(() => plain.close());
    const refused = await plain.request('chat.create', { chatId: 'local-unsigned' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).code).toBe('signature-required');
    expect(local.host.core.sessions.has('local-unsigned')).toBe(false);
    const audit = readAudit(dataDir);
    expect(audit.broken).toBeNull();
    expect(audit.entries.map((e) => [e.type, e.outcome, e.code ?? null, e.device])).toEqual(
      expect.arrayContaining([
        ['chat.create', 'done', null, key.id],
        ['chat.create', 'refused', 'signature-required', null],
      ]),
    );

    // The next start is paired already: no code, the same host, still requiring signatures.
    await local.host.close();
    running.splice(running.indexOf(local), 1);
    const again = await start(dataDir, []);
    expect(again.codes).toEqual([]);
    expect(again.local.paired).toBe(false);
    expect(again.local.identity.hostId).toBe(local.identity.hostId);
    expect(again.local.host.signatures.require).toBe(true);
  });

  it('does not take an approval without a device signature: it shows a new code, and pins the signed one', async () => {
    const key = await device();
    const dataDir = dataFolder();
    const unsigned = (userCode: string) => call('POST', '/api/pair/approve', { userCode });
    const { local, codes, said } = await start(dataDir, [unsigned, (code) => approveSigned(key, code)]);
    expect(codes).toHaveLength(2);
    expect(codes[0]).not.toBe(codes[1]);
    expect(said.join('\n')).toMatch(/no device signature/);
    expect(readPinnedOwner(dataDir)?.owner.device.id).toBe(key.id);
    expect(local.host.signatures.require).toBe(true);
  });

  it('pairs a host that the setup secret paired before (signatures were off) again, signed', async () => {
    const key = await device();
    const dataDir = dataFolder();
    const before = await pairWithSetupSecret({ relayUrl: relayUrl(), secret: inject('setupSecret'), name: 'e2e-setup-paired', dataDir });
    expect(readPinnedOwner(dataDir)).toBeNull();
    const { local, codes, said } = await start(dataDir, [(code) => approveSigned(key, code)]);
    expect(codes).toHaveLength(1);
    expect(said[0]).toContain(`This machine's host (${before.hostId}) has no owner pinned`);
    expect(local.identity.hostId).not.toBe(before.hostId);
    expect(readHostIdentity(dataDir)?.hostId).toBe(local.identity.hostId);
    expect(readPinnedOwner(dataDir)).toMatchObject({ hostId: local.identity.hostId, owner: { device: { id: key.id } } });
    expect(local.host.signatures.require).toBe(true);
  });
});
