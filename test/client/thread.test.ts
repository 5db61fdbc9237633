import { describe, expect, it } from 'vitest';
import type { ChatAttachResult, ChatEvent, ChatItem } from '../../src/contracts/index.ts';
import { ThreadModel, type ThreadChange } from '../../src/client/index.ts';
import { ITEMS, chatInfo } from '../contracts/fixtures.ts';

const info = chatInfo({ chatId: 'c1' });
let clock = 1_760_000_000_000;
const user = (id: string, text = id): ChatItem => ({ ...ITEMS.user, id, text, createdAt: ++clock }) as ChatItem;
const reply = (id: string, text = ''): ChatItem => ({ ...ITEMS.assistant, id, text, streaming: true, createdAt: ++clock }) as ChatItem;
const approval = (id: string, decision = 'pending'): ChatItem => ({ ...ITEMS.approval, id, requestId: `r-${id}`, decision, createdAt: ++clock }) as ChatItem;
const snapshot = (items: ChatItem[], seq: number, extra: Partial<ChatAttachResult> = {}): ChatAttachResult => ({ info, items, seq, ...extra });
const env = (event: ChatEvent, seq?: number) => ({ chatId: 'c1', event, ...(seq === undefined ? {} : { seq }) });

describe('ThreadModel', () => {
  it('replaces the thread with a snapshot, never appends it', () => {
    const thread = new ThreadModel('c1');
    thread.applyAttach(snapshot([user('u1'), reply('a1', 'hi')], 2));
    thread.applyEnvelope(env({ type: 'item', item: user('u2') }, 3));
    // The relay no longer has seq 3 in its log: the reconnect answer is a whole new snapshot.
    const outcome = thread.applyAttach(snapshot([user('u9', 'fresh')], 40), thread.seq);
    expect(outcome).toBe('snapshot');
    expect(thread.items.map((i) => i.id)).toEqual(['u9']);
    expect(thread.get('u1')).toBeUndefined();
    expect(thread.get('u9')?.id).toBe('u9');
    expect(thread.seq).toBe(40);
  });

  it('applies a replay (the events after since) in order, on top of what it holds', () => {
    const thread = new ThreadModel('c1');
    thread.applyAttach(snapshot([user('u1')], 5));
    const a1 = reply('a1');
    const outcome = thread.applyAttach(
      {
        info,
        items: [],
        seq: 8,
        events: [
          { type: 'item', item: a1 },
          { type: 'delta', itemId: 'a1', text: 'Hel' },
          { type: 'delta', itemId: 'a1', text: 'lo' },
        ],
      },
      5,
    );
    expect(outcome).toBe('replay');
    expect(thread.items.map((i) => i.id)).toEqual(['u1', 'a1']);
    expect((thread.get('a1') as { text: string }).text).toBe('Hello');
    expect(thread.seq).toBe(8);
  });

  it('ignores events it already applied and reports a gap instead of applying past it', () => {
    const thread = new ThreadModel('c1');
    thread.applyAttach(snapshot([reply('a1', 'A')], 3));
    expect(thread.applyEnvelope(env({ type: 'delta', itemId: 'a1', text: 'B' }, 4))).toBe('applied');
    expect(thread.applyEnvelope(env({ type: 'delta', itemId: 'a1', text: 'B' }, 4))).toBe('duplicate');
    expect(thread.applyEnvelope(env({ type: 'delta', itemId: 'a1', text: 'X' }, 2))).toBe('duplicate');
    expect(thread.applyEnvelope(env({ type: 'delta', itemId: 'a1', text: 'Z' }, 6))).toBe('gap');
    expect((thread.get('a1') as { text: string }).text).toBe('AB');
    expect(thread.seq).toBe(4);
    // A preview without a seq is never logged and always applied.
    expect(thread.applyEnvelope(env({ type: 'delta', itemId: 'a1', text: '', ui: [], textLength: 2 }))).toBe('applied');
    expect(thread.seq).toBe(4);
  });

  it('streams deltas into their item, keeping the earlier text, one item replaced per delta', () => {
    const thread = new ThreadModel('c1');
    thread.applyAttach(snapshot([user('u1'), reply('a1')], 1));
    const list = thread.items;
    const changes: ThreadChange[] = [];
    thread.subscribe((c) => changes.push(c));
    const before = thread.get('u1');
    const words = ['The ', 'quick ', 'brown ', 'fox'];
    words.forEach((text, i) => thread.applyEnvelope(env({ type: 'delta', itemId: 'a1', text }, 2 + i)));
    expect((thread.get('a1') as { text: string }).text).toBe('The quick brown fox');
    expect(thread.items).toBe(list); // the list itself is not copied per delta
    expect(thread.get('u1')).toBe(before); // nor are the other items
    expect(changes).toEqual(words.map(() => ({ kind: 'delta', id: 'a1', index: 1 })));
    expect(thread.version).toBeGreaterThanOrEqual(words.length);
  });

  it("streams a running tool's output and replaces an item by id in place", () => {
    const thread = new ThreadModel('c1');
    const tool = { ...ITEMS.tool, id: 't1', createdAt: ++clock } as ChatItem;
    thread.applyAttach(snapshot([tool, user('u2')], 1));
    thread.applyEnvelope(env({ type: 'delta', itemId: 't1', text: 'line 1\n' }, 2));
    thread.applyEnvelope(env({ type: 'delta', itemId: 't1', text: 'line 2\n' }, 3));
    expect((thread.get('t1') as { progress: { output: string } }).progress.output).toBe('line 1\nline 2\n');
    thread.applyEnvelope(env({ type: 'item', item: { ...tool, state: 'done', output: 'ok' } as ChatItem }, 4));
    expect(thread.items.map((i) => i.id)).toEqual(['t1', 'u2']);
    expect((thread.items[0] as { state: string }).state).toBe('done');
  });

  it('keeps the waiting approvals, including those in pages not loaded, and drops them once settled', () => {
    const thread = new ThreadModel('c1');
    const old = approval('ap-old');
    const items = [user('u1'), user('u2')];
    thread.applyAttach(snapshot(items, 10, { history: { start: 40, cursor: 'h1.0.40' }, pending: [old] }));
    expect(thread.pending.map((i) => i.id)).toEqual(['ap-old']);
    // Its settlement arrives while its page is not loaded: it leaves `pending`, and is not appended.
    thread.applyEnvelope(env({ type: 'item', item: { ...old, decision: 'allow' } as ChatItem }, 11));
    expect(thread.pending).toEqual([]);
    expect(thread.items.map((i) => i.id)).toEqual(['u1', 'u2']);
    const fresh = approval('ap-new');
    thread.applyEnvelope(env({ type: 'item', item: fresh }, 12));
    expect(thread.pending.map((i) => i.id)).toEqual(['ap-new']);
    expect(thread.items.at(-1)?.id).toBe('ap-new');
  });

  it('loads older pages by chat.history and prepends them, and drops a page asked for before a snapshot', async () => {
    const pages = new Map([['h1.0.2', { items: [user('o1'), user('o2')], history: { start: 0, cursor: null } }]]);
    const thread = new ThreadModel('c1', async (cursor) => pages.get(cursor)!);
    const latest = [user('n1'), user('n2')];
    thread.applyAttach(snapshot(latest, 3, { history: { start: 2, cursor: 'h1.0.2' } }));
    expect(thread.hasOlder).toBe(true);
    expect(await thread.loadOlder()).toBe(2);
    expect(thread.items.map((i) => i.id)).toEqual(['o1', 'o2', 'n1', 'n2']);
    expect(thread.indexOf('n1')).toBe(2);
    expect(thread.hasOlder).toBe(false);
    expect(await thread.loadOlder()).toBe(0);

    let release!: () => void;
    const slow = new ThreadModel(
      'c1',
      (cursor) =>
        new Promise((resolve) => {
          release = () => resolve(pages.get(cursor)!);
        }),
    );
    slow.applyAttach(snapshot(latest, 3, { history: { start: 2, cursor: 'h1.0.2' } }));
    const loading = slow.loadOlder();
    slow.applyAttach(snapshot([user('z')], 50), slow.seq);
    release();
    expect(await loading).toBe(0);
    expect(slow.items.map((i) => i.id)).toEqual(['z']);
  });

  it('takes reset events as a whole new thread, and bookmarks and visuals as whole lists', () => {
    const thread = new ThreadModel('c1');
    thread.applyAttach(snapshot([user('u1')], 1, { bookmarks: [], visuals: [] }));
    thread.applyEnvelope(env({ type: 'reset', info, items: [user('r1'), user('r2')] }, 2));
    expect(thread.items.map((i) => i.id)).toEqual(['r1', 'r2']);
    thread.applyBookmarks([{ itemId: 'r1', excerpt: 'r1', createdAt: 1 }]);
    thread.applyVisuals([{ id: 'v1', title: 'Chart', at: 1, maxHeight: 400, size: 10 }]);
    expect(thread.bookmarks.map((b) => b.itemId)).toEqual(['r1']);
    expect(thread.visuals.map((v) => v.id)).toEqual(['v1']);
  });

  it('takes a lobby status only while it is not attached', () => {
    const thread = new ThreadModel('c1');
    thread.applyStatus(chatInfo({ chatId: 'c1', status: 'needs-you' }));
    expect(thread.info?.status).toBe('needs-you');
    thread.applyAttach(snapshot([], 1));
    thread.applyStatus(chatInfo({ chatId: 'c1', status: 'running' }));
    expect(thread.info?.status).toBe('idle');
  });
});
