import { env, evictAllDurableObjects, runDurableObjectAlarm, SELF } from 'cloudflare:test';
import { describe, expect, it, vi } from 'vitest';
import { LINK_HEARTBEAT } from '../../src/contracts/index.ts';
import { Client, FakeHost, approvalItem, assistantItem, until, userItem, userToken, visualPage, visualTicket } from './peers.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-state-${++hosts}`).connect();

/** A chat with a person attached whose host, now gone, will refuse the message 'bad' with `error` when it is back. */
async function awayRefusingHost(chatId: string, error: { code: string; message: string }) {
  const host = await newHost();
  host.create(chatId, []);
  host.handlers['chat.send'] = (p) => {
    if (p.text === 'bad') throw Object.assign(new Error(error.message), { code: error.code });
    return { queued: false };
  };
  const me = await Client.chat(host.hostId, chatId);
  await me.request('chat.attach', { chatId });
  host.disconnect();
  await me.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline');
  return { host, me };
}

describe('bookmarks, answered by the relay', () => {
  it('follows the documented rules and broadcasts the whole list', async () => {
    const host = await newHost();
    host.create('b1', [
      userItem('u1', '  hello \n  world  '),
      assistantItem('a1', 'x'.repeat(400), false),
      { kind: 'assistant', id: 'a2', createdAt: 1, turnId: 't1', text: 'sub', streaming: false, parentToolUseId: 'task-1' },
      { kind: 'note', id: 'n1', createdAt: 1, turnId: null, level: 'info', text: 'note' },
    ]);
    const me = await Client.chat(host.hostId, 'b1');
    const other = await Client.chat(host.hostId, 'b1');
    await me.request('chat.attach', { chatId: 'b1' });
    await other.request('chat.attach', { chatId: 'b1' });

    const added = await me.request('chat.addBookmark', { chatId: 'b1', itemId: 'u1' });
    expect(added.result.bookmarks).toEqual([{ itemId: 'u1', excerpt: 'hello world', createdAt: expect.any(Number) }]);
    const long = await me.request('chat.addBookmark', { chatId: 'b1', itemId: 'a1', name: `  ${'n'.repeat(116)}  ` });
    const a1 = long.result.bookmarks.find((b: any) => b.itemId === 'a1');
    expect(a1.excerpt).toHaveLength(160);
    expect(a1.name).toBe('n'.repeat(116));
    expect((await me.request('chat.addBookmark', { chatId: 'b1', itemId: 'a1', name: 'n'.repeat(121) })).error.code).toBe('bad-request');
    expect((await me.request('chat.addBookmark', { chatId: 'b1', itemId: 'a2' })).error.code).toBe('item-not-found');
    expect((await me.request('chat.addBookmark', { chatId: 'b1', itemId: 'n1' })).error.code).toBe('item-not-found');
    expect((await me.request('chat.addBookmark', { chatId: 'b1', itemId: 'nope' })).error.code).toBe('item-not-found');

    // Adding again keeps the bookmark and only names it.
    const renamedByAdd = await me.request('chat.addBookmark', { chatId: 'b1', itemId: 'u1', name: 'Greeting' });
    expect(renamedByAdd.result.bookmarks.find((b: any) => b.itemId === 'u1')).toMatchObject({ name: 'Greeting', excerpt: 'hello world' });
    const unnamed = await me.request('chat.renameBookmark', { chatId: 'b1', itemId: 'u1', name: '   ' });
    expect(unnamed.result.bookmarks.find((b: any) => b.itemId === 'u1').name).toBeUndefined();
    expect((await me.request('chat.renameBookmark', { chatId: 'b1', itemId: 'zz', name: 'x' })).error.code).toBe('bookmark-not-found');

    expect((await me.request('chat.removeBookmark', { chatId: 'b1', itemId: 'a1' })).result.bookmarks).toHaveLength(1);
    expect((await me.request('chat.removeBookmark', { chatId: 'b1', itemId: 'a1' })).ok).toBe(true);

    const pushed = other.frames.filter((f) => f.event === 'chat.bookmarks');
    expect(pushed.length).toBeGreaterThanOrEqual(5);
    expect(pushed.at(-1)!.payload.bookmarks.map((b: any) => b.itemId)).toEqual(['u1']);

    const reattached = await Client.chat(host.hostId, 'b1');
    expect((await reattached.request('chat.attach', { chatId: 'b1' })).result.bookmarks.map((b: any) => b.itemId)).toEqual(['u1']);
  });

  it('refuses the 201st bookmark with too-many-bookmarks, even while the host is offline', async () => {
    const host = await newHost();
    host.create(
      'b2',
      Array.from({ length: 201 }, (_, i) => userItem(`u${i}`, `m${i}`)),
    );
    const me = await Client.chat(host.hostId, 'b2');
    await me.request('chat.attach', { chatId: 'b2' });
    host.disconnect();
    for (let i = 0; i < 200; i++) {
      const reply = await me.request('chat.addBookmark', { chatId: 'b2', itemId: `u${i}` });
      expect(reply.ok).toBe(true);
    }
    expect((await me.request('chat.addBookmark', { chatId: 'b2', itemId: 'u200' })).error.code).toBe('too-many-bookmarks');
  });
});

