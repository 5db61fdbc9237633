import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Thread } from '../../src/contracts/thread.ts';
import {
  ChatAttachResultSchema,
  ChatInfoSchema,
  ChatItemSchema,
  notResumedNote,
  ProviderAccountsSchema,
  ProviderListResultSchema,
  UsageLimitsSnapshotSchema,
  UsageSummaryResultSchema,
} from '../../src/contracts/index.ts';
import type { ChatItem } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ChatStore } from '../../src/host/chats/store.ts';
import { idle, needsYou, openCore, TestClient, tempDir, until } from './harness.ts';

let data: ReturnType<typeof tempDir>;
let core: HostCore;
let client: TestClient;

beforeEach(async () => {
  data = tempDir();
  core = await openCore(data.dir);
  client = new TestClient(core);
});

afterEach(async () => {
  await core.close();
  data.cleanup();
});

const kinds = (items: ChatItem[]) => items.map((item) => item.kind);

describe('a chat turn', () => {
  it('creates a chat, streams the reply as deltas and settles the turn with its cost', async () => {
    const info = await client.ok('chat.create', { chatId: 'c1' });
    expect(ChatInfoSchema.parse(info)).toMatchObject({ chatId: 'c1', provider: 'claude', cwd: data.dir, runtimeMode: 'supervised', status: 'idle' });
    await client.attach('c1');

    const sent = await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    expect(sent.queued).toBe(false);
    expect(sent.turnId).toEqual(expect.any(String));
    await idle(core, 'c1');

    const items = core.session('c1').thread.items;
    expect(kinds(items)).toEqual(['user', 'turn', 'thinking', 'assistant']);
    expect(items[3]).toMatchObject({ kind: 'assistant', text: 'Hello there, friend', streaming: false, turnId: sent.turnId });
    expect(items[2]).toMatchObject({ kind: 'thinking', text: 'Hmm, a greeting.', streaming: false });
    expect(items[1]).toMatchObject({ kind: 'turn', id: sent.turnId, state: 'done', costUsd: 0.02 });
    expect(core.session('c1').info.usage).toMatchObject({ costUsd: 0.02, turns: 1, contextTokens: 100, contextWindow: 1000 });

    // The reply came as several deltas, every event numbered, strictly increasing.
    const deltas = client.events('chat.event').filter((f) => (f.payload as any).event.type === 'delta');
    expect(deltas.length).toBeGreaterThan(1);
    const seqs = client.seqs.get('c1')!;
    expect(seqs.every((seq, i) => Number.isInteger(seq) && seq > 0 && (i === 0 || seq > seqs[i - 1]))).toBe(true);
    expect(seqs.at(-1)).toBe(core.session('c1').seq);
    // What the client folded from the stream is exactly the host's thread.
    expect(client.threads.get('c1')!.items).toEqual(items);
    for (const item of items) ChatItemSchema.parse(item);
  });

  it('coalesces deltas per item while the thread keeps the whole text', async () => {
    await core.close();
    core = await openCore(data.dir, { coalesceMs: 20 });
    client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c1' });
    await client.attach('c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'stream please' });
    await idle(core, 'c1');
    const reply = core.session('c1').thread.items.find((i) => i.kind === 'assistant');
    expect(reply?.kind === 'assistant' && reply.text.length).toBe(500);
    const deltas = client.events('chat.event').filter((f) => (f.payload as any).event.type === 'delta');
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.length).toBeLessThan(50);
    expect(client.threads.get('c1')!.items).toEqual(core.session('c1').thread.items);
  });

  it('answers an existing chat with its info and starts nothing on create', async () => {
    const first = await client.ok('chat.create', { chatId: 'c1' });
    const again = await client.ok('chat.create', { chatId: 'c1', runtimeMode: 'supervised' });
    expect(again).toEqual(first);
    expect(first.running).toBe(false);
    expect(core.session('c1').thread.items).toEqual([]);
  });

  it('ends a failed turn as an error with a note', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'fail now' });
    await idle(core, 'c1');
    const items = core.session('c1').thread.items;
    expect(items.find((i) => i.kind === 'turn')).toMatchObject({ state: 'error' });
    expect(items.find((i) => i.kind === 'note')).toMatchObject({ level: 'error', text: 'It broke.' });
    expect(core.session('c1').info.status).toBe('error');
  });

  it('records tool calls with their output and file changes', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'edit it' });
    await idle(core, 'c1');
    const tool = core.session('c1').thread.items.find((i) => i.kind === 'tool');
    expect(tool).toMatchObject({ kind: 'tool', name: 'Edit', state: 'done', output: 'ok', changes: [{ path: 'a.ts', kind: 'update', diff: '-a\n+b' }] });
  });
});

