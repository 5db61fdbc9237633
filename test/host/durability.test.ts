// What a kill -9 leaves behind, and what the next start makes of it. A crash is simulated by copying
// the data folder while the host runs: the copy is exactly what a killed process would have left.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { onHostDb } from '../support/host-db.ts';
import { idle, openCore, TestClient, tempDir } from './harness.ts';

let data: ReturnType<typeof tempDir>;
const cores: HostCore[] = [];
beforeEach(() => {
  data = tempDir('tether-crash-');
});
afterEach(async () => {
  await Promise.all(cores.splice(0).map((core) => core.close()));
  data.cleanup();
});

/** A copy of `dir` as a kill -9 would leave it, in a new folder under the test's temp dir. */
let crashes = 0;
function crashCopy(dir: string): string {
  const copy = path.join(data.dir, `crash-${++crashes}`);
  copyAsLeft(dir, copy);
  return copy;
}

/**
 * Copies file by file (host.db with its -wal: every write is committed synchronously, so between two
 * calls the files are as a kill -9 would leave them), skipping a file that is gone by the time it is copied: the host replaces its
 * files by a `.tmp` and a rename (disk.ts), and one listed but renamed away a moment later is not
 * what a kill -9 then would leave either. cpSync instead failed the whole copy on it ("ENOENT, No such
 * file or directory '<copy>/chats'"), which failed a fresh-clone run; copying a folder while a worker
 * thread replaced a file in it so failed cpSync 315 times in 2,000.
 */