describe('approvals and questions: the first answer wins', () => {
  it('lets exactly one of two simultaneous approvals reach the host', async () => {
    const host = await newHost();
    host.create('a1', []);
    host.handlers['chat.approve'] = (p) => {
      host.emit('a1', { type: 'item', item: { ...approvalItem('ap1', 'req-1'), decision: p.decision } });
      return {};
    };
    const alice = await Client.chat(host.hostId, 'a1');
    const phone = await Client.chat(host.hostId, 'a1');
    await alice.request('chat.attach', { chatId: 'a1' });
    await phone.request('chat.attach', { chatId: 'a1' });
    host.emit('a1', { type: 'item', item: approvalItem('ap1', 'req-1') });
    await until(() => phone.chatEvents().length === 1, 'approval item on the phone');

    const [one, two] = await Promise.all([
      alice.request('chat.approve', { chatId: 'a1', requestId: 'req-1', decision: 'allow' }),
      phone.request('chat.approve', { chatId: 'a1', requestId: 'req-1', decision: 'deny', message: 'no' }),
    ]);
    const oks = [one, two].filter((r) => r.ok);
    const refused = [one, two].filter((r) => !r.ok);
    expect(oks).toHaveLength(1);
    expect(refused.map((r) => r.error.code)).toEqual(['request-not-found']);
    expect(host.requestsOf('chat.approve')).toHaveLength(1);
    // Both see the card settle.
    await until(() => alice.chatEvents().some((f) => f.payload.event.item?.decision && f.payload.event.item.decision !== 'pending'), 'settled card');
    const row = await env.DB.prepare('SELECT state, settled_by FROM requests WHERE host_id = ? AND request_id = ?').bind(host.hostId, 'req-1').first();
    expect(row).toEqual({ state: 'settled', settled_by: 'owner-1' });
  });

  it('forwards the winning answer again when it is retried after the relay lost its reply', async () => {
    const host = await newHost();
    host.create('a4', []);
    host.handlers['chat.approve'] = () => ({});
    const me = await Client.chat(host.hostId, 'a4');
    await me.request('chat.attach', { chatId: 'a4' });
    host.emit('a4', { type: 'item', item: approvalItem('ap4', 'req-4') });
    await until(() => me.chatEvents().length === 1, 'approval');
    // As if the room settled the row and then died before it forwarded the answer or kept its reply.
    const payload = { chatId: 'a4', requestId: 'req-4', decision: 'allow' };
    await env.DB.prepare(
      "UPDATE requests SET state = 'settled', settled_by = 'owner-1', settled_with = ?, settled_at = 1 WHERE host_id = ? AND request_id = 'req-4'",
    )
      .bind(JSON.stringify({ type: 'chat.approve', payload, answerId: 'answer-1' }), host.hostId)
      .run();
    expect((await me.request('chat.approve', payload, 'answer-1')).ok).toBe(true);
    expect(host.requestsOf('chat.approve')).toHaveLength(1);
    expect((await me.request('chat.approve', payload, 'answer-2')).error.code).toBe('request-not-found');
  });

  it('reopens an answer that never reached the host when the room starts again, so anyone may answer', async () => {
    const host = await newHost();
    host.create('a5', []);
    host.handlers['chat.approve'] = () => ({});
    const me = await Client.chat(host.hostId, 'a5');
    await me.request('chat.attach', { chatId: 'a5' });
    host.emit('a5', { type: 'item', item: approvalItem('ap5', 'req-5') });
    await until(() => me.chatEvents().length === 1, 'approval');
    await env.DB.prepare(
      "UPDATE requests SET state = 'settled', settled_by = 'owner-1', settled_with = '{}', settled_at = 1 WHERE host_id = ? AND request_id = 'req-5'",
    )
      .bind(host.hostId)
      .run();
    await evictAllDurableObjects();
    await host.connect();
    const phone = await Client.chat(host.hostId, 'a5');
    await phone.request('chat.attach', { chatId: 'a5' });
    expect((await phone.request('chat.approve', { chatId: 'a5', requestId: 'req-5', decision: 'deny' })).ok).toBe(true);
    expect(host.requestsOf('chat.approve').map((f) => f.payload.decision)).toEqual(['deny']);
  });

  it('leaves a request open for the next answer when the host refuses one, so a malformed answer never locks it', async () => {
    const host = await newHost();
    host.create('a6', []);
    let refused = false;
    host.handlers['chat.answer'] = () => {
      if (!refused) {
        refused = true;
        throw Object.assign(new Error('Unknown question id'), { code: 'bad-request' });
      }
      return {};
    };
    const me = await Client.chat(host.hostId, 'a6');
    await me.request('chat.attach', { chatId: 'a6' });
    const question = {
      kind: 'question' as const,
      id: 'q6',
      createdAt: Date.now(),
      turnId: 't1',
      requestId: 'req-6',
      answers: null,
      state: 'pending' as const,
      questions: [{ id: 'color', header: 'Color', question: 'Which color?', multiSelect: false, choices: [{ label: 'Red', description: '' }] }],
    };
    host.emit('a6', { type: 'item', item: question });
    await until(() => me.chatEvents().length === 1, 'question');
    expect((await me.request('chat.answer', { chatId: 'a6', requestId: 'req-6', answers: { colour: 'Red' } })).error.code).toBe('bad-request');
    expect((await me.request('chat.answer', { chatId: 'a6', requestId: 'req-6', answers: { color: 'Red' } })).ok).toBe(true);
    expect(host.requestsOf('chat.answer').map((f) => Object.keys(f.payload.answers))).toEqual([['colour'], ['color']]);
  });

  it('keeps a request settled when the host settled it before its reply was lost', async () => {
    const host = await newHost();
    host.create('a7', []);
    host.handlers['chat.approve'] = (p) => {
      host.emit('a7', { type: 'item', item: { ...approvalItem('ap7', 'req-7'), decision: p.decision } });
      return new Promise(() => undefined); // acted on, never answered
    };
    const me = await Client.chat(host.hostId, 'a7');
    await me.request('chat.attach', { chatId: 'a7' });
    host.emit('a7', { type: 'item', item: approvalItem('ap7', 'req-7') });
    await until(() => me.chatEvents().length === 1, 'approval');
    expect((await me.request('chat.approve', { chatId: 'a7', requestId: 'req-7', decision: 'allow' })).error.code).toBe('host-timeout');
    expect(me.chatEvents().at(-1)!.payload.event.item.decision).toBe('allow');
    expect((await me.request('chat.approve', { chatId: 'a7', requestId: 'req-7', decision: 'deny' })).error.code).toBe('request-not-found');
    expect(host.requestsOf('chat.approve')).toHaveLength(1);
  });

  it('refuses an answer after the CLI settled the request in its own prompt', async () => {
    const host = await newHost();
    host.create('a2', []);
    host.handlers['chat.approve'] = () => ({});
    const me = await Client.chat(host.hostId, 'a2');
    await me.request('chat.attach', { chatId: 'a2' });
    host.emit('a2', { type: 'item', item: approvalItem('ap2', 'req-2') });
    host.emit('a2', { type: 'item', item: { ...approvalItem('ap2', 'req-2'), decision: 'allow' } });
    await until(() => me.chatEvents().length === 2, 'settled in the terminal');
    const late = await me.request('chat.approve', { chatId: 'a2', requestId: 'req-2', decision: 'deny' });
    expect(late.error.code).toBe('request-not-found');
    expect(host.requestsOf('chat.approve')).toHaveLength(0);
  });

  it('keeps an approval answerable when the host was offline, so nothing is stuck', async () => {
    const host = await newHost();
    host.create('a3', []);
    host.handlers['chat.approve'] = () => ({});
    const me = await Client.chat(host.hostId, 'a3');
    await me.request('chat.attach', { chatId: 'a3' });
    host.emit('a3', { type: 'item', item: approvalItem('ap3', 'req-3') });
    await until(() => me.chatEvents().length === 1, 'approval');
    host.disconnect();
    await until(async () => !(await env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline()), 'host offline');
    const offline = await me.request('chat.approve', { chatId: 'a3', requestId: 'req-3', decision: 'allow' });
    expect(offline.error.code).toBe('host-offline');
    await host.connect();
    const again = await me.request('chat.approve', { chatId: 'a3', requestId: 'req-3', decision: 'allow' });
    expect(again.ok).toBe(true);
  });
});

