// Chaos with the real Claude Code CLI behind a real host process, the relay on workerd and an SDK
// client: while a reply streams, (a) the host's link is cut (a TCP reset through a proxy between the
// host and the relay) and (b) the relay itself is stopped and started again. Either way the client's
// thread must end equal to the host's own (its files on disk) and to a fresh client's snapshot: every
// item once, in order, with the model's text exactly (no delta lost, none applied twice).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Thread, type ChatEvent, type ChatItem } from '../../src/contracts/index.ts';
import { chatFileName } from '../../src/host/chats/store.ts';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { LinkProxy } from '../support/link-proxy.ts';
import { STREAM_REPLY, claudeHostConfig, startScenario } from '../host/claude-scenario.ts';
import { HostProcess, Peer, relayUrl } from './peers.ts';

const OWNER = 'chaos-owner';
const host = new HostProcess('chaos-host', OWNER);
const work = mkdtempSync(path.join(tmpdir(), 'tether-chaos-e2e-work-'));
let model: AnthropicServer;
let proxy: LinkProxy;
let lobby: Peer;
const opened: Peer[] = [];

type Frame = Record<string, any>;

/**
 * What a client app holds of one chat: the thread folded from an attach and the events after it (by
 * the relay's `seq`), across reattaches with `since`. It notes every seq that came out of order (a
 * gap or a repeat) and the text of every delta per item, so a delta lost or applied twice shows.
 */
class ChatView {
  readonly chatId: string;
  thread: Thread | null = null;
  seq = 0;
  readonly anomalies: string[] = [];
  readonly streamed = new Map<string, string>();
  /** How each attach was answered: by the events after `since`, or by a snapshot. */
  readonly attaches: Array<'replay' | 'snapshot'> = [];
  peer!: Peer;
  private attachId: string | null = null;
  private early: Frame[] = [];
  private waiters: Array<() => boolean> = [];

  constructor(chatId: string) {
    this.chatId = chatId;
  }

  /** Opens a chat socket and attaches (with `since` when it held the thread before); answers once the thread is current. */
  async attach(): Promise<void> {
    const peer = this.peer = await Peer.chat(host.hostId, this.chatId, OWNER);
    opened.push(peer);
    const id = this.attachId = crypto.randomUUID();
    peer.socket.onFrame((raw) => this.onFrame(raw as Frame));
    const since = this.thread ? { since: this.seq } : {};
    await peer.socket.request('chat.attach', { chatId: this.chatId, ...since }, id);
  }

  items(): ChatItem[] {
    return this.thread?.items ?? [];
  }

  /** Resolves with what `check` answers once it answers something, asked now and after every frame this view takes in. */
  when<T>(check: () => T | undefined | null | false, what: string, ms = 30_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== test);
        reject(new Error(`timed out: ${what}\n${host.output.slice(-3000)}`));
      }, ms);
      const test = () => {
        const value = check();
        if (!value) return false;
        clearTimeout(timer);
        resolve(value);
        return true;
      };
      if (!test()) this.waiters.push(test);
    });
  }

  private onFrame(frame: Frame): void {
    this.take(frame);
    this.waiters = this.waiters.filter((test) => !test());
  }

  private take(frame: Frame): void {
    if (this.attachId !== null && frame.id === this.attachId) {
      this.attachId = null;
      if (frame.ok) this.attached(frame.result);
      for (const early of this.early.splice(0)) this.take(early);
      return;
    }
    if (frame.event !== 'chat.event' || frame.payload.chatId !== this.chatId) return;
    if (this.attachId !== null) {
      this.early.push(frame);
      return;
    }
    const { event, seq } = frame.payload as { event: ChatEvent; seq?: number };
    if (seq !== undefined) {
      if (seq !== this.seq + 1) this.anomalies.push(`seq ${seq} after ${this.seq}`);
      if (seq <= this.seq) return;
      this.seq = seq;
    }
    this.apply(event);
  }

  private attached(result: { info: any; items: ChatItem[]; seq?: number; events?: ChatEvent[] }): void {
    if (result.events && this.thread) {
      // The missed events after `since`, in order: applied as if they had come live.
      this.attaches.push('replay');
      if (result.seq !== this.seq + result.events.length) this.anomalies.push(`replay of ${result.events.length} from ${this.seq} to ${result.seq}`);
      for (const event of result.events) this.apply(event);
    } else {
      this.attaches.push('snapshot');
      this.thread = new Thread(result.info, result.items);
    }
    this.seq = result.seq ?? 0;
  }

  private apply(event: ChatEvent): void {
    if (event.type === 'reset') this.thread = new Thread(event.info, event.items);
    else this.thread?.apply(event);
    if (event.type === 'delta') this.streamed.set(event.itemId, (this.streamed.get(event.itemId) ?? '') + event.text);
  }
}

/**
 * The host's own thread, read from its files without touching them: the record, then every complete
 * log line after it (a line being appended right now is not complete yet and is left for later).
 */
function hostThread(chatId: string): ChatItem[] {
  const dir = path.join(host.dataDir, 'chats');
  const record = JSON.parse(readFileSync(path.join(dir, `${chatFileName(chatId)}.json`), 'utf8')) as { info: any; items: ChatItem[]; seq: number };
  const thread = new Thread(record.info, record.items);
  let log = '';
  try {
    log = readFileSync(path.join(dir, `${chatFileName(chatId)}.log`), 'utf8');
  } catch {
    // no events after the record yet
  }
  const lines = log.split('\n').slice(0, -1);
  let seq = record.seq;
  for (const line of lines) {
    const entry = JSON.parse(line) as { seq: number; event: ChatEvent };
    if (entry.seq <= seq) continue;
    if (entry.seq !== seq + 1) throw new Error(`the host's log skips from ${seq} to ${entry.seq}`);
    thread.apply(entry.event);
    seq = entry.seq;
  }
  return thread.items;
}

