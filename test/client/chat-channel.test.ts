// ChatChannel and HostConnection over real WebSockets against a scripted stand-in for the relay (an
// http server minting tickets and a `ws` server for the sockets), for what the e2e run cannot make
// happen on cue: a socket dropped between a request and its answer, a gap in the seqs, a 4401 close,
// an expired token at ticket time. The real relay is in test/e2e/sdk.e2e.test.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { digestOf, settledRequestDigest, verifyStatement, type ChatItem } from '../../src/contracts/index.ts';
import { deviceKeyOf, newDeviceKeyPair } from '../../src/client/device-key.ts';
import { ChatChannel, HostConnection, MemoryOutboxStore, MemoryTokenStore, RelayApi, type LiveSocket } from '../../src/client/index.ts';
import { ITEMS, chatInfo } from '../contracts/fixtures.ts';
import { until } from '../support/until.ts';

type Frame = { id: string; type: string; payload: any };
type Conversation = (frame: Frame, socket: ServerSocket, relay: ScriptedRelay) => void;

const info = chatInfo({ chatId: 'c1' });
const reply = (id: string, text = ''): ChatItem => ({ ...ITEMS.assistant, id, text, streaming: true }) as ChatItem;
const answer = (socket: ServerSocket, id: string, result: unknown) => socket.send(JSON.stringify({ id, ok: true, result }));
const event = (socket: ServerSocket, name: string, payload: unknown) => socket.send(JSON.stringify({ type: 'event', event: name, payload }));

class ScriptedRelay {
  readonly frames: Array<Frame & { connection: number }> = [];
  connections = 0;
  tickets = 0;
  /** Heartbeat pings heard, and whether they go unanswered (a half-open socket). */
  pings = 0;
  silent = false;
  /** Access tokens the ticket route takes; others are 401. */
  accepted = new Set(['a0']);
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private waiters: Array<() => boolean> = [];
  private readonly converse: Conversation;

  constructor(converse: Conversation) {
    this.converse = converse;
    this.http = createServer((req, res) => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/api/auth/tickets') {
        this.tickets += 1;
        const token = req.headers.authorization?.replace('Bearer ', '') ?? '';
        return this.accepted.has(token)
          ? json(200, { ticket: `t${this.tickets}`, expiresInMs: 30_000 })
          : json(401, { code: 'unauthorized', message: 'expired' });
      }
      if (req.url === '/api/auth/refresh') {
        this.accepted.add('a1');
        return json(200, { sessionId: 's', refreshToken: 'r1', accessToken: 'a1', expiresAt: Date.now() + 600_000 });
      }
      json(404, { code: 'not-found', message: 'No such route' });
    });
    this.http.on('upgrade', (req, socket, head) =>
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const connection = ++this.connections;
        ws.on('message', (data) => {
          if (String(data) === 'ping') {
            this.pings += 1;
            if (!this.silent) ws.send('pong');
            return this.settle();
          }
          const frame = JSON.parse(String(data)) as Frame;
          this.frames.push({ ...frame, connection });
          this.converse(frame, ws, this);
          this.settle();
        });
        this.settle();
      }),
    );
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  requests(type: string) {
    return this.frames.filter((f) => f.type === type);
  }

  /** Resolves once `check` holds, asked after every frame and connection. */
  when(check: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const test = () => (check() ? (resolve(), true) : false);
      if (!test()) this.waiters.push(test);
    });
  }

  private settle(): void {
    this.waiters = this.waiters.filter((test) => !test());
  }

  async stop(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}

const running: Array<{ stop(): unknown }> = [];
afterEach(async () => {
  for (const one of running.splice(0).reverse()) await one.stop();
});

async function setUp(converse: Conversation, token = 'a0') {
  const relay = new ScriptedRelay(converse);
  const url = await relay.start();
  running.push(relay);
  const api = new RelayApi(url, { tokens: new MemoryTokenStore({ sessionId: 's', refreshToken: 'r0', accessToken: token, expiresAt: Date.now() + 600_000 }) });
  return { relay, api };
}

function keep<T extends LiveSocket>(socket: T): T {
  running.push({ stop: () => socket.close() });
  return socket;
}

const fast = { backoff: { baseMs: 10, maxMs: 50 } };

