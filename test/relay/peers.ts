// Test peers for the relay, running inside workerd beside it: a host that speaks the link protocol
// (a small in-memory agent-contracts host with a per-chat seq, a log and an outbox) and clients.
import { SELF, env, runInDurableObject } from 'cloudflare:test';
import { LinkAckSchema, Thread, type ChatEvent, type ChatInfo, type ChatItem } from '../../src/contracts/index.ts';
import type { HostLink } from '../../src/relay/objects/host-link.ts';
import { hostTokenSigner, newHostKey, type HostKeyPair } from '../../src/host/host-token.ts';
import { createSession } from '../../src/relay/auth/sessions.ts';
import { until as poll, type NotYet } from '../support/until.ts';

export const OWNER = 'owner-1';

/**
 * An access token for a user of a fresh session, creating the user's row when missing (email
 * `<id>@test.invalid` unless given; `owner` makes them the relay's owner).
 */
export async function userToken(userId = OWNER, opts: { email?: string; owner?: boolean } = {}): Promise<string> {
  // Test people stand for people an identity provider vouched for: their address is verified.
  const now = Date.now();
  await env.DB.prepare('INSERT INTO users (id, email, name, created_at, is_owner, email_verified_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING')
    .bind(userId, opts.email ?? `${userId}@test.invalid`, userId, now, opts.owner ? 1 : 0, now)
    .run();
  return (await createSession(env, userId, 'test', {})).accessToken;
}

/**
 * Registers the host (and its owner) as pairing would, with a fresh Ed25519 key, and answers a host
 * JWT signed by that key, as a real host signs it. A host already owned by someone else keeps its key
 * (so the token answered opens nothing).
 */
export async function hostToken(hostId: string, ownerId = OWNER): Promise<string> {
  return (await hostKey(hostId, ownerId)).sign();
}

/** Registers the host with a fresh key; answers the key and a signer of fresh host tokens for it. */
export async function hostKey(hostId: string, ownerId = OWNER): Promise<HostKeyPair & { sign: () => Promise<string> }> {
  const key = await newHostKey();
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare('INSERT INTO users (id, email, name, created_at, email_verified_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING').bind(
      ownerId,
      `${ownerId}@test.invalid`,
      ownerId,
      now,
      now,
    ),
    env.DB.prepare(
      `INSERT INTO hosts (id, owner_id, name, created_at, public_key) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET public_key = excluded.public_key WHERE owner_id = excluded.owner_id`,
    ).bind(hostId, ownerId, hostId, now, JSON.stringify(key.publicJwk)),
  ]);
  return { ...key, sign: hostTokenSigner({ hostId, privateJwk: key.privateJwk }) };
}

