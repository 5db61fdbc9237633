// The Gemini provider with the real `gemini --acp` (pinned @google/gemini-cli) inside a HostCore, the
// model being the scripted Gemini API server on loopback. One chat goes through a text turn with
// thinking, an approved and a denied write, a cancel while a permission waits, a 429, and a resume in
// a new process (session/load) after its mode changed.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatItem } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { geminiProvider } from '../../src/host/providers/gemini/index.ts';
import { GeminiServer } from '../support/gemini-server.ts';
import { geminiScenario, geminiTestEnv, NOTES, TEST_MODEL, writeGeminiHome } from './fixtures/gemini/scenario.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

const gemini = path.resolve(import.meta.dirname, '../../node_modules/.bin/gemini');
const TURN_MS = 60_000;

let data: ReturnType<typeof tempDir>;
let model: GeminiServer;
let core: HostCore;
let client: TestClient;
let work = '';

beforeAll(async () => {
  data = tempDir('tether-gemini-');
  model = await GeminiServer.start(geminiScenario);
  const home = path.join(data.dir, 'gemini-home');
  work = path.join(data.dir, 'work');
  mkdirSync(work, { recursive: true });
  writeGeminiHome(home);
  const provider = geminiProvider({ command: gemini, home, env: geminiTestEnv(model.url, home), clientVersion: '0.0.0' });
  core = await openCore(data.dir, { providers: [provider], policy: new HostPolicy({ home: data.dir }) });
  client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'c', provider: 'gemini', cwd: work, runtimeMode: 'supervised', selection: { model: TEST_MODEL, options: {} } });
  await client.attach('c');
}, 60_000);

afterAll(async () => {
  await core?.close();
  await model?.close();
  data?.cleanup();
});

const thread = () => client.threads.get('c')!;
const ofTurn = (turnId: string) => thread().items.filter((i) => i.turnId === turnId);
const turn = (turnId: string) => thread().get(turnId) as Extract<ChatItem, { kind: 'turn' }> | undefined;
const settled = (turnId: string, what: string) => until(() => turn(turnId) !== undefined && turn(turnId)!.state !== 'running', what, TURN_MS);
const pendingApproval = (turnId: string) => until(() => ofTurn(turnId).some((i) => i.kind === 'approval' && i.decision === 'pending'), 'the approval', TURN_MS);
const approval = (turnId: string) => ofTurn(turnId).find((i): i is Extract<ChatItem, { kind: 'approval' }> => i.kind === 'approval')!;

