// host.db (src/host/db.ts): today's JSONL layout imported once on the first start, and every write
// the host acknowledges committed before the acknowledgement leaves. Each check reads the file through
// a second connection, as another process (or the next start, after a power loss) would see it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { AddressInfo } from 'node:net';
import { Thread } from '../../src/contracts/thread.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { ChatStore, chatFileName } from '../../src/host/chats/store.ts';
import { HostDbTooNewError, openHostDb } from '../../src/host/db.ts';
import { Outbox } from '../../src/host/link/outbox.ts';
import { RelayLink } from '../../src/host/link/relay-link.ts';
import { onHostDb } from '../support/host-db.ts';
import { idle, openCore, TestClient, tempDir, until } from './harness.ts';

let data: ReturnType<typeof tempDir>;
const cores: HostCore[] = [];
beforeEach(() => {
  data = tempDir('tether-db-');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(cores.splice(0).map((core) => core.close()));
  data.cleanup();
});

async function open(dir: string): Promise<HostCore> {
  const core = await openCore(dir, { writeDelayMs: 60_000 });
  cores.push(core);
  return core;
}

/** Every row of the host's tables, to compare two starts. */
const dump = (dir: string) =>
  onHostDb(dir, (db) => ({
    outbox: db.prepare('SELECT * FROM outbox ORDER BY n').all(),
    sequence: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").all(),
    requests: db.prepare('SELECT * FROM requests ORDER BY rowid').all(),
    events: db.prepare('SELECT * FROM chat_events ORDER BY chat_id, seq').all(),
    versions: db.prepare('SELECT * FROM schema_version').all(),
  }));

/**
 * A data folder as the host wrote it before host.db: a chat's record four events behind its log, the
 * log with a torn last line, a journal with an answered request, one that was running when the host
 * stopped and a torn line, and an outbox with a base line, acks (one torn) and a torn frame.
 */
async function todaysLayout(): Promise<{ dir: string; items: unknown; seq: number; reply: { ok: boolean } }> {
  // The chat's events, made by a real host, then written out as the old ChatStore wrote them.
  const scratch = path.join(data.dir, 'scratch');
  const core = await open(scratch);
  const client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'c.1' });
  const reply = await client.request('chat.send', { chatId: 'c.1', text: 'hi' }, 'send-1');
  await idle(core, 'c.1');
  const { items, seq } = { items: core.session('c.1').thread.items, seq: core.session('c.1').seq };
  const log = core.store.readLog('c.1');
  expect(log.length).toBe(seq);

  const dir = path.join(data.dir, 'old');
  mkdirSync(path.join(dir, 'chats'), { recursive: true });
  const start = log[0].event;
  if (start.type !== 'reset' && start.type !== 'info') throw new Error('a log starts with the chat info');
  const thread = new Thread(start.info, []);
  for (const entry of log.slice(1, 4)) thread.apply(entry.event);
  const name = chatFileName('c.1');
  writeFileSync(path.join(dir, 'chats', `${name}.json`), JSON.stringify({ version: 1, info: thread.info, items: thread.items, seq: 4, epoch: 0 }));
  writeFileSync(path.join(dir, 'chats', `${name}.log`), `${log.map((entry) => JSON.stringify(entry)).join('\n')}\n{"seq":${seq + 1},"at":1,"ev`);

  writeFileSync(
    path.join(dir, 'requests.jsonl'),
    [
      JSON.stringify({ key: 'chat.send send-1' }),
      JSON.stringify({ key: 'chat.send send-1', reply: { ok: reply.ok, result: reply.ok ? reply.result : undefined } }),
      JSON.stringify({ key: 'chat.send send-2' }),
      '{"key":"chat.send send-3","rep',
    ].join('\n'),
  );

  mkdirSync(path.join(dir, 'outbox'));
  const frame = (n: number) => JSON.stringify({ type: 'event', event: 'chat.status', payload: { i: n }, n });
  writeFileSync(path.join(dir, 'outbox', 'outbox.jsonl'), `${JSON.stringify({ base: 6 })}\n${frame(7)}\n${frame(8)}\n${frame(9)}\n{"type":"ev`);
  // 8 acknowledged; the torn "9" (the first byte of "9\n") is not trusted.
  writeFileSync(path.join(dir, 'outbox', 'outbox.acks'), '8\n9');
  return { dir, items, seq, reply };
}