describe('approvals and questions', () => {
  it('waits for an approval, settles it once, and a second approval gets request-not-found', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'please approve this' });
    const info = await needsYou(core, 'c1');
    expect(info.requests).toHaveLength(1);
    const request = info.requests![0];
    expect(request).toMatchObject({ kind: 'approval', approval: { toolName: 'Bash', subject: 'ls -la', command: 'ls -la', canAllowAlways: true } });
    // Every client hears about it, attached or not.
    expect(client.statuses.get('c1')?.status).toBe('needs-you');

    await client.ok('chat.approve', { chatId: 'c1', requestId: request.requestId, decision: 'allow' });
    expect(await client.fails('chat.approve', { chatId: 'c1', requestId: request.requestId, decision: 'deny' })).toBe('request-not-found');
    await idle(core, 'c1');
    const items = core.session('c1').thread.items;
    expect(items.find((i) => i.kind === 'approval')).toMatchObject({ decision: 'allow' });
    expect(items.find((i) => i.kind === 'tool')).toMatchObject({ state: 'done', output: 'a.txt\nb.txt\n' });
    expect(core.session('c1').info.requests).toBeUndefined();
    expect(await client.fails('chat.approve', { chatId: 'c1', requestId: 'nope', decision: 'allow' })).toBe('request-not-found');
  });

  it('says so and stops when an approval is denied', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    const info = await needsYou(core, 'c1');
    await client.ok('chat.approve', { chatId: 'c1', requestId: info.requests![0].requestId, decision: 'deny', message: 'no' });
    await idle(core, 'c1');
    const items = core.session('c1').thread.items;
    expect(items.some((i) => i.kind === 'tool')).toBe(false);
    expect(items.filter((i) => i.kind === 'assistant').at(-1)).toMatchObject({ text: 'Not listing, then.' });
    expect(items.find((i) => i.kind === 'turn')).toMatchObject({ state: 'done' });
  });

  it('takes an answer to a question and goes on with it', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'ask a question' });
    const info = await needsYou(core, 'c1');
    const request = info.requests![0];
    expect(request).toMatchObject({ kind: 'question', question: { questions: [{ id: 'color', choices: [{ label: 'Blue' }, { label: 'Red' }] }] } });
    // Only async questions may be dismissed.
    expect(await client.fails('chat.dismiss', { chatId: 'c1', itemId: request.itemId })).toBe('request-not-found');
    await client.ok('chat.answer', { chatId: 'c1', requestId: request.requestId, answers: { color: 'Red' } });
    expect(await client.fails('chat.answer', { chatId: 'c1', requestId: request.requestId, answers: { color: 'Blue' } })).toBe('request-not-found');
    await idle(core, 'c1');
    const items = core.session('c1').thread.items;
    expect(items.find((i) => i.kind === 'question')).toMatchObject({ state: 'answered', answers: { color: 'Red' } });
    expect(items.filter((i) => i.kind === 'assistant').at(-1)).toMatchObject({ text: 'You chose Red.' });
  });

  it('dismisses an async question', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'an async question' });
    const info = await needsYou(core, 'c1');
    await client.ok('chat.dismiss', { chatId: 'c1', itemId: info.requests![0].itemId });
    await idle(core, 'c1');
    expect(core.session('c1').thread.items.find((i) => i.kind === 'question')).toMatchObject({ state: 'dismissed', async: true });
  });

  it('cancel stops the turn and settles open requests as cancelled', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    const info = await needsYou(core, 'c1');
    await client.ok('chat.cancel', { chatId: 'c1' });
    const session = core.session('c1');
    expect(session.info).toMatchObject({ status: 'idle', activeTurnId: null });
    expect(session.info.requests).toBeUndefined();
    expect(session.thread.items.find((i) => i.kind === 'approval')).toMatchObject({ decision: 'cancelled' });
    expect(session.thread.items.find((i) => i.kind === 'turn')).toMatchObject({ state: 'aborted' });
    expect(await client.fails('chat.approve', { chatId: 'c1', requestId: info.requests![0].requestId, decision: 'allow' })).toBe('request-not-found');
  });
});