describe('sends while the host is offline', () => {
  it('keeps them durably, shows them queued, and delivers them once, in order, when the host returns', async () => {
    const host = await newHost();
    host.create('q1', []);
    const me = await Client.chat(host.hostId, 'q1');
    const watcher = await Client.chat(host.hostId, 'q1');
    await me.request('chat.attach', { chatId: 'q1' });
    await watcher.request('chat.attach', { chatId: 'q1' });
    host.disconnect();
    await until(async () => !(await env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline()), 'host offline');

    const first = await me.request('chat.send', { chatId: 'q1', text: 'one' }, 'send-1');
    const retry = await me.request('chat.send', { chatId: 'q1', text: 'one' }, 'send-1');
    const second = await me.request('chat.send', { chatId: 'q1', text: 'two' }, 'send-2');
    expect(first.result).toEqual({ queued: true });
    expect(retry.result).toEqual({ queued: true });
    expect(second.result).toEqual({ queued: true });
    await until(() => watcher.chatEvents().some((f) => f.payload.event.type === 'info' && f.payload.event.info.queue?.length === 2), 'queue visible');

    // The room survives a restart with the kept sends.
    await evictAllDurableObjects();
    await host.connect();
    await until(() => host.requestsOf('chat.send').length === 2, 'both delivered');
    // A window for a third delivery (a kept send sent twice) to arrive in: there must be none.
    await new Promise((r) => setTimeout(r, 300));
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['one', 'two']);
    const fresh = await Client.chat(host.hostId, 'q1');
    await until(async () => ((await fresh.request('chat.attach', { chatId: 'q1' })).result.info.queue ?? []).length === 0, 'queue emptied');
    // A retry of a delivered send still answers once, without a second delivery.
    expect((await me.request('chat.send', { chatId: 'q1', text: 'one' }, 'send-1')).result).toEqual({ queued: true });
    expect(host.requestsOf('chat.send')).toHaveLength(2);
  });

  it('delivers a send kept while the kept ones are going out, after them', async () => {
    const host = await newHost();
    host.create('q4', []);
    const me = await Client.chat(host.hostId, 'q4');
    await me.request('chat.attach', { chatId: 'q4' });
    host.disconnect();
    await until(async () => !(await env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline()), 'host offline');
    expect((await me.request('chat.send', { chatId: 'q4', text: 'one' })).result).toEqual({ queued: true });
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const answer = host.handlers['chat.send']!;
    host.handlers['chat.send'] = async (p, f) => {
      if (p.text === 'one') await held; // the host is slow with the first kept send
      return answer(p, f);
    };
    await host.connect();
    await until(() => host.requestsOf('chat.send').length === 1, 'first kept send out');
    expect((await me.request('chat.send', { chatId: 'q4', text: 'two' })).result).toEqual({ queued: true });
    release();
    await until(() => host.requestsOf('chat.send').length === 2, 'second kept send out');
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['one', 'two']);
    const queued = () =>
      me
        .chatEvents()
        .filter((f) => f.payload.event.type === 'info')
        .at(-1)!.payload.event.info.queue ?? [];
    await until(() => queued().length === 0, 'queue emptied');
  });

  it('answers a send retried with the same id once, whether the retry races the first or comes later', async () => {
    const host = await newHost();
    host.create('q3', []);
    const me = await Client.chat(host.hostId, 'q3');
    await me.request('chat.attach', { chatId: 'q3' });
    const [a, b] = await Promise.all([
      me.request('chat.send', { chatId: 'q3', text: 'once' }, 'same-id'),
      me.request('chat.send', { chatId: 'q3', text: 'once' }, 'same-id'),
    ]);
    const later = await me.request('chat.send', { chatId: 'q3', text: 'once' }, 'same-id');
    expect(a.result).toEqual(b.result);
    expect(later.result).toEqual(a.result);
    expect(host.requestsOf('chat.send')).toHaveLength(1);
  });

  it('lets people take a kept send back, and tells them when the host refuses one it was finally given', async () => {
    const { host, me } = await awayRefusingHost('q4', { code: 'invalid-attachments', message: 'That attachment is not allowed' });
    await me.request('chat.send', { chatId: 'q4', text: 'first draft' }, 'k-1');
    await me.request('chat.send', { chatId: 'q4', text: 'bad' }, 'k-2');
    await me.request('chat.send', { chatId: 'q4', text: 'good' }, 'k-3');

    const taken = await me.request('chat.unqueue', { chatId: 'q4', messageId: 'relay:k-1' });
    expect(taken.result.message).toMatchObject({ id: 'relay:k-1', text: 'first draft' });
    expect((await me.request('chat.unqueue', { chatId: 'q4', messageId: 'relay:k-1' })).error.code).toBe('request-not-found');
    expect((await me.request('chat.sendNow', { chatId: 'q4', messageId: 'relay:k-3' })).error.code).toBe('host-offline');
    const queue = await me.waitFor(
      (f) =>
        f.event === 'chat.event' &&
        f.payload.event.type === 'info' &&
        (f.payload.event.info.queue ?? []).map((m: any) => m.id).join() === 'relay:k-2,relay:k-3',
      'queue after unqueue',
    );
    expect(queue).toBeTruthy();

    await host.connect();
    const refused = await me.waitFor((f) => f.event === 'chat.sendRefused', 'refusal pushed');
    expect(refused.payload).toMatchObject({ chatId: 'q4', messageId: 'relay:k-2', requestId: 'k-2', error: { code: 'invalid-attachments' } });
    await until(() => host.requestsOf('chat.send').length === 2, 'both remaining sends tried');
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['bad', 'good']);
  });

  it('tells a sender who was away when the host refused their kept send, once, before the answer to their next attach', async () => {
    const { host, me } = await awayRefusingHost('q6', { code: 'folder-denied', message: 'That folder is not allowed any more' });
    expect((await me.request('chat.send', { chatId: 'q6', text: 'bad' }, 'away-1')).result).toEqual({ queued: true });
    expect((await me.request('chat.send', { chatId: 'q6', text: 'good' }, 'away-2')).result).toEqual({ queued: true });
    await until(() => me.chatEvents().some((f) => f.payload.event.type === 'info' && f.payload.event.info.queue?.length === 2), 'both queued');
    const since = Math.max(...me.chatEvents().map((f) => f.payload.seq));
    me.close(); // the phone goes away before the host returns

    // Someone else is attached (another person with a role on the host): they see it happen.
    const bea = 'state-bea';
    await userToken(bea);
    await env.DB.prepare(
      "INSERT INTO grants (id, host_id, chat_id, subject_type, subject_id, role, created_at, created_by) VALUES (?, ?, '', 'user', ?, 'operator', ?, ?)",
    )
      .bind(`grant-${bea}`, host.hostId, bea, Date.now(), 'owner-1')
      .run();
    const watcher = await Client.chat(host.hostId, 'q6', bea);
    await watcher.request('chat.attach', { chatId: 'q6' });
    await host.connect();
    await watcher.waitFor((f) => f.event === 'chat.sendRefused', 'refusal pushed live');
    await until(() => watcher.chatEvents().some((f) => f.payload.event.type === 'info' && (f.payload.event.info.queue ?? []).length === 0), 'queue emptied');
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['bad', 'good']);

    // It survives the room's restart; the sender's next attach gets it first, then the answer.
    await evictAllDurableObjects();
    await host.connect();
    const back = await Client.chat(host.hostId, 'q6');
    const replay = await back.request('chat.attach', { chatId: 'q6', since });
    const refusals = (c: Client) => c.frames.filter((f) => f.event === 'chat.sendRefused');
    expect(refusals(back).map((f) => f.payload)).toEqual([
      { chatId: 'q6', messageId: 'relay:away-1', requestId: 'away-1', error: { code: 'folder-denied', message: 'That folder is not allowed any more' } },
    ]);
    expect(back.frames.indexOf(refusals(back)[0]!), 'before the answer').toBeLessThan(back.frames.indexOf(replay));
    expect(replay.result.events.at(-1).info.queue ?? []).toEqual([]);

    // Once past it, an attach hears it no more; a snapshot (nothing known) hears it again; other people never.
    const again = await Client.chat(host.hostId, 'q6');
    await again.request('chat.attach', { chatId: 'q6', since: replay.result.seq });
    expect(refusals(again)).toEqual([]);
    const fresh = await Client.chat(host.hostId, 'q6');
    await fresh.request('chat.attach', { chatId: 'q6' });
    expect(refusals(fresh).map((f) => f.payload.requestId)).toEqual(['away-1']);
    const other = await Client.chat(host.hostId, 'q6', bea);
    await other.request('chat.attach', { chatId: 'q6' });
    expect(refusals(other)).toEqual([]);
  });

  it('answers other changes with host-offline, and reads keep working', async () => {
    const host = await newHost();
    host.create('q2', [userItem('u1', 'hi')]);
    const me = await Client.chat(host.hostId, 'q2');
    await me.request('chat.attach', { chatId: 'q2' });
    host.disconnect();
    await until(async () => !(await env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline()), 'host offline');
    expect((await me.request('chat.cancel', { chatId: 'q2' })).error.code).toBe('host-offline');
    expect((await me.request('chat.configure', { chatId: 'q2', runtimeMode: 'auto' })).error.code).toBe('host-offline');
    const phone = await Client.chat(host.hostId, 'q2');
    const read = await phone.request('chat.attach', { chatId: 'q2' });
    expect(read.result.items.map((i: any) => i.id)).toEqual(['u1']);
    const lobby = await Client.lobby(host.hostId);
    const list = await lobby.request('chat.list', {});
    expect(list.ok).toBe(true);
  });
});