/** A stand-in chat: attach answers a snapshot (or the replay of `log` after since); sends are answered by `onSend`. */
function chatRoom(log: unknown[], onSend: Conversation = (f, ws) => answer(ws, f.id, { queued: false, turnId: 'turn-1' })): Conversation {
  return (frame, ws, relay) => {
    if (frame.type === 'chat.attach') {
      const since = frame.payload.since as number | undefined;
      if (since === undefined) return answer(ws, frame.id, { info, items: [reply('a1', 'A')], seq: 1 });
      return answer(ws, frame.id, { info, items: [], seq: 1 + log.length, events: log.slice(since - 1) });
    }
    if (frame.type === 'chat.send') return onSend(frame, ws, relay);
  };
}

describe('ChatChannel over a socket that drops', () => {
  it('sends a request again under the same id on the next socket when its socket closed before the answer', async () => {
    let first = true;
    const { relay, api } = await setUp(
      chatRoom([], (frame, ws) => {
        if (first) {
          first = false;
          ws.terminate(); // the answer never comes
          return;
        }
        answer(ws, frame.id, { queued: false, turnId: 'turn-1' });
      }),
    );
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore() }));
    const send = channel.send({ text: 'hello' });
    expect((await send.settled).state).toBe('delivered');
    const sends = relay.requests('chat.send');
    expect(sends.map((f) => f.id)).toEqual([send.id, send.id]);
    expect(sends.map((f) => f.connection)).toEqual([1, 2]);
    // The second socket attached with since before anything else went on it.
    const second = relay.frames.filter((f) => f.connection === 2).map((f) => [f.type, f.payload.since]);
    expect(second).toEqual([
      ['chat.attach', 1],
      ['chat.send', undefined],
    ]);
  });

  it('resends an ordinary request (not only sends) under its id after a drop', async () => {
    let dropped = false;
    const { relay, api } = await setUp((frame, ws) => {
      if (frame.type === 'chat.attach') return answer(ws, frame.id, { info, items: [], seq: 0 });
      if (frame.type === 'chat.addBookmark') {
        if (!dropped) return void ((dropped = true), ws.terminate());
        return answer(ws, frame.id, { bookmarks: [{ itemId: 'a1', excerpt: 'A', createdAt: 1 }] });
      }
    });
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore() }));
    const result = await channel.request('chat.addBookmark', { chatId: 'c1', itemId: 'a1' });
    expect(result.bookmarks).toHaveLength(1);
    const ids = relay.requests('chat.addBookmark').map((f) => f.id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(1);
  });

  it('drops the socket on a seq gap and fills it by attaching with since, applying each event once', async () => {
    const log = [
      { type: 'delta', itemId: 'a1', text: 'B' },
      { type: 'delta', itemId: 'a1', text: 'C' },
      { type: 'delta', itemId: 'a1', text: 'D' },
    ];
    const { relay, api } = await setUp((frame, ws, r) => {
      chatRoom(log)(frame, ws, r);
      if (frame.type === 'chat.attach' && r.connections === 1) {
        // Seq 2 arrives, 3 is lost on the way, 4 arrives: the channel must not apply 4 on top of 2.
        event(ws, 'chat.event', { chatId: 'c1', event: log[0], seq: 2 });
        event(ws, 'chat.event', { chatId: 'c1', event: log[2], seq: 4 });
      }
    });
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore() }));
    await relay.when(() => relay.connections === 2 && relay.requests('chat.attach').length === 2);
    await new Promise<void>((resolve) => {
      const check = () => {
        if (channel.thread.seq === 4) resolve();
      };
      channel.thread.subscribe(check);
      check();
    });
    expect((channel.thread.get('a1') as { text: string }).text).toBe('ABCD');
    expect(relay.requests('chat.attach')[1]!.payload.since).toBe(2);
  });

  it('sends what this person kept earlier, first, and never what another person kept on this device', async () => {
    const { relay, api } = await setUp(chatRoom([]));
    api.adopt({ sessionId: 's', refreshToken: 'r0', accessToken: 'a0', expiresAt: Date.now() + 600_000, userId: 'me' });
    const outbox = new MemoryOutboxStore();
    const kept = (id: string, userId: string) => ({ id, userId, hostId: 'h1', chatId: 'c1', payload: { chatId: 'c1', text: id }, createdAt: 1, order: 1 });
    await outbox.put(kept('mine-earlier', 'me'));
    await outbox.put(kept('theirs', 'someone-else'));
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox }));
    const now = channel.send({ text: 'now' });
    await now.settled;
    expect(relay.requests('chat.send').map((f) => f.payload.text)).toEqual(['mine-earlier', 'now']);
    expect(channel.pendingSends.map((send) => send.id)).toEqual(['mine-earlier', now.id]);
    expect((await outbox.list({ userId: 'someone-else', hostId: 'h1', chatId: 'c1' })).map((e) => e.id)).toEqual(['theirs']);
  });

  it('tells a send the relay keeps for an offline host (queued) from a delivered one, and drops one taken back from that queue', async () => {
    let seq = 1;
    const queueInfo = (ids: string[]) => ({ ...info, queue: ids.map((id) => ({ id: `relay:${id}`, text: id, createdAt: 1 })) });
    const { relay, api } = await setUp((frame, ws, r) => {
      if (frame.type === 'chat.send') {
        // As the relay does: the info showing the kept send goes out before the answer.
        event(ws, 'chat.event', { chatId: 'c1', event: { type: 'info', info: queueInfo([frame.id]) }, seq: ++seq });
        return answer(ws, frame.id, { queued: true });
      }
      if (frame.type === 'chat.unqueue') {
        event(ws, 'chat.event', { chatId: 'c1', event: { type: 'info', info: queueInfo([]) }, seq: ++seq });
        return answer(ws, frame.id, { message: { id: frame.payload.messageId, text: 'x', createdAt: 1 } });
      }
      chatRoom([])(frame, ws, r);
    });
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore() }));
    const send = channel.send({ text: 'for the offline host' });
    const states: string[] = [];
    send.onChange((s) => states.push(s.state));
    await relay.when(() => relay.requests('chat.send').length === 1);
    await new Promise<void>((resolve) => {
      if (send.state === 'queued') resolve();
      send.onChange((s) => {
        if (s.state === 'queued') resolve();
      });
    });
    await channel.request('chat.unqueue', { chatId: 'c1', messageId: `relay:${send.id}` });
    expect(channel.pendingSends).toEqual([]);
    expect(states).toEqual(['sent', 'queued']);
  });

  it('keeps a queued send on this device until it ends: a reload learns it was refused (told before the attach answer) or delivered, once', async () => {
    let seq = 1;
    const queueInfo = (ids: string[]) => ({ ...info, queue: ids.map((id) => ({ id: `relay:${id}`, text: id, createdAt: 1 })) });
    let held: string[] = [];
    let refusedOnAttach: string | null = null;
    const { relay, api } = await setUp((frame, ws) => {
      if (frame.type === 'chat.send') {
        held = [...held, frame.id];
        event(ws, 'chat.event', { chatId: 'c1', event: { type: 'info', info: queueInfo(held) }, seq: ++seq });
        return answer(ws, frame.id, { queued: true });
      }
      if (frame.type === 'chat.attach') {
        // As the relay does for a sender who was away: the refusal first, then the answer (twice here: it cannot know what was heard).
        if (refusedOnAttach) {
          for (let i = 0; i < 2; i++) {
            event(ws, 'chat.sendRefused', {
              chatId: 'c1',
              messageId: `relay:${refusedOnAttach}`,
              requestId: refusedOnAttach,
              error: { code: 'folder-denied', message: 'Not that folder' },
            });
          }
        }
        return answer(ws, frame.id, { info: queueInfo(held), items: [], seq });
      }
    });
    const outbox = new MemoryOutboxStore();
    const scope = { userId: '', hostId: 'h1', chatId: 'c1' };
    const first = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox }));
    const refused = first.send({ text: 'refused later' });
    const delivered = first.send({ text: 'delivered later' });
    await relay.when(() => relay.requests('chat.send').length === 2);
    const queuedBoth = () => refused.state === 'queued' && delivered.state === 'queued';
    await new Promise<void>((resolve) => {
      const check = () => {
        if (queuedBoth()) resolve();
      };
      check();
      refused.onChange(check);
      delivered.onChange(check);
    });
    await until(async () => (await outbox.list(scope)).every((e) => e.state === 'queued'), 'every kept send queued');
    expect((await outbox.list(scope)).map((e) => e.id)).toEqual([refused.id, delivered.id]);
    first.close();

    // Meanwhile the host came back: it refused one and took the other (it left the relay's queue).
    held = [];
    refusedOnAttach = refused.id;
    const second = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox }));
    const seen: string[] = [];
    second.onSend((send) => seen.push(`${send.id === refused.id ? 'refused' : 'delivered'}:${send.state}`));
    await relay.when(() => relay.requests('chat.attach').length === 2);
    await until(() => second.pendingSends.every((send) => send.done), 'every send done');
    const [again, other] = second.pendingSends;
    expect(again).toMatchObject({ id: refused.id, state: 'failed', error: { code: 'folder-denied', message: 'Not that folder' } });
    expect(other).toMatchObject({ id: delivered.id, state: 'delivered' });
    expect(
      seen.filter((s) => s === 'refused:failed'),
      'failed once, though told twice',
    ).toHaveLength(1);
    expect(relay.requests('chat.send'), 'a queued send is never sent again').toHaveLength(2);
    await until(async () => (await outbox.list(scope)).length === 0, 'the outbox empty');
  });

  it('stops for good on a 4401 close, and says why', async () => {
    const { relay, api } = await setUp((frame, ws) => {
      if (frame.type === 'chat.attach') {
        answer(ws, frame.id, { info, items: [], seq: 0 });
        ws.close(4401, 'session ended');
      }
    });
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore() }));
    await new Promise<void>((resolve) =>
      channel.onState((s) => {
        if (s === 'closed') resolve();
      }),
    );
    expect(channel.ended).toMatchObject({ code: 'unauthorized' });
    const send = channel.send({ text: 'for later' });
    expect(send.state).toBe('kept'); // signed out is not refused: a later channel sends it
    await expect(channel.request('chat.history', { chatId: 'c1', cursor: 'x' })).rejects.toMatchObject({ code: 'unauthorized' });
    expect(relay.connections).toBe(1);
  });
});

