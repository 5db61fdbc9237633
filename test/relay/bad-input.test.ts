import { SELF, env } from 'cloudflare:test';
import { describe, expect, it, vi } from 'vitest';
import { LINK_MAX_FRAME_BYTES } from '../../src/contracts/index.ts';
import { Client, FakeHost, hostToken, openSocket, until, userItem, userToken } from './peers.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-bad-${++hosts}`).connect();

describe('bad input gets a clear error and changes nothing', () => {
  it('answers each malformed frame with its code, and the room keeps working', async () => {
    const host = await newHost();
    host.create('x1', [userItem('u1', 'hi')]);
    const c = await Client.chat(host.hostId, 'x1');
    const reply = (frame: string) => {
      const before = c.frames.length;
      c.sendRaw(frame);
      return c.waitFor((f) => c.frames.indexOf(f) >= before && 'ok' in f, 'reply');
    };

    expect(await reply('not json')).toMatchObject({ id: null, ok: false, error: { code: 'bad-request' } });
    expect(await reply('[1,2,3]')).toMatchObject({ id: null, ok: false, error: { code: 'bad-request' } });
    expect(await reply(JSON.stringify({ type: 'chat.attach', payload: { chatId: 'x1' } }))).toMatchObject({ id: null, error: { code: 'bad-request' } });
    expect(await reply(JSON.stringify({ id: 'k1', payload: {} }))).toMatchObject({ id: 'k1', error: { code: 'bad-request' } });
    expect(await reply(JSON.stringify({ id: 'k2', type: 'chat.teleport', payload: {} }))).toMatchObject({
      id: 'k2',
      error: { code: 'unknown-request', message: 'Unknown request type: chat.teleport' },
    });
    const badPayload = await reply(JSON.stringify({ id: 'k3', type: 'chat.history', payload: { chatId: 'x1', cursor: '' } }));
    expect(badPayload).toMatchObject({ id: 'k3', error: { code: 'bad-request' } });
    expect(badPayload.error.message).toContain('cursor');
    const blank = await reply(JSON.stringify({ id: 'k4', type: 'chat.send', payload: { chatId: 'x1', text: '   ' } }));
    expect(blank.error.code).toBe('bad-request');
    const otherChat = await reply(JSON.stringify({ id: 'k5', type: 'chat.addBookmark', payload: { chatId: 'elsewhere', itemId: 'u1' } }));
    expect(otherChat.error.code).toBe('bad-request');

    const huge = JSON.stringify({ id: 'k6', type: 'chat.send', payload: { chatId: 'x1', text: 'x'.repeat(LINK_MAX_FRAME_BYTES) } });
    expect(await reply(huge)).toMatchObject({ ok: false, error: { code: 'frame-too-large' } });

    expect(host.requestsOf('chat.send')).toHaveLength(0);
    const ok = await c.request('chat.attach', { chatId: 'x1' });
    expect(ok.result.items.map((i: any) => i.id)).toEqual(['u1']);
  });

  it('drops malformed host frames without breaking the chat', async () => {
    const host = await newHost();
    host.create('x2', []);
    const c = await Client.chat(host.hostId, 'x2');
    await c.request('chat.attach', { chatId: 'x2' });
    host.ws!.send('garbage');
    host.ws!.send(JSON.stringify({ type: 'event', event: 'chat.event', payload: { chatId: 'x2', event: { type: 'bogus' }, seq: 99 }, n: 999 }));
    host.ws!.send(JSON.stringify({ type: 'event', event: 'chat.event', payload: { nochat: true }, n: 998 }));
    host.emit('x2', { type: 'item', item: userItem('u1', 'still fine') });
    await c.waitFor((f) => f.event === 'chat.event' && f.payload.event.item?.id === 'u1', 'good event after bad ones');
    expect(c.chatEvents()).toHaveLength(1);
  });

  it("passes on only the protocol's events from a host, as its schemas read them", async () => {
    const host = await newHost();
    host.create('x5', []);
    const lobby = await Client.lobby(host.hostId);
    const chat = await Client.chat(host.hostId, 'x5');
    await chat.request('chat.attach', { chatId: 'x5' });
    host.sendEvent('chat.bookmarks', { chatId: 'x5', bookmarks: [{ itemId: 'forged', excerpt: 'x', createdAt: 1 }] });
    host.sendEvent('host.takeover', { please: true });
    host.sendEvent('usage.changed', { scannedAt: 'yesterday' });
    host.sendEvent('chat.subagentChanged', { chatId: 'x5' });
    host.sendEvent('usage.changed', { scannedAt: 7, extra: 'stripped' });
    host.sendEvent('chat.subagentChanged', { chatId: 'x5', toolUseId: 'tu-1' });
    await until(() => host.outbox.size === 0, 'acknowledged');
    await chat.waitFor((f) => f.event === 'chat.subagentChanged', 'the good subagent event');
    await lobby.waitFor((f) => f.event === 'usage.changed', 'the good usage event');
    expect(lobby.frames.filter((f) => f.type === 'event' && f.event !== 'host.presence')).toEqual([
      { type: 'event', event: 'usage.changed', payload: { scannedAt: 7 } },
    ]);
    expect(chat.frames.filter((f) => f.type === 'event' && f.event !== 'host.presence').map((f) => f.payload)).toEqual([{ chatId: 'x5', toolUseId: 'tu-1' }]);
  });

  it("answers chat.create with the host's reply even when that reply is not a ChatInfo", async () => {
    const host = await newHost();
    host.handlers['chat.create'] = (p) => ({ chatId: p.chatId });
    const lobby = await Client.lobby(host.hostId);
    const created = await lobby.request('chat.create', { chatId: 'x6' });
    expect(created.result).toEqual({ chatId: 'x6' });
  });

  it('refuses sockets without a valid token and frames from people without access', async () => {
    const host = await newHost();
    host.create('x3', []);
    const none = await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/lobby`, { headers: { Upgrade: 'websocket' } });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 'unauthorized' });
    const forged = await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/lobby`, {
      headers: { Upgrade: 'websocket', Authorization: 'Bearer abc.def.ghi' },
    });
    expect(forged.status).toBe(401);
    // A person's access token is no host token: the link door does not know it.
    const userAsHost = await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/link`, {
      headers: { Upgrade: 'websocket', Authorization: `Bearer ${await userToken()}` },
    });
    expect(userAsHost.status).toBe(401);
    const plain = await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/lobby`);
    expect(plain.status).toBe(426);

    // Someone with no role on the host gets no socket, so no presence or status ever reaches them.
    for (const path of [`/v1/hosts/${host.hostId}/lobby`, `/v1/hosts/${host.hostId}/chats/x3`]) {
      const mallory = await SELF.fetch(`http://relay.test${path}`, {
        headers: { Upgrade: 'websocket', Authorization: `Bearer ${await userToken('mallory')}` },
      });
      expect(mallory.status).toBe(403);
      expect(await mallory.json()).toMatchObject({ code: 'forbidden' });
    }
  });

  it("gives no socket on a host the relay does not know: host ids are the relay's own, made when a host pairs", async () => {
    // A made-up id would otherwise make objects (and their storage) for anyone signed in, and a host id
    // holding the room name's separator could name another host's chat room.
    for (const path of ['/v1/hosts/host-bad-unborn/lobby', '/v1/hosts/host-bad-unborn/chats/x7', `/v1/hosts/${encodeURIComponent('host-bad-1\nx')}/chats/x7`]) {
      for (const who of ['mallory', 'owner-1']) {
        const res = await SELF.fetch(`http://relay.test${path}`, { headers: { Upgrade: 'websocket', Authorization: `Bearer ${await userToken(who)}` } });
        expect(res.status, `${who} at ${path}`).toBe(403);
        expect(await res.json()).toMatchObject({ code: 'forbidden' });
      }
    }
  });

  it('refuses chat ids that cannot be names or headers as bad-request, in a path and in a frame, and the chat goes on', async () => {
    const host = await newHost();
    host.create('x8', [userItem('u1', 'hi')]);
    const owner = await userToken();
    // In a socket's path: NUL and a newline would have gone into the room's internal header (a 500).
    for (const chatId of ['%00', 'x%0Ay', 'x%0D%0Ay', 'caf%C3%A9', '%20x', 'x'.repeat(129)]) {
      const res = await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/chats/${chatId}`, {
        headers: { Upgrade: 'websocket', Authorization: `Bearer ${owner}` },
      });
      expect(res.status, chatId).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'bad-request', message: expect.stringMatching(/^chatId: not a chat id/) });
    }
    const attachment = await SELF.fetch(`http://relay.test/v1/attachments/${host.hostId}/x%00/att-1/ticket`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}` },
    });
    expect(attachment.status).toBe(400);
    expect(await attachment.json()).toMatchObject({ code: 'bad-request' });

    // In a frame: a lone surrogate, a newline, a control character.
    const lobby = await Client.lobby(host.hostId);
    const chat = await Client.chat(host.hostId, 'x8');
    for (const chatId of ['\ud800', 'x\udc00y', 'x\ny', 'x\u0000', 'x\u0085']) {
      const created = await lobby.request('chat.create', { chatId });
      expect(created.error, JSON.stringify(chatId)).toMatchObject({ code: 'bad-request', message: expect.stringContaining('chatId') });
      expect((await chat.request('chat.addBookmark', { chatId, itemId: 'u1' })).error.code).toBe('bad-request');
    }
    expect(host.requestsOf('chat.create')).toHaveLength(0);
    expect((await chat.request('chat.attach', { chatId: 'x8' })).result.items.map((i: any) => i.id)).toEqual(['u1']);
    // A UUID, as the app makes them, and a name with dots, dashes and colons are chat ids.
    for (const chatId of [crypto.randomUUID(), 'team.review:2026-12-01_a@b']) {
      const socket = await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/chats/${encodeURIComponent(chatId)}`, {
        headers: { Upgrade: 'websocket', Authorization: `Bearer ${owner}` },
      });
      expect(socket.status, chatId).toBe(101);
      socket.webSocket!.accept();
      socket.webSocket!.close();
    }
  });

  it('stops pushes and refuses requests on open sockets once the person loses the host', async () => {
    const host = await newHost();
    host.create('x4', []);
    const lobby = await Client.lobby(host.hostId);
    const chat = await Client.chat(host.hostId, 'x4');
    await chat.request('chat.attach', { chatId: 'x4' });
    host.sendEvent('chat.status', { chatId: 'x4', info: host.chats.get('x4')!.thread.info });
    await lobby.waitFor((f) => f.event === 'chat.status', 'status while allowed');
    await env.DB.prepare("INSERT OR IGNORE INTO users (id, name, created_at) VALUES ('heir', 'heir', 0)").run();
    await env.DB.prepare("UPDATE hosts SET owner_id = 'heir' WHERE id = ?").bind(host.hostId).run();
    // Past the role cache (two seconds) on a clock the test turns: only Date is faked, and the relay's objects run in this isolate.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 2_100);
      host.sendEvent('chat.status', { chatId: 'x4', info: { ...host.chats.get('x4')!.thread.info, status: 'running' } });
      host.sendEvent('accounts.changed', { accounts: {}, statuses: {} });
      await until(() => host.outbox.size === 0, 'acknowledged');
      expect(lobby.frames.filter((f) => f.event === 'chat.status')).toHaveLength(1);
      expect(lobby.frames.filter((f) => f.event === 'accounts.changed')).toHaveLength(0);
      // The push that found the lobby's person without access closed it; the chat socket's next frame is refused, and closes it.
      await until(() => lobby.ws.readyState === WebSocket.CLOSED, 'the lobby socket closed');
      expect((await chat.request('chat.send', { chatId: 'x4', text: 'rm -rf /' })).error.code).toBe('forbidden');
      await until(() => chat.ws.readyState === WebSocket.CLOSED, 'the chat socket closed');
      expect(host.requestsOf('chat.send')).toHaveLength(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses a link for a host id that another user already owns (the token is not signed by that host's key)", async () => {
    const host = await newHost();
    const ws = openSocket(`/v1/hosts/${host.hostId}/link`, await hostToken(host.hostId, 'someone-else'));
    await expect(ws).rejects.toThrow(/401/);
  });
});

describe('the lobby', () => {
  it('passes host-level requests to the host, indexes chats and serves chat.list offline from the index', async () => {
    const host = await newHost();
    const lobby = await Client.lobby(host.hostId);
    const created = await lobby.request('chat.create', { chatId: 'l1' });
    expect(created.result.chatId).toBe('l1');
    host.sendEvent('chat.status', { chatId: 'l1', info: { ...created.result, status: 'running' } });
    await lobby.waitFor((f) => f.event === 'chat.status' && f.payload.info.status === 'running', 'status pushed');
    expect((await lobby.request('chat.list', {})).result.chats.map((c: any) => c.chatId)).toEqual(['l1']);
    host.disconnect();
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline');
    const offline = await lobby.request('chat.list', {});
    expect(offline.result.chats.map((c: any) => [c.chatId, c.status])).toEqual([['l1', 'running']]);
    expect((await lobby.request('chat.create', { chatId: 'l2' })).error.code).toBe('host-offline');
    expect((await lobby.request('chat.attach', { chatId: 'l1' })).error.code).toBe('bad-request');
  });

  it('serves a chat request on the lobby for a chat whose room never opened, with the error codes of the room', async () => {
    const host = await newHost();
    const lobby = await Client.lobby(host.hostId);
    await lobby.request('chat.create', { chatId: 'l5' });
    host.create('l5', [userItem('u1', 'hi')]);
    const sent = await lobby.request('chat.send', { chatId: 'l5', text: 'from the lobby' });
    expect(sent.result).toEqual({ queued: false, turnId: expect.any(String) });
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['from the lobby']);
    expect((await lobby.request('chat.addBookmark', { chatId: 'l5', itemId: 'nope' })).error.code).toBe('item-not-found');
  });

  it('answers a retried chat.create once', async () => {
    const host = await newHost();
    const lobby = await Client.lobby(host.hostId);
    const a = await lobby.request('chat.create', { chatId: 'l3' }, 'create-1');
    const b = await lobby.request('chat.create', { chatId: 'l3' }, 'create-1');
    expect(b).toEqual(a);
    expect(host.requestsOf('chat.create')).toHaveLength(1);
  });

  it('cuts ChatInfo.requests to CHAT_REQUEST_LIMITS.perChat in chat.status and in the chat info', async () => {
    const host = await newHost();
    const requests = Array.from({ length: 11 }, (_, i) => ({ requestId: `r${i}`, itemId: `i${i}`, kind: 'approval', createdAt: i }));
    const chat = host.create('l4', []);
    chat.thread.info = { ...chat.thread.info, requests } as typeof chat.thread.info;
    const lobby = await Client.lobby(host.hostId);
    host.sendEvent('chat.status', { chatId: 'l4', info: { nonsense: true } });
    host.sendEvent('chat.status', { chatId: 'l4', info: chat.thread.info });
    const status = await lobby.waitFor((f) => f.event === 'chat.status', 'status');
    expect(status.payload.info.requests.map((r: any) => r.requestId)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    expect(lobby.frames.filter((f) => f.event === 'chat.status')).toHaveLength(1);
    const c = await Client.chat(host.hostId, 'l4');
    expect((await c.request('chat.attach', { chatId: 'l4' })).result.info.requests).toHaveLength(8);
  });
});