export async function openSocket(path: string, token: string | null): Promise<WebSocket> {
  const res = await SELF.fetch(`http://relay.test${path}`, {
    headers: { Upgrade: 'websocket', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
  });
  if (!res.webSocket) throw new Error(`upgrade refused: ${res.status} ${await res.text()}`);
  res.webSocket.accept();
  return res.webSocket;
}

/** Asks for a visual's ticket with a person's token, as the app does; answers the ticket's reply. */
export async function visualTicket(hostId: string, chatId: string, visualId: string, userId = OWNER): Promise<Response> {
  return SELF.fetch(`http://relay.test/v1/visuals/${hostId}/${chatId}/${visualId}/ticket`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${await userToken(userId)}` },
  });
}

/** Opens a visual's page the way the app frames it: a ticket first, then the page's URL. */
export async function visualPage(hostId: string, chatId: string, visualId: string, userId = OWNER): Promise<Response> {
  const ticket = await visualTicket(hostId, chatId, visualId, userId);
  if (!ticket.ok) return ticket;
  return SELF.fetch(((await ticket.json()) as { url: string }).url);
}

export function infoFor(chatId: string, patch: Partial<ChatInfo> = {}): ChatInfo {
  return {
    chatId,
    provider: 'claude',
    cwd: '/work',
    agentSessionId: null,
    model: null,
    selection: { model: 'sonnet', options: {} },
    runtimeMode: 'full-access',
    status: 'idle',
    running: false,
    activeTurnId: null,
    slashCommands: [],
    usage: { contextTokens: 0, contextWindow: null, costUsd: 0, turns: 0 },
    createdAt: 1_700_000_000_000,
    ...patch,
  };
}

export function userItem(id: string, text: string): ChatItem {
  return { kind: 'user', id, createdAt: Date.now(), turnId: null, text };
}

export function assistantItem(id: string, text: string, streaming = true): ChatItem {
  return { kind: 'assistant', id, createdAt: Date.now(), turnId: 't1', text, streaming };
}

export function approvalItem(id: string, requestId: string) {
  return {
    kind: 'approval' as const,
    id,
    createdAt: Date.now(),
    turnId: 't1',
    requestId,
    toolUseId: 'tu1',
    toolName: 'Bash',
    input: { command: 'rm -rf build' },
    description: null,
    canAllowAlways: false,
    decision: 'pending' as const,
  };
}

type Frame = Record<string, any>;
type Handler = (payload: any, frame: Frame) => unknown | Promise<unknown>;

interface HostChat {
  thread: Thread;
  seq: number;
  log: { seq: number; event: ChatEvent }[];
}

/** A host on the link: answers requests from its in-memory chats, keeps an outbox until acked. */
export class FakeHost {
  readonly hostId: string;
  ws: WebSocket | null = null;
  readonly chats = new Map<string, HostChat>();
  readonly received: Frame[] = [];
  readonly handlers: Record<string, Handler> = {};
  /** Unacknowledged outbox frames by n. */
  readonly outbox = new Map<number, string>();
  private n = 0;
  private pinger: ReturnType<typeof setInterval> | null = null;
  silent = false;
  /** What its hello says it carries out unsigned (LinkHello.unsigned); absent as an older host's says nothing. */
  unsigned: 'all' | string[] | undefined;

  constructor(hostId: string) {
    this.hostId = hostId;
    this.handlers['chat.create'] = (p) => this.create(p.chatId).thread.info;
    this.handlers['chat.list'] = () => ({ chats: [...this.chats.values()].map((c) => c.thread.info) });
    this.handlers['chat.attach'] = (p) => this.attachAnswer(p.chatId, p.since, p.historyLimit);
    this.handlers['chat.history'] = (p) => {
      const items = this.chats.get(p.chatId)!.thread.items;
      const end = Number(String(p.cursor).slice(2));
      const start = Math.max(0, end - (p.limit ?? 50));
      return { items: items.slice(start, end), history: { start, cursor: start > 0 ? `c:${start}` : null } };
    };
    this.handlers['chat.send'] = (p, f) => {
      this.emit(p.chatId, { type: 'item', item: userItem(`u-${f.id}`, p.text) });
      return { queued: false, turnId: `turn-${f.id}` };
    };
  }

  /** The link token of the last connect, as someone watching the wire would have it. */
  token: string | null = null;

  async connect(): Promise<this> {
    this.token = await hostToken(this.hostId);
    this.ws = await openSocket(`/v1/hosts/${this.hostId}/link`, this.token);
    this.ws.addEventListener('message', (e) => {
      void this.onMessage(String(e.data));
    });
    this.ws.send(
      JSON.stringify({ link: 'hello', version: 'test', pending: this.outbox.size, ...(this.unsigned === undefined ? {} : { unsigned: this.unsigned }) }),
    );
    for (const [, text] of [...this.outbox].sort((a, b) => a[0] - b[0])) this.ws.send(text);
    this.pinger = setInterval(() => {
      if (this.silent || !this.ws) return;
      // The relay may close this socket (a test's storage is reset after it ends): then there is no one to ping.
      try {
        this.ws.send('ping');
      } catch {
        if (this.pinger) clearInterval(this.pinger);
      }
    }, 1_000);
    // Connected means the relay took the hello, as for a real host: the relay answers a hello with
    // nothing, and a request that overtook it found the host offline (a chat.send was kept and
    // answered {queued: true} before this host saw it, failing signed-forward in a loaded run).
    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(this.hostId));
    await poll(() => link.isOnline(), `the relay to take ${this.hostId}'s hello`, 10_000);
    return this;
  }

  disconnect(): void {
    if (this.pinger) clearInterval(this.pinger);
    this.ws?.close(1000, 'bye');
    this.ws = null;
  }

  create(chatId: string, items: ChatItem[] = []): HostChat {
    let chat = this.chats.get(chatId);
    if (!chat) this.chats.set(chatId, (chat = { thread: new Thread(infoFor(chatId), items), seq: 0, log: [] }));
    return chat;
  }

  /** Produces an event: applied, logged with the next seq, and sent (or kept) through the outbox. */
  emit(chatId: string, event: ChatEvent): number {
    const chat = this.create(chatId);
    chat.thread.apply(event);
    chat.seq += 1;
    chat.log.push({ seq: chat.seq, event });
    this.sendEvent('chat.event', { chatId, event, seq: chat.seq });
    return chat.seq;
  }

  /** Produces many events and sends them as array messages, the way a host joins one tick's frames. */
  emitMany(chatId: string, events: ChatEvent[], perMessage = 500): void {
    const ws = this.ws;
    const held: string[] = [];
    this.ws = { send: (text: string) => held.push(text) } as unknown as WebSocket;
    try {
      for (const event of events) this.emit(chatId, event);
    } finally {
      this.ws = ws;
    }
    for (let i = 0; i < held.length; i += perMessage) ws?.send(`[${held.slice(i, i + perMessage).join(',')}]`);
  }

  sendEvent(event: string, payload: unknown): void {
    const n = ++this.n;
    const text = JSON.stringify({ type: 'event', event, payload, n });
    this.outbox.set(n, text);
    if (this.ws) this.ws.send(text);
  }

  /** Sends an already-acknowledged frame again, as a host does after losing the ack. */
  resend(n: number, text: string): void {
    this.ws?.send(text);
  }

  /** When set, a whole-thread attach answers `frame-too-large`, as a host does for a thread past the link's frame size. */
  wholeTooLarge = false;

  private attachAnswer(chatId: string, since?: number, historyLimit?: number) {
    const chat = this.chats.get(chatId);
    if (!chat) throw Object.assign(new Error('No such chat'), { code: 'chat-not-found' });
    const { info, items } = chat.thread;
    if (since !== undefined && chat.log.length > 0 && since >= chat.log[0]!.seq - 1) {
      return { info, items: [], seq: chat.seq, events: chat.log.filter((e) => e.seq > since).map((e) => e.event) };
    }
    if (historyLimit !== undefined && items.length > historyLimit) {
      const start = items.length - historyLimit;
      return { info, items: items.slice(start), seq: chat.seq, history: { start, cursor: `c:${start}` } };
    }
    if (this.wholeTooLarge) throw Object.assign(new Error('The reply is larger than the link allows'), { code: 'frame-too-large' });
    return { info, items, seq: chat.seq };
  }

  private async onMessage(text: string): Promise<void> {
    if (text === 'pong') return;
    const frame = JSON.parse(text) as Frame;
    if (frame.link === 'ack') {
      // As the real host does: an ack it cannot read is ignored whole.
      const ack = LinkAckSchema.safeParse(frame);
      if (ack.success) for (const n of ack.data.n) this.outbox.delete(n);
      return;
    }
    this.received.push(frame);
    const handler = this.handlers[frame.type];
    if (handler === undefined) return; // unanswered: lets a test see host-timeout
    try {
      const result = await handler(frame.payload, frame);
      this.ws?.send(JSON.stringify({ id: frame.id, ok: true, result: result ?? {} }));
    } catch (error: any) {
      this.ws?.send(JSON.stringify({ id: frame.id, ok: false, error: { code: error.code ?? 'internal', message: error.message } }));
    }
  }

  requestsOf(type: string): Frame[] {
    return this.received.filter((f) => f.type === type);
  }
}

/** A client socket: numbered requests, every frame kept, waits by predicate. */
export class Client {
  readonly ws: WebSocket;
  readonly frames: Frame[] = [];
  private next = 0;
  private waiters: { test: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.addEventListener('message', (e) => {
      const frame = JSON.parse(String(e.data)) as Frame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => (w.test(frame) ? (w.resolve(frame), false) : true));
    });
  }

  static async chat(hostId: string, chatId: string, userId = OWNER): Promise<Client> {
    return new Client(await openSocket(`/v1/hosts/${hostId}/chats/${encodeURIComponent(chatId)}`, await userToken(userId)));
  }

  static async lobby(hostId: string, userId = OWNER): Promise<Client> {
    return new Client(await openSocket(`/v1/hosts/${hostId}/lobby`, await userToken(userId)));
  }

  waitFor(test: (f: Frame) => boolean, what = 'frame'): Promise<Frame> {
    const seen = this.frames.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 10_000);
      this.waiters.push({
        test,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
      });
    });
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  request(type: string, payload: unknown, id = `r-${++this.next}-${crypto.randomUUID()}`): Promise<Frame> {
    this.ws.send(JSON.stringify({ id, type, payload }));
    return this.waitFor((f) => f.id === id && 'ok' in f, `reply to ${type}`);
  }

  chatEvents(): Frame[] {
    return this.frames.filter((f) => f.type === 'event' && f.event === 'chat.event');
  }

  close(): void {
    this.ws.close(1000, 'done');
  }
}

/** The tests' one poll, with the relay tests' longer default (10 s: workerd under a loaded machine). */
export const until = <T>(check: () => T | NotYet | Promise<T | NotYet>, what: string, ms = 10_000): Promise<T> => poll(check, what, { ms, every: 20 });

/**
 * Gives one host's link the deployment's patience for a reply (HostLink.replyTimeoutMs) instead of the
 * tests' short HOST_TIMEOUT_MS, for the tests that move 10 MiB frames: on a busy machine such a
 * transfer can outlast the short timeout the other tests wait out on purpose.
 */
export async function patientLink(hostId: string): Promise<void> {
  const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(hostId));
  await runInDurableObject(link, (object) => {
    (object as unknown as HostLink).replyTimeoutMs = 60_000;
  });
}
