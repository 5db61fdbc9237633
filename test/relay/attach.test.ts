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
    // The two deltas may have come to the room together and been joined into one (see the coalescing tests).
    expect(replay.result.events[0].type).toBe('item');
    expect(
      replay.result.events
        .slice(1)
        .map((e: any) => e.text)
        .join(''),
    ).toBe('Hello');
    expect(replay.result.seq).toBe(since + replay.result.events.length);
    const folded = new Thread(attached.result.info, attached.result.items);
    for (const event of replay.result.events) folded.apply(event);
    expect(folded.items).toEqual(host.chats.get('c2')!.thread.items);

    // A reset on the host makes the old position unusable: the client must replace its thread.
    host.emit('c2', { type: 'reset', info: host.chats.get('c2')!.thread.info, items: [userItem('u9', 'fresh')] });
    await until(() => host.outbox.size === 0, 'reset acknowledged');
    const stale = await again.request('chat.attach', { chatId: 'c2', since });
    expect(stale.result.events).toBeUndefined();
    expect(stale.result.items.map((i: any) => i.id)).toEqual(['u9']);
  });

  it('pages history with opaque cursors and expires them after a reset', async () => {
    const host = await newHost();
    host.create(
      'c3',
      Array.from({ length: 25 }, (_, i) => userItem(`u${i}`, `message ${i}`)),
    );
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
    const streamed = (c: Client) =>
      c
        .chatEvents()
        .slice(1)
        .map((f) => f.payload.event.text)
        .join('');
    for (const c of clients) {
      // Deltas that reached the room together may arrive joined: the text is whole, in order, once.
      await until(() => streamed(c) === words.join(''), 'all events at a client');
      const events = c.chatEvents().map((f) => f.payload);
      const seqs = events.map((p) => p.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0] + i));
      expect(events.slice(1).every((p) => p.event.type === 'delta')).toBe(true);
      // Every client hears the same events under the same seqs.
      expect(events).toEqual(clients[0]!.chatEvents().map((f) => f.payload));
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
    // A window for the duplicate to arrive in, were it fanned out: the ids below must still be four.
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
    // The room's newest seq (it may join deltas, so not the host's): every client gets that far.
    const last = (await (await Client.chat(host.hostId, 'c7')).request('chat.attach', { chatId: 'c7' })).result.seq;
    await until(
      () => clients.every((c, i) => Math.max(answers[i]!.result.seq, ...c.chatEvents().map((f) => f.payload.seq)) >= last),
      "every client at the room's last seq",
    );
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

  it('keeps the last 10,000 events for replay; an older since gets a snapshot', async () => {
    const host = await newHost();
    host.create('c8', []);
    const client = await Client.chat(host.hostId, 'c8');
    const first = await client.request('chat.attach', { chatId: 'c8' });
    host.emit('c8', { type: 'item', item: assistantItem('a1', '') });
    host.emit('c8', { type: 'item', item: assistantItem('a2', '') });
    // Two replies streaming in turns: no two neighbours belong to one item, so none are joined.
    host.emitMany(
      'c8',
      Array.from({ length: 10_400 }, (_, i) => ({ type: 'delta' as const, itemId: i % 2 ? 'a2' : 'a1', text: `${i} ` })),
    );
    await until(() => host.outbox.size === 0, 'all acknowledged', 120_000);
    const tooOld = await client.request('chat.attach', { chatId: 'c8', since: first.result.seq });
    expect(tooOld.result.events).toBeUndefined();
    expect(tooOld.result.items).toHaveLength(2);
    expect(tooOld.result.items[0].text.split(' ')).toHaveLength(5_201);
    const recent = await client.request('chat.attach', { chatId: 'c8', since: tooOld.result.seq - 10_000 });
    expect(recent.result.events).toHaveLength(10_000);
    expect(recent.result.events.at(-1)).toEqual({ type: 'delta', itemId: 'a2', text: '10399 ' });
  }, 180_000);

  it('takes a thread too large for one link frame a page at a time', async () => {
    const host = await newHost();
    host.wholeTooLarge = true;
    host.create(
      'c9',
      Array.from({ length: 250 }, (_, i) => userItem(`u${i}`, `m${i}`)),
    );
    const client = await Client.chat(host.hostId, 'c9');
    const reply = await client.request('chat.attach', { chatId: 'c9' });
    expect(reply.result.items.map((i: any) => i.id)).toEqual(Array.from({ length: 250 }, (_, i) => `u${i}`));
    expect(host.requestsOf('chat.history')).toHaveLength(2);
  });

  it('refuses a paged thread from a host whose history pages never move back, instead of paging for ever', async () => {
    const host = await newHost();
    host.wholeTooLarge = true;
    host.create(
      'c12',
      Array.from({ length: 250 }, (_, i) => userItem(`u${i}`, `m${i}`)),
    );
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

  it("joins a backlog of one item's deltas into fuller events, and the thread and since replay stay exact", async () => {
    const host = await newHost();
    host.create('c13', [userItem('u0', 'question')]);
    const live = await Client.chat(host.hostId, 'c13');
    const attached = await live.request('chat.attach', { chatId: 'c13' });
    host.emit('c13', { type: 'item', item: assistantItem('a1', '') });
    host.emit('c13', { type: 'item', item: assistantItem('t1', '') });
    await until(() => live.chatEvents().length === 2, 'the items');
    // One message of many frames, as a host sends a backlog: deltas of a1, then an item, then deltas
    // of a1 and t1 in turns, then a1's again. Runs of one item's deltas may join; nothing else may.
    const words = Array.from({ length: 300 }, (_, i) => `w${i} `);
    host.emitMany('c13', [
      ...words.slice(0, 150).map((text) => ({ type: 'delta' as const, itemId: 'a1', text })),
      { type: 'item', item: userItem('u1', 'in between') },
      ...words.slice(150, 170).map((text, i) => ({ type: 'delta' as const, itemId: i % 2 ? 't1' : 'a1', text })),
      ...words.slice(170).map((text) => ({ type: 'delta' as const, itemId: 'a1', text })),
    ]);
    await until(() => host.outbox.size === 0, 'all acknowledged');
    const expected = host.chats.get('c13')!.thread.items;
    await until(() => {
      const thread = new Thread(attached.result.info, attached.result.items);
      for (const f of live.chatEvents()) thread.apply(f.payload.event);
      try {
        expect(thread.items).toEqual(expected);
        return true;
      } catch {
        return false;
      }
    }, 'the live client folds to the host thread');
    const events = live.chatEvents().map((f) => f.payload);
    expect(events.length).toBeLessThan(2 + words.length + 1); // fewer, fuller frames
    expect(events.map((p) => p.seq)).toEqual(Array.from({ length: events.length }, (_, i) => attached.result.seq + 1 + i));
    // The item in between stays where it was: after the first 150 words of a1, before the rest.
    const itemAt = events.findIndex((p) => p.event.type === 'item' && p.event.item.id === 'u1');
    expect(
      events
        .slice(2, itemAt)
        .map((p) => p.event.text)
        .join(''),
    ).toBe(words.slice(0, 150).join(''));
    // Replay from the attach, from the middle, and a fresh snapshot all give the same thread.
    const other = await Client.chat(host.hostId, 'c13');
    const replay = await other.request('chat.attach', { chatId: 'c13', since: attached.result.seq });
    expect(replay.result.events).toEqual(events.map((p) => p.event));
    expect(replay.result.seq).toBe(events.at(-1)!.seq);
    const middle = events[itemAt]!.seq;
    const partial = await other.request('chat.attach', { chatId: 'c13', since: middle });
    expect(partial.result.events).toEqual(events.filter((p) => p.seq > middle).map((p) => p.event));
    const snapshot = await other.request('chat.attach', { chatId: 'c13' });
    expect(snapshot.result.items).toEqual(expected);
  });

  it('sends each delta at once at an idle pace: nothing waits to be joined', async () => {
    const host = await newHost();
    host.create('c14', []);
    const client = await Client.chat(host.hostId, 'c14');
    await client.request('chat.attach', { chatId: 'c14' });
    host.emit('c14', { type: 'item', item: assistantItem('a1', '') });
    await until(() => client.chatEvents().length === 1, 'the item');
    // Each delta is sent only once the one before it reached the client: if the relay held a delta
    // back for company, the wait for it would never end.
    for (let i = 0; i < 8; i++) {
      host.emit('c14', { type: 'delta', itemId: 'a1', text: `d${i} ` });
      await until(() => client.chatEvents().length === i + 2, `delta ${i} on its own`);
      expect(client.chatEvents().at(-1)!.payload.event).toEqual({ type: 'delta', itemId: 'a1', text: `d${i} ` });
    }
  });

  it('joins nothing twice when a reconnecting host sends a backlog the room partly has', async () => {
    const host = await newHost();
    host.create('c15', []);
    const client = await Client.chat(host.hostId, 'c15');
    await client.request('chat.attach', { chatId: 'c15' });
    host.emit('c15', { type: 'item', item: assistantItem('a1', '') });
    host.emitMany(
      'c15',
      Array.from({ length: 20 }, (_, i) => ({ type: 'delta' as const, itemId: 'a1', text: `${i},` })),
    );
    await until(() => host.outbox.size === 0, 'first deltas acknowledged');
    // The host lost the acks: it sends the same frames again, with new ones after them, in one message.
    const chat = host.chats.get('c15')!;
    const before = chat.log.length;
    host.emitMany(
      'c15',
      Array.from({ length: 20 }, (_, i) => ({ type: 'delta' as const, itemId: 'a1', text: `${20 + i},` })),
    );
    const again = chat.log.map((entry) =>
      JSON.stringify({ type: 'event', event: 'chat.event', payload: { chatId: 'c15', event: entry.event, seq: entry.seq } }),
    );
    host.ws!.send(`[${again.join(',')}]`);
    await until(() => host.outbox.size === 0, 'all acknowledged');
    const text = Array.from({ length: 40 }, (_, i) => `${i},`).join('');
    await until(
      () =>
        client
          .chatEvents()
          .slice(1)
          .map((f) => f.payload.event.text)
          .join('') === text,
      'every delta once',
    );
    expect(before).toBe(21);
    const snapshot = await (await Client.chat(host.hostId, 'c15')).request('chat.attach', { chatId: 'c15' });
    expect(snapshot.result.items).toEqual(chat.thread.items);
  });

  it('answers a replay with every event up to its seq while approvals arrive, so a replaying client misses none', async () => {
    const host = await newHost();
    host.create('c11', []);
    const readers = await Promise.all(Array.from({ length: 6 }, () => Client.chat(host.hostId, 'c11')));
    const since = (await readers[0]!.request('chat.attach', { chatId: 'c11' })).result.seq as number;
    let streaming = true;
    const replays: { seq: number; events: unknown[] }[] = [];
    const reading = Promise.all(
      readers.map(async (reader) => {
        while (streaming) replays.push((await reader.request('chat.attach', { chatId: 'c11', since })).result);
      }),
    );
    for (let i = 0; i < 40; i++) host.emit('c11', { type: 'item', item: approvalItem(`ap${i}`, `req-${i}`) });
    await until(() => host.outbox.size === 0, 'all acknowledged');
    streaming = false;
    await reading;
    for (const replay of replays) expect(replay.events).toHaveLength(replay.seq - since);
    // A reader folds its last replay and what came after it: every approval is there once.
    for (const reader of readers) {
      const last = reader.frames.filter((f) => f.ok && f.result.events).at(-1)!;
      const seen = [
        ...last.result.events.map((e: any) => e.item.id),
        ...reader
          .chatEvents()
          .filter((f) => f.payload.seq > last.result.seq)
          .map((f) => f.payload.event.item.id),
      ];
      expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => `ap${i}`));
    }
  });
});
