// chat.fork, chat.forkInfo, chat.continueOn and chat.summarize, end to end on scripted backends.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChatForkResultSchema, ChatInfoSchema } from '../../src/contracts/index.ts';
import type { ChatItem } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { SUMMARY_PROMPT } from '../../src/host/chats/forks.ts';
import { idle, openCore, TestClient, tempDir, until } from './harness.ts';
import { RecordingProvider } from './recording-provider.ts';

let data: ReturnType<typeof tempDir>;
let claude: RecordingProvider;
let codex: RecordingProvider;
let core: HostCore;
let client: TestClient;
let relay: TestClient;

beforeEach(async () => {
  data = tempDir('tether-fork-');
  claude = new RecordingProvider();
  codex = new RecordingProvider({ kind: 'codex', canFork: false });
  core = await openCore(data.dir, { providers: [claude, codex] });
  client = new TestClient(core);
  relay = new TestClient(core, 'relay', true);
  await client.ok('chat.create', { chatId: 'c1' });
});

afterEach(async () => {
  await core.close();
  data.cleanup();
});

async function turn(chatId: string, text: string, extra: object = {}): Promise<string> {
  const sent = await client.ok('chat.send', { chatId, text, ...extra });
  await idle(core, chatId);
  return sent.turnId;
}

const shape = (items: ChatItem[]) => items.map((i) => `${i.kind}:${i.turnId}`);

describe('chat.fork', () => {
  it('makes a chat that continues after the turn, with the history through it and a session of its own', async () => {
    const first = await turn('c1', 'hi');
    await turn('c1', 'hello again');
    const source = core.session('c1');
    const before = structuredClone(source.thread.items);

    const result = ChatForkResultSchema.parse(await client.ok('chat.fork', { chatId: 'c1', turnId: first, title: 'Try another way' }));
    const forkId = result.info.chatId;
    expect(forkId).not.toBe('c1');
    expect(result).toMatchObject({ nodeId: forkId, viewId: forkId, edgeId: null });
    expect(result.info).toMatchObject({ provider: 'claude', forkOf: { chatId: 'c1', turnId: first }, suggestedTitle: 'Try another way', status: 'idle' });
    expect(claude.forks).toEqual([expect.objectContaining({ agentSessionId: source.info.agentSessionId, turnId: first, latest: false })]);
    expect(result.info.agentSessionId).toEqual(expect.any(String));
    expect(result.info.agentSessionId).not.toBe(source.info.agentSessionId);

    // The history through the first turn, not the second; the source is as it was.
    const fork = core.session(forkId);
    expect(shape(fork.thread.items)).toEqual(shape(before.filter((i) => i.turnId === first)));
    expect(source.thread.items).toEqual(before);
    // Clients learn the fork's thread from its events (a reset with the history), like any change.
    const resets = relay.events('chat.event').filter((f) => (f.payload as any).chatId === forkId && (f.payload as any).event.type === 'reset');
    expect(resets).toHaveLength(1);
    expect((resets[0].payload as any).event.items).toEqual(fork.thread.items);
    expect(relay.statuses.get(forkId)).toEqual(fork.info);

    // It goes on by itself, on its own backend session.
    await turn(forkId, 'and now?');
    expect(claude.opened.at(-1)).toMatchObject({ chatId: forkId, agentSessionId: result.info.agentSessionId });
    expect(claude.opened.at(-1)).not.toHaveProperty('forkSession');
    expect(fork.thread.items.filter((i) => i.kind === 'turn')).toHaveLength(2);
    expect(source.thread.items).toEqual(before);
  });

  it('refuses what it cannot fork with the protocol codes', async () => {
    expect(await client.fails('chat.fork', { chatId: 'c1', turnId: 'nope' })).toBe('turn-not-found');
    await client.ok('chat.create', { chatId: 'x', provider: 'codex' });
    const codexTurn = await turn('x', 'hi');
    // A backend without the capability cannot copy its conversation.
    expect(await client.fails('chat.fork', { chatId: 'x', turnId: codexTurn })).toBe('chat-unsupported');
    expect(await client.fails('chat.summarize', { chatId: 'x' })).toBe('chat-unsupported');
    const first = await turn('c1', 'hi');
    expect(await client.fails('chat.fork', { chatId: 'c1', turnId: first, worktree: {} })).toBe('chat-unsupported');
    expect(await client.fails('chat.fork', { chatId: 'c1', turnId: first, account: 'nobody' })).toBe('account-unavailable');
    // A running turn is not a place to fork from yet.
    const running = await client.ok('chat.send', { chatId: 'c1', text: 'approve' });
    await until(() => core.session('c1').info.status === 'needs-you', 'the turn to need someone');
    expect(await client.fails('chat.fork', { chatId: 'c1', turnId: running.turnId })).toBe('chat-busy');
    expect(core.sessions.size).toBe(2);
  });

  it("hands the conversation to another CLI as text with the fork's first message", async () => {
    const first = await turn('c1', 'hi');
    const result = await client.ok('chat.fork', { chatId: 'c1', turnId: first, provider: 'codex' });
    expect(result.info).toMatchObject({ provider: 'codex', agentSessionId: null });
    expect(claude.forks).toHaveLength(0);
    await turn(result.info.chatId, 'carry on');
    const input = codex.turns[0];
    expect(input.text).toContain('User: hi');
    expect(input.text).toContain('Assistant: Hello there, friend');
    expect(input.text.endsWith('carry on')).toBe(true);
    // The thread shows what the person wrote, and the second message goes plain.
    const fork = core.session(result.info.chatId);
    expect(fork.thread.items.filter((i) => i.kind === 'user').at(-1)).toMatchObject({ text: 'carry on' });
    await turn(result.info.chatId, 'more');
    expect(codex.turns[1].text).toBe('more');
  });

  it("opens a fork that shares its source's backend session with forkSession, so the backend branches it", async () => {
    const sharing = new RecordingProvider();
    (sharing as { fork?: unknown }).fork = async (request: { agentSessionId: string }) => request.agentSessionId;
    await core.close();
    core = await openCore(data.dir, { providers: [sharing] });
    client = new TestClient(core);
    const first = await turn('c1', 'hi');
    const result = await client.ok('chat.fork', { chatId: 'c1', turnId: first });
    expect(result.info.agentSessionId).toBe(core.session('c1').info.agentSessionId);
    await turn(result.info.chatId, 'go');
    expect(sharing.opened.at(-1)).toMatchObject({ chatId: result.info.chatId, forkSession: true });
  });

  it('copies the files and visuals of the history, which outlive the source', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const first = await turn('c1', 'look', { attachments: [{ name: 'shot.png', mime: 'image/png', data: png.toString('base64') }] });
    const withVisual = await turn('c1', 'visual please');
    await until(() => core.visualsOf('c1').length === 1, 'the visual');
    const result = await client.ok('chat.fork', { chatId: 'c1', turnId: withVisual });
    const forkId = result.info.chatId;
    const user = core.session(forkId).thread.items.find((i) => i.kind === 'user' && i.turnId === first);
    const attachment = user?.kind === 'user' ? user.attachments![0] : undefined;
    expect(attachment?.path.startsWith(core.store.attachmentDir(forkId))).toBe(true);
    expect(core.visualsOf(forkId)).toEqual(core.visualsOf('c1'));
    expect(relay.events('visual.page').filter((f) => (f.payload as any).chatId === forkId)).toHaveLength(1);
    await client.ok('chat.kill', { chatId: 'c1' });
    expect(existsSync(attachment!.path)).toBe(true);
    expect(existsSync(path.join(core.store.attachmentDir(forkId), `${core.visualsOf(forkId)[0].id}.html`))).toBe(true);
  });
});

