// The host's policy as a client meets it: accounts may hand a CLI only the variables and config
// folders the host config allows (checked when saved and again when a CLI starts), a chat's folder
// is a real folder inside the roots, a chat without a mode is supervised, and hidden forks
// (`chat.summarize`, each its own CLI process) are capped per chat and per host.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostCore, ReplyFrame } from '../../src/host/chats/core.ts';
import { policyFrom, HostConfigSchema } from '../../src/host/config.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ScriptFileSchema } from '../../src/host/providers/script.ts';
import { SUMMARY_PROMPT } from '../../src/host/chats/forks.ts';
import { idle, openCore, TEST_SCRIPT, TestClient, tempDir, until } from './harness.ts';
import { RecordingProvider } from './recording-provider.ts';

const SCRIPT = ScriptFileSchema.parse({
  // A summary that keeps writing until it is cancelled: its hidden fork stays running.
  replies: [
    {
      match: SUMMARY_PROMPT.slice(0, 30),
      steps: [
        { type: 'text', text: 'Summing up' },
        { type: 'wait', ms: 60_000 },
      ],
    },
    ...TEST_SCRIPT.replies,
  ],
});

let home: ReturnType<typeof tempDir>;
let data: ReturnType<typeof tempDir>;
let work: string;
let provider: RecordingProvider;
let core: HostCore;
let client: TestClient;

async function open(policy: Partial<ConstructorParameters<typeof HostPolicy>[0]> = {}): Promise<void> {
  core = await openCore(data.dir, {
    providers: [provider],
    policy: new HostPolicy({ home: home.dir, roots: [work], private: [data.dir], ...policy }),
  });
  client = new TestClient(core);
}

beforeEach(async () => {
  home = tempDir('tether-policy-home-');
  data = tempDir('tether-policy-data-');
  work = path.join(home.dir, 'work');
  mkdirSync(work);
  provider = new RecordingProvider({ script: SCRIPT });
  await open();
});

afterEach(async () => {
  await core.close();
  data.cleanup();
  home.cleanup();
});

const account = (env: { name: string; value: string }[], extra: Record<string, unknown> = {}) => ({
  accounts: { work: { kind: 'claude', label: 'Work', ...extra, env: env.map((v) => ({ ...v, sensitive: false })) } },
});

async function refusal(type: string, payload: unknown): Promise<{ code: string; message: string }> {
  const reply: ReplyFrame = await client.request(type, payload);
  if (reply.ok) throw new Error(`${type} unexpectedly succeeded`);
  return reply.error;
}

