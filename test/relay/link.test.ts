import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { Client, FakeHost, hostToken, openSocket, until, userItem, userToken } from './peers.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-link-${++hosts}`).connect();

describe('the host link', () => {
  it('acknowledges what a room stored even when the host reconnected while it was storing', async () => {
    const host = await newHost();
    host.create('k1', []);
    const me = await Client.chat(host.hostId, 'k1');
    await me.request('chat.attach', { chatId: 'k1' });
    // The host's seq jumps, so the room catches up by attaching again; the host is slow to answer.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const attach = host.handlers['chat.attach']!;
    host.handlers['chat.attach'] = async (p, f) => {
      await held;
      return attach(p, f);
    };
    const chat = host.chats.get('k1')!;
    chat.thread.apply({ type: 'item', item: userItem('u1', 'one') });
    chat.log.push({ seq: ++chat.seq, event: { type: 'item', item: userItem('u1', 'one') } });
    host.emit('k1', { type: 'item', item: userItem('u2', 'two') });
    await until(() => host.requestsOf('chat.attach').length === 2, 'the room catching up');
    await host.connect(); // a new socket while the room is still storing what came by the old one
    release();
    await until(() => me.chatEvents().length === 2, 'both events at the client');
    await until(() => host.outbox.size === 0, 'everything acknowledged on the new socket');
    expect(me.chatEvents().map((f) => f.payload.event.item.id)).toEqual(['u1', 'u2']);
  });

  it('answers host-offline at once for a request the old socket carried when the host reconnects', async () => {
    const host = await newHost();
    host.create('k2', []);
    const me = await Client.chat(host.hostId, 'k2');
    await me.request('chat.attach', { chatId: 'k2' });
    const compact = me.request('chat.compact', { chatId: 'k2' }); // the host never answers it
    await until(() => host.requestsOf('chat.compact').length === 1, 'request at the host');
    await host.connect();
    expect((await compact).error.code).toBe('host-offline');
  });

  it('acknowledges the frames it can and drops an outbox position that is not one', async () => {
    const host = await newHost();
    host.create('k3', []);
    const me = await Client.chat(host.hostId, 'k3');
    await me.request('chat.attach', { chatId: 'k3' });
    const ws = host.ws;
    host.ws = null; // kept in the outbox, sent below beside a frame whose n is not a position
    host.emit('k3', { type: 'item', item: userItem('u1', 'one') });
    host.emit('k3', { type: 'item', item: userItem('u2', 'two') });
    host.ws = ws;
    const [first, second] = [...host.outbox.values()];
    const bad = JSON.stringify({ type: 'event', event: 'chat.subagentChanged', payload: { chatId: 'k3', toolUseId: 't' }, n: 'seven' });
    host.ws!.send(`[${first},${bad},${second}]`); // the last two reach the room, and are acknowledged, together
    await until(() => host.outbox.size === 0, 'the good frame acknowledged');
  });

  it('does not take a socket that never said hello for the host, and closes it once silent', async () => {
    // What the relay holds when a connection reset while it was being accepted: open, and nobody there.
    const host = new FakeHost(`host-link-${++hosts}`);
    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId));
    const token = await hostToken(host.hostId);
    const lobby = await Client.lobby(host.hostId);
    await lobby.waitFor((f) => f.event === 'host.presence', 'presence at connect');
    const me = await Client.chat(host.hostId, 'k5');
    const dead = await openSocket(`/v1/hosts/${host.hostId}/link`, token);
    const closed = new Promise<number>((resolve) => dead.addEventListener('close', (e) => resolve(e.code)));
    expect(await link.isOnline()).toBe(false);
    // Kept for the host at once, not sent into the dead socket to wait out host-timeout.
    expect((await me.request('chat.send', { chatId: 'k5', text: 'hi' })).result).toEqual({ queued: true });
    expect(await closed).toBe(4001); // the silence alarm reaches a socket that never sent a frame
    expect(lobby.frames.filter((f) => f.event === 'host.presence').map((f) => f.payload.online)).not.toContain(true);
    // The host that does say hello is online and gets the kept send.
    host.create('k5', []);
    await host.connect();
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === true, 'online after hello');
    await until(() => host.requestsOf('chat.send').length === 1, 'the kept send delivered');
  });

  it('delivers a kept send while the host stays connected, after the passes on its return gave up', async () => {
    const host = await newHost();
    host.create('k6', []);
    const me = await Client.chat(host.hostId, 'k6');
    await me.request('chat.attach', { chatId: 'k6' });
    host.disconnect();
    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId));
    await until(async () => !(await link.isOnline()), 'host offline');
    expect((await me.request('chat.send', { chatId: 'k6', text: 'kept' })).result).toEqual({ queued: true });
    // A host slow to answer after its return: the room's pass tries three times (host-timeout each), then stops.
    const answer = host.handlers['chat.send']!;
    host.handlers['chat.send'] = (p, f) => (host.requestsOf('chat.send').length <= 3 ? new Promise(() => undefined) : answer(p, f));
    await host.connect();
    await until(() => host.chats.get('k6')!.thread.items.some((i) => i.kind === 'user' && i.text === 'kept'), 'the kept send taken', 19_000);
  }, 25_000);

  it('stops telling a chat of presence once nobody is connected to it', async () => {
    const host = await newHost();
    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId));
    await link.watch('ghost', true); // as a room whose sockets ended in a restart, without a close
    const watching = () =>
      runInDurableObject(link, (_, state) =>
        state.storage.sql
          .exec('SELECT chat_id FROM watching')
          .toArray()
          .map((r) => r.chat_id),
      );
    expect(await watching()).toEqual(['ghost']);
    host.disconnect();
    await until(async () => !(await link.isOnline()), 'host offline');
    await until(async () => (await watching()).length === 0, 'the empty room no longer watched');
  });
});

describe('client sockets', () => {
  it('answer the heartbeat ping with pong on the lobby and on a chat, and take it for no request', async () => {
    const host = await newHost();
    for (const path of [`/v1/hosts/${host.hostId}/lobby`, `/v1/hosts/${host.hostId}/chats/beat`]) {
      const ws = await openSocket(path, await userToken());
      const heard: string[] = [];
      ws.addEventListener('message', (event) => heard.push(String(event.data)));
      ws.send('ping');
      await until(() => heard.includes('pong'), `pong on ${path}`);
      // Anything else that is not a frame is still a bad request, answered as one.
      ws.send('not json');
      await until(() => heard.some((text) => text.includes('bad-request')), `bad-request on ${path}`);
      expect(heard.filter((text) => text === 'pong')).toHaveLength(1);
      ws.close();
    }
  });
});