describe('queue and steering', () => {
  it('queues sends during a turn and delivers them in order', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    const first = await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    const info = await needsYou(core, 'c1');
    const one = await client.ok('chat.send', { chatId: 'c1', text: 'one' });
    const two = await client.ok('chat.send', { chatId: 'c1', text: 'two' });
    expect(one.queued).toBe(true);
    expect(two.queued).toBe(true);
    expect(core.session('c1').info.queue?.map((m) => m.text)).toEqual(['one', 'two']);
    expect(core.session('c1').info.queue?.map((m) => m.turnId)).toEqual([one.turnId, two.turnId]);

    await client.ok('chat.approve', { chatId: 'c1', requestId: info.requests![0].requestId, decision: 'allow' });
    await until(() => core.session('c1').thread.items.filter((i) => i.kind === 'turn' && i.state === 'done').length === 3, 'three turns');
    const session = core.session('c1');
    expect(session.thread.items.filter((i) => i.kind === 'user').map((i) => i.kind === 'user' && [i.text, i.turnId])).toEqual([
      ['approve', first.turnId],
      ['one', one.turnId],
      ['two', two.turnId],
    ]);
    expect(session.info.queue).toBeUndefined();
  });

  it('unqueues a message and sends another now, stopping the running turn', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    await needsYou(core, 'c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'one' });
    const two = await client.ok('chat.send', { chatId: 'c1', text: 'two' });
    const [m1, m2] = core.session('c1').info.queue!;
    const removed = await client.ok('chat.unqueue', { chatId: 'c1', messageId: m1.id });
    expect(removed.message).toMatchObject({ id: m1.id, text: 'one' });
    expect(await client.fails('chat.unqueue', { chatId: 'c1', messageId: m1.id })).toBe('request-not-found');
    await client.ok('chat.sendNow', { chatId: 'c1', messageId: m2.id });
    await idle(core, 'c1');
    const session = core.session('c1');
    const turns = session.thread.items.filter((i) => i.kind === 'turn');
    expect(turns.map((t) => t.kind === 'turn' && t.state)).toEqual(['aborted', 'done']);
    expect(turns[1].id).toBe(two.turnId);
    expect(session.thread.items.filter((i) => i.kind === 'user').map((i) => i.kind === 'user' && i.text)).toEqual(['approve', 'two']);
  });

  it('steers a running turn when asked to', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    const first = await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    const info = await needsYou(core, 'c1');
    const steered = await client.ok('chat.send', { chatId: 'c1', text: 'also check b', delivery: 'steer' });
    expect(steered).toEqual({ queued: false, turnId: first.turnId });
    await client.ok('chat.approve', { chatId: 'c1', requestId: info.requests![0].requestId, decision: 'allow' });
    await idle(core, 'c1');
    const items = core.session('c1').thread.items;
    expect(items.filter((i) => i.kind === 'turn')).toHaveLength(1);
    expect(items.filter((i) => i.kind === 'assistant').at(-1)).toMatchObject({ text: 'Noted while working: also check b' });
  });

  it('holds the queue after a cancel until the next send', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    await needsYou(core, 'c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'one' });
    await client.ok('chat.cancel', { chatId: 'c1' });
    expect(core.session('c1').info).toMatchObject({ queuePaused: true, status: 'idle' });
    const next = await client.ok('chat.send', { chatId: 'c1', text: 'two' });
    expect(next.queued).toBe(true);
    await until(() => core.session('c1').thread.items.filter((i) => i.kind === 'turn' && i.state === 'done').length === 2, 'both queued turns');
    expect(
      core
        .session('c1')
        .thread.items.filter((i) => i.kind === 'user')
        .map((i) => i.kind === 'user' && i.text),
    ).toEqual(['approve', 'one', 'two']);
  });
});

describe('attach, replay and history', () => {
  it('answers only the missed events when `since` is still in the log, else a snapshot', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    const first = await client.attach('c1');
    ChatAttachResultSchema.parse(first);
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    const seenSeq = first.seq;

    const other = new TestClient(core);
    const replay = await other.ok('chat.attach', { chatId: 'c1', since: seenSeq });
    ChatAttachResultSchema.parse(replay);
    expect(replay.items).toEqual([]);
    expect(replay.seq).toBe(core.session('c1').seq);
    const thread = new Thread(first.info, first.items);
    for (const event of replay.events) thread.apply(event);
    expect(thread.items).toEqual(core.session('c1').thread.items);
    expect(thread.info).toEqual(core.session('c1').info);

    // Up to date: nothing to replay.
    expect((await other.ok('chat.attach', { chatId: 'c1', since: replay.seq })).events).toEqual([]);
    // A seq from the future (another life of the chat) gets a snapshot.
    const future = await other.ok('chat.attach', { chatId: 'c1', since: replay.seq + 100 });
    expect(future.events).toBeUndefined();
    expect(future.items).toEqual(core.session('c1').thread.items);
  });

  it('answers a snapshot once the log no longer holds what was missed', async () => {
    await core.close();
    core = await openCore(data.dir, { logLimit: 5 });
    client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'hi again' });
    await idle(core, 'c1');
    const result = await client.ok('chat.attach', { chatId: 'c1', since: 1 });
    expect(result.events).toBeUndefined();
    expect(result.items).toEqual(core.session('c1').thread.items);
    expect(result.seq).toBe(core.session('c1').seq);
  });

  it('pages history with an opaque cursor and refuses an unknown one', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    for (const text of ['a', 'b', 'c']) {
      await client.ok('chat.send', { chatId: 'c1', text });
      await idle(core, 'c1');
    }
    const all = core.session('c1').thread.items;
    const attached = await client.ok('chat.attach', { chatId: 'c1', historyLimit: 3 });
    expect(attached.items).toEqual(all.slice(-3));
    expect(attached.history.start).toBe(all.length - 3);
    let cursor: string | null = attached.history.cursor;
    let collected = attached.items;
    while (cursor) {
      const page = await client.ok('chat.history', { chatId: 'c1', cursor, limit: 4 });
      collected = [...page.items, ...collected];
      expect(page.history.start).toBe(all.length - collected.length);
      cursor = page.history.cursor;
    }
    expect(collected).toEqual(all);
    expect(await client.fails('chat.history', { chatId: 'c1', cursor: 'not-a-cursor' })).toBe('history-expired');

    // A clear starts a new history: old cursors expire.
    await client.ok('chat.clear', { chatId: 'c1' });
    expect(await client.fails('chat.history', { chatId: 'c1', cursor: attached.history.cursor })).toBe('history-expired');
  });

  it('lists every waiting request with a paged attach', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    await needsYou(core, 'c1');
    const attached = await client.ok('chat.attach', { chatId: 'c1', historyLimit: 1 });
    expect(attached.pending).toHaveLength(1);
    expect(attached.pending[0]).toMatchObject({ kind: 'approval', decision: 'pending' });
  });

  it('sends thread events only to attached clients, status to everyone, and everything to an allChats client', async () => {
    const relay = new TestClient(core, 'relay', true);
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    expect(client.events('chat.event')).toHaveLength(0);
    expect(client.statuses.get('c1')?.status).toBe('idle');
    expect(relay.events('chat.event').length).toBeGreaterThan(0);
    expect(relay.seqs.get('c1')!.at(-1)).toBe(core.session('c1').seq);

    await client.attach('c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'hi again' });
    await idle(core, 'c1');
    const attachedEvents = client.events('chat.event').length;
    expect(attachedEvents).toBeGreaterThan(0);
    await client.ok('chat.detach', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'third' });
    await idle(core, 'c1');
    expect(client.events('chat.event').length).toBe(attachedEvents);
    // The relay stays attached to every chat, whatever it detaches.
    await relay.ok('chat.detach', { chatId: 'c1' });
    const before = relay.events('chat.event').length;
    await client.ok('chat.send', { chatId: 'c1', text: 'fourth' });
    await idle(core, 'c1');
    expect(relay.events('chat.event').length).toBeGreaterThan(before);
  });
});

