// A turn never stays open: whatever way it ends (a backend that cannot start, a restart, a cancel),
// its requests, streams and tools are settled, and the next message goes on.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RuntimeMode } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import type { Provider, ProviderChatContext } from '../../src/host/providers/provider.ts';
import { ScriptFileSchema, ScriptProvider } from '../../src/host/providers/script.ts';
import { idle, needsYou, openCore, TEST_SCRIPT, TestClient, tempDir, until } from './harness.ts';

/** The test script's backend, recording every open; `failOpens` makes the next opens throw. */
class SpyProvider implements Provider {
  readonly kind = 'claude' as const;
  readonly canSteer = true;
  readonly opened: ProviderChatContext[] = [];
  failOpens = 0;
  /** What each next backend confirms about its mode at its first turn (its own word, and as a RuntimeMode if it is one). */
  readonly confirms: Array<{ permissionMode: string; effectiveRuntimeMode?: RuntimeMode }> = [];
  private readonly inner: ScriptProvider;
  constructor(script = TEST_SCRIPT) {
    this.inner = new ScriptProvider({ kind: 'claude', script });
  }
  info() {
    return this.inner.info();
  }
  normalizeSelection(selection: Parameters<Provider['normalizeSelection']>[0]) {
    return this.inner.normalizeSelection(selection);
  }
  open(context: ProviderChatContext) {
    this.opened.push(context);
    if (this.failOpens > 0) {
      this.failOpens -= 1;
      throw new Error('the CLI is not installed');
    }
    const session = this.inner.open(context);
    const confirmed = this.confirms.shift();
    if (confirmed) {
      const startTurn = session.startTurn.bind(session);
      session.startTurn = (input, emit) => {
        startTurn(input, emit);
        queueMicrotask(() => emit({ type: 'session', agentSessionId: context.agentSessionId ?? 'spy-session', ...confirmed }));
      };
    }
    return session;
  }
}

const SLOW_TOOL = ScriptFileSchema.parse({
  replies: [
    { match: 'slow', steps: [{ type: 'tool', name: 'Bash', input: { command: 'sleep' }, output: 'zz', deltas: 2, delayMs: 60_000 }] },
    ...TEST_SCRIPT.replies,
  ],
});

let data: ReturnType<typeof tempDir>;
let provider: SpyProvider;
let core: HostCore;
let client: TestClient;

beforeEach(async () => {
  data = tempDir('tether-turns-');
  provider = new SpyProvider(SLOW_TOOL);
  core = await openCore(data.dir, { providers: [provider] });
  client = new TestClient(core);
  // Wider than the default (supervised), so a configure to supervised is a change of mode.
  await client.ok('chat.create', { chatId: 'c1', runtimeMode: 'auto-accept-edits' });
});
afterEach(async () => {
  await core.close();
  data.cleanup();
});

const turnStates = () => core.session('c1').thread.items.flatMap((i) => (i.kind === 'turn' ? [i.state] : []));

describe('a turn that cannot start', () => {
  it('fails with a note instead of staying open, and the next send works', async () => {
    provider.failOpens = 1;
    const sent = await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    expect(core.session('c1').info).toMatchObject({ activeTurnId: null, status: 'error' });
    expect(turnStates()).toEqual(['error']);
    const note = core.session('c1').thread.items.find((i) => i.kind === 'note');
    expect(note).toMatchObject({ level: 'error', turnId: sent.turnId });
    expect(note?.kind === 'note' && note.text).toMatch(/could not start: the CLI is not installed/);
    await client.ok('chat.send', { chatId: 'c1', text: 'hi again' });
    await idle(core, 'c1');
    expect(turnStates()).toEqual(['error', 'done']);
  });

  it("fails a queued message's turn with a note rather than dropping the message", async () => {
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    const info = await needsYou(core, 'c1');
    const queued = await client.ok('chat.send', { chatId: 'c1', text: 'next' });
    // A new mode means a new backend for the next turn, and that one will not start.
    await client.ok('chat.configure', { chatId: 'c1', runtimeMode: 'supervised' });
    provider.failOpens = 1;
    await client.ok('chat.approve', { chatId: 'c1', requestId: info.requests![0].requestId, decision: 'allow' });
    await until(() => turnStates().length === 2 && core.session('c1').info.activeTurnId === null, 'the queued turn to settle');
    expect(turnStates()).toEqual(['done', 'error']);
    const user = core
      .session('c1')
      .thread.items.filter((i) => i.kind === 'user')
      .at(-1);
    expect(user).toMatchObject({ text: 'next', turnId: queued.turnId });
    expect(core.session('c1').info.queue).toBeUndefined();
  });
});

