// How a ChatRoom's attach and history answers are cut (src/relay/objects/chat-room/room-pages.ts),
// driven directly over a list of items: no socket, no storage. The socket-level cases (a 5,000-item
// attach, paging back through large items) are attach.test and large.test.
import { describe, expect, it } from 'vitest';
import { LINK_MAX_FRAME_BYTES, utf8Bytes, type ChatItem } from '../../src/contracts/index.ts';
import { RoomPages } from '../../src/relay/objects/chat-room/room-pages.ts';
import { approvalItem, infoFor, userItem } from './peers.ts';

const store = { jsonOf: (item: ChatItem) => JSON.stringify(item), state: { epoch: 2 } };
const pages = new RoomPages(store);
const head = { info: infoFor('c1'), seq: 9, bookmarks: [], visuals: [] };
const items = (n: number, text = (i: number) => `message ${i}`) => Array.from({ length: n }, (_, i) => userItem(`u${i}`, text(i)));
const ids = (list: ChatItem[]) => list.map((item) => item.id);

describe('the attach answer', () => {
  it('is the whole thread when no limit is asked and it fits a frame, as JSON the client parses', () => {
    const thread = items(3);
    const reply = JSON.parse(pages.snapshot('a1', head, thread, undefined));
    expect(reply).toEqual({ id: 'a1', ok: true, result: { ...JSON.parse(JSON.stringify(head)), items: thread } });
    expect(reply.result.history).toBeUndefined();
  });

  it('with historyLimit is the newest items, a cursor to the rest in this epoch and every request still waiting', () => {
    const waiting = approvalItem('ap1', 'r1');
    const thread: ChatItem[] = [userItem('u0', 'first'), waiting as ChatItem, ...items(5).slice(1)];
    const { result } = JSON.parse(pages.snapshot('a2', head, thread, 2));
    expect(ids(result.items)).toEqual(['u3', 'u4']);
    expect(result.history).toEqual({ start: 4, cursor: 'h1.2.4' });
    expect(ids(result.pending)).toEqual(['ap1']);
  });

  it('of items too large for one frame is the newest that fit, the rest left to history', () => {
    const big = 5 * 1024 * 1024;
    const thread = items(6, (i) => `${i}`.repeat(big));
    const text = pages.snapshot('a3', head, thread, undefined);
    expect(utf8Bytes(text)).toBeLessThanOrEqual(LINK_MAX_FRAME_BYTES);
    const { result } = JSON.parse(text);
    expect(ids(result.items)).toEqual(['u3', 'u4', 'u5']);
    expect(result.history).toEqual({ start: 3, cursor: 'h1.2.3' });
  });

  it('replays the logged events as they were sent, or answers null when they would not fit a frame', () => {
    const events = ['{"type":"delta","itemId":"a","text":"x"}', '{"type":"delta","itemId":"a","text":"y"}'];
    expect(JSON.parse(pages.replay('a4', head, events)!).result).toMatchObject({ seq: 9, items: [], events: events.map((e) => JSON.parse(e)) });
    const huge = [`{"type":"delta","itemId":"a","text":"${'z'.repeat(LINK_MAX_FRAME_BYTES)}"}`];
    expect(pages.replay('a5', head, huge)).toBeNull();
  });
});

describe('a history page', () => {
  it('is the items before the cursor, at most the limit, with the next cursor, and none past the start', () => {
    const thread = items(120);
    const first = JSON.parse(pages.history('h1', 'h1.2.100', thread, 50));
    expect(ids(first.result.items)).toEqual(ids(thread.slice(50, 100)));
    expect(first.result.history).toEqual({ start: 50, cursor: 'h1.2.50' });
    const last = JSON.parse(pages.history('h2', 'h1.2.30', thread, 50));
    expect(ids(last.result.items)).toEqual(ids(thread.slice(0, 30)));
    expect(last.result.history).toEqual({ start: 0, cursor: null });
  });

  it('expires a cursor from another epoch (a clear), past the end, malformed, or of a room with no thread', () => {
    const thread = items(10);
    for (const [cursor, all] of [
      ['h1.1.5', thread],
      ['h1.2.11', thread],
      ['h2.2.5', thread],
      ['h1.2.5', null],
    ] as const) {
      expect(() => pages.history('h3', cursor, all, 50), cursor).toThrow(expect.objectContaining({ code: 'history-expired' }));
    }
  });
});
