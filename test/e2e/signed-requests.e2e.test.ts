// Signed requests end to end: the real relay (wrangler dev), a real `tether host` process whose config
// requires signatures, paired by a person whose SDK device key signed the pairing approval (so the
// host pinned that person and device as its owner), and the SDK signing what acts on the machine.
// The host accepts the owner's signed chat.create and chat.send as the relay carried them, and
// refuses an unsigned send and a send whose payload was changed after signing; its own audit says so.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChatChannel, HostConnection, MemoryOutboxStore, MemoryTokenStore, RelayApi, RelaySocket, relayPaths } from '../../src/client/index.ts';
import { deviceKeyOf, newDeviceKeyPair, signPairingApproval, signRequest, type DeviceKey } from '../../src/client/device-key.ts';
import { ProtocolError } from '../../src/contracts/index.ts';
import { readAudit } from '../../src/host/trust/audit.ts';
import { readPinnedOwner } from '../../src/host/trust/pinned.ts';
import { HostProcess, personCall, relayUrl, userToken } from './peers.ts';

const PERSON = 'signed-owner';
const host = new HostProcess('e2e-signed-host', PERSON);
const closers: Array<() => void> = [];

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) close();
  await host.stop();
});

const call = (method: string, route: string, body?: unknown) => personCall(PERSON, method, route, body);

/** The person's SDK: its device registered with the relay, and an API on the person's session. */
async function personWithDevice(): Promise<{ key: DeviceKey; api: RelayApi }> {
  const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  await call('POST', '/api/devices', { name: 'e2e sdk', publicKey: key.publicKey });
  const api = new RelayApi(relayUrl(), {
    tokens: new MemoryTokenStore({ sessionId: 'e2e', refreshToken: 'unused', accessToken: await userToken(PERSON), expiresAt: Date.now() + 600_000 }),
  });
  return { key, api };
}

describe('signed requests through the relay to a host that requires them', () => {
  it("accepts the pinned owner's signed requests and refuses unsigned or altered ones", async () => {
    const { key, api } = await personWithDevice();
    // The host config asks for signatures before pairing; pair keeps the setting.
    writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({ signatures: { require: true } }));
    host.approveWith = async (userCode) => {
      const [pending, me] = await Promise.all([call('POST', '/api/pair/lookup', { userCode }), call('GET', '/api/me')]);
      const approval = await signPairingApproval(key, { hostKey: pending.publicKey, userCode, userId: me.id, userName: me.name });
      await call('POST', '/api/pair/approve', { userCode, approval });
    };
    await host.start();
    expect(readPinnedOwner(host.dataDir)?.owner.device.id).toBe(key.id);

    const lobby = new HostConnection(api, host.hostId, { deviceKey: key });
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
    // chat.create acts on the machine: signed on the lobby socket, carried by the Lobby.
    expect((await lobby.request('chat.create', { chatId: 'signed-chat' })).chatId).toBe('signed-chat');

    const channel = new ChatChannel(api, host.hostId, 'signed-chat', { outbox: new MemoryOutboxStore(), deviceKey: key });
    closers.push(() => channel.close());
    const sent = await channel.send({ text: 'a signed hello' }).settled;
    expect(sent.state).toBe('delivered');

    // A client without a key: the relay lets it through (its role allows sending), the host does not.
    const plain = new RelaySocket(relayPaths.chat(relayUrl(), host.hostId, 'signed-chat'), await userToken(PERSON));
    closers.push(() => plain.close());
    const unsigned = await plain.request('chat.send', { chatId: 'signed-chat', text: 'unsigned' }).catch((error: unknown) => error);
    expect(unsigned).toBeInstanceOf(ProtocolError);
    expect((unsigned as ProtocolError).code).toBe('signature-required');

    // Signed, then changed on the way (as a relay that rewrote it would): the digest no longer matches.
    const signedFrame = { id: 'altered-1', type: 'chat.send', payload: { chatId: 'signed-chat', text: 'list the files' } };
    const signature = await signRequest(key, signedFrame, { hostId: host.hostId });
    const answered = new Promise<any>((resolve) =>
      plain.onFrame((f: any) => {
        if (f.id === 'altered-1') resolve(f);
      }),
    );
    plain.send({ ...signedFrame, payload: { chatId: 'signed-chat', text: 'rm -rf ~' }, signature } as never);
    expect(await answered).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });

    const lines = readAudit(host.dataDir).entries.filter((e) => e.type === 'chat.create' || e.type === 'chat.send');
    const me = await call('GET', '/api/me');
    expect(lines.map((e) => [e.type, e.outcome, e.code ?? null, e.userId, e.device])).toEqual([
      ['chat.create', 'done', null, me.id, key.id],
      ['chat.send', 'done', null, me.id, key.id],
      ['chat.send', 'refused', 'signature-required', null, null],
      ['chat.send', 'refused', 'signature-invalid', null, null],
    ]);
  }, 90_000);
});
