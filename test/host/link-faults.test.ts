// The link keeps serving whatever goes wrong on the host's side of it.
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { Outbox } from '../../src/host/link/outbox.ts';
import { RelayLink } from '../../src/host/link/relay-link.ts';
import { tempDir, until } from './harness.ts';

let data: ReturnType<typeof tempDir>;
let server: WebSocketServer;
let link: RelayLink | null = null;

beforeEach(async () => {
  data = tempDir('tether-link-faults-');
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
});
afterEach(async () => {
  await link?.close();
  link = null;
  for (const client of server.clients) client.terminate();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  data.cleanup();
});

describe('the relay link', () => {
  it('survives an outbox that cannot record an acknowledgement, and keeps answering requests', async () => {
    const outbox = Outbox.open(data.dir);
    outbox.ack = () => {
      throw new Error('EIO: i/o error, write');
    };
    const warnings: string[] = [];
    link = new RelayLink({
      relayUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      hostId: 'h',
      token: () => 't',
      outbox,
      onRequest: async (frame) => ({ id: (frame as { id: string }).id, ok: true, result: {} }),
      version: 'test',
      log: { info: () => undefined, warn: (message) => warnings.push(message) },
    });
    const connected = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
    link.start();
    const socket = await connected;
    const replies: unknown[] = [];
    socket.on('message', (raw) => {
      const text = raw.toString();
      if (text === 'ping') return;
      const frame = JSON.parse(text) as { ok?: boolean };
      if ('ok' in frame) replies.push(frame);
    });
    link.sendEvent({ type: 'event', event: 'chat.status', payload: {} });
    socket.send(JSON.stringify({ link: 'ack', n: [1] }));
    socket.send(JSON.stringify({ id: 'r1', type: 'chat.list', payload: {} }));
    await until(() => replies.length === 1, 'the reply');
    expect(replies[0]).toMatchObject({ id: 'r1', ok: true });
    expect(warnings.some((w) => w.includes('EIO'))).toBe(true);
    expect(link.state).toBe('open');
  });
});
