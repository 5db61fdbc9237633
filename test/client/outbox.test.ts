import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { IdbOutboxStore, MemoryOutboxStore, PendingSend, type OutboxEntry, type OutboxStore } from '../../src/client/index.ts';
import { nextOrder } from '../../src/client/outbox.ts';

const entry = (id: string, chatId = 'c1', text = id, userId = 'u1'): OutboxEntry => ({
  id,
  userId,
  hostId: 'h1',
  chatId,
  payload: { chatId, text },
  createdAt: Date.now(),
  order: nextOrder(),
});
const scope = (chatId = 'c1', userId = 'u1', hostId = 'h1') => ({ userId, hostId, chatId });

function storeContract(name: string, make: () => OutboxStore) {
  describe(name, () => {
    it("lists one person's entries of one chat oldest first, even within one millisecond, and forgets removed ones", async () => {
      const store = make();
      const now = Date.now();
      const same = (id: string, chatId = 'c1'): OutboxEntry => ({ ...entry(id, chatId), createdAt: now, order: nextOrder(now) });
      for (const e of [same('m3'), same('m1'), same('other', 'c2'), same('m2')]) await store.put(e);
      expect((await store.list(scope())).map((e) => e.id)).toEqual(['m3', 'm1', 'm2']);
      expect((await store.list(scope('c2'))).map((e) => e.id)).toEqual(['other']);
      expect(await store.list(scope('c1', 'u1', 'h2'))).toEqual([]);
      await store.put({ ...same('m4'), userId: 'someone-else' });
      expect((await store.list(scope())).map((e) => e.id)).toEqual(['m3', 'm1', 'm2']);
      expect((await store.list(scope('c1', 'someone-else'))).map((e) => e.id)).toEqual(['m4']);
      await store.remove('m1');
      expect((await store.list(scope())).map((e) => e.id)).toEqual(['m3', 'm2']);
    });

    it('keeps the payload whole, attachments included', async () => {
      const store = make();
      const withFile: OutboxEntry = {
        ...entry('f1'),
        payload: { chatId: 'c1', text: 'see', attachments: [{ name: 'a.png', mime: 'image/png', data: 'AAAA' }] },
      };
      await store.put(withFile);
      expect(await store.list(scope())).toEqual([withFile]);
    });
  });
}

storeContract('MemoryOutboxStore', () => new MemoryOutboxStore());
let dbs = 0;
storeContract('IdbOutboxStore (fake-indexeddb)', () => new IdbOutboxStore(`outbox-test-${++dbs}`));

describe('IdbOutboxStore across page loads', () => {
  it('hands a later store of the same database what an earlier one kept', async () => {
    const first = new IdbOutboxStore('outbox-reload');
    await first.put(entry('kept-1'));
    await first.put(entry('kept-2'));
    await first.close();
    const second = new IdbOutboxStore('outbox-reload');
    expect((await second.list(scope())).map((e) => e.id)).toEqual(['kept-1', 'kept-2']);
  });
});

describe('PendingSend', () => {
  it('moves through its states, tells listeners, and stays settled once delivered or failed', async () => {
    const send = new PendingSend(entry('s1'));
    const seen: string[] = [];
    send.onChange((s) => seen.push(s.state));
    expect(send.state).toBe('kept');
    send.advance('sent');
    send.advance('kept'); // the socket closed before the answer
    send.advance('sent');
    send.advance('queued', { result: { queued: true } });
    send.advance('delivered');
    send.advance('failed', { error: { code: 'internal', message: 'late' } });
    expect(seen).toEqual(['sent', 'kept', 'sent', 'queued', 'delivered']);
    expect((await send.settled).state).toBe('delivered');
    expect(send.error).toBeNull();
    expect(send.result).toEqual({ queued: true });
  });

  it('carries the refusal of a failed send', async () => {
    const send = new PendingSend(entry('s2'));
    send.advance('failed', { error: { code: 'chat-not-found', message: 'No such chat' } });
    expect((await send.settled).error).toEqual({ code: 'chat-not-found', message: 'No such chat' });
  });
});