describe('idempotency', () => {
  it('answers a retried request id with the same reply and never runs it twice', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    const [a, b] = await Promise.all([
      client.request('chat.send', { chatId: 'c1', text: 'hi' }, 'send-1'),
      client.request('chat.send', { chatId: 'c1', text: 'hi' }, 'send-1'),
    ]);
    expect(a).toEqual(b);
    await idle(core, 'c1');
    const again = await client.request('chat.send', { chatId: 'c1', text: 'hi' }, 'send-1');
    expect(again).toEqual(a);
    expect(core.session('c1').thread.items.filter((i) => i.kind === 'user')).toHaveLength(1);
    // Coded errors are remembered too.
    const denied = await client.request('chat.approve', { chatId: 'c1', requestId: 'x', decision: 'allow' }, 'approve-1');
    expect(await client.request('chat.approve', { chatId: 'c1', requestId: 'x', decision: 'allow' }, 'approve-1')).toEqual(denied);
  });

  it('remembers request ids across a restart', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    const first = await client.request('chat.send', { chatId: 'c1', text: 'hi' }, 'send-restart');
    await idle(core, 'c1');
    await core.close();
    core = await openCore(data.dir);
    core.resume();
    client = new TestClient(core);
    const again = await client.request('chat.send', { chatId: 'c1', text: 'hi' }, 'send-restart');
    expect(again).toEqual(first);
    expect(core.session('c1').thread.items.filter((i) => i.kind === 'user')).toHaveLength(1);
  });
});

describe('restart', () => {
  it('keeps state and seq, and aborts a turn left running with a not-resumed note', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    await needsYou(core, 'c1');
    const before = core.session('c1');
    const seqBefore = before.seq;
    const itemsBefore = before.thread.items.length;
    await core.close();

    core = await openCore(data.dir);
    const relay = new TestClient(core, 'relay', true);
    const loaded = core.session('c1');
    expect(loaded.seq).toBe(seqBefore);
    expect(loaded.thread.items).toHaveLength(itemsBefore);
    core.resume();
    const session = core.session('c1');
    expect(session.info).toMatchObject({ status: 'idle', activeTurnId: null, running: false });
    expect(session.info.requests).toBeUndefined();
    const turns = session.thread.items.filter((i) => i.kind === 'turn');
    expect(turns.map((t) => t.kind === 'turn' && t.state)).toEqual(['done', 'aborted']);
    const note = session.thread.items.find((i) => i.kind === 'note');
    expect(note).toMatchObject({ level: 'warning', turnId: turns[1].id });
    expect(note?.kind === 'note' && note.text.startsWith(notResumedNote(''))).toBe(true);
    expect(session.thread.items.find((i) => i.kind === 'approval')).toMatchObject({ decision: 'cancelled' });
    // Recovery is told like any other change, numbered after what was there.
    expect(relay.seqs.get('c1')![0]).toBe(seqBefore + 1);

    // And the chat works on (a closed runtime refuses requests: this client talks to the new one).
    client = new TestClient(core);
    await client.ok('chat.send', { chatId: 'c1', text: 'hello' });
    await idle(core, 'c1');
    expect(core.session('c1').seq).toBeGreaterThan(seqBefore);
  });

  it('replays the log written after the last record checkpoint', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    const { items, seq } = { items: core.session('c1').thread.items, seq: core.session('c1').seq };
    await core.close();
    // Make the record lag behind the log, as after a crash between the two writes: the record as it
    // stood after the first four events, folded from the log itself.
    const { writeFileSync } = await import('node:fs');
    const store = new ChatStore(data.dir);
    const log = store.readLog('c1');
    store.close();
    const start = log[0].event;
    if (start.type !== 'info' && start.type !== 'reset') throw new Error('the log starts with the chat info');
    const thread = new Thread(start.info, []);
    for (const entry of log.slice(1, 4)) thread.apply(entry.event);
    writeFileSync(core.store.recordPath('c1'), JSON.stringify({ version: 1, info: thread.info, items: thread.items, seq: 4, epoch: 0 }));
    core = await openCore(data.dir);
    expect(core.session('c1').seq).toBe(seq);
    expect(core.session('c1').thread.items).toEqual(items);
  });

  it('never overwrites a record it cannot read', async () => {
    const { writeFileSync, readFileSync, mkdirSync } = await import('node:fs');
    await core.close();
    mkdirSync(`${data.dir}/chats`, { recursive: true });
    const file = `${data.dir}/chats/future.json`;
    writeFileSync(file, JSON.stringify({ version: 99, something: 'new' }));
    core = await openCore(data.dir);
    client = new TestClient(core);
    expect(await client.fails('chat.create', { chatId: 'future' })).toBe('chat-unreadable');
    expect(await client.fails('chat.send', { chatId: 'future', text: 'hi' })).toBe('chat-unreadable');
    expect((await client.ok('chat.list', {})).chats).toEqual([]);
    await core.close();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 99, something: 'new' });
  });
});

