// The Copilot provider with the real `copilot` (pinned @github/copilot) inside a HostCore, its model
// the scripted Anthropic server on loopback (BYOK: COPILOT_PROVIDER_BASE_URL, no GitHub sign-in;
// HOME and COPILOT_HOME are temporary folders). One chat runs the turns in order on one process
// where it can; a mode change starts a new process that loads the session.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { CopilotProvider } from '../../src/host/providers/copilot/index.ts';
import { AnthropicServer, hasImage, lastUserText } from '../support/anthropic-server.ts';
import { OpenAiServer } from '../support/openai-server.ts';
import { copilotEnv, copilotScenario, GREETING, TEST_MODEL, THOUGHT } from './fixtures/copilot/scenario.ts';
import { openCliChat, tempDir, TINY_PNG, until } from './harness.ts';
import type { TestClient } from './harness.ts';

const copilot = path.resolve(import.meta.dirname, '../../node_modules/.bin/copilot');
const TURN_MS = 60_000;

let data: ReturnType<typeof tempDir>;
let model: AnthropicServer;
let core: HostCore;
let client: TestClient;
let work = '';

beforeAll(async () => {
  data = tempDir('tether-copilot-');
  model = await AnthropicServer.start({ reply: copilotScenario });
  const home = path.join(data.dir, 'home');
  work = path.join(data.dir, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const provider = new CopilotProvider({ command: copilot, env: copilotEnv(model.url, home), clientVersion: '0.0.0' });
  ({ core, client } = await openCliChat(data.dir, provider, { provider: 'copilot', cwd: work, runtimeMode: 'supervised' }));
}, 30_000);

afterAll(async () => {
  await core?.close();
  await model?.close();
  data?.cleanup();
});

const thread = () => client.threads.get('c')!;
const inTurn = (turnId: string) => thread().items.filter((i) => i.turnId === turnId);
const turnOf = (turnId: string) => {
  const turn = thread().get(turnId);
  return turn?.kind === 'turn' ? turn : undefined;
};
const settled = (turnId: string) => until(() => turnOf(turnId) !== undefined && turnOf(turnId)!.state !== 'running', `turn ${turnId} to settle`, TURN_MS);
const pendingApproval = async (turnId: string) => {
  await until(() => inTurn(turnId).some((i) => i.kind === 'approval' && i.decision === 'pending'), 'an approval', TURN_MS);
  const item = inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending')!;
  return item.kind === 'approval' ? item : never();
};
const never = (): never => {
  throw new Error('unreachable');
};

describe('the Copilot driver with the real binary', () => {
  it('describes itself as served: installed, its version, the default and the configured model', async () => {
    const provider = core.providers.get('copilot')!;
    await provider.probed;
    const listed = provider.info();
    const pinned = (JSON.parse(readFileSync(path.join(copilot, '../../@github/copilot/package.json'), 'utf8')) as { version: string }).version;
    expect(listed).toMatchObject({ name: 'Copilot CLI', installed: true, version: pinned, defaultModel: 'default', capabilities: { chat: true } });
    expect(listed.models.map((m: { slug: string }) => m.slug)).toEqual(['default', TEST_MODEL]);
  });

  it('a text turn: thinking, the reply, the context against its window, the session and the mode Copilot runs in', async () => {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'hello there' });
    await settled(turnId);
    expect(turnOf(turnId)).toMatchObject({ state: 'done' });
    expect(inTurn(turnId).find((i) => i.kind === 'thinking')).toMatchObject({ text: THOUGHT, streaming: false });
    expect(inTurn(turnId).find((i) => i.kind === 'assistant')).toMatchObject({ text: GREETING, streaming: false });
    const info = core.session('c').info;
    expect(info.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    // The chat left the model to Copilot, which runs the one its variables name.
    expect(info).toMatchObject({ effectiveRuntimeMode: 'supervised', permissionMode: 'agent, ask', model: TEST_MODEL });
    expect(info.usage.contextWindow).toBe(168000);
    expect(info.usage.contextTokens).toBeGreaterThan(0);
    // Nothing went anywhere but the scripted server.
    expect(model.unexpected).toEqual([]);
  });

  it('hands an image to Copilot inline and a file as a link it reads', async () => {
    const { turnId } = await client.ok('chat.send', {
      chatId: 'c',
      text: 'hello there',
      attachments: [
        { name: 'dot.png', mime: 'image/png', data: TINY_PNG },
        { name: 'notes.txt', mime: 'text/plain', data: Buffer.from('tether-attached-words').toString('base64') },
      ],
    });
    await settled(turnId);
    expect(turnOf(turnId)).toMatchObject({ state: 'done' });
    const request = model.conversation.at(-1)!;
    expect(hasImage(request)).toBe(true);
    // Copilot tells the model where the file is; reading it is a tool call like any other.
    const stored = thread().items.find((i) => i.kind === 'user' && i.turnId === turnId);
    const file = stored?.kind === 'user' ? stored.attachments?.find((a) => a.name === 'notes.txt') : undefined;
    expect(file && readFileSync(file.path, 'utf8')).toBe('tether-attached-words');
    expect(lastUserText(request)).toContain(`[Resource link: file://${file!.path}]`);
  });

  it('a shell command asks first; allowed, it runs and its tool item ends done', async () => {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'run the build' });
    const approval = await pendingApproval(turnId);
    const tool = inTurn(turnId).find((i) => i.kind === 'tool')!;
    expect(approval).toMatchObject({
      toolUseId: tool.kind === 'tool' ? tool.toolUseId : '',
      toolName: 'Bash',
      canAllowAlways: true,
      input: expect.objectContaining({ command: 'echo built > build.txt' }),
    });
    expect(existsSync(path.join(work, 'build.txt'))).toBe(false);
    await client.ok('chat.approve', { chatId: 'c', requestId: approval.requestId, decision: 'allow' });
    await settled(turnId);
    expect(turnOf(turnId)).toMatchObject({ state: 'done' });
    expect(readFileSync(path.join(work, 'build.txt'), 'utf8')).toBe('built\n');
    expect(thread().get(tool.id)).toMatchObject({ state: 'done' });
    expect(inTurn(turnId).filter((i) => i.kind === 'note')).toEqual([]);
  });

  it('denied, the command does not run and its tool item ends in error', async () => {
    rmSync(path.join(work, 'build.txt'));
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'run the build' });
    const approval = await pendingApproval(turnId);
    await client.ok('chat.approve', { chatId: 'c', requestId: approval.requestId, decision: 'deny' });
    await settled(turnId);
    expect(existsSync(path.join(work, 'build.txt'))).toBe(false);
    expect(inTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({ state: 'error' });
  });

  it('a tool Copilot runs without any permission request still shows as a tool item', async () => {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'look around' });
    await settled(turnId);
    expect(turnOf(turnId)).toMatchObject({ state: 'done' });
    expect(inTurn(turnId).filter((i) => i.kind === 'approval')).toEqual([]);
    expect(inTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({ name: 'Read', state: 'done', input: expect.objectContaining({ path: work }) });
  });

  it('a cancel while a permission waits: the approval is cancelled, the turn aborted, the command never runs, and the chat goes on', async () => {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'sleep a while' });
    const approval = await pendingApproval(turnId);
    await client.ok('chat.cancel', { chatId: 'c' });
    await settled(turnId);
    expect(turnOf(turnId)).toMatchObject({ state: 'aborted' });
    expect(thread().get(approval.id)).toMatchObject({ decision: 'cancelled' });
    const next = await client.ok('chat.send', { chatId: 'c', text: 'hello there' });
    await settled(next.turnId);
    expect(turnOf(next.turnId)).toMatchObject({ state: 'done' });
    expect(existsSync(path.join(work, 'woke.txt'))).toBe(false);
    // The late answer of the cancelled approval finds nothing waiting.
    expect(await client.fails('chat.approve', { chatId: 'c', requestId: approval.requestId, decision: 'allow' })).toBe('request-not-found');
  });

  it('compacts with its own /compact: the compaction marker in a turn of its own, and the next turn goes on', async () => {
    expect(await client.ok('chat.compact', { chatId: 'c' })).toEqual({});
    await until(() => thread().items.some((i) => i.kind === 'turn' && i.label === 'Compact' && i.state !== 'running'), 'the compaction turn', TURN_MS);
    const turn = thread().items.find((i) => i.kind === 'turn' && i.label === 'Compact')!;
    expect(turn).toMatchObject({ state: 'done' });
    expect(inTurn(turn.id).map((i) => i.kind)).toEqual(expect.arrayContaining(['compaction']));
    expect(inTurn(turn.id).filter((i) => i.kind === 'assistant')).toEqual([]);
    expect(model.requests.some((r) => JSON.stringify(r.body.messages).includes('history is being compacted'))).toBe(true);
  });

  it('a mode change starts a new process that loads the same session: edits run unasked, with their real hunks', { timeout: TURN_MS }, async () => {
    const before = core.session('c').info.agentSessionId;
    await client.ok('chat.configure', { chatId: 'c', runtimeMode: 'auto-accept-edits' });
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'write the notes' });
    await settled(turnId);
    expect(turnOf(turnId)).toMatchObject({ state: 'done' });
    const info = core.session('c').info;
    expect(info.agentSessionId).toBe(before);
    expect(info).toMatchObject({ effectiveRuntimeMode: 'auto-accept-edits', permissionMode: 'agent, allow-tool=write' });
    expect(inTurn(turnId).filter((i) => i.kind === 'approval')).toEqual([]);
    // Edits are allowed here: nothing to warn of. Copilot's own `Info:` line is a note, not the reply.
    expect(inTurn(turnId).filter((i) => i.kind === 'note' && i.level !== 'info')).toEqual([]);
    expect(
      inTurn(turnId)
        .filter((i) => i.kind === 'assistant')
        .map((i) => (i.kind === 'assistant' ? i.text : '')),
    ).toEqual(['Notes written.']);
    const changes = inTurn(turnId).flatMap((i) => (i.kind === 'tool' ? (i.changes ?? []) : []));
    expect(changes.map((c) => [path.basename(c.path), c.kind])).toEqual([
      ['notes.md', 'add'],
      ['notes.md', 'update'],
    ]);
    expect(readFileSync(path.join(work, 'notes.md'), 'utf8')).toBe('second notes\n');
  });
});

