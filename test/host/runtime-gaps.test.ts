// The chat runtime around its backend: attachments as the backend gets them, no backend before the
// first send, a turn cut by a restart resumed on the next send, and the refusals during a turn.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notResumedNote } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ScriptFileSchema } from '../../src/host/providers/script.ts';
import { idle, needsYou, openCore, TEST_SCRIPT, TestClient, tempDir, until } from './harness.ts';
import { RecordingProvider } from './recording-provider.ts';

const SCRIPT = ScriptFileSchema.parse({
  replies: [
    {
      match: 'slow',
      steps: [
        { type: 'text', text: 'working' },
        { type: 'wait', ms: 60_000 },
      ],
    },
    ...TEST_SCRIPT.replies,
  ],
});

let data: ReturnType<typeof tempDir>;
let provider: RecordingProvider;
let core: HostCore;
let client: TestClient;

beforeEach(async () => {
  data = tempDir('tether-gaps-');
  provider = new RecordingProvider({ script: SCRIPT });
  core = await openCore(data.dir, { providers: [provider] });
  client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'c1' });
});

afterEach(async () => {
  await core.close();
  data.cleanup();
});

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const upload = (name: string, mime: string, bytes: Buffer) => ({ name, mime, data: bytes.toString('base64') });

describe('attachments', () => {
  it('are stored once by content, and the backend gets paths, mime types and the image bytes', async () => {
    const sent = await client.ok('chat.send', {
      chatId: 'c1',
      text: 'see these',
      attachments: [
        upload('shot.PNG', 'image/png', PNG),
        upload('notes.txt', 'text/plain', Buffer.from('hello\n')),
        upload('again.png', 'application/octet-stream', PNG),
      ],
    });
    await idle(core, 'c1');
    const user = core.session('c1').thread.items.find((i) => i.kind === 'user');
    const stored = user?.kind === 'user' ? user.attachments! : [];
    expect(stored).toEqual([
      { id: expect.stringMatching(/^att-/), name: 'shot.PNG', mime: 'image/png', size: PNG.length, path: expect.stringMatching(/\.png$/) },
      { id: expect.stringMatching(/^att-/), name: 'notes.txt', mime: 'text/plain', size: 6, path: expect.stringMatching(/\.txt$/) },
      { id: expect.stringMatching(/^att-/), name: 'again.png', mime: 'application/octet-stream', size: PNG.length, path: stored[0].path },
    ]);
    // The same bytes are one file; each stored file holds exactly the decoded upload.
    expect(readdirSync(core.store.attachmentDir('c1'))).toHaveLength(2);
    expect(readFileSync(stored[0].path)).toEqual(PNG);
    expect(readFileSync(stored[1].path, 'utf8')).toBe('hello\n');

    const input = provider.turns[0];
    expect(input).toMatchObject({ turnId: sent.turnId, text: 'see these', attachments: stored });
    // Images by their declared type or, for a generic type, by the name; never the text file.
    expect(input.images).toEqual([
      { attachmentId: stored[0].id, path: stored[0].path, mime: 'image/png', data: PNG.toString('base64') },
      { attachmentId: stored[2].id, path: stored[0].path, mime: 'image/png', data: PNG.toString('base64') },
    ]);
  });

  it('a queued message keeps paths and its images reach the backend when it goes', async () => {
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    const info = await needsYou(core, 'c1');
    const queued = await client.ok('chat.send', { chatId: 'c1', text: 'later', attachments: [upload('a.gif', 'image/gif', Buffer.from('GIF89a'))] });
    expect(queued.queued).toBe(true);
    const inQueue = core.session('c1').info.queue![0].attachments![0];
    expect(inQueue).not.toHaveProperty('data');
    await client.ok('chat.approve', { chatId: 'c1', requestId: info.requests![0].requestId, decision: 'allow' });
    await until(() => provider.turns.length === 2, 'the queued turn');
    expect(provider.turns[1].images).toEqual([
      { attachmentId: inQueue.id, path: inQueue.path, mime: 'image/gif', data: Buffer.from('GIF89a').toString('base64') },
    ]);
  });

  it('refuses more than 8 per message or bad base64 with invalid-attachments, storing nothing', async () => {
    const nine = Array.from({ length: 9 }, (_, i) => upload(`f${i}.txt`, 'text/plain', Buffer.from(`${i}`)));
    expect(await client.fails('chat.send', { chatId: 'c1', text: 'x', attachments: nine })).toBe('invalid-attachments');
    expect(await client.fails('chat.send', { chatId: 'c1', text: 'x', attachments: [{ name: 'a', mime: 'text/plain', data: 'not base64!' }] })).toBe(
      'invalid-attachments',
    );
    expect(() => readdirSync(core.store.attachmentDir('c1'))).toThrow();
    expect(provider.opened).toHaveLength(0);
  });
});