describe('bad input', () => {
  it('answers unreadable frames, unknown requests and bad payloads with the right codes', async () => {
    expect(await core.serve('garbage', client.id)).toMatchObject({ id: null, ok: false, error: { code: 'bad-request' } });
    expect(await core.serve({ id: 'r1' }, client.id)).toMatchObject({ id: 'r1', ok: false, error: { code: 'bad-request' } });
    expect(await core.serve({ id: 'r2', type: 'chat.teleport', payload: {} }, client.id)).toMatchObject({
      id: 'r2',
      error: { code: 'unknown-request', message: 'Unknown request type: chat.teleport' },
    });
    expect(await core.serve({ id: 'r3', type: 'toString', payload: {} }, client.id)).toMatchObject({ error: { code: 'unknown-request' } });
    const bad = await core.serve({ id: 'r4', type: 'chat.send', payload: { chatId: 'c1' } }, client.id);
    expect(bad).toMatchObject({ id: 'r4', ok: false, error: { code: 'bad-request' } });
    expect(!bad.ok && bad.error.message).toMatch(/^Invalid payload for chat\.send/);
    expect(!bad.ok && bad.error.message).toMatch(/text/);
    expect(await client.fails('chat.send', { chatId: 'nope', text: 'hi' })).toBe('chat-not-found');
    expect(await client.fails('chat.attach', { chatId: 'nope' })).toBe('chat-not-found');
    await client.ok('chat.create', { chatId: 'c1' });
    expect(await client.fails('chat.send', { chatId: 'c1', text: 'x', attachments: [{ name: 'a.png', mime: 'image/png', data: '***' }] })).toBe(
      'invalid-attachments',
    );
    expect(await client.fails('chat.send', { chatId: 'c1', text: '   ' })).toBe('bad-request');
    const hostile = {
      id: 'r5',
      get type(): string {
        throw new Error('boom');
      },
    };
    expect(await core.serve(hostile, client.id)).toMatchObject({ ok: false, error: { code: 'bad-request' } });
  });

  it('never throws, whatever arrives', async () => {
    const fc = await import('fast-check');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.anything(),
          fc.record({
            id: fc.string(),
            type: fc.constantFrom('chat.send', 'chat.create', 'chat.attach', 'chat.approve', 'chat.history', 'accounts.save'),
            payload: fc.anything(),
          }),
        ),
        async (frame) => {
          const reply = await core.serve(frame, client.id);
          expect(typeof reply.ok).toBe('boolean');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stores attachments as files and keeps their absolute paths', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    const data64 = Buffer.from('hello file').toString('base64');
    await client.ok('chat.send', { chatId: 'c1', text: '', attachments: [{ name: 'note.txt', mime: 'text/plain', data: data64 }] });
    await idle(core, 'c1');
    const user = core.session('c1').thread.items.find((i) => i.kind === 'user');
    const attachment = user?.kind === 'user' ? user.attachments?.[0] : undefined;
    expect(attachment).toMatchObject({ name: 'note.txt', mime: 'text/plain', size: 10 });
    const { readFileSync } = await import('node:fs');
    expect(attachment!.path.startsWith(data.dir)).toBe(true);
    expect(readFileSync(attachment!.path, 'utf8')).toBe('hello file');
  });
});

describe('the host policy', () => {
  it('refuses folders outside its roots and modes above its ceiling', async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(`${data.dir}/allowed/project`, { recursive: true });
    await core.close();
    core = await openCore(data.dir, { policy: new HostPolicy({ home: data.dir, roots: [`${data.dir}/allowed`], modeCeiling: 'auto' }) });
    client = new TestClient(core);
    expect(await client.fails('chat.create', { chatId: 'c1', cwd: '/etc' })).toBe('folder-denied');
    expect(await client.fails('chat.create', { chatId: 'c1', cwd: `${data.dir}/allowed/../elsewhere` })).toBe('folder-denied');
    expect(await client.fails('chat.create', { chatId: 'c1', cwd: `${data.dir}/allowed/project`, runtimeMode: 'full-access' })).toBe('mode-denied');
    // Without a mode a chat is supervised, whatever the ceiling allows.
    const info = await client.ok('chat.create', { chatId: 'c1', cwd: `${data.dir}/allowed/project` });
    expect(info.runtimeMode).toBe('supervised');
    expect((await client.ok('chat.configure', { chatId: 'c1', runtimeMode: 'auto' })).runtimeMode).toBe('auto');
    expect(await client.fails('chat.configure', { chatId: 'c1', runtimeMode: 'full-access' })).toBe('mode-denied');
    expect((await client.ok('chat.configure', { chatId: 'c1', runtimeMode: 'supervised' })).runtimeMode).toBe('supervised');
  });
});