describe("an account is the machine's configuration", () => {
  it('refuses loader, path, endpoint and proxy variables by name, and saves nothing', async () => {
    const hostile = [
      ['NODE_OPTIONS', '--require /tmp/x.js'],
      ['LD_PRELOAD', '/tmp/x.so'],
      ['LD_LIBRARY_PATH', '/tmp'],
      ['DYLD_INSERT_LIBRARIES', '/tmp/x'],
      ['PATH', '/tmp'],
      ['HOME', '/tmp'],
      ['PYTHONPATH', '/tmp'],
      ['BASH_ENV', '/tmp/x.sh'],
      ['ENV', '/tmp/x.sh'],
      ['ANTHROPIC_BASE_URL', 'https://evil.example'],
      ['OPENAI_BASE_URL', 'https://evil.example'],
      ['COPILOT_PROVIDER_BASE_URL', 'https://evil.example'],
      ['HTTPS_PROXY', 'http://evil.example'],
      ['https_proxy', 'http://evil.example'],
      ['CLAUDE_CONFIG_DIR', '/tmp/hooks'],
      ['CODEX_HOME', '/tmp/hooks'],
      ['GIT_CONFIG_GLOBAL', '/tmp/x'],
      ['ANTHROPIC_API_KEY', 'sk-someone-else'],
    ];
    for (const [name, value] of hostile) {
      const error = await refusal('accounts.save', account([{ name, value }]));
      expect(error.code).toBe('invalid-account');
      expect(error.message).toContain(name);
    }
    expect((await client.ok('accounts.list', {})).accounts.work).toBeUndefined();
  });

  it('lets a safe knob through, and more only when the host config names it', async () => {
    await client.ok('accounts.save', account([{ name: 'ANTHROPIC_MODEL', value: 'claude-x' }]));
    await core.close();
    const config = HostConfigSchema.parse({ policy: { roots: [work], accountEnv: ['ANTHROPIC_BASE_URL'] } });
    core = await openCore(data.dir, { providers: [provider], policy: policyFrom(config, { home: home.dir, dataDir: data.dir }) });
    client = new TestClient(core);
    await client.ok('accounts.save', account([{ name: 'ANTHROPIC_BASE_URL', value: 'https://gateway.example' }]));
    await client.ok('chat.create', { chatId: 'c', account: 'work', cwd: work });
    await client.ok('chat.send', { chatId: 'c', text: 'hi' });
    await idle(core, 'c');
    expect(provider.opened.at(-1)?.accountEnv).toEqual({ ANTHROPIC_BASE_URL: 'https://gateway.example' });
  });

  it('takes config folders only under the folders the config names, never in a chat folder or the data folder', async () => {
    const elsewhere = await refusal('accounts.save', account([], { home: '/tmp/planted' }));
    expect(elsewhere).toMatchObject({ code: 'invalid-account', message: expect.stringContaining('policy.accountHomes') });
    await core.close();
    await open({ accountHomes: ['~'] });
    // An agent may write in its folder, and uploads land in the data folder: hooks could be planted in either.
    expect((await refusal('accounts.save', account([], { home: path.join(work, '.claude') }))).code).toBe('invalid-account');
    expect((await refusal('accounts.save', account([], { home: '~/work/x' }))).code).toBe('invalid-account');
    expect((await refusal('accounts.save', account([], { shadowHome: '/etc' }))).code).toBe('invalid-account');
    expect((await refusal('accounts.save', account([], { home: 'relative/dir' }))).code).toBe('invalid-account');
    expect((await refusal('accounts.save', account([], { home: '~/.claude\nx' }))).code).toBe('invalid-account');
    await client.ok('accounts.save', account([], { home: '~/.claude-work' }));
    await client.ok('chat.create', { chatId: 'c', account: 'work', cwd: work });
    await client.ok('chat.send', { chatId: 'c', text: 'hi' });
    await idle(core, 'c');
    expect(provider.opened.at(-1)?.accountHome).toBe(path.join(home.dir, '.claude-work'));
  });

  it('checks an account file already on disk again when a CLI would start, and when a chat moves onto it', async () => {
    await client.ok('chat.create', { chatId: 'c', cwd: work });
    await client.ok('chat.send', { chatId: 'c', text: 'hi' });
    await idle(core, 'c');
    await core.close();
    // Written before this policy (or by hand): a loader variable and a folder with hooks.
    writeFileSync(
      path.join(data.dir, 'providers.json'),
      JSON.stringify({
        version: 1,
        accounts: { old: { kind: 'claude', label: 'Old', home: '/tmp/hooks', env: [{ name: 'LD_PRELOAD', value: '/tmp/x.so', sensitive: false }] } },
      }),
    );
    await open();
    const opens = provider.opened.length;
    const moved = await refusal('chat.configure', { chatId: 'c', account: 'old' });
    expect(moved).toMatchObject({ code: 'invalid-account', message: expect.stringContaining('LD_PRELOAD') });
    expect((await refusal('chat.create', { chatId: 'd', account: 'old', cwd: work })).code).toBe('invalid-account');
    expect((await refusal('chat.continueOn', { chatId: 'c', account: 'old' })).code).toBe('invalid-account');
    // A chat already on that account (its record says so, from before) does not start a CLI with it either.
    core.session('c').updateInfo({ account: 'old' });
    await client.ok('chat.send', { chatId: 'c', text: 'hi' });
    await idle(core, 'c');
    expect(provider.opened.length).toBe(opens);
    const note = core.session('c').thread.items.findLast((i) => i.kind === 'note');
    expect(note).toMatchObject({ level: 'error', text: expect.stringContaining('LD_PRELOAD') });
  });
});