describe('the backend of a chat', () => {
  it('is not started by create, only by the first send', async () => {
    await client.ok('chat.create', { chatId: 'c2' });
    await client.ok('chat.configure', { chatId: 'c2', runtimeMode: 'supervised' });
    await client.attach('c2');
    expect(provider.opened).toHaveLength(0);
    expect(core.session('c2').info.running).toBe(false);
    await client.ok('chat.send', { chatId: 'c2', text: 'hi' });
    await idle(core, 'c2');
    expect(provider.opened).toEqual([expect.objectContaining({ chatId: 'c2', agentSessionId: null, runtimeMode: 'supervised' })]);
  });

  it("runs under the chat's account: its folder and plain variables, never a secret's (absent) value", async () => {
    // A policy that allows these variables and config folders under a home of its own (outside the chat folder and the data folder).
    const home = tempDir('tether-gaps-home-');
    await core.close();
    core = await openCore(data.dir, {
      providers: [provider],
      policy: new HostPolicy({ home: home.dir, roots: [data.dir], accountEnv: ['REGION', 'API_KEY'], accountHomes: ['~'] }),
    });
    client = new TestClient(core);
    const { id } = (await client.ok('accounts.create', { kind: 'claude', label: 'Work' })) as { id: string };
    await client.ok('accounts.save', {
      accounts: {
        [id]: {
          kind: 'claude',
          label: 'Work',
          home: '~/.claude-work',
          env: [
            { name: 'REGION', value: 'eu', sensitive: false },
            { name: 'API_KEY', value: '', sensitive: true, valueRedacted: true },
          ],
        },
      },
    });
    await client.ok('chat.create', { chatId: 'c3', account: id, cwd: data.dir });
    await client.ok('chat.send', { chatId: 'c3', text: 'hi' });
    await idle(core, 'c3');
    const opened = provider.opened.find((context) => context.chatId === 'c3')!;
    expect(opened.accountHome).toMatch(/\/\.claude-work$/);
    expect(opened.accountHome).not.toContain('~');
    expect(opened.accountEnv).toEqual({ REGION: 'eu' });
    home.cleanup();
  });

  it('after a restart, a subagent that outlived its turn is settled as failed; the turn it outlived stays as it ended', async () => {
    // A backend whose turn ends with one of its subagents still at work, as Codex's collab agents do.
    const open = provider.open.bind(provider);
    provider.open = (context) => {
      const session = open(context);
      session.startTurn = (_input, emit) => {
        emit({ type: 'subagent-start', toolUseId: 'call_o', description: 'wait for the go', subagentType: null, prompt: 'wait for the go', background: true });
        emit({ type: 'turn-end', state: 'done', outliving: ['call_o'] });
      };
      return session;
    };
    const sent = await client.ok('chat.send', { chatId: 'c1', text: 'delegate and leave' });
    await idle(core, 'c1');
    const row = () => core.session('c1').thread.items.find((i) => i.kind === 'subagent' && i.toolUseId === 'call_o');
    expect(row()).toMatchObject({ status: 'running', finishedAt: null, turnId: sent.turnId });
    await core.close();

    core = await openCore(data.dir, { providers: [provider] });
    client = new TestClient(core);
    core.resume();
    expect(row()).toMatchObject({ status: 'failed', finishedAt: expect.any(Number) });
    expect(core.session('c1').thread.items.find((i) => i.id === sent.turnId)).toMatchObject({ kind: 'turn', state: 'done' });
    expect(core.session('c1').info).toMatchObject({ status: 'idle', running: false });
    // Settled once: a second recovery finds nothing left open.
    expect(core.session('c1').recover('again')).toBe(false);
  });

  it("a subagent that outlived its turn: its later work lands under its row with no turn opened, and a later turn's cancel does not settle it", async () => {
    // A backend whose first turn leaves a subagent at work (as Codex's collab agents do) and whose later turns run until stopped.
    const open = provider.open.bind(provider);
    let side: ((output: any) => void) | undefined;
    provider.open = (context) => {
      const session = open(context);
      side = context.side;
      let turns = 0;
      session.startTurn = (_input, emit) => {
        if (++turns > 1) return;
        emit({ type: 'subagent-start', toolUseId: 'call_o', description: 'wait for the go', subagentType: null, prompt: 'wait for the go', background: true });
        emit({ type: 'turn-end', state: 'done', outliving: ['call_o'] });
      };
      return session;
    };
    const sent = await client.ok('chat.send', { chatId: 'c1', text: 'delegate and leave' });
    await idle(core, 'c1');
    const items = () => core.session('c1').thread.items;
    const row = () => items().find((i) => i.kind === 'subagent' && i.toolUseId === 'call_o');

    side!({ type: 'tool-start', toolUseId: 'c9', name: 'Bash', input: { command: 'ls' }, parentToolUseId: 'call_o' });
    side!({ type: 'tool-output', toolUseId: 'c9', text: 'a.txt\n' });
    side!({ type: 'text', text: 'looking', parentToolUseId: 'call_o' });
    // A tool or reply under no running row is not taken up.
    side!({ type: 'tool-start', toolUseId: 'c0', name: 'Bash', input: { command: 'rm' }, parentToolUseId: 'call_none' });
    side!({ type: 'text', text: 'stray' });
    expect(items().find((i) => i.kind === 'tool' && i.toolUseId === 'c9')).toMatchObject({ state: 'running', turnId: sent.turnId, parentToolUseId: 'call_o' });
    expect(items().some((i) => i.kind === 'tool' && i.toolUseId === 'c0')).toBe(false);
    expect(
      items()
        .filter((i) => i.kind === 'assistant')
        .map((i) => i.kind === 'assistant' && [i.text, i.streaming, i.parentToolUseId]),
    ).toEqual([['looking', true, 'call_o']]);
    expect(core.session('c1').info).toMatchObject({ status: 'idle', activeTurnId: null });

    // A later turn, cancelled: the row it did not open, its tool and its reply go on.
    const later = await client.ok('chat.send', { chatId: 'c1', text: 'something else' });
    await client.ok('chat.cancel', { chatId: 'c1' });
    expect(items().find((i) => i.id === later.turnId)).toMatchObject({ state: 'aborted' });
    expect(row()).toMatchObject({ status: 'running' });
    expect(items().find((i) => i.kind === 'tool' && i.toolUseId === 'c9')).toMatchObject({ state: 'running' });

    side!({ type: 'tool-end', toolUseId: 'c9', output: 'a.txt\n', error: false });
    side!({ type: 'text', text: ' done', parentToolUseId: 'call_o' });
    side!({ type: 'text-end', parentToolUseId: 'call_o' });
    side!({ type: 'subagent-end', toolUseId: 'call_o', status: 'done', result: 'looking done' });
    expect(row()).toMatchObject({ status: 'done', result: 'looking done', finishedAt: expect.any(Number) });
    expect(items().find((i) => i.kind === 'tool' && i.toolUseId === 'c9')).toMatchObject({ state: 'done', output: 'a.txt\n' });
    expect(
      items()
        .filter((i) => i.kind === 'assistant')
        .map((i) => i.kind === 'assistant' && [i.text, i.streaming]),
    ).toEqual([['looking done', false]]);
    // Settled: later reports change nothing.
    side!({ type: 'tool-start', toolUseId: 'c10', name: 'Bash', input: { command: 'ls' }, parentToolUseId: 'call_o' });
    expect(items().some((i) => i.kind === 'tool' && i.toolUseId === 'c10')).toBe(false);
    expect(items().filter((i) => i.kind === 'turn')).toHaveLength(2);
  });

  it('a turn the backend starts on its own is an agent turn with no message; refused while a turn of the chat runs', async () => {
    const open = provider.open.bind(provider);
    let context: Parameters<typeof provider.open>[0] | undefined;
    provider.open = (opened) => {
      context = opened;
      return open(opened);
    };
    const sent = await client.ok('chat.send', { chatId: 'c1', text: 'slow' });
    await until(() => core.session('c1').thread.items.some((i) => i.kind === 'assistant' && i.turnId === sent.turnId), 'the turn to run');
    // A turn runs: the backend's own is not shown.
    expect(context!.agentTurn!('by itself')).toBeNull();
    await client.ok('chat.cancel', { chatId: 'c1' });

    const emit = context!.agentTurn!('by itself')!;
    const items = () => core.session('c1').thread.items;
    const turn = items().at(-1)!;
    expect(turn).toMatchObject({ kind: 'turn', origin: 'agent', label: 'by itself', state: 'running' });
    expect(core.session('c1').info).toMatchObject({ status: 'running', activeTurnId: turn.id });
    // Another one meanwhile is refused too.
    expect(context!.agentTurn!('again')).toBeNull();
    emit({ type: 'text', text: 'woke up' });
    emit({ type: 'turn-end', state: 'done' });
    expect(items().find((i) => i.id === turn.id)).toMatchObject({ state: 'done', endedAt: expect.any(Number) });
    expect(
      items()
        .filter((i) => i.turnId === turn.id)
        .map((i) => i.kind),
    ).toEqual(['turn', 'assistant']);
    expect(core.session('c1').info).toMatchObject({ status: 'idle', activeTurnId: null });
    // Its emit is spent: late output is dropped.
    emit({ type: 'text', text: 'late' });
    expect(items().filter((i) => i.turnId === turn.id)).toHaveLength(2);
  });

  it('after a restart cut its turn: the turn is aborted with the note, and the next send resumes the stored session', async () => {
    const sent = await client.ok('chat.send', { chatId: 'c1', text: 'slow' });
    await until(() => core.session('c1').thread.items.some((i) => i.kind === 'assistant'), 'the turn to run');
    const agentSessionId = core.session('c1').info.agentSessionId;
    expect(agentSessionId).toEqual(expect.any(String));
    await core.close();

    core = await openCore(data.dir, { providers: [provider] });
    client = new TestClient(core);
    core.resume();
    const items = core.session('c1').thread.items;
    expect(items.find((i) => i.id === sent.turnId)).toMatchObject({ kind: 'turn', state: 'aborted' });
    expect(items.find((i) => i.kind === 'note')).toMatchObject({ level: 'warning', turnId: sent.turnId, text: expect.stringContaining(notResumedNote('')) });
    expect(core.session('c1').info).toMatchObject({ status: 'idle', running: false, agentSessionId });
    expect(provider.opened).toHaveLength(1); // nothing reopened by the recovery itself

    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    expect(provider.opened).toHaveLength(2);
    expect(provider.opened[1]).toMatchObject({ chatId: 'c1', agentSessionId });
    expect(core.session('c1').info.agentSessionId).toBe(agentSessionId);
  });
});