describe('the Gemini provider with the real binary', () => {
  it('reports itself truthfully in provider.list', async () => {
    const { providers } = await client.ok('provider.list', {});
    const info = providers.find((p: { kind: string }) => p.kind === 'gemini');
    expect(info).toMatchObject({
      name: 'Gemini CLI',
      installed: true,
      version: '0.61.0',
      defaultModel: 'auto',
      capabilities: { chat: true, allowAlways: true, reportsThinking: true },
    });
    expect(info.models.map((m: { slug: string }) => m.slug)).toContain(TEST_MODEL);
  });

  it(
    'runs a text turn: its thought, its reply, the session and model, the tokens',
    async () => {
      const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'hello there' });
      await settled(turnId, 'the text turn');
      expect(turn(turnId)!.state).toBe('done');
      const items = ofTurn(turnId);
      expect(items.find((i) => i.kind === 'thinking')).toMatchObject({ text: '**Greeting**\nA greeting; answer briefly.' });
      expect(items.find((i) => i.kind === 'assistant')).toMatchObject({ text: 'Hello from the scripted Gemini.' });
      const info = core.sessions.get('c')!.info;
      expect(info.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(info).toMatchObject({ model: TEST_MODEL, permissionMode: 'default', effectiveRuntimeMode: 'supervised' });
      expect(info.usage.contextTokens).toBe(1230);
      expect(model.turns.at(-1)!.model).toBe(TEST_MODEL);
      expect(model.turns.at(-1)!.headers['x-goog-api-key']).toBe('tether-test-key');
    },
    TURN_MS,
  );

  it(
    'asks before writing; approved, the file is written and the call carries its change',
    async () => {
      const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'write the notes' });
      await pendingApproval(turnId);
      const asked = approval(turnId);
      expect(asked).toMatchObject({ toolName: 'Write', canAllowAlways: true, allowAlways: { label: 'Allow for this session' } });
      expect(existsSync(path.join(work, 'notes.txt'))).toBe(false);
      await client.ok('chat.approve', { chatId: 'c', requestId: asked.requestId, decision: 'allow' });
      await settled(turnId, 'the approved turn');
      expect(turn(turnId)!.state).toBe('done');
      expect(readFileSync(path.join(work, 'notes.txt'), 'utf8')).toBe(NOTES);
      const tool = ofTurn(turnId).find((i) => i.kind === 'tool')!;
      expect(tool).toMatchObject({ state: 'done', toolUseId: asked.toolUseId, changes: [{ path: path.join(work, 'notes.txt'), kind: 'add' }] });
      expect(ofTurn(turnId).find((i) => i.kind === 'assistant')).toMatchObject({ text: 'The write_file call finished.' });
    },
    TURN_MS,
  );

  it(
    'denied, nothing is written, the call ends refused and Gemini goes on',
    async () => {
      const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'run the build' });
      await pendingApproval(turnId);
      expect(approval(turnId)).toMatchObject({ toolName: 'Bash', input: expect.objectContaining({ command: 'echo built > build.txt' }) });
      await client.ok('chat.approve', { chatId: 'c', requestId: approval(turnId).requestId, decision: 'deny' });
      await settled(turnId, 'the denied turn');
      expect(turn(turnId)!.state).toBe('done');
      expect(existsSync(path.join(work, 'build.txt'))).toBe(false);
      expect(ofTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({ state: 'error', output: 'Denied' });
      expect(ofTurn(turnId).find((i) => i.kind === 'assistant')).toMatchObject({ text: 'Not touching it, then.' });
    },
    TURN_MS,
  );

  it(
    'cancels a turn while a permission waits: the approval is cancelled, nothing runs, the next turn works',
    async () => {
      const asked = model.turns.length;
      const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'run the build' });
      await pendingApproval(turnId);
      await client.ok('chat.cancel', { chatId: 'c' });
      await settled(turnId, 'the cancelled turn');
      expect(turn(turnId)!.state).toBe('aborted');
      expect(approval(turnId).decision).toBe('cancelled');
      const next = await client.ok('chat.send', { chatId: 'c', text: 'hello there' });
      await settled(next.turnId, 'the turn after the cancel');
      expect(turn(next.turnId)!.state).toBe('done');
      expect(existsSync(path.join(work, 'build.txt'))).toBe(false);
      // Gemini heard the cancel: it never sent the model the call's result.
      expect(model.turns.slice(asked).some((r) => r.functionResponse !== null)).toBe(false);
    },
    TURN_MS,
  );

  it(
    "takes a 429 from the model as the turn's usage limit",
    async () => {
      const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'hit the limit' });
      await settled(turnId, 'the limited turn');
      expect(turn(turnId)).toMatchObject({ state: 'error', limit: { kind: 'usage' } });
      expect(core.sessions.get('c')!.info.limit).toEqual({ kind: 'usage' });
      expect(ofTurn(turnId).find((i) => i.kind === 'note')).toMatchObject({ level: 'error', text: 'You have exhausted your daily quota on this model.' });
    },
    TURN_MS,
  );

  it('resumes the same Gemini session in a new process (session/load) after the mode changed; the replay stays out', async () => {
    const before = core.sessions.get('c')!.info.agentSessionId;
    await client.ok('chat.configure', { chatId: 'c', runtimeMode: 'auto-accept-edits' });
    const items = thread().items.length;
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'what came before' });
    // Gemini 0.61 cannot load a session in the minute it was made: the driver waits for the next one.
    await settled(turnId, 'the resumed turn');
    expect(turn(turnId)!.state).toBe('done');
    const info = core.sessions.get('c')!.info;
    expect(info.agentSessionId).toBe(before);
    expect(info).toMatchObject({ permissionMode: 'autoEdit', effectiveRuntimeMode: 'auto-accept-edits' });
    expect(
      ofTurn(turnId)
        .filter((i) => i.kind === 'assistant')
        .map((i) => (i.kind === 'assistant' ? i.text : '')),
    ).toEqual(['You said hello there before.']);
    // Nothing of the replayed history became new items.
    expect(
      thread()
        .items.slice(items)
        .filter((i) => i.turnId !== turnId),
    ).toEqual([]);
  }, 150_000);
});