describe('the first start on a data folder from before host.db', () => {
  it('imports the chat logs, the journal and the outbox, trusting only complete lines, and sets the files aside', async () => {
    const { dir, items, seq, reply } = await todaysLayout();
    const core = await open(dir);
    expect(core.session('c.1').seq).toBe(seq);
    expect(core.session('c.1').thread.items).toEqual(items);
    const client = new TestClient(core);
    // The answered request keeps its reply and does not run again; the one that was running is interrupted; the torn one never ran.
    expect(await client.request('chat.send', { chatId: 'c.1', text: 'hi' }, 'send-1')).toMatchObject({ ok: reply.ok });
    expect(await client.request('chat.send', { chatId: 'c.1', text: 'hi' }, 'send-2')).toMatchObject({ ok: false, error: { code: 'internal' } });
    expect(core.session('c.1').thread.items.filter((i) => i.kind === 'user').length).toBe(1);

    const box = Outbox.open(dir);
    expect(box.readAfter(0).map((entry) => JSON.parse(entry.text))).toEqual([
      { type: 'event', event: 'chat.status', payload: { i: 7 }, n: 7 },
      { type: 'event', event: 'chat.status', payload: { i: 9 }, n: 9 },
    ]);
    expect(box.push({ type: 'event', event: 'chat.status', payload: {} }).n).toBe(10);
    box.close();

    const name = chatFileName('c.1');
    for (const file of ['requests.jsonl', 'outbox/outbox.jsonl', 'outbox/outbox.acks', `chats/${name}.log`]) {
      expect(existsSync(path.join(dir, file))).toBe(false);
      expect(existsSync(path.join(dir, `${file}.migrated`))).toBe(true);
    }
    expect(readFileSync(path.join(dir, `chats/${name}.log.migrated`), 'utf8')).toContain('"ev');
  });

  it('imports nothing a second time: a second start leaves every row as it was', async () => {
    const { dir } = await todaysLayout();
    const core = await open(dir);
    await core.close();
    const before = dump(dir);
    // Even old files put back where they were are not read again: the schema version says they were imported.
    writeFileSync(path.join(dir, 'requests.jsonl'), `${JSON.stringify({ key: 'chat.send again' })}\n`);
    const again = await open(dir);
    expect(again.session('c.1').seq).toBe(before.events.length);
    await again.close();
    expect(dump(dir)).toEqual(before);
  });

  it('refuses a host.db written by a newer host, and reads nothing from it', () => {
    openHostDb(data.dir).close();
    onHostDb(data.dir, (db) => db.prepare('INSERT INTO schema_version (version) VALUES (99)').run());
    expect(() => openHostDb(data.dir)).toThrow(HostDbTooNewError);
  });

  it('opens in WAL with a full fsync on every commit', () => {
    const db = openHostDb(data.dir);
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 2 });
    db.close();
  });
});

describe('what the host acknowledges is committed first', () => {
  it('a reply reaches whoever asked only once its journal row is committed', async () => {
    const core = await open(data.dir);
    await new TestClient(core).ok('chat.create', { chatId: 'c1' });
    const reply = await core.serve({ id: 'send-1', type: 'chat.send', payload: { chatId: 'c1', text: 'hi' } }, 'someone');
    // The moment serve answers is the moment the caller sends the reply on.
    const row = onHostDb(data.dir, (db) => db.prepare("SELECT reply FROM requests WHERE key = 'chat.send send-1'").get());
    expect(reply).toMatchObject({ id: 'send-1', ok: true });
    expect(JSON.parse(row!.reply as string)).toEqual({ ok: true, result: JSON.parse(JSON.stringify(reply)).result });
    await idle(core, 'c1');
  });

  it('a chat event reaches a client only once its row is committed', async () => {
    const core = await open(data.dir);
    const seen: Array<{ seq: number; committed: boolean }> = [];
    core.connect(
      'watcher',
      (frame) => {
        if (frame.event !== 'chat.event') return;
        const { chatId, seq } = frame.payload as { chatId: string; seq: number };
        const row = onHostDb(data.dir, (db) => db.prepare('SELECT seq FROM chat_events WHERE chat_id = ? AND seq = ?').get(chatId, seq));
        seen.push({ seq, committed: row !== undefined });
      },
      { allChats: true },
    );
    const client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    expect(seen.length).toBe(core.session('c1').seq);
    expect(seen.filter((s) => !s.committed)).toEqual([]);
  });

  it('an event frame goes on the relay socket only once its outbox row is committed', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const received: unknown[] = [];
    server.on('connection', (socket) => socket.on('message', (raw) => received.push(raw.toString())));
    const outbox = Outbox.open(data.dir);
    const link = new RelayLink({
      relayUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      hostId: 'host-1',
      token: () => 'secret-token',
      outbox,
      onRequest: async (frame) => ({ id: (frame as { id: string }).id, ok: true, result: {} }),
      version: 'test',
    });
    const sent: Array<{ ns: number[]; committed: boolean }> = [];
    const send = WebSocket.prototype.send;
    vi.spyOn(WebSocket.prototype, 'send').mockImplementation(function (this: WebSocket, message: unknown, ...rest: unknown[]) {
      const text = String(message);
      const ns = [...text.matchAll(/"n":(\d+)/g)].map((m) => Number(m[1]));
      if (ns.length > 0) {
        const rows = onHostDb(data.dir, (db) =>
          db
            .prepare('SELECT n FROM outbox')
            .all()
            .map((row) => row.n as number),
        );
        sent.push({ ns, committed: ns.every((n) => rows.includes(n)) });
      }
      return (send as (...args: unknown[]) => void).call(this, message, ...rest);
    });
    try {
      link.sendEvent({ type: 'event', event: 'chat.status', payload: { i: 1 } }); // in the backlog, sent after hello
      link.start();
      await until(() => received.length >= 2, 'hello and the backlog');
      link.sendEvent({ type: 'event', event: 'chat.status', payload: { i: 2 } }); // sent live
      await until(() => received.length >= 3, 'the live event');
      expect(sent.flatMap((s) => s.ns)).toEqual([1, 2]);
      expect(sent.every((s) => s.committed)).toBe(true);
    } finally {
      await link.close();
      outbox.close();
      for (const client of server.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('the chat log in host.db', () => {
  it('drops the rows after the first unreadable one, so the next seq is free', () => {
    const store = new ChatStore(data.dir);
    const event = { type: 'delta' as const, itemId: 'a', text: 'x' };
    for (const seq of [1, 2, 3]) store.appendLog('c1', { seq, at: 1, event });
    onHostDb(data.dir, (db) => db.prepare("UPDATE chat_events SET event = 'not json' WHERE seq = 2").run());
    expect(store.readLog('c1').map((e) => e.seq)).toEqual([1]);
    store.appendLog('c1', { seq: 2, at: 1, event });
    expect(store.readLog('c1').map((e) => e.seq)).toEqual([1, 2]);
    store.close();
  });
});