describe('chat.compact', () => {
  it('answers chat-unsupported for a backend that cannot compact, and changes nothing', async () => {
    await core.close();
    provider = new RecordingProvider({ script: SCRIPT, canCompact: false });
    core = await openCore(data.dir, { providers: [provider] });
    client = new TestClient(core);
    await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    const before = core.session('c1').thread.items.length;
    expect(await client.fails('chat.compact', { chatId: 'c1' })).toBe('chat-unsupported');
    expect(core.session('c1').thread.items).toHaveLength(before);
    expect(core.session('c1').info.status).toBe('idle');
  });
});

describe('during a turn', () => {
  it('chat.clear answers chat-busy without force, and clears with it', async () => {
    await client.ok('chat.send', { chatId: 'c1', text: 'slow' });
    await until(() => core.session('c1').info.status === 'running', 'the turn running');
    expect(await client.fails('chat.clear', { chatId: 'c1' })).toBe('chat-busy');
    expect(core.session('c1').thread.items.length).toBeGreaterThan(0);
    await client.ok('chat.clear', { chatId: 'c1', force: true });
    expect(core.session('c1').thread.items).toEqual([]);
    expect(core.session('c1').info).toMatchObject({ activeTurnId: null, agentSessionId: null });
  });

  it('chat.cancel settles the open approval and question as cancelled', async () => {
    await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    await needsYou(core, 'c1');
    await client.ok('chat.cancel', { chatId: 'c1' });
    expect(core.session('c1').thread.items.find((i) => i.kind === 'approval')).toMatchObject({ decision: 'cancelled' });
    await client.ok('chat.send', { chatId: 'c1', text: 'question' });
    await needsYou(core, 'c1');
    await client.ok('chat.cancel', { chatId: 'c1' });
    expect(core.session('c1').thread.items.find((i) => i.kind === 'question')).toMatchObject({ state: 'cancelled' });
    expect(core.session('c1').info).toMatchObject({ status: 'idle', activeTurnId: null });
    expect(core.session('c1').info.requests).toBeUndefined();
    expect(
      core
        .session('c1')
        .thread.items.filter((i) => i.kind === 'turn')
        .map((i) => i.kind === 'turn' && i.state),
    ).toEqual(['aborted', 'aborted']);
  });
});
