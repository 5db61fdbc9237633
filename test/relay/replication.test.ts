// The room's replication of the host's thread (src/relay/objects/chat-room/replication.ts), driven
// directly: a scripted host answers its attach and history requests, its published frames are
// collected, and its storage is a ChatRoom's own SQLite, read back after. No socket, no HostLink.
import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatItem, LinkEventFrame, Reply } from '../../src/contracts/index.ts';
import { Replication } from '../../src/relay/objects/chat-room/replication.ts';
import { RoomStore } from '../../src/relay/objects/chat-room/room-store.ts';
import type { LinkRequestInput } from '../../src/relay/objects/host-link.ts';
import { assistantItem, infoFor, userItem } from './peers.ts';

interface Rig {
  replica: Replication;
  store: RoomStore;
  sql: SqlStorage;
  /** Every frame published to clients, parsed. */
  published: { payload: { event: ChatEvent; seq?: number } }[];
  /** Every request made of the host. */
  asked: LinkRequestInput[];
  /** The wake-ups asked for (the room's alarm). */
  wakes: number[];
  clock: { t: number };
}

/** A replication on a fresh ChatRoom's storage, its host answering with `answer`. */
async function withReplica(chatId: string, answer: (input: LinkRequestInput) => Reply, drive: (rig: Rig) => Promise<void>): Promise<void> {
  const stub = env.CHAT_ROOM.get(env.CHAT_ROOM.newUniqueId());
  await runInDurableObject(stub, async (_room, state) => {
    const store = new RoomStore(state.storage.sql);
    store.name('h-replication', chatId);
    const rig: Rig = { replica: undefined as unknown as Replication, store, sql: state.storage.sql, published: [], asked: [], wakes: [], clock: { t: 10_000 } };
    rig.replica = new Replication({
      store,
      transaction: (step) => state.storage.transactionSync(step),
      ask: async (input) => {
        rig.asked.push(input);
        return answer(input);
      },
      publish: (text) => rig.published.push(JSON.parse(text)),
      decorate: (info) => info,
      observeRequests: async () => undefined,
      itemCommitted: () => undefined,
      recreated: async () => undefined,
      hostFrame: async () => undefined,
      dropped: () => undefined,
      wakeBy: (at) => {
        rig.wakes.push(at);
        return null;
      },
      now: () => rig.clock.t,
    });
    await drive(rig);
  });
}

const event = (chatId: string, seq: number, ev: ChatEvent): LinkEventFrame => ({ type: 'event', event: 'chat.event', payload: { chatId, event: ev, seq } });
const ok = (id: string | undefined, result: unknown): Reply => ({ id: id ?? 'x', ok: true, result });
const textOf = (item: ChatItem | undefined) => (item as { text?: string } | undefined)?.text;
/** The item's row as written to storage (not the log replayed over it). */
const storedText = (sql: SqlStorage, id: string) =>
  (JSON.parse(sql.exec<{ json: string }>('SELECT json FROM items WHERE id = ?', id).one().json) as { text: string }).text;

