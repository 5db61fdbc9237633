// A real `tether host start` process, linked to a stand-in relay, is stopped with SIGTERM in the
// middle of a turn: it exits cleanly, its thread is on disk with the turn still running, and the
// next start aborts that turn with the not-resumed note.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { notResumedNote } from '../../src/contracts/index.ts';
import { HostCore } from '../../src/host/chats/core.ts';
import { newHostKey, writeHostIdentity } from '../../src/host/identity.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ScriptProvider } from '../../src/host/providers/script.ts';
import { TEST_SCRIPT, tempDir, until } from './harness.ts';

const root = path.resolve(import.meta.dirname, '../..');

let data: ReturnType<typeof tempDir>;
let server: WebSocketServer;
let link: WebSocket | null = null;
const frames: any[] = [];

beforeAll(async () => {
  data = tempDir('tether-shutdown-');
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  server.on('connection', (socket) => {
    link = socket;
    socket.on('message', (raw) => {
      const text = raw.toString();
      if (text === 'ping') return socket.send('pong');
      for (const frame of text.startsWith('[') ? JSON.parse(text) : [JSON.parse(text)]) frames.push(frame);
    });
  });
});

afterAll(async () => {
  for (const client of server.clients) client.terminate();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  data.cleanup();
});

async function request(type: string, payload: unknown): Promise<any> {
  const id = `r-${frames.length}-${type}`;
  link!.send(JSON.stringify({ id, type, payload }));
  await until(() => frames.some((f) => f.id === id), `the reply to ${type}`);
  const reply = frames.find((f) => f.id === id);
  if (!reply.ok) throw new Error(`${type}: ${reply.error.code} ${reply.error.message}`);
  return reply.result;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('tether host start', () => {
  it('on SIGTERM mid-turn writes the thread, ends, and the next start aborts the turn with a note', async () => {
    const script = path.join(data.dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        replies: [
          {
            steps: [
              { type: 'text', text: 'Working on it' },
              { type: 'wait', ms: 600_000 },
            ],
          },
        ],
      }),
    );
    const config = path.join(data.dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        providers: { claude: { backend: 'script', script } },
        policy: { roots: [data.dir] },
        coalesceMs: 0,
        // Shutdown with a turn running, started by an unsigned test relay: signatures are not this file's subject.
        signatures: { require: false },
      }),
    );
    // A paired host: its identity (the stand-in relay checks no token).
    writeHostIdentity(data.dir, { relayUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hostId: 'h1', ...(await newHostKey()) });
    const host = spawn(process.execPath, [path.join(root, 'bin', 'tether.js'), 'host', 'start', '--data', data.dir], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    host.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    const ended = exited(host);
    await until(() => link !== null && frames.some((f) => f.link === 'hello'), 'the host to link', 15_000);

    await request('chat.create', { chatId: 'c1', cwd: data.dir });
    const sent = await request('chat.send', { chatId: 'c1', text: 'go' });
    await until(
      () => frames.some((f) => f.event === 'chat.event' && f.payload.event.type === 'item' && f.payload.event.item.kind === 'assistant'),
      'the turn to stream',
    );

    host.kill('SIGTERM');
    const exit = await ended;
    expect(exit, log).toEqual({ code: 0, signal: null });
    expect(log).toContain('SIGTERM: shutting down');

    // The thread on disk: the turn is still `running` (interrupted, not failed), its text is there.
    const record = JSON.parse(readFileSync(path.join(data.dir, 'chats', 'c1.json'), 'utf8'));
    const turn = record.items.find((i: any) => i.kind === 'turn');
    expect(turn).toMatchObject({ id: sent.turnId, state: 'running' });
    expect(record.items.find((i: any) => i.kind === 'assistant')?.text).toBe('Working on it');
    const status = JSON.parse(readFileSync(path.join(data.dir, 'host.status.json'), 'utf8'));
    expect(status.link).toBe('stopped');

    // The next start takes it up: aborted, with the note that says the machine did it.
    const core = await HostCore.open({
      dataDir: data.dir,
      providers: [new ScriptProvider({ kind: 'claude', script: TEST_SCRIPT })],
      policy: new HostPolicy({ roots: [data.dir] }),
    });
    try {
      core.resume();
      const items = core.session('c1').thread.items;
      expect(items.find((i) => i.id === sent.turnId)).toMatchObject({ kind: 'turn', state: 'aborted' });
      expect(items.some((i) => i.kind === 'note' && i.level === 'warning' && i.text.startsWith(notResumedNote('')))).toBe(true);
    } finally {
      await core.close();
    }
  });
});