describe('the rest of the table', () => {
  it('answers provider, account and usage requests with schema-valid results', async () => {
    const providers = ProviderListResultSchema.parse(await client.ok('provider.list', {}));
    // The served provider first; the CLIs this host does not serve follow (provider-list.test.ts).
    expect(providers.providers[0]).toEqual(expect.objectContaining({ kind: 'claude', name: 'Claude Code (scripted)', installed: true }));
    const accounts = ProviderAccountsSchema.parse(await client.ok('accounts.list', {}));
    expect(accounts.statuses).toEqual([expect.objectContaining({ id: 'claude', kind: 'claude', state: 'ready' })]);
    // Variable names are the host's to allow: this one names TOKEN.
    await core.close();
    core = await openCore(data.dir, { policy: new HostPolicy({ home: data.dir, accountEnv: ['TOKEN'] }) });
    client = new TestClient(core);
    const created = await client.ok('accounts.create', { kind: 'claude', label: 'Work Account' });
    expect(created.id).toBe('work-account');
    const saved = await client.ok('accounts.save', {
      accounts: {
        ...created.accounts,
        'work-account': {
          kind: 'claude',
          env: [
            { name: 'TOKEN', value: '', sensitive: true, valueRedacted: true },
            { name: 'ANTHROPIC_MODEL', value: 'x', sensitive: false },
          ],
        },
      },
    });
    expect(saved.accounts['work-account'].env[0]).toEqual({ name: 'TOKEN', value: '', sensitive: true, valueRedacted: true });
    expect(await client.fails('accounts.save', { accounts: { w: { kind: 'claude', env: [{ name: 'TOKEN', value: 'secret', sensitive: true }] } } })).toBe(
      'secrets-unavailable',
    );
    expect(client.events('accounts.changed').length).toBeGreaterThan(0);
    UsageSummaryResultSchema.parse(await client.ok('usage.summary', { from: '2026-01-01', to: '2026-01-31', resolution: 'day', timeZone: 'UTC' }));
    expect(UsageLimitsSnapshotSchema.parse(await client.ok('usage.limits', {}))).toEqual({ providers: [] });
    expect(await client.ok('usage.subscribe', {})).toEqual({});
  });

  it('refuses what a plain host does not do with the protocol codes', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    const t = { chatId: 'c1' };
    // Forks need a turn to continue after (see fork.test.ts for what they do).
    expect(await client.fails('chat.fork', { ...t, turnId: 't' })).toBe('turn-not-found');
    expect(await client.fails('chat.forkInfo', { ...t, turnId: 't' })).toBe('turn-not-found');
    expect(await client.fails('chat.summarize', t)).toBe('turn-not-found');
    expect(await client.fails('chat.continueOn', { ...t, account: 'nobody' })).toBe('account-unavailable');
    expect(await client.fails('chat.subagent', { ...t, toolUseId: 'x' })).toBe('subagent-not-found');
    expect(await client.fails('chat.stopSubagent', { ...t, toolUseId: 'x' })).toBe('subagent-not-found');
    expect(await client.fails('chat.stopTask', { ...t, taskId: 'x' })).toBe('task-not-found');
    expect(await client.fails('chat.uiChoice', { ...t, itemId: 'i', blockId: 'b', revision: 'r', choiceId: 'c' })).toBe('chat-unsupported');
    expect(await client.fails('ui.query', { ...t, itemId: 'i', blockId: 'b', revision: 'r', query: 'q' })).toBe('refused-query');
    expect(await client.fails('chat.addBookmark', { ...t, itemId: 'i' })).toBe('chat-unsupported');
    expect(await client.fails('chat.removeVisual', { ...t, visualId: 'v' })).toBe('chat-unsupported');
    expect(await client.ok('skills.list', t)).toEqual({ skills: [] });
    expect(await client.fails('chat.turnDiff', { ...t, turnId: 'nope' })).toBe('turn-not-found');
    const sent = await client.ok('chat.send', { ...t, text: 'hi' });
    await idle(core, 'c1');
    expect(await client.ok('chat.turnDiff', { ...t, turnId: sent.turnId })).toEqual({ diff: null });
  });

  it('answers chat-not-found before chat-unsupported for a chat it does not have', async () => {
    const t = { chatId: 'nope' };
    expect(await client.fails('chat.fork', { ...t, turnId: 't' })).toBe('chat-not-found');
    expect(await client.fails('chat.summarize', t)).toBe('chat-not-found');
    expect(await client.fails('chat.uiChoice', { ...t, itemId: 'i', blockId: 'b', revision: 'r', choiceId: 'c' })).toBe('chat-not-found');
    expect(await client.fails('chat.addBookmark', { ...t, itemId: 'i' })).toBe('chat-not-found');
    expect(await client.fails('chat.removeVisual', { ...t, visualId: 'v' })).toBe('chat-not-found');
  });

  it('creates a chat on the default account when the remembered pick is gone, but refuses an explicit unknown one', async () => {
    await client.ok('chat.setPreferences', { accounts: { claude: 'gone' }, changedAt: 1 });
    const info = await client.ok('chat.create', { chatId: 'c1' });
    expect(info.account).toBeUndefined();
    expect(await client.fails('chat.create', { chatId: 'c2', account: 'gone' })).toBe('account-unavailable');
    const created = await client.ok('accounts.create', { kind: 'claude', label: 'Work' });
    await client.ok('chat.setPreferences', { accounts: { claude: created.id }, changedAt: 2 });
    expect((await client.ok('chat.create', { chatId: 'c3' })).account).toBe(created.id);
  });

  it('compacts and clears between turns, refuses both during one, and kill removes everything', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    // Nothing said yet: nothing to fold, and no backend is started for it.
    expect(await client.ok('chat.compact', { chatId: 'c1' })).toEqual({});
    expect(core.session('c1').thread.items).toEqual([]);
    expect(core.session('c1').info.running).toBe(false);
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    await client.ok('chat.compact', { chatId: 'c1' });
    // The compaction is a turn of its own, with the backend's marker in it and no user message.
    await idle(core, 'c1');
    const [compacted] = core.session('c1').thread.items.filter((i) => i.kind === 'compaction');
    expect(compacted).toMatchObject({ kind: 'compaction', preTokens: 100 });
    expect(core.session('c1').thread.get(compacted.turnId!)).toMatchObject({ kind: 'turn', label: 'Compact', state: 'done' });
    expect(core.session('c1').thread.items.filter((i) => i.kind === 'user')).toHaveLength(1);
    expect(core.session('c1').info.usage.contextTokens).toBe(0);
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    await needsYou(core, 'c1');
    expect(await client.fails('chat.compact', { chatId: 'c1' })).toBe('chat-busy');
    expect(await client.fails('chat.clear', { chatId: 'c1' })).toBe('chat-busy');
    await client.attach('c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'queued behind' });
    await client.ok('chat.clear', { chatId: 'c1', force: true });
    expect(core.session('c1').info.queue).toBeUndefined();
    expect(core.session('c1').thread.items).toEqual([]);
    expect(core.session('c1').info).toMatchObject({ status: 'idle', usage: { costUsd: 0, turns: 0 } });
    expect(client.threads.get('c1')!.items).toEqual([]);

    const { existsSync } = await import('node:fs');
    await core.session('c1').write();
    expect(existsSync(core.store.recordPath('c1'))).toBe(true);
    await client.ok('chat.kill', { chatId: 'c1' });
    expect(existsSync(core.store.recordPath('c1'))).toBe(false);
    expect(core.store.readLog('c1')).toEqual([]);
    expect(await client.fails('chat.attach', { chatId: 'c1' })).toBe('chat-not-found');
  });
});