describe('chat.forkInfo', () => {
  it('says whether the chat is in a repository and which branches it has', async () => {
    const first = await turn('c1', 'hi');
    expect(await client.ok('chat.forkInfo', { chatId: 'c1', turnId: first })).toEqual({ repository: false, branches: [], branch: null, filesAfterTurn: false });
    const repo = path.join(data.dir, 'repo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: repo });
    execFileSync('git', ['branch', 'feature'], { cwd: repo });
    await client.ok('chat.create', { chatId: 'r', cwd: repo });
    const inRepo = await turn('r', 'hi');
    // A free branch to suggest, after the chat's title (its first message); the files are HEAD's, not the turn's.
    expect(await client.ok('chat.forkInfo', { chatId: 'r', turnId: inRepo })).toEqual({
      repository: true,
      branches: ['feature', 'main'],
      branch: expect.stringMatching(/^tether\/hi-[0-9a-f]{4}$/),
      filesAfterTurn: false,
    });
    expect(await client.fails('chat.forkInfo', { chatId: 'r', turnId: 'nope' })).toBe('turn-not-found');
  });
});

describe('chat.continueOn', () => {
  it('switches in place before any conversation, and goes on in a fork on the other account after one', async () => {
    const { id: work } = await client.ok('accounts.create', { kind: 'claude', label: 'Work' });
    expect(await client.ok('chat.continueOn', { chatId: 'c1', account: work })).toEqual({ chatId: 'c1' });
    expect(core.session('c1').info.account).toBe(work);
    expect(core.sessions.size).toBe(1);

    await turn('c1', 'hi');
    const moved = await client.ok('chat.continueOn', { chatId: 'c1', account: 'claude' });
    expect(moved.chatId).not.toBe('c1');
    expect(moved.fork.info).toMatchObject({ chatId: moved.chatId, forkOf: { chatId: 'c1' } });
    expect(moved.fork.info.account).toBeUndefined();
    expect(claude.forks.at(-1)).toMatchObject({ latest: true });
    expect(claude.forks.at(-1)).not.toHaveProperty('account');
    expect(await client.fails('chat.continueOn', { chatId: 'c1', account: 'nobody' })).toBe('account-unavailable');
    ChatInfoSchema.parse(moved.fork.info);
  });
});

describe('chat.summarize', () => {
  it('has a hidden fork write a summary and delivers it to the chat as a note', async () => {
    expect(await client.fails('chat.summarize', { chatId: 'c1' })).toBe('turn-not-found');
    await turn('c1', 'hi');
    const { turnId } = await client.ok('chat.summarize', { chatId: 'c1' });
    const fork = [...core.sessions.values()].find((s) => s.chatId !== 'c1')!;
    expect(fork.info).toMatchObject({ hidden: true, forkOf: { chatId: 'c1' } });
    expect(fork.thread.get(turnId)).toMatchObject({ kind: 'turn', summaryFor: 'c1' });
    expect(claude.turns.at(-1)?.text).toBe(SUMMARY_PROMPT);
    await until(() => core.session('c1').thread.items.some((i) => i.kind === 'note'), 'the summary note');
    expect(core.session('c1').thread.items.at(-1)).toMatchObject({ kind: 'note', level: 'info', text: 'Hello there, friend', from: fork.chatId, turnId: null });
  });
});
