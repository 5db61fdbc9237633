// The relay carries a device's signature to the host unchanged: beside the frame (never inside the
// payload), with the payload exactly as the client sent it, so the payload digest the host computes
// is the one the device signed. The relay serves from its parsed copy (zod drops unknown keys), and
// forwarding that copy would break the digest: each signed payload here carries such a key.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair, signRequest } from '../../src/client/device-key.ts';
import { digestOf, linkRequestId, settledRequestDigest } from '../../src/contracts/index.ts';
import { Client, FakeHost, OWNER, approvalItem, until } from './peers.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-signed-${++hosts}`).connect();

async function signedFrame(hostId: string, type: string, id: string, payload: Record<string, unknown>, settles?: string) {
  const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  const signature = await signRequest(key, { id, type, payload }, { hostId, ...(settles ? { settles } : {}) });
  return { frame: { id, type, payload, signature }, signature };
}

async function sendSigned(client: Client, frame: { id: string }) {
  client.sendRaw(JSON.stringify(frame));
  return client.waitFor((f) => f.id === frame.id && 'ok' in f, `reply to ${frame.id}`);
}

describe('signed requests through the relay', () => {
  it('a signed chat.send reaches the host with its signature beside it and the payload whose digest was signed', async () => {
    const host = await newHost();
    host.create('s1', []);
    const me = await Client.chat(host.hostId, 's1');
    await me.request('chat.attach', { chatId: 's1' });
    // `note` is no field of chat.send: the relay's parsed copy lacks it, the signed payload has it.
    const payload = { chatId: 's1', text: 'signed hello', note: 'kept as sent' };
    const { frame, signature } = await signedFrame(host.hostId, 'chat.send', 'send-1', payload);
    expect((await sendSigned(me, frame)).ok).toBe(true);
    const [got] = host.requestsOf('chat.send');
    expect(got!.id).toBe(linkRequestId(OWNER, 'send-1'));
    expect(got!.signature).toEqual(signature);
    expect(got!.payload).toEqual(payload);
    expect(got!.payload.signature).toBeUndefined();
    expect(await digestOf(got!.payload)).toBe(signature.statement.payload);
  });

  it('a signed chat.approve reaches the host with its signature and the digest of the request it settles', async () => {
    const host = await newHost();
    const approval = approvalItem('ap1', 'req-1');
    host.create('s2', [approval]);
    host.handlers['chat.approve'] = () => ({});
    const me = await Client.chat(host.hostId, 's2');
    await me.request('chat.attach', { chatId: 's2' });
    const settles = await settledRequestDigest({ kind: 'approval', requestId: 'req-1', toolName: approval.toolName, input: approval.input });
    const payload = { chatId: 's2', requestId: 'req-1', decision: 'allow', extra: [1, 2] };
    const { frame, signature } = await signedFrame(host.hostId, 'chat.approve', 'approve-1', payload, settles);
    expect((await sendSigned(me, frame)).ok).toBe(true);
    const [got] = host.requestsOf('chat.approve');
    expect(got!.signature).toEqual(signature);
    expect(got!.signature.statement.settles).toBe(settles);
    expect(await digestOf(got!.payload)).toBe(signature.statement.payload);
  });

  it('a chat request signed on the lobby socket reaches the host the same way', async () => {
    const host = await newHost();
    host.create('s3', []);
    const lobby = await Client.lobby(host.hostId);
    const payload = { chatId: 's3', text: 'via lobby', extra: true };
    const { frame, signature } = await signedFrame(host.hostId, 'chat.send', 'send-lobby', payload);
    expect((await sendSigned(lobby, frame)).ok).toBe(true);
    const [got] = host.requestsOf('chat.send');
    expect(got!.signature).toEqual(signature);
    expect(await digestOf(got!.payload)).toBe(signature.statement.payload);
  });

  it('an unsigned request goes as before: the parsed payload, no signature', async () => {
    const host = await newHost();
    host.create('s4', []);
    const me = await Client.chat(host.hostId, 's4');
    await me.request('chat.attach', { chatId: 's4' });
    expect((await me.request('chat.send', { chatId: 's4', text: 'plain', extra: 1 }, 'plain-1')).ok).toBe(true);
    const [got] = host.requestsOf('chat.send');
    expect('signature' in got!).toBe(false);
    expect(got!.payload).toEqual({ chatId: 's4', text: 'plain' });
  });

  it('refuses a signature that is not a signed request statement, and the host never gets the frame', async () => {
    const host = await newHost();
    host.create('s5', []);
    const me = await Client.chat(host.hostId, 's5');
    await me.request('chat.attach', { chatId: 's5' });
    const reply = await sendSigned(me, { id: 'bad-sig', type: 'chat.send', payload: { chatId: 's5', text: 'x' }, signature: { sig: 'nope' } } as never);
    expect(reply.error.code).toBe('bad-request');
    expect(host.requestsOf('chat.send')).toHaveLength(0);
  });

  it('a kept send delivered after the host returns still carries its signature and first id', async () => {
    const host = await newHost();
    host.create('s6', []);
    const me = await Client.chat(host.hostId, 's6');
    await me.request('chat.attach', { chatId: 's6' });
    host.disconnect();
    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId));
    await until(async () => !(await link.isOnline()), 'host offline');
    const payload = { chatId: 's6', text: 'kept and signed', extra: 'x' };
    const { frame, signature } = await signedFrame(host.hostId, 'chat.send', 'kept-1', payload);
    expect((await sendSigned(me, frame)).result).toEqual({ queued: true });
    // An unsigned one kept behind it stays unsigned.
    expect((await me.request('chat.send', { chatId: 's6', text: 'kept plain' }, 'kept-2')).result).toEqual({ queued: true });
    await host.connect();
    await until(() => host.requestsOf('chat.send').length === 2, 'the kept sends delivered');
    const [first, second] = host.requestsOf('chat.send');
    expect(first!.id).toBe(linkRequestId(OWNER, 'kept-1'));
    expect(first!.signature).toEqual(signature);
    expect(await digestOf(first!.payload)).toBe(signature.statement.payload);
    expect(second!.id).toBe(linkRequestId(OWNER, 'kept-2'));
    expect('signature' in second!).toBe(false);
  });
});