describe('visuals', () => {
  it('publishes a visual: the page to the relay first, then the list to attached clients', async () => {
    const relay = new TestClient(core, 'relay', true);
    await client.ok('chat.create', { chatId: 'c1' });
    await client.attach('c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'show a visual' });
    await idle(core, 'c1');
    await until(() => client.events('chat.visuals').length === 1, 'the visuals event');
    const names = relay.frames.map((f) => f.event).filter((e) => e === 'visual.page' || e === 'chat.visuals');
    expect(names).toEqual(['visual.page', 'chat.visuals']);
    const page = relay.events('visual.page')[0].payload as { chatId: string; visualId: string; html: string };
    const list = (client.events('chat.visuals')[0].payload as { visuals: any[] }).visuals;
    expect(list).toEqual([expect.objectContaining({ id: page.visualId, title: 'A chart', maxHeight: 300, size: 12 })]);
    expect(list[0].turnId).toBe(core.session('c1').thread.items.find((i) => i.kind === 'turn')?.id);
    expect(client.events('visual.page')).toHaveLength(0);
    expect((await client.ok('chat.attach', { chatId: 'c1' })).visuals).toEqual(list);
  });

  it("hands the relay a visual's page before any list on disk names it, so a crash never leaves a listed visual without its page", async () => {
    const pagesSent = new Set<string>();
    core.connect(
      'relay',
      (frame) => {
        if (frame.event === 'visual.page') pagesSent.add((frame.payload as { visualId: string }).visualId);
      },
      { allChats: true },
    );
    const listed: string[][] = [];
    const writeVisuals = core.store.writeVisuals.bind(core.store);
    core.store.writeVisuals = (chatId, visuals) => {
      listed.push(visuals.filter((v) => !pagesSent.has(v.id)).map((v) => v.id));
      return writeVisuals(chatId, visuals);
    };
    await client.ok('chat.create', { chatId: 'c1' });
    await core.publishVisual('c1', { title: 'one', html: '<p>1</p>' });
    await core.publishVisual('c1', { title: 'two', html: '<p>2</p>' });
    expect(listed).toEqual([[], []]);
  });

  it('applies the publish rules', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: { code?: string }) => e.code,
      );
    expect(await code(core.publishVisual('c1', { title: '  ', html: '<p>x</p>' }))).toBe('visual-invalid');
    expect(await code(core.publishVisual('c1', { title: 't', html: '   ' }))).toBe('visual-invalid');
    expect(await code(core.publishVisual('c1', { title: 't', html: '<p>x</p>', maxHeight: 10 }))).toBe('visual-invalid');
    expect(await code(core.publishVisual('c1', { title: 't', html: '<p>x</p>', heights: [[0, 10]] }))).toBe('visual-invalid');
    expect(await code(core.publishVisual('c1', { title: 't', html: 'x'.repeat(16 * 1024 * 1024 + 1) }))).toBe('visual-too-large');
    expect(await code(core.publishVisual('nope', { title: 't', html: '<p>x</p>' }))).toBe('chat-not-found');
    const visual = await core.publishVisual('c1', {
      title: ' Sized ',
      html: '<p>x</p>',
      maxHeight: 300.4,
      heights: [
        [640.2, 100.2],
        [320, 200],
        [640, 90],
      ],
    });
    expect(visual).toMatchObject({
      title: 'Sized',
      maxHeight: 300,
      heights: [
        [320, 200],
        [640, 90],
      ],
    });
    expect(await code(core.publishVisual('c1', { title: 't', html: '<p>x</p>', layout: 'huge' }))).toBe('visual-invalid');
    expect(await core.publishVisual('c1', { title: 't', html: '<p>x</p>', layout: 'wide' })).toMatchObject({ layout: 'wide' });
    // Whatever shape a backend hands over, a broken rule is a coded refusal, never an internal failure.
    expect(await code(core.publishVisual('c1', { title: 't', html: '<p>x</p>', heights: 'tall' as never }))).toBe('visual-invalid');
    expect(await code(core.publishVisual('c1', { title: 't', html: '<p>x</p>', heights: [7] as never }))).toBe('visual-invalid');
  });

  it('refuses a page that fits 16 MiB but not the link once escaped, before listing it', async () => {
    const relay = new TestClient(core, 'relay', true);
    await client.ok('chat.create', { chatId: 'c1' });
    const quotes = '"'.repeat(9 * 1024 * 1024);
    await expect(core.publishVisual('c1', { title: 'q', html: quotes })).rejects.toMatchObject({ code: 'visual-too-large' });
    expect((await client.ok('chat.attach', { chatId: 'c1' })).visuals).toEqual([]);
    expect(relay.events('visual.page')).toHaveLength(0);
  });

  it('a visual published while the chat is cleared goes with the clear', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    // The outcome is taken at once, so the rejection is never left unhandled while the clear runs.
    const publishing = core.publishVisual('c1', { title: 'late', html: '<p>late</p>' }).then(
      () => null,
      (error: unknown) => error,
    );
    await client.ok('chat.clear', { chatId: 'c1' });
    expect(await publishing).toMatchObject({ code: 'chat-not-found' });
    expect((await client.ok('chat.attach', { chatId: 'c1' })).visuals).toEqual([]);
    await core.close();
    core = await openCore(data.dir);
    expect((await new TestClient(core).ok('chat.attach', { chatId: 'c1' })).visuals).toEqual([]);
  });
});