describe("the room's replication of the host's thread", () => {
  it('attaches on the first event, commits what follows under its own seqs, joins a run of deltas and writes streamed items once a flush', async () => {
    const chatId = 'r1';
    const snapshot = { info: infoFor(chatId), items: [userItem('u1', 'hi')], seq: 3 };
    await withReplica(
      chatId,
      (input) => ok(input.id, snapshot),
      async ({ replica, sql, published, asked, wakes, clock }) => {
        // The host's event 4 reaches a room that never attached: it attaches (snapshot at 3), then applies 4.
        expect(await replica.ingest([event(chatId, 4, { type: 'item', item: assistantItem('a1', 'He') })])).toEqual({ stored: 1 });
        expect(asked).toEqual([{ type: 'chat.attach', payload: { chatId } }]);
        expect(published.map((f) => [f.payload.event.type, f.payload.seq])).toEqual([
          ['reset', 1],
          ['item', 2],
        ]);
        expect(replica.hostSeq).toBe(4);

        // Two deltas of one item in one call become one event under one room seq; a resend of 4 is dropped.
        const again = event(chatId, 4, { type: 'item', item: assistantItem('a1', 'He') });
        expect(
          await replica.ingest([
            again,
            event(chatId, 5, { type: 'delta', itemId: 'a1', text: 'll' }),
            event(chatId, 6, { type: 'delta', itemId: 'a1', text: 'o' }),
          ]),
        ).toEqual({ stored: 3 });
        expect(published.slice(2).map((f) => [f.payload.event, f.payload.seq])).toEqual([[{ type: 'delta', itemId: 'a1', text: 'llo' }, 3]]);
        expect(replica.hostSeq).toBe(6);
        expect(textOf(replica.loaded()?.get('a1'))).toBe('Hello');
        // The first flush of this life was due at once: the row holds the streamed text already.
        expect(storedText(sql, 'a1')).toBe('Hello');
        expect(wakes).toEqual([]);

        // Within the second after it, deltas wait for one wake-up, asked once however many come.
        clock.t += 200;
        await replica.ingest([event(chatId, 7, { type: 'delta', itemId: 'a1', text: ' wor' })]);
        clock.t += 100;
        await replica.ingest([event(chatId, 8, { type: 'delta', itemId: 'a1', text: 'ld' })]);
        expect(wakes).toEqual([11_000]);
        expect(storedText(sql, 'a1')).toBe('Hello');
        replica.flush();
        expect(storedText(sql, 'a1')).toBe('Hello world');

        // What was kept reads back as the same thread, under the same seqs.
        const reread = new RoomStore(sql);
        expect(reread.state).toMatchObject({ seq: 5, hostSeq: 8 });
        expect(reread.loadThread()?.items.map((item) => [item.id, textOf(item)])).toEqual([
          ['u1', 'hi'],
          ['a1', 'Hello world'],
        ]);
      },
    );
  });

  it('fills a gap by attaching again with since, and takes a thread too large for one frame a page at a time', async () => {
    const chatId = 'r2';
    const items = [userItem('u1', 'one'), userItem('u2', 'two'), userItem('u3', 'three')];
    await withReplica(
      chatId,
      (input) => {
        const payload = input.payload as { since?: number; historyLimit?: number; cursor?: string };
        if (input.type === 'chat.history') return ok(input.id, { items: items.slice(0, 2), history: { start: 0, cursor: null } });
        if (payload.since !== undefined) {
          return ok(input.id, { info: infoFor(chatId), items: [], seq: 12, events: [{ type: 'item', item: userItem('u5', 'five') }] });
        }
        if (payload.historyLimit === undefined) return { id: input.id ?? 'x', ok: false, error: { code: 'frame-too-large', message: 'too large' } };
        return ok(input.id, { info: infoFor(chatId), items: items.slice(2), seq: 10, history: { start: 2, cursor: 'older' } });
      },
      async ({ replica, published, asked }) => {
        await replica.ingest([event(chatId, 11, { type: 'item', item: userItem('u4', 'four') })]);
        // Too large whole: the newest page, then the older one, joined into one snapshot at the host's 10.
        expect(asked.slice(0, 3).map((a) => [a.type, a.payload])).toEqual([
          ['chat.attach', { chatId }],
          ['chat.attach', { chatId, historyLimit: 100 }],
          ['chat.history', { chatId, cursor: 'older', limit: 100 }],
        ]);
        expect(replica.loaded()?.items.map((item) => item.id)).toEqual(['u1', 'u2', 'u3', 'u4']);
        expect(replica.hostSeq).toBe(11);

        // The host's 13 after 11: what was missed is asked since 11, applied in order, then 13.
        await replica.ingest([event(chatId, 13, { type: 'item', item: userItem('u6', 'six') })]);
        expect(asked.slice(3)).toEqual([{ type: 'chat.attach', payload: { chatId, since: 11 } }]);
        expect(replica.loaded()?.items.map((item) => item.id)).toEqual(['u1', 'u2', 'u3', 'u4', 'u5', 'u6']);
        expect(replica.hostSeq).toBe(13);
        // The reset, 11, the missed 12, 13: each under the room's next seq.
        expect(published.map((f) => [f.payload.event.type, f.payload.seq])).toEqual([
          ['reset', 1],
          ['item', 2],
          ['item', 3],
          ['item', 4],
        ]);
      },
    );
  });
});