describe('ChatChannel with a device key', () => {
  it('signs what acts on the machine (a send, an approval over the approval it shows), beside the frame; reads go unsigned', async () => {
    const approval = { ...ITEMS.approval, id: 'ap1' } as ChatItem;
    const { relay, api } = await setUp((frame, ws) => {
      if (frame.type === 'chat.attach') return answer(ws, frame.id, { info, items: [approval], seq: 1 });
      if (frame.type === 'chat.send') return answer(ws, frame.id, { queued: false, turnId: 'turn-1' });
      if (frame.type === 'chat.approve' || frame.type === 'chat.addBookmark')
        return answer(ws, frame.id, frame.type === 'chat.approve' ? {} : { bookmarks: [] });
    });
    const pair = await newDeviceKeyPair(false);
    const key = await deviceKeyOf(pair, Date.now());
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore(), deviceKey: key }));
    expect((await channel.send({ text: 'signed' }).settled).state).toBe('delivered');
    await channel.request('chat.approve', { chatId: 'c1', requestId: 'permission-1', decision: 'allow' });
    await channel.request('chat.addBookmark', { chatId: 'c1', itemId: 'ap1' });

    const [send] = relay.requests('chat.send') as Array<Frame & { signature?: any }>;
    const [approve] = relay.requests('chat.approve') as Array<Frame & { signature?: any }>;
    for (const frame of [send!, approve!]) {
      const { statement } = frame.signature;
      expect(statement).toMatchObject({ kind: 'tether.request/1', hostId: 'h1', chatId: 'c1', type: frame.type, id: frame.id, device: key.id });
      expect(statement.payload).toBe(await digestOf(frame.payload));
      expect(frame.payload.signature).toBeUndefined();
      expect(await verifyStatement(pair.publicKey, frame.signature)).toBe(true);
    }
    expect(send!.signature.statement.settles).toBeUndefined();
    const { requestId, toolName, input } = ITEMS.approval;
    expect(approve!.signature.statement.settles).toBe(await settledRequestDigest({ kind: 'approval', requestId, toolName, input }));
    for (const type of ['chat.attach', 'chat.addBookmark']) {
      expect(relay.requests(type).every((f) => !('signature' in f))).toBe(true);
    }
  });

  it("with a key still loading (a browser's, from IndexedDB): reads go at once, a signed request waits for the key, and what was asked after it does not overtake it", async () => {
    const { relay, api } = await setUp((frame, ws) => {
      if (frame.type === 'chat.attach') return answer(ws, frame.id, { info, items: [], seq: 1 });
      if (frame.type === 'chat.cancel') return answer(ws, frame.id, {});
      if (frame.type === 'chat.addBookmark') return answer(ws, frame.id, { bookmarks: [] });
    });
    const pair = await newDeviceKeyPair(false);
    let loaded!: (key: Awaited<ReturnType<typeof deviceKeyOf>>) => void;
    const loading = new Promise<Awaited<ReturnType<typeof deviceKeyOf>>>((resolve) => {
      loaded = resolve;
    });
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore(), deviceKey: loading }));
    // The key has not come: a read is not held back by it (the attach got its answer, so did this one).
    await channel.request('chat.addBookmark', { chatId: 'c1', itemId: 'first' });
    const interrupted = channel.request('chat.cancel', { chatId: 'c1' });
    const after = channel.request('chat.addBookmark', { chatId: 'c1', itemId: 'second' });
    // Give the socket every chance to send out of order: nothing after the waiting signed request may go.
    await new Promise((r) => setTimeout(r, 50));
    expect(relay.frames.map((f) => f.type)).toEqual(['chat.attach', 'chat.addBookmark']);
    const key = await deviceKeyOf(pair, Date.now());
    loaded(key);
    await Promise.all([interrupted, after]);
    expect(relay.frames.map((f) => [f.type, 'signature' in f])).toEqual([
      ['chat.attach', false],
      ['chat.addBookmark', false],
      ['chat.cancel', true],
      ['chat.addBookmark', false],
    ]);
    const signed = relay.requests('chat.cancel')[0] as unknown as Frame & { signature: any };
    expect(signed.signature.statement).toMatchObject({ type: 'chat.cancel', id: signed.id, device: key.id });
    expect(await verifyStatement(pair.publicKey, signed.signature)).toBe(true);
  });

  it('with no key to be had (null: no Ed25519 here), a machine-acting request goes unsigned rather than never', async () => {
    const { relay, api } = await setUp(chatRoom([]));
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore(), deviceKey: Promise.resolve(null) }));
    expect((await channel.send({ text: 'plain' }).settled).state).toBe('delivered');
    expect(relay.requests('chat.send')).toHaveLength(1);
    expect(relay.frames.every((f) => !('signature' in f))).toBe(true);
  });

  it('without a key sends every request unsigned, as before', async () => {
    const { relay, api } = await setUp(chatRoom([]));
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore() }));
    expect((await channel.send({ text: 'plain' }).settled).state).toBe('delivered');
    expect(relay.requests('chat.send')).toHaveLength(1);
    expect(relay.frames.every((f) => !('signature' in f))).toBe(true);
  });
});