function copyAsLeft(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    try {
      if (entry.isDirectory()) copyAsLeft(source, target);
      else copyFileSync(source, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

async function open(dir: string, options: Parameters<typeof openCore>[1] = {}): Promise<HostCore> {
  // No quiet checkpoint during a test: the record lags the log as it would mid-stream. Every copy
  // lets chats work where the original did.
  const core = await openCore(dir, { writeDelayMs: 60_000, policy: new HostPolicy({ home: data.dir }), ...options });
  cores.push(core);
  return core;
}

const userTexts = (core: HostCore, chatId: string) => core.session(chatId).thread.items.flatMap((i) => (i.kind === 'user' ? [i.text] : []));

describe('a chat after kill -9', () => {
  it('keeps every committed event, so events appended after the restart are still there after the next crash', async () => {
    const live = path.join(data.dir, 'live');
    const first = await open(live);
    const client = new TestClient(first);
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'one' });
    await idle(first, 'c1');
    const crashed = crashCopy(live);

    const second = await open(crashed);
    expect(second.session('c1').seq).toBe(first.session('c1').seq);
    await new TestClient(second).ok('chat.send', { chatId: 'c1', text: 'two' });
    await idle(second, 'c1');

    const third = await open(crashCopy(crashed));
    expect(third.session('c1').seq).toBe(second.session('c1').seq);
    expect(third.session('c1').thread.items).toEqual(second.session('c1').thread.items);
    expect(userTexts(third, 'c1')).toEqual(['one', 'two']);
  });

  it('never cuts the log past the record on disk: a crash at any point reloads the whole thread', async () => {
    const live = path.join(data.dir, 'live');
    const core = await open(live, { logLimit: 5 });
    const client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c1' });
    for (const text of ['a', 'b', 'c', 'd']) {
      await client.ok('chat.send', { chatId: 'c1', text });
      await idle(core, 'c1');
      const reloaded = await open(crashCopy(live), { logLimit: 5 });
      expect(reloaded.session('c1').seq).toBe(core.session('c1').seq);
      expect(reloaded.session('c1').thread.items).toEqual(core.session('c1').thread.items);
    }
    // The log stays bounded all the same.
    const rows = onHostDb(live, (db) => db.prepare("SELECT count(*) AS c FROM chat_events WHERE chat_id = 'c1'").get()!.c as number);
    expect(rows).toBeLessThan(core.session('c1').seq);
  });
});

describe('the request journal after kill -9', () => {
  it('does not run a retried send again when the host died after the send and before its reply was journaled', async () => {
    const live = path.join(data.dir, 'live');
    const core = await open(live);
    const client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c1' });
    await client.request('chat.send', { chatId: 'c1', text: 'once' }, 'send-1');
    await idle(core, 'c1');
    // As if the process died between the chat's log lines and the journal's reply line.
    const crashed = crashCopy(live);
    onHostDb(crashed, (db) => db.prepare("UPDATE requests SET reply = NULL WHERE key = 'chat.send send-1'").run());

    const again = await open(crashed);
    again.resume();
    const retried = await new TestClient(again).request('chat.send', { chatId: 'c1', text: 'once' }, 'send-1');
    expect(retried).toMatchObject({ id: 'send-1', ok: false, error: { code: 'internal' } });
    expect(userTexts(again, 'c1')).toEqual(['once']);
  });

  it('runs a resent send again when the host died after the send arrived and before it changed the chat', async () => {
    const live = path.join(data.dir, 'live');
    const core = await open(live);
    await new TestClient(core).ok('chat.create', { chatId: 'c1' });
    // serve runs synchronously up to the send's first await, before its user item: a copy taken now
    // is a kill -9 between the request's arrival and its first change.
    const first = new TestClient(core).request('chat.send', { chatId: 'c1', text: 'kept' }, 'send-3');
    const crashed = crashCopy(live);
    expect(await first).toMatchObject({ ok: true });
    expect(onHostDb(crashed, (db) => db.prepare("SELECT count(*) AS c FROM requests WHERE key = 'chat.send send-3'").get()!.c)).toBe(0);
    await idle(core, 'c1');

    const again = await open(crashed);
    again.resume();
    // The relay answered the client ok when it kept the send, and resends it: it must not be lost.
    const resent = await new TestClient(again).request('chat.send', { chatId: 'c1', text: 'kept' }, 'send-3');
    expect(resent).toMatchObject({ id: 'send-3', ok: true });
    await idle(again, 'c1');
    expect(userTexts(again, 'c1')).toEqual(['kept']);
  });

  it("has a send's journal row there by its first change of the chat, its reply to come", async () => {
    const core = await open(data.dir);
    await new TestClient(core).ok('chat.create', { chatId: 'c1' });
    const rowAt: Array<{ seq: number; row: unknown }> = [];
    core.connect(
      'watcher',
      (frame) => {
        if (frame.event !== 'chat.event') return;
        const row = onHostDb(data.dir, (db) => db.prepare("SELECT reply FROM requests WHERE key = 'chat.send send-4'").get() ?? null);
        rowAt.push({ seq: (frame.payload as { seq: number }).seq, row });
      },
      { allChats: true },
    );
    const before = core.session('c1').seq;
    await new TestClient(core).ok('chat.send', { chatId: 'c1', text: 'hi' }, 'send-4');
    await idle(core, 'c1');
    // The first event after the send already has the row beside it (its reply still to come).
    expect(rowAt.find((r) => r.seq === before + 1)).toEqual({ seq: before + 1, row: { reply: null } });
    expect(onHostDb(data.dir, (db) => db.prepare("SELECT reply FROM requests WHERE key = 'chat.send send-4'").get()!.reply)).not.toBeNull();
  });

  it('keeps answering retries with the first reply after a crash', async () => {
    const live = path.join(data.dir, 'live');
    const core = await open(live);
    await new TestClient(core).ok('chat.create', { chatId: 'c1' });
    const crashed = crashCopy(live);
    const second = await open(crashed);
    const client = new TestClient(second);
    const first = await client.request('chat.send', { chatId: 'c1', text: 'hi' }, 'send-2');
    await idle(second, 'c1');
    const third = await open(crashCopy(crashed));
    third.resume();
    expect(await new TestClient(third).request('chat.send', { chatId: 'c1', text: 'hi' }, 'send-2')).toEqual(first);
    expect(userTexts(third, 'c1')).toEqual(['hi']);
  });
});