describe('the backend a turn runs on', () => {
  it('is opened again with a narrower mode once the chat is configured, and kept while nothing changed', async () => {
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    expect(provider.opened.map((c) => c.runtimeMode)).toEqual(['auto-accept-edits']);
    await client.ok('chat.configure', { chatId: 'c1', runtimeMode: 'supervised' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    expect(provider.opened.map((c) => c.runtimeMode)).toEqual(['auto-accept-edits', 'supervised']);
    // The conversation goes on: the new backend resumes the session the first one announced.
    expect(provider.opened[1].agentSessionId).toBe(core.session('c1').info.agentSessionId);
  });
});

describe('the effective runtime mode', () => {
  it('is only what the running backend confirmed: a mode it reports that is none of ours clears the last one', async () => {
    provider.confirms.push({ permissionMode: 'bypassPermissions', effectiveRuntimeMode: 'full-access' }, { permissionMode: 'something-new' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    expect(core.session('c1').info).toMatchObject({ permissionMode: 'bypassPermissions', effectiveRuntimeMode: 'full-access' });
    await client.ok('chat.configure', { chatId: 'c1', runtimeMode: 'supervised' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    expect(core.session('c1').info.permissionMode).toBe('something-new');
    expect(core.session('c1').info.effectiveRuntimeMode).toBeUndefined();
  });
});

describe('what a turn leaves open', () => {
  it('a restart fails the tools the interrupted turn was running', async () => {
    await client.ok('chat.send', { chatId: 'c1', text: 'slow' });
    await until(() => core.session('c1').thread.items.some((i) => i.kind === 'tool'), 'the tool to start');
    await core.close();
    core = await openCore(data.dir, { providers: [provider] });
    core.resume();
    const items = core.session('c1').thread.items;
    expect(items.find((i) => i.kind === 'tool')).toMatchObject({ state: 'error' });
    expect(turnStates()).toEqual(['aborted']);
  });

  it('a cancel fails the running tool and leaves nothing streaming', async () => {
    await client.ok('chat.send', { chatId: 'c1', text: 'slow' });
    await until(() => core.session('c1').thread.items.some((i) => i.kind === 'tool'), 'the tool to start');
    await client.ok('chat.cancel', { chatId: 'c1' });
    const items = core.session('c1').thread.items;
    expect(items.find((i) => i.kind === 'tool')).toMatchObject({ state: 'error' });
    expect(items.some((i) => (i.kind === 'assistant' || i.kind === 'thinking') && i.streaming)).toBe(false);
  });

  it('a steered message keeps its mentions, skills and chats like any other', async () => {
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    await needsYou(core, 'c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'look here', delivery: 'steer', mentions: ['src/a.ts'], skills: ['review'], chats: ['c0'] });
    const steered = core
      .session('c1')
      .thread.items.filter((i) => i.kind === 'user')
      .at(-1);
    expect(steered).toMatchObject({ text: 'look here', mentions: ['src/a.ts'], skills: ['review'], chats: ['c0'] });
  });
});

describe('a send racing a kill', () => {
  it('starts no backend for a chat killed while its attachments were being stored', async () => {
    const data64 = Buffer.from('x'.repeat(64 * 1024)).toString('base64');
    const sending = client.request('chat.send', { chatId: 'c1', text: 'hi', attachments: [{ name: 'a.txt', mime: 'text/plain', data: data64 }] });
    await client.ok('chat.kill', { chatId: 'c1' });
    expect(await sending).toMatchObject({ ok: false, error: { code: 'chat-not-found' } });
    expect(provider.opened).toHaveLength(0);
  });
});