describe('durability and presence', () => {
  it('keeps the thread, log and bookmarks across a Durable Object restart', async () => {
    const host = await newHost();
    host.create('d1', [userItem('u1', 'hi')]);
    const me = await Client.chat(host.hostId, 'd1');
    const attached = await me.request('chat.attach', { chatId: 'd1' });
    host.emit('d1', { type: 'item', item: assistantItem('a1', '') });
    host.emit('d1', { type: 'delta', itemId: 'a1', text: 'streamed ' });
    host.emit('d1', { type: 'delta', itemId: 'a1', text: 'text' });
    await until(() => host.outbox.size === 0, 'acknowledged');
    await me.request('chat.addBookmark', { chatId: 'd1', itemId: 'u1' });
    await evictAllDurableObjects();
    await host.connect();
    const after = await Client.chat(host.hostId, 'd1');
    const snap = await after.request('chat.attach', { chatId: 'd1' });
    expect(snap.result.items.map((i: any) => [i.id, i.text])).toEqual([
      ['u1', 'hi'],
      ['a1', 'streamed text'],
    ]);
    expect(snap.result.bookmarks.map((b: any) => b.itemId)).toEqual(['u1']);
    const replay = await after.request('chat.attach', { chatId: 'd1', since: attached.result.seq });
    // The two deltas may have reached the room together and been joined into one.
    expect(replay.result.events[0].type).toBe('item');
    expect(replay.result.events.slice(1).map((e: any) => [e.type, e.text])).toEqual(
      replay.result.events.length === 2
        ? [['delta', 'streamed text']]
        : [
            ['delta', 'streamed '],
            ['delta', 'text'],
          ],
    );
    expect(replay.result.seq).toBe(attached.result.seq + replay.result.events.length);
  });

  it('keeps a long streamed reply whole across a restart, however many deltas came since its last write', async () => {
    const host = await newHost();
    host.create('d2', []);
    const me = await Client.chat(host.hostId, 'd2');
    await me.request('chat.attach', { chatId: 'd2' });
    host.emit('d2', { type: 'item', item: assistantItem('a1', '') });
    host.emitMany(
      'd2',
      Array.from({ length: 5_400 }, (_, i) => ({ type: 'delta' as const, itemId: 'a1', text: `${i} ` })),
    );
    await until(() => host.outbox.size === 0, 'all acknowledged', 60_000);
    await evictAllDurableObjects();
    await host.connect();
    const snap = await (await Client.chat(host.hostId, 'd2')).request('chat.attach', { chatId: 'd2' });
    expect(snap.result.items[0].text).toBe(Array.from({ length: 5_400 }, (_, i) => `${i} `).join(''));
  });

  it('tells lobby clients when the host goes offline, on close and on silence', async () => {
    const host = await newHost();
    const lobby = await Client.lobby(host.hostId);
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === true, 'online');
    host.disconnect();
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline after close');

    await host.connect();
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === true && f.payload.at > 0, 'online again');
    const before = lobby.frames.length;
    host.silent = true;
    // The silence window passes on a clock the test turns (only Date is faked; the relay's objects run in this isolate).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + LINK_HEARTBEAT.silenceMs + 500);
      const stub = env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId));
      await runDurableObjectAlarm(stub);
      await lobby.waitFor((f) => lobby.frames.indexOf(f) >= before && f.event === 'host.presence' && f.payload.online === false, 'offline after silence');
      expect(await stub.isOnline()).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells people on a chat socket when the host comes and goes', async () => {
    const host = await newHost();
    host.create('p1', []);
    const me = await Client.chat(host.hostId, 'p1');
    await me.waitFor((f) => f.event === 'host.presence' && f.payload.online === true, 'online at connect');
    host.disconnect();
    const offline = await me.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline pushed to the chat socket');
    await host.connect();
    await me.waitFor((f) => me.frames.indexOf(f) > me.frames.indexOf(offline) && f.event === 'host.presence' && f.payload.online === true, 'online again');
  });

  it('answers host-timeout when the host does not reply', async () => {
    const host = await newHost();
    host.create('t1', []);
    const me = await Client.chat(host.hostId, 't1');
    await me.request('chat.attach', { chatId: 't1' });
    const reply = await me.request('chat.compact', { chatId: 't1' });
    expect(reply.error.code).toBe('host-timeout');
  });
});