describe('Copilot on an OpenAI-type provider of your own', () => {
  it(
    'COPILOT_PROVIDER_TYPE=openai with the Responses wire API: a text turn through the scripted Responses server',
    async () => {
      const responses = await OpenAiServer.start(() => ({ steps: [{ type: 'text', text: 'Hello over the Responses API.' }] }));
      const dir = tempDir('tether-copilot-openai-');
      try {
        const home = path.join(dir.dir, 'home');
        const folder = path.join(dir.dir, 'work');
        mkdirSync(home, { recursive: true });
        mkdirSync(folder, { recursive: true });
        const env = { ...copilotEnv(responses.url, home), COPILOT_PROVIDER_TYPE: 'openai', COPILOT_PROVIDER_WIRE_API: 'responses', COPILOT_MODEL: 'gpt-5.4' };
        const opened = await openCliChat(dir.dir, new CopilotProvider({ command: copilot, env, clientVersion: '0.0.0' }, { probe: false }), {
          provider: 'copilot',
          cwd: folder,
        });
        try {
          const { turnId } = await opened.client.ok('chat.send', { chatId: 'c', text: 'hello there' });
          const own = () => opened.client.threads.get('c')!;
          await until(() => own().items.some((i) => i.kind === 'turn' && i.id === turnId && i.state !== 'running'), 'the turn', TURN_MS);
          expect(own().get(turnId)).toMatchObject({ state: 'done' });
          expect(
            own()
              .items.filter((i) => i.kind === 'assistant')
              .map((i) => (i.kind === 'assistant' ? i.text : '')),
          ).toEqual(['Hello over the Responses API.']);
          expect(responses.requests.at(-1)!.userText).toContain('hello there');
          expect(responses.strays).toEqual([]);
        } finally {
          await opened.core.close();
        }
      } finally {
        await responses.close();
        dir.cleanup();
      }
    },
    TURN_MS,
  );
});