/** What a client attaching now gets: the relay's snapshot of the chat. */
async function freshSnapshot(chatId: string): Promise<ChatItem[]> {
  const peer = await Peer.chat(host.hostId, chatId, OWNER);
  opened.push(peer);
  try {
    const { items } = await peer.socket.request('chat.attach', { chatId });
    return items as ChatItem[];
  } finally {
    peer.close();
  }
}

/** Equal as JSON values (key order aside), as `toEqual` compares them. */
const same = (a: unknown, b: unknown) => isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));

async function openChat(chatId: string): Promise<ChatView> {
  await lobby.socket.request('chat.create', { chatId, provider: 'claude', cwd: work, runtimeMode: 'supervised' });
  const view = new ChatView(chatId);
  await view.attach();
  return view;
}

/** Sends KW-STREAM and answers the turn and its reply item once the reply has begun to stream. */
async function startStreaming(view: ChatView): Promise<{ turnId: string; replyId: string }> {
  const sent = await view.peer.socket.request('chat.send', { chatId: view.chatId, text: 'KW-STREAM' });
  expect(sent.queued).toBe(false);
  const turnId = sent.turnId as string;
  const reply = await view.when(() => view.items().find((i) => i.kind === 'assistant' && i.turnId === turnId && view.streamed.get(i.id)), 'the reply to stream');
  return { turnId, replyId: reply.id };
}

/** After the turn settled: the client's thread equals the host's files and a fresh snapshot, and the reply is the model's text once. */
async function expectThreadsAgree(view: ChatView, turnId: string, replyId: string): Promise<void> {
  const turn = await view.when(() => view.items().find((i) => i.id === turnId && i.kind === 'turn' && i.state !== 'running'), 'the turn to settle', 40_000);
  expect(turn).toMatchObject({ state: 'done' });
  // What the host wrote after the turn (its info, say) may still be on its way: every event on its
  // disk reaches the client, so wait for the two to meet, then compare in full, so a difference shows as one.
  await view.when(() => same(view.items(), hostThread(view.chatId)), 'the client to hold what the host holds', 15_000).catch(() => undefined);
  const ours = view.items();
  expect(ours).toEqual(hostThread(view.chatId));
  expect(await freshSnapshot(view.chatId)).toEqual(ours);
  expect(new Set(ours.map((i) => i.id)).size).toBe(ours.length);
  expect(view.anomalies).toEqual([]);
  expect(view.streamed.get(replyId)).toBe(STREAM_REPLY);
  expect(ours.find((i) => i.id === replyId)).toMatchObject({ kind: 'assistant', text: STREAM_REPLY, streaming: false });
  expect(ours.filter((i) => i.turnId === turnId && i.kind === 'assistant')).toHaveLength(1);
}

beforeAll(async () => {
  const scenario = await startScenario();
  model = scenario.server;
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify(claudeHostConfig(scenario.env, work)));
  proxy = await LinkProxy.start(relayUrl());
  host.linkVia = proxy.url;
  await host.start();
  lobby = await Peer.lobby(host.hostId, OWNER);
  opened.push(lobby);
  await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
});

afterAll(async () => {
  for (const peer of opened) peer.close();
  await host.stop();
  await proxy?.close();
  await model?.close();
});

describe('chaos: faults mid-turn with the real Claude Code CLI', () => {
  it("the host's link cut three times from the reply's first delta on: the client's thread ends equal to the host's", async () => {
    const view = await openChat('chaos-cut');
    const { turnId, replyId } = await startStreaming(view);
    // Mid-stream, on the open link.
    const asked = proxy.asked;
    const answered = proxy.answered;
    expect(proxy.cut()).toBe(1);
    const atCut = view.streamed.get(replyId)!;
    // While the host reconnects by itself: its upgrade request is on its way to the relay, not yet answered.
    await proxy.past('asked', asked);
    proxy.cut();
    // The moment the relay accepts the next one, before the host's hello and backlog are through.
    await proxy.past('answered', answered);
    proxy.cut();
    await proxy.past('answered', answered + 1);
    // At once the relay reaches the host on its newest link, not on one the cuts left behind (a link
    // reset while the relay accepted it lingers in its list for seconds, closing but never closed).
    const { providers } = await lobby.socket.request('provider.list', {});
    expect(providers.map((p: Frame) => p.kind)).toContain('claude');
    await expectThreadsAgree(view, turnId, replyId);
    expect(atCut.length, 'the first cut landed while the reply streamed').toBeLessThan(STREAM_REPLY.length);
    expect(view.attaches).toEqual(['snapshot']);
  });

  it('the relay restarted while the reply streams: the client reattaches with since and ends equal to the host', async () => {
    const view = await openChat('chaos-restart');
    const { turnId, replyId } = await startStreaming(view);
    const restart = await fetch(`${inject('relayControlUrl')}/restart`, { method: 'POST' });
    expect(restart.status, await restart.clone().text()).toBe(200);
    const atRestart = view.streamed.get(replyId)!;
    expect(view.peer.socket.closed, "the client's socket closed with the relay").not.toBeNull();
    await view.attach();
    expect(view.attaches).toEqual(['snapshot', 'replay']);
    await expectThreadsAgree(view, turnId, replyId);
    expect(atRestart.length, 'the restart landed while the reply streamed').toBeLessThan(STREAM_REPLY.length);
    expect(model.unexpected).toEqual([]);
  });
});
