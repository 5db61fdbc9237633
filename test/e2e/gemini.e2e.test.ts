// The real `gemini --acp` (pinned @google/gemini-cli) behind a real host process, the relay on
// workerd and an SDK client: the model is the scripted Gemini API server on loopback
// (test/host/fixtures/gemini/scenario.ts), the account a temporary GEMINI_CLI_HOME (and HOME), so
// nothing leaves this machine and nothing touches the real home.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeminiServer } from '../support/gemini-server.ts';
import { geminiScenario, geminiTestEnv, NOTES, TEST_MODEL, writeGeminiHome } from '../host/fixtures/gemini/scenario.ts';
import { CliChat } from './cli-chat.ts';
import { HostProcess } from './peers.ts';

const GEMINI_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/gemini');
const chat = new CliChat(new HostProcess('gemini-host', 'gemini-owner'), 'gemini-chat');
const work = mkdtempSync(path.join(tmpdir(), 'tether-gemini-e2e-work-'));
const home = path.join(chat.host.dataDir, 'gemini-home');
let model: GeminiServer;

beforeAll(async () => {
  model = await GeminiServer.start(geminiScenario);
  writeGeminiHome(home);
  mkdirSync(work, { recursive: true });
  await chat.open(
    { providers: { gemini: { backend: 'gemini', command: GEMINI_BIN, home, env: geminiTestEnv(model.url, home) } }, policy: { roots: [work] } },
    { provider: 'gemini', cwd: work, runtimeMode: 'supervised', selection: { model: TEST_MODEL, options: {} } },
  );
});

afterAll(async () => {
  await chat.close();
  await model?.close();
});

type Item = Record<string, any>;
const pendingApproval = (turnId: string) =>
  chat.until(() => chat.inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending'), 'the approval card', 60_000);

describe('Gemini CLI through the host, the relay and a client', () => {
  it('lists Gemini CLI as installed, with its version, models and capabilities', async () => {
    const { providers } = await chat.lobby.socket.request('provider.list', {});
    const gemini = providers.find((p: Item) => p.kind === 'gemini')!;
    expect(gemini).toMatchObject({ name: 'Gemini CLI', installed: true, version: '0.61.0', defaultModel: 'auto' });
    expect(gemini.capabilities).toMatchObject({ chat: true, allowAlways: true, denyReason: false, reportsThinking: true, diffs: 'unified' });
    expect(gemini.models.map((m: Item) => m.slug)).toContain(TEST_MODEL);
  });

  it('streams a thought and a reply; the chat holds the session, the model and the confirmed mode', async () => {
    const turnId = await chat.send('hello there');
    expect(await chat.settled(turnId)).toMatchObject({ state: 'done' });
    const thread = chat.inTurn(turnId);
    expect(thread.find((i) => i.kind === 'thinking')).toMatchObject({ text: '**Greeting**\nA greeting; answer briefly.', streaming: false });
    expect(thread.find((i) => i.kind === 'assistant')).toMatchObject({ text: 'Hello from the scripted Gemini.', streaming: false });
    const now = await chat.until(() => (chat.info().usage.turns === 1 ? chat.info() : undefined), 'info after the first turn');
    expect(now).toMatchObject({ model: TEST_MODEL, permissionMode: 'default', effectiveRuntimeMode: 'supervised' });
    expect(now.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(now.usage.contextTokens).toBe(1230);
  });

  it('an approval decided from the client lets the real CLI write the file', async () => {
    const turnId = await chat.send('write the notes');
    const approval = await pendingApproval(turnId);
    expect(approval).toMatchObject({ toolName: 'Write', canAllowAlways: true, allowAlways: { label: 'Allow for this session' } });
    expect(approval.input).toMatchObject({ content: NOTES });
    await chat.until(() => chat.info().status === 'needs-you', 'status needs-you');
    await chat.request('chat.approve', { requestId: approval.requestId, decision: 'allow-always' });
    expect(await chat.settled(turnId)).toMatchObject({ state: 'done' });
    expect(readFileSync(path.join(work, 'notes.txt'), 'utf8')).toBe(NOTES);
    expect(chat.inTurn(turnId).find((i) => i.kind === 'approval')).toMatchObject({ decision: 'allow-always' });
    expect(chat.inTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({
      name: 'Write',
      state: 'done',
      toolUseId: approval.toolUseId,
      changes: [{ path: path.join(work, 'notes.txt'), kind: 'add' }],
    });
  });

  it('a denial from the client keeps the command from running, and Gemini goes on', async () => {
    const turnId = await chat.send('run the build');
    const approval = await pendingApproval(turnId);
    expect(approval).toMatchObject({ toolName: 'Bash', input: expect.objectContaining({ command: 'echo built > build.txt' }) });
    await chat.request('chat.approve', { requestId: approval.requestId, decision: 'deny' });
    expect(await chat.settled(turnId)).toMatchObject({ state: 'done' });
    expect(chat.inTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({ state: 'error', output: 'Denied' });
    expect(chat.inTurn(turnId).find((i) => i.kind === 'assistant')).toMatchObject({ text: 'Not touching it, then.' });
  });

  it('a 429 from the model ends the turn with a usage limit on the turn and the chat', async () => {
    const turnId = await chat.send('hit the limit');
    expect(await chat.settled(turnId)).toMatchObject({ state: 'error', limit: { kind: 'usage' } });
    expect(await chat.until(() => chat.info().limit, 'the limit on the chat')).toEqual({ kind: 'usage' });
    expect(model.strays).toEqual([]);
  });
});