describe("the browser's network events", () => {
  it('pings while open, and gives a socket the relay went silent on up for a new one (a half-open socket never closes itself)', async () => {
    const { relay, api } = await setUp(chatRoom([]));
    const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...fast, outbox: new MemoryOutboxStore(), heartbeat: { intervalMs: 20, silenceMs: 1_000 } }));
    await relay.when(() => relay.pings >= 3);
    expect(relay.connections).toBe(1); // answered pings keep the socket
    relay.silent = true;
    await relay.when(() => relay.connections === 2);
    relay.silent = false;
    await relay.when(() => relay.requests('chat.attach').length === 2);
    expect(relay.requests('chat.attach')[1]!.payload.since).toBe(1);
    await new Promise<void>((resolve) => {
      const off = channel.onState((s) => {
        if (s === 'open') {
          off();
          resolve();
        }
      });
      if (channel.state === 'open') resolve();
    });
    const pingsNow = relay.pings;
    await relay.when(() => relay.pings >= pingsNow + 3);
    expect(relay.connections).toBe(2);
  });

  it('gives the socket up when the network goes and reconnects at once when it returns, whatever the backoff said', async () => {
    const target = new EventTarget();
    const scope = globalThis as { addEventListener?: unknown; removeEventListener?: unknown };
    scope.addEventListener = target.addEventListener.bind(target);
    scope.removeEventListener = target.removeEventListener.bind(target);
    try {
      const { relay, api } = await setUp(chatRoom([]));
      const slow = { backoff: { baseMs: 120_000, maxMs: 120_000 } };
      const channel = keep(new ChatChannel(api, 'h1', 'c1', { ...slow, outbox: new MemoryOutboxStore() }));
      await relay.when(() => relay.requests('chat.attach').length === 1);
      await new Promise<void>((resolve) => {
        if (channel.state === 'open') resolve();
        else
          channel.onState((s) => {
            if (s === 'open') resolve();
          });
      });
      target.dispatchEvent(new Event('offline'));
      expect(channel.state).toBe('offline');
      const send = channel.send({ text: 'while offline' });
      expect(send.state).toBe('kept');
      target.dispatchEvent(new Event('online'));
      expect((await send.settled).state).toBe('delivered');
      expect(relay.requests('chat.attach').map((f) => [f.connection, f.payload.since])).toEqual([
        [1, undefined],
        [2, 1],
      ]);
    } finally {
      delete scope.addEventListener;
      delete scope.removeEventListener;
    }
  });
});

