import { describe, expect, it } from 'vitest';
import { Thread } from '../../src/contracts/index.ts';
import { Client, FakeHost, approvalItem, assistantItem, until, userItem } from './peers.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-attach-${++hosts}`).connect();

describe('attach and replay', () => {
  it('answers a first attach with a snapshot of the host thread, with the relay seq', async () => {
    const host = await newHost();
    host.create('c1', [userItem('u1', 'hello'), assistantItem('a1', 'hi there', false)]);
    const client = await Client.chat(host.hostId, 'c1');
    const reply = await client.request('chat.attach', { chatId: 'c1' });
    expect(reply.ok).toBe(true);
    expect(reply.result.items.map((i: any) => i.id)).toEqual(['u1', 'a1']);
    expect(reply.result.info.chatId).toBe('c1');
    expect(reply.result.seq).toBeGreaterThan(0);
    expect(reply.result.bookmarks).toEqual([]);
    expect(reply.result.visuals).toEqual([]);
    expect(reply.result.events).toBeUndefined();
  });

  it('replays exactly the missed events when since is still in the log, and a snapshot when it is not', async () => {
    const host = await newHost();
    host.create('c2', [userItem('u1', 'hello')]);
    const first = await Client.chat(host.hostId, 'c2');
    const attached = await first.request('chat.attach', { chatId: 'c2' });
    const since = attached.result.seq as number;
    first.close();

    host.emit('c2', { type: 'item', item: assistantItem('a1', '') });
    host.emit('c2', { type: 'delta', itemId: 'a1', text: 'Hel' });
    host.emit('c2', { type: 'delta', itemId: 'a1', text: 'lo' });
    await until(() => host.outbox.size === 0, 'host events acknowledged');

    const again = await Client.chat(host.hostId, 'c2');
    const replay = await again.request('chat.attach', { chatId: 'c2', since });
    expect(replay.result.items).toEqual([]);
    expect(replay.result.events.map((e: any) => e.type)).toEqual(['item', 'delta', 'delta']);
    expect(replay.result.seq).toBe(since + 3);

    // A reset on the host makes the old position unusable: the client must replace its thread.
    host.emit('c2', { type: 'reset', info: host.chats.get('c2')!.thread.info, items: [userItem('u9', 'fresh')] });
    await until(() => host.outbox.size === 0, 'reset acknowledged');
    const stale = await again.request('chat.attach', { chatId: 'c2', since });
    expect(stale.result.events).toBeUndefined();
    expect(stale.result.items.map((i: any) => i.id)).toEqual(['u9']);
  });

  it('pages history with opaque cursors and expires them after a reset', async () => {
    const host = await newHost();
    host.create('c3', Array.from({ length: 25 }, (_, i) => userItem(`u${i}`, `message ${i}`)));
    const client = await Client.chat(host.hostId, 'c3');
    const attached = await client.request('chat.attach', { chatId: 'c3', historyLimit: 10 });
    expect(attached.result.items.map((i: any) => i.id)).toEqual(Array.from({ length: 10 }, (_, i) => `u${i + 15}`));
    expect(attached.result.history.start).toBe(15);
    const seen: string[] = attached.result.items.map((i: any) => i.id);
    let cursor = attached.result.history.cursor as string | null;
    while (cursor) {
      const page = await client.request('chat.history', { chatId: 'c3', cursor, limit: 10 });
      expect(page.ok).toBe(true);
      seen.unshift(...page.result.items.map((i: any) => i.id));
      cursor = page.result.history.cursor;
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `u${i}`));

    const old = attached.result.history.cursor;
    host.emit('c3', { type: 'reset', info: host.chats.get('c3')!.thread.info, items: [] });
    await until(() => host.outbox.size === 0, 'reset acknowledged');
    const expired = await client.request('chat.history', { chatId: 'c3', cursor: old });
    expect(expired.error.code).toBe('history-expired');
    const bogus = await client.request('chat.history', { chatId: 'c3', cursor: 'not-a-cursor' });
    expect(bogus.error.code).toBe('history-expired');
  });

  it('sends every host event to many attached clients once each, in order, as deltas', async () => {
    const host = await newHost();
    host.create('c4', []);
    const clients = await Promise.all(Array.from({ length: 12 }, () => Client.chat(host.hostId, 'c4')));
    for (const c of clients) await c.request('chat.attach', { chatId: 'c4' });
    host.emit('c4', { type: 'item', item: assistantItem('a1', '') });
    const words = Array.from({ length: 40 }, (_, i) => `w${i} `);
    for (const w of words) host.emit('c4', { type: 'delta', itemId: 'a1', text: w });
    for (const c of clients) {
      await until(() => c.chatEvents().length === 41, 'all events at a client');
      const events = c.chatEvents().map((f) => f.payload);
      const seqs = events.map((p) => p.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(41);
      expect(events.slice(1).map((p) => p.event.type)).toEqual(words.map(() => 'delta'));
      expect(events.slice(1).map((p) => p.event.text).join('')).toBe(words.join(''));
    }
  });

  it('drops events it already has when a reconnecting host sends them again, and fills gaps by attaching', async () => {
    const host = await newHost();
    host.create('c5', []);
    const client = await Client.chat(host.hostId, 'c5');
    await client.request('chat.attach', { chatId: 'c5' });
    host.emit('c5', { type: 'item', item: userItem('u1', 'one') });
    await until(() => client.chatEvents().length === 1, 'first event');
    const sent = [...host.received]; // nothing pending
    expect(sent.filter((f) => f.type === 'chat.attach')).toHaveLength(1);

    // The link drops; the host produces two events while it is down.
    host.disconnect();
    host.emit('c5', { type: 'item', item: userItem('u2', 'two') });
    host.emit('c5', { type: 'item', item: userItem('u3', 'three') });
    expect(host.outbox.size).toBe(2);
    const [[n1, t1]] = [...host.outbox];
    await host.connect();
    await until(() => host.outbox.size === 0, 'outbox drained');
    host.resend(n1, t1); // a duplicate of an acknowledged frame
    host.emit('c5', { type: 'item', item: userItem('u4', 'four') });
    await until(() => client.chatEvents().length === 4, 'events after reconnect');
    await new Promise((r) => setTimeout(r, 200));
    const ids = client.chatEvents().map((f) => f.payload.event.item.id);
    expect(ids).toEqual(['u1', 'u2', 'u3', 'u4']);

    // A gap (the host's seq jumps) makes the room catch up through chat.attach with since.
    const chat = host.chats.get('c5')!;
    chat.thread.apply({ type: 'item', item: userItem('u5', 'five') });
    chat.seq += 1;
    chat.log.push({ seq: chat.seq, event: { type: 'item', item: userItem('u5', 'five') } });
    host.emit('c5', { type: 'item', item: userItem('u6', 'six') });
    await until(() => client.chatEvents().length === 6, 'gap filled');
    expect(client.chatEvents().map((f) => f.payload.event.item.id)).toEqual(['u1', 'u2', 'u3', 'u4', 'u5', 'u6']);
    const since = host.requestsOf('chat.attach').at(-1)!.payload.since;
    expect(since).toBe(4);
  });

  it('takes several frames joined into one array message, in order', async () => {
    const host = await newHost();
    host.create('c6', []);
    const client = await Client.chat(host.hostId, 'c6');
    await client.request('chat.attach', { chatId: 'c6' });
    host.emitMany('c6', [
      { type: 'item', item: userItem('u1', 'one') },
      { type: 'item', item: userItem('u2', 'two') },
      { type: 'item', item: userItem('u3', 'three') },
    ]);
    await until(() => client.chatEvents().length === 3, 'three events');
    expect(client.chatEvents().map((f) => f.payload.event.item.id)).toEqual(['u1', 'u2', 'u3']);
    await until(() => host.outbox.size === 0, 'all three acknowledged');
  });

  it('gives clients that attach to a cold room while events arrive the host thread exactly, nothing twice', async () => {
    const host = await newHost();
    host.create('c7', [userItem('u0', 'zero')]);
    const clients = await Promise.all(Array.from({ length: 4 }, () => Client.chat(host.hostId, 'c7')));
    const attaches = clients.map((c) => c.request('chat.attach', { chatId: 'c7' }));
    host.emit('c7', { type: 'item', item: assistantItem('a1', '') });
    for (let i = 0; i < 20; i++) host.emit('c7', { type: 'delta', itemId: 'a1', text: `${i},` });
    const answers = await Promise.all(attaches);
    await until(() => host.outbox.size === 0, 'all acknowledged');
    await new Promise((r) => setTimeout(r, 100));
    const expected = host.chats.get('c7')!.thread.items;
    clients.forEach((c, i) => {
      const snapshot = answers[i]!.result;
      const thread = new Thread(snapshot.info, snapshot.items);
      for (const f of c.chatEvents()) {
        if (f.payload.seq > snapshot.seq) thread.apply(f.payload.event);
      }
      expect(thread.items).toEqual(expected);
    });
  });

  it('keeps the last 5,000 events for replay; an older since gets a snapshot', async () => {
    const host = await newHost();
    host.create('c8', []);
    const client = await Client.chat(host.hostId, 'c8');
    const first = await client.request('chat.attach', { chatId: 'c8' });
    host.emit('c8', { type: 'item', item: assistantItem('a1', '') });
    host.emitMany('c8', Array.from({ length: 5_400 }, (_, i) => ({ type: 'delta' as const, itemId: 'a1', text: `${i} ` })));
    await until(() => host.outbox.size === 0, 'all acknowledged', 60_000);
    const tooOld = await client.request('chat.attach', { chatId: 'c8', since: first.result.seq });
    expect(tooOld.result.events).toBeUndefined();
    expect(tooOld.result.items).toHaveLength(1);
    expect(tooOld.result.items[0].text.split(' ')).toHaveLength(5_401);
    const recent = await client.request('chat.attach', { chatId: 'c8', since: tooOld.result.seq - 4_000 });
    expect(recent.result.events).toHaveLength(4_000);
  });

  it('takes a thread too large for one link frame a page at a time', async () => {
    const host = await newHost();
    host.wholeTooLarge = true;
    host.create('c9', Array.from({ length: 250 }, (_, i) => userItem(`u${i}`, `m${i}`)));
    const client = await Client.chat(host.hostId, 'c9');
    const reply = await client.request('chat.attach', { chatId: 'c9' });
    expect(reply.result.items.map((i: any) => i.id)).toEqual(Array.from({ length: 250 }, (_, i) => `u${i}`));
    expect(host.requestsOf('chat.history')).toHaveLength(2);
  });

  it('refuses a paged thread from a host whose history pages never move back, instead of paging for ever', async () => {
    const host = await newHost();
    host.wholeTooLarge = true;
    host.create('c12', Array.from({ length: 250 }, (_, i) => userItem(`u${i}`, `m${i}`)));
    host.handlers['chat.history'] = () => ({ items: [userItem('again', 'again')], history: { start: 150, cursor: 'c:150' } });
    const client = await Client.chat(host.hostId, 'c12');
    expect((await client.request('chat.attach', { chatId: 'c12' })).error.code).toBe('internal');
    expect(host.requestsOf('chat.history')).toHaveLength(1);
  });

  it('starts over when the host makes a new chat under the same id (its seq starts again at 1)', async () => {
    const host = await newHost();
    host.create('c10', [userItem('old', 'before the wipe')]);
    const client = await Client.chat(host.hostId, 'c10');
    await client.request('chat.attach', { chatId: 'c10' });
    host.emit('c10', { type: 'item', item: userItem('old2', 'still before') });
    host.emit('c10', { type: 'item', item: userItem('old3', 'still before') });
    await until(() => host.outbox.size === 0, 'acknowledged');
    host.chats.delete('c10');
    const fresh = host.create('c10', []);
    fresh.thread.info = { ...fresh.thread.info, createdAt: fresh.thread.info.createdAt + 1 };
    host.emit('c10', { type: 'info', info: fresh.thread.info });
    host.emit('c10', { type: 'item', item: userItem('new', 'after') });
    await until(() => host.outbox.size === 0, 'acknowledged again');
    const again = await Client.chat(host.hostId, 'c10');
    const snapshot = await again.request('chat.attach', { chatId: 'c10' });
    expect(snapshot.result.items.map((i: any) => i.id)).toEqual(['new']);
  });

  it('answers a replay with every event up to its seq while approvals arrive, so a replaying client misses none', async () => {
    const host = await newHost();
    host.create('c11', []);
    const readers = await Promise.all(Array.from({ length: 6 }, () => Client.chat(host.hostId, 'c11')));
    const since = (await readers[0]!.request('chat.attach', { chatId: 'c11' })).result.seq as number;
    let streaming = true;
    const replays: { seq: number; events: unknown[] }[] = [];
    const reading = Promise.all(readers.map(async (reader) => {
      while (streaming) replays.push((await reader.request('chat.attach', { chatId: 'c11', since })).result);
    }));
    for (let i = 0; i < 40; i++) host.emit('c11', { type: 'item', item: approvalItem(`ap${i}`, `req-${i}`) });
    await until(() => host.outbox.size === 0, 'all acknowledged');
    streaming = false;
    await reading;
    for (const replay of replays) expect(replay.events).toHaveLength(replay.seq - since);
    // A reader folds its last replay and what came after it: every approval is there once.
    for (const reader of readers) {
      const last = reader.frames.filter((f) => f.ok && f.result.events).at(-1)!;
      const seen = [...last.result.events.map((e: any) => e.item.id), ...reader.chatEvents()
        .filter((f) => f.payload.seq > last.result.seq).map((f) => f.payload.event.item.id)];
      expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => `ap${i}`));
    }
  });
});