describe('chat ids on disk', () => {
  it('a chat named `..` or `.` stays inside its own files: clearing and killing it leave the rest of the data alone', async () => {
    const { existsSync } = await import('node:fs');
    await client.ok('chat.create', { chatId: 'keep' });
    const file = Buffer.from('kept').toString('base64');
    await client.ok('chat.send', { chatId: 'keep', text: 'hi', attachments: [{ name: 'a.txt', mime: 'text/plain', data: file }] });
    await idle(core, 'keep');
    for (const chatId of ['..', '.']) {
      await client.ok('chat.create', { chatId });
      await client.ok('chat.send', { chatId, text: 'hi', attachments: [{ name: 'b.txt', mime: 'text/plain', data: file }] });
      await idle(core, chatId);
      await client.ok('chat.clear', { chatId });
      await client.ok('chat.kill', { chatId });
    }
    const kept = core.session('keep').thread.items.find((i) => i.kind === 'user');
    expect(kept?.kind === 'user' && existsSync(kept.attachments![0].path)).toBe(true);
    expect(existsSync(core.store.recordPath('keep'))).toBe(true);
    await core.close();
    core = await openCore(data.dir);
    expect([...core.sessions.keys()]).toEqual(['keep']);
  });

  it('keeps a chat whose id looks like one of its own file suffixes across a restart', async () => {
    await client.ok('chat.create', { chatId: 'plan' });
    await client.ok('chat.create', { chatId: 'plan.visuals' });
    await client.ok('chat.create', { chatId: 'plan.log' });
    await core.close();
    core = await openCore(data.dir);
    expect([...core.sessions.keys()].sort()).toEqual(['plan', 'plan.log', 'plan.visuals']);
  });

  it('refuses a chat id too long to be a file name, and creates nothing', async () => {
    expect(await client.fails('chat.create', { chatId: 'x'.repeat(300) })).toBe('bad-request');
    expect((await client.ok('chat.list', {})).chats).toEqual([]);
  });
});