describe("a chat's folder", () => {
  it('is a real folder inside the roots, and a refusal names the allowed folders', async () => {
    writeFileSync(path.join(work, 'file.txt'), 'x');
    const bad = [
      `${work}/a\0b`,
      `${work}/a\nb`,
      `${work}/a\rb`,
      `${work}/\u0085`,
      `${work}/${'x'.repeat(10_000)}`,
      `${work}/${'y'.repeat(256)}`,
      `${work}/missing`,
      `${work}/file.txt`,
      '/etc',
      `${work}/../elsewhere`,
    ];
    for (const cwd of bad) {
      const error = await refusal('chat.create', { chatId: 'c', cwd });
      expect(error.code).toBe('folder-denied');
      if (!/control|longer/.test(error.message)) expect(error.message).toContain(`allowed folders: ${work}`);
    }
    expect((await client.ok('chat.list', {})).chats).toEqual([]);
    mkdirSync(path.join(work, 'project'));
    expect((await client.ok('chat.create', { chatId: 'c', cwd: path.join(work, 'project') })).cwd).toBe(path.join(work, 'project'));
  });

  it('without a folder is the default one (the first root here), and without a mode is supervised', async () => {
    await core.close();
    await open({ modeCeiling: 'full-access' });
    expect(core.policy.summary()).toEqual({ roots: [work], defaultFolder: work, modeCeiling: 'full-access', defaultMode: 'supervised' });
    expect(await client.ok('chat.create', { chatId: 'c' })).toMatchObject({ cwd: work, runtimeMode: 'supervised' });
    expect(new HostPolicy({ home: home.dir }).modeCeiling).toBe('auto-accept-edits');
  });
});

describe('hidden forks', () => {
  async function chatWithATurn(chatId: string): Promise<void> {
    await client.ok('chat.create', { chatId, cwd: work });
    await client.ok('chat.send', { chatId, text: 'hi' });
    await idle(core, chatId);
  }
  const running = () => [...core.sessions.values()].filter((s) => s.info.hidden && s.activeTurnId !== null);

  it('run one at a time per chat and a few per host; past that a clear refusal, and a place again once one ends', async () => {
    await core.close();
    await open({ hiddenForks: { host: 2, chat: 1 } });
    await chatWithATurn('a');
    await chatWithATurn('b');
    await chatWithATurn('c');
    // Asked together: only one gets through for the chat.
    const [first, second] = await Promise.all([client.request('chat.summarize', { chatId: 'a' }), client.request('chat.summarize', { chatId: 'a' })]);
    expect([first.ok, second.ok].sort()).toEqual([false, true]);
    const refused = (first.ok ? second : first) as Extract<ReplyFrame, { ok: false }>;
    expect(refused.error).toMatchObject({ code: 'chat-busy', message: expect.stringContaining('per chat') });
    await client.ok('chat.summarize', { chatId: 'b' });
    expect(await refusal('chat.summarize', { chatId: 'c' })).toMatchObject({ code: 'chat-busy', message: expect.stringContaining('limit') });
    expect(running()).toHaveLength(2);
    // One summary ends (cancelled here): its place is free, and its CLI process is not kept.
    const forkOfA = running().find((s) => s.info.forkOf?.chatId === 'a')!;
    await client.ok('chat.cancel', { chatId: forkOfA.chatId });
    await until(() => running().length === 1, 'the summary to stop');
    await client.ok('chat.summarize', { chatId: 'c' });
    expect(running()).toHaveLength(2);
  });
});

describe("a chat's uploads on the host's disk", () => {
  it('are kept within the limits: the oldest go, never the message being sent, and the chat is told', async () => {
    await core.close();
    core = await openCore(data.dir, {
      providers: [provider],
      policy: new HostPolicy({ home: home.dir, roots: [work] }),
      attachmentLimits: { files: 2, bytes: 1024 * 1024 },
    });
    client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c', cwd: work });
    const sent: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      const data64 = Buffer.from(`file ${text}`).toString('base64');
      await client.ok('chat.send', { chatId: 'c', text, attachments: [{ name: `${text}.txt`, mime: 'text/plain', data: data64 }] });
      await idle(core, 'c');
      const user = core.session('c').thread.items.findLast((i) => i.kind === 'user');
      sent.push(user?.kind === 'user' ? user.attachments![0].path : '');
    }
    const { existsSync } = await import('node:fs');
    expect(sent.map((file) => existsSync(file))).toEqual([false, true, true]);
    const notes = core.session('c').thread.items.filter((i) => i.kind === 'note');
    expect(notes).toEqual([expect.objectContaining({ level: 'info', text: expect.stringContaining('1 older attachment was removed from the host') })]);
    // One larger than the byte limit alone still goes through (it is the message being sent); the rest make room.
    const big = Buffer.alloc(1024 * 1024 + 1, 1).toString('base64');
    await client.ok('chat.send', { chatId: 'c', text: 'big', attachments: [{ name: 'big.bin', mime: 'application/octet-stream', data: big }] });
    await idle(core, 'c');
    expect(sent.map((file) => existsSync(file))).toEqual([false, false, false]);
  });
});