describe('HostConnection', () => {
  it('refreshes an access token the ticket route refuses, once, and keeps the statuses the lobby pushes', async () => {
    const { relay, api } = await setUp((frame, ws) => {
      if (frame.type === 'chat.list') {
        answer(ws, frame.id, { chats: [info] });
        event(ws, 'chat.status', { chatId: 'c1', info: { ...info, status: 'needs-you' } });
      }
    }, 'stale');
    const lobby = keep(new HostConnection(api, 'h1', fast));
    await relay.when(() => relay.requests('chat.list').length === 1);
    await new Promise<void>((resolve) => {
      const check = () => {
        if (lobby.statuses.get('c1')?.status === 'needs-you') resolve();
      };
      lobby.onStatus(check);
      check();
    });
    expect(relay.tickets).toBe(2); // refused with the stale token, then minted with the refreshed one
    expect(await api.accessToken()).toBe('a1');
  });

  it("signs a terminal approval's answer over the approval as its session.approvals event showed it", async () => {
    const approval = {
      requestId: 'tu-1',
      sessionId: 's1',
      toolName: 'Bash',
      summary: 'Bash: rm -rf build',
      createdAt: 1,
      expiresAt: Date.now() + 60_000,
      choices: [
        { id: 'allow', kind: 'allow' as const, label: 'Allow once' },
        { id: 'deny', kind: 'deny' as const, label: 'Deny' },
      ],
    };
    const { relay, api } = await setUp((frame, ws) => {
      if (frame.type === 'chat.list') {
        answer(ws, frame.id, { chats: [] });
        event(ws, 'session.approvals', { sessionId: 's1', approvals: [approval] });
      }
      if (frame.type === 'session.approve') answer(ws, frame.id, { accepted: true });
    });
    const pair = await newDeviceKeyPair(false);
    const key = await deviceKeyOf(pair, Date.now());
    const lobby = keep(new HostConnection(api, 'h1', { ...fast, deviceKey: key }));
    await until(() => lobby.terminal.approvalsOf('s1').length === 1, "the session's approval shown");
    expect(await lobby.request('session.approve', { sessionId: 's1', requestId: 'tu-1', choiceId: 'allow' })).toEqual({ accepted: true });
    // One it does not show goes signed with no approval named: a host holding it refuses that.
    await lobby.request('session.approve', { sessionId: 's1', requestId: 'tu-9', choiceId: 'allow' });
    const [shown, unknown] = relay.requests('session.approve') as unknown as Array<Frame & { signature: any }>;
    expect(shown!.signature.statement).toMatchObject({ type: 'session.approve', hostId: 'h1', chatId: null, device: key.id });
    expect(await verifyStatement(pair.publicKey, shown!.signature)).toBe(true);
    expect(shown!.signature.statement.settles).toBe(await settledRequestDigest({ kind: 'terminal-approval', ...approval }));
    expect(unknown!.signature.statement.settles).toBeUndefined();
  });
});