describe('visuals', () => {
  it('keeps records in D1, serves the page sandboxed on its own route behind a one-page ticket, and removes it', async () => {
    const host = await newHost();
    host.create('v1', []);
    const me = await Client.chat(host.hostId, 'v1');
    await me.request('chat.attach', { chatId: 'v1' });
    const visual = {
      id: 'vis-1',
      title: 'Chart',
      at: Date.now(),
      maxHeight: 600,
      size: 40,
      heights: [
        [320, 200],
        [640, 150],
      ],
    };
    host.sendEvent('visual.page', { chatId: 'v1', visualId: 'vis-1', html: '<h1>chart</h1>' });
    host.sendEvent('chat.visuals', { chatId: 'v1', visuals: [visual] });
    await me.waitFor((f) => f.event === 'chat.visuals', 'visuals pushed');
    const again = await Client.chat(host.hostId, 'v1');
    expect((await again.request('chat.attach', { chatId: 'v1' })).result.visuals).toEqual([visual]);

    const page = await visualPage(host.hostId, 'v1', 'vis-1');
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<h1>chart</h1>');
    const csp = page.headers.get('Content-Security-Policy')!;
    expect(csp).toMatch(/^sandbox allow-scripts allow-forms; /);
    expect(csp).toMatch(/; frame-ancestors /);
    expect(csp).not.toContain('allow-same-origin');
    // It reaches nowhere: no fetch, XHR, socket or beacon, no form sent anywhere, nothing loaded from outside.
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name!, values]),
    );
    expect(directives.get('connect-src')).toEqual(["'none'"]);
    expect(directives.get('form-action')).toEqual(["'none'"]);
    expect(directives.get('default-src')).toEqual(["'none'"]);
    for (const name of ['script-src', 'style-src', 'img-src', 'font-src', 'media-src']) {
      expect(
        directives.get(name)!.filter((v) => !["'unsafe-inline'", "'unsafe-eval'", 'data:', 'blob:'].includes(v)),
        name,
      ).toEqual([]);
    }
    expect((await visualPage(host.hostId, 'v1', 'vis-1', 'mallory')).status).toBe(403);

    // The page's scripts can read its URL: it carries a ticket for that page only, never the person's token.
    const { url } = (await (await visualTicket(host.hostId, 'v1', 'vis-1')).json()) as { url: string };
    const ticket = new URL(url).searchParams.get('ticket')!;
    expect(url).not.toContain(await userToken());
    expect((await SELF.fetch(`http://relay.test/v1/visuals/${host.hostId}/v1/vis-2?ticket=${ticket}`)).status).toBe(401);
    expect((await SELF.fetch(`http://relay.test/v1/visuals/${host.hostId}/v1/vis-1?access_token=${await userToken()}`)).status).toBe(401);
    const socket = await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/lobby?access_token=${ticket}`, { headers: { Upgrade: 'websocket' } });
    expect(socket.status).toBe(401);

    const removed = await me.request('chat.removeVisual', { chatId: 'v1', visualId: 'vis-1' });
    expect(removed.result.visuals).toEqual([]);
    expect((await me.request('chat.removeVisual', { chatId: 'v1', visualId: 'vis-1' })).result.visuals).toEqual([]);
    const gone = await visualPage(host.hostId, 'v1', 'vis-1');
    expect(gone.status).toBe(404);
  });

  it('keeps a removed visual removed when the host next sends its whole list', async () => {
    const host = await newHost();
    host.create('v2', []);
    const me = await Client.chat(host.hostId, 'v2');
    await me.request('chat.attach', { chatId: 'v2' });
    const visual = (id: string) => ({ id, title: id, at: 1, maxHeight: 600, size: 10 });
    for (const id of ['vis-a', 'vis-b']) host.sendEvent('visual.page', { chatId: 'v2', visualId: id, html: `<p>${id}</p>` });
    host.sendEvent('chat.visuals', { chatId: 'v2', visuals: [visual('vis-a'), visual('vis-b')] });
    await me.waitFor((f) => f.event === 'chat.visuals', 'two visuals');
    expect((await me.request('chat.removeVisual', { chatId: 'v2', visualId: 'vis-a' })).result.visuals.map((v: any) => v.id)).toEqual(['vis-b']);
    // The host keeps no removals: its next list still names vis-a.
    host.sendEvent('visual.page', { chatId: 'v2', visualId: 'vis-c', html: '<p>c</p>' });
    host.sendEvent('chat.visuals', { chatId: 'v2', visuals: [visual('vis-a'), visual('vis-b'), visual('vis-c')] });
    const pushed = await me.waitFor((f) => f.event === 'chat.visuals' && f.payload.visuals.some((v: any) => v.id === 'vis-c'), 'third visual');
    expect(pushed.payload.visuals.map((v: any) => v.id)).toEqual(['vis-b', 'vis-c']);
    expect((await (await Client.chat(host.hostId, 'v2')).request('chat.attach', { chatId: 'v2' })).result.visuals.map((v: any) => v.id)).toEqual([
      'vis-b',
      'vis-c',
    ]);
    expect((await visualPage(host.hostId, 'v2', 'vis-a')).status).toBe(404);
  });

  it('keeps a list of more visuals than one D1 statement can name', async () => {
    const host = await newHost();
    host.create('v3', []);
    const me = await Client.chat(host.hostId, 'v3');
    await me.request('chat.attach', { chatId: 'v3' });
    const many = Array.from({ length: 120 }, (_, i) => ({ id: `vis-${i}`, title: `v${i}`, at: i, maxHeight: 600, size: 10 }));
    host.sendEvent('chat.visuals', { chatId: 'v3', visuals: many.slice(0, 119) });
    host.sendEvent('chat.visuals', { chatId: 'v3', visuals: many });
    await until(() => host.outbox.size === 0, 'acknowledged');
    expect((await (await Client.chat(host.hostId, 'v3')).request('chat.attach', { chatId: 'v3' })).result.visuals).toHaveLength(120);
  });
});
