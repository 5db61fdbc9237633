import { env, evictAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { LINK_MAX_FRAME_BYTES, VISUAL_LIMITS, utf8Bytes } from '../../src/contracts/index.ts';
import { Client, FakeHost, assistantItem, patientLink, until, userItem, visualPage } from './peers.ts';

describe('large frames', () => {
  it('takes a visual page at the largest size VISUAL_LIMITS allows and serves it whole', async () => {
    const host = await new FakeHost('host-large-1').connect();
    host.create('big', []);
    const me = await Client.chat(host.hostId, 'big');
    await me.request('chat.attach', { chatId: 'big' });
    const html = `<p>${'é'.repeat((VISUAL_LIMITS.bytes - 16) / 2)}</p>`;
    host.sendEvent('visual.page', { chatId: 'big', visualId: 'huge', html });
    host.sendEvent('chat.visuals', { chatId: 'big', visuals: [{ id: 'huge', title: 'Huge', at: 1, maxHeight: 2000, size: VISUAL_LIMITS.bytes }] });
    await me.waitFor((f) => f.event === 'chat.visuals', 'visuals');
    const page = await visualPage(host.hostId, 'big', 'huge');
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(html);
  });

  it('counts the client frame limit in bytes: a frame of é under the limit in characters but over it in bytes is refused', async () => {
    const host = await new FakeHost('host-large-4').connect();
    host.create('bytes', []);
    const me = await Client.chat(host.hostId, 'bytes');
    await me.request('chat.attach', { chatId: 'bytes' });
    const text = 'é'.repeat(Math.ceil(LINK_MAX_FRAME_BYTES / 2) + 10); // fewer characters than the limit, more bytes
    // Refused before it is read, so the refusal cannot name the frame's id.
    me.sendRaw(JSON.stringify({ id: 'b1', type: 'chat.send', payload: { chatId: 'bytes', text } }));
    const reply = await me.waitFor((f) => f.ok === false, 'the refusal');
    expect(reply).toMatchObject({ id: null, error: { code: 'frame-too-large' } });
    expect(host.requestsOf('chat.send')).toHaveLength(0);
  });

  it("refuses a chat.send whose forwarded frame (with its sender and by) would be over the host's limit, and the link stays up", async () => {
    const host = await new FakeHost('host-large-6').connect();
    host.create('edge', []);
    host.handlers['chat.send'] = () => ({ queued: false });
    const me = await Client.chat(host.hostId, 'edge');
    await me.request('chat.attach', { chatId: 'edge' });
    const lobby = await Client.lobby(host.hostId);
    // Just under the client limit as sent; the relay's additions take it over.
    const frame = (text: string) => JSON.stringify({ id: 'e1', type: 'chat.send', payload: { chatId: 'edge', text } });
    const text = 'x'.repeat(LINK_MAX_FRAME_BYTES - utf8Bytes(frame('')) - 8);
    expect(utf8Bytes(frame(text))).toBeLessThanOrEqual(LINK_MAX_FRAME_BYTES);
    me.sendRaw(frame(text));
    const reply = await me.waitFor((f) => f.id === 'e1', 'the reply');
    expect(reply).toMatchObject({ ok: false, error: { code: 'frame-too-large' } });
    expect(host.requestsOf('chat.send')).toHaveLength(0);
    // The link was never offered the frame: no presence change, and the chat works on.
    expect(lobby.frames.some((f) => f.event === 'host.presence' && f.payload.online === false)).toBe(false);
    expect((await me.request('chat.send', { chatId: 'edge', text: 'small' })).ok).toBe(true);
  });

  it('answers chat.attach and chat.history of a chat larger than a client frame in pages that fit it, in bytes', async () => {
    const host = await new FakeHost('host-large-5').connect();
    host.create('long', []);
    const first = await Client.chat(host.hostId, 'long');
    await first.request('chat.attach', { chatId: 'long' });
    // Four replies of 6 MB each in UTF-8 (3 M characters each): 12 M characters, 24 MB.
    const ids = ['a1', 'a2', 'a3', 'a4'];
    for (const id of ids) host.emit('long', { type: 'item', item: assistantItem(id, `${id} ${'é'.repeat(3_000_000)}`, false) });
    await first.waitFor((f) => f.event === 'chat.event' && f.payload.event.item?.id === 'a4', 'the last reply');

    const me = await Client.chat(host.hostId, 'long');
    const attached = await me.request('chat.attach', { chatId: 'long' });
    expect(utf8Bytes(JSON.stringify(attached))).toBeLessThanOrEqual(LINK_MAX_FRAME_BYTES);
    const got = attached.result.items.map((i: any) => i.id);
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(ids.slice(ids.length - got.length));
    let history = attached.result.history;
    expect(history.start).toBe(ids.length - got.length);
    while (history.cursor) {
      const page = await me.request('chat.history', { chatId: 'long', cursor: history.cursor, limit: 50 });
      expect(utf8Bytes(JSON.stringify(page))).toBeLessThanOrEqual(LINK_MAX_FRAME_BYTES);
      got.unshift(...page.result.items.map((i: any) => i.id));
      history = page.result.history;
    }
    expect(got).toEqual(ids);
  });

  it('forwards a send with attachments at the 10 MiB limit to the host', async () => {
    const host = await new FakeHost('host-large-2').connect();
    await patientLink(host.hostId);
    host.create('att', []);
    host.handlers['chat.send'] = (p) => ({ queued: false, turnId: `t-${p.attachments.length}` });
    const me = await Client.chat(host.hostId, 'att');
    await me.request('chat.attach', { chatId: 'att' });
    const data = Buffer.alloc(10 * 1024 * 1024, 7).toString('base64');
    const reply = await me.request('chat.send', {
      chatId: 'att',
      text: 'see file',
      attachments: [{ name: 'blob.bin', mime: 'application/octet-stream', data }],
    });
    expect(reply.ok).toBe(true);
    expect(host.requestsOf('chat.send')[0]!.payload.attachments[0].data.length).toBe(data.length);
  });

  it('keeps a 10 MiB send made while the host is offline and delivers it whole', async () => {
    const host = await new FakeHost('host-large-3').connect();
    await patientLink(host.hostId);
    host.create('att2', []);
    host.handlers['chat.send'] = () => ({ queued: false });
    const me = await Client.chat(host.hostId, 'att2');
    await me.request('chat.attach', { chatId: 'att2' });
    host.disconnect();
    await me.waitFor((f) => f.event === 'host.presence', 'presence');
    const lobby = await Client.lobby(host.hostId);
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline');
    const data = Buffer.alloc(10 * 1024 * 1024, 9).toString('base64');
    const kept = await me.request('chat.send', { chatId: 'att2', text: 'later', attachments: [{ name: 'b.bin', mime: 'application/octet-stream', data }] });
    expect(kept.result).toEqual({ queued: true });
    await host.connect();
    await until(() => host.requestsOf('chat.send').length > 0, 'the kept send delivered');
    expect(host.requestsOf('chat.send')[0]!.payload.attachments[0].data).toBe(data);
  });

  it('carries items and events larger than a storage row live, in a replay and after a restart', async () => {
    const host = await new FakeHost('host-large-4').connect();
    host.create('row', []);
    const me = await Client.chat(host.hostId, 'row');
    const since = (await me.request('chat.attach', { chatId: 'row' })).result.seq as number;
    const pasted = 'p'.repeat(3_000_000);
    const output = 'o'.repeat(3_000_000);
    host.emit('row', { type: 'item', item: userItem('big', pasted) });
    host.emit('row', { type: 'item', item: assistantItem('reply', '') });
    host.emit('row', { type: 'delta', itemId: 'reply', text: output });
    host.emit('row', { type: 'info', info: { ...host.chats.get('row')!.thread.info, queue: [{ id: 'q1', text: pasted, createdAt: 1 }] } });
    await until(() => me.chatEvents().length === 4, 'all four events live');
    expect(me.chatEvents()[0]!.payload.event.item.text).toHaveLength(pasted.length);
    await until(() => host.outbox.size === 0, 'acknowledged');

    const replay = await (await Client.chat(host.hostId, 'row')).request('chat.attach', { chatId: 'row', since });
    expect(replay.result.events.map((e: any) => e.item?.text.length ?? e.text?.length ?? e.info.queue[0].text.length)).toEqual([
      pasted.length,
      0,
      output.length,
      pasted.length,
    ]);

    await evictAllDurableObjects();
    await host.connect();
    const snapshot = await (await Client.chat(host.hostId, 'row')).request('chat.attach', { chatId: 'row' });
    expect(snapshot.result.items.map((i: any) => i.text.length)).toEqual([pasted.length, output.length]);
    expect(snapshot.result.info.queue[0].text).toHaveLength(pasted.length);

    // A send that large kept while the host is offline shows in the queue and goes out whole.
    host.disconnect();
    await until(async () => !(await env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline()), 'host offline');
    expect((await me.request('chat.send', { chatId: 'row', text: pasted })).result).toEqual({ queued: true });
    await host.connect();
    await until(() => host.requestsOf('chat.send').length === 1, 'kept send delivered');
    expect(host.requestsOf('chat.send')[0]!.payload.text).toHaveLength(pasted.length);
  });

  it('stores several multi-MiB events that came joined in one message, in order', async () => {
    const host = await new FakeHost('host-large-4').connect();
    host.create('many', []);
    const me = await Client.chat(host.hostId, 'many');
    await me.request('chat.attach', { chatId: 'many' });
    const big = (i: number) => ({ kind: 'user' as const, id: `u${i}`, createdAt: i, turnId: null, text: `${i}`.repeat(3 * 1024 * 1024) });
    host.emitMany(
      'many',
      [1, 2, 3, 4].map((i) => ({ type: 'item' as const, item: big(i) })),
      10,
    );
    await until(() => me.chatEvents().length >= 4, 'the four events', 20_000);
    expect(me.chatEvents().map((f) => f.payload.event.item.id)).toEqual(['u1', 'u2', 'u3', 'u4']);
    const again = await Client.chat(host.hostId, 'many');
    expect((await again.request('chat.attach', { chatId: 'many' })).result.items.map((i: any) => i.text.length)).toEqual(
      [1, 2, 3, 4].map(() => 3 * 1024 * 1024),
    );
  });
});
