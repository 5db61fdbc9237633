// The real `gemini --acp` (pinned @google/gemini-cli) behind a real host process, the relay on
// workerd and an SDK client: the model is the scripted Gemini API server on loopback
// (test/host/fixtures/gemini/scenario.ts), the account a temporary GEMINI_CLI_HOME (and HOME), so
// nothing leaves this machine and nothing touches the real home.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeminiServer } from '../support/gemini-server.ts';
import { geminiScenario, geminiTestEnv, NOTES, TEST_MODEL, writeGeminiHome } from '../host/fixtures/gemini/scenario.ts';
import { HostProcess, Peer } from './peers.ts';

const GEMINI_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/gemini');
const OWNER = 'gemini-owner';
const CHAT = 'gemini-chat';
const host = new HostProcess('gemini-host', OWNER);
const work = mkdtempSync(path.join(tmpdir(), 'tether-gemini-e2e-work-'));
const home = mkdtempSync(path.join(tmpdir(), 'tether-gemini-e2e-home-'));
let model: GeminiServer;
let lobby: Peer;
let client: Peer;

beforeAll(async () => {
  model = await GeminiServer.start(geminiScenario);
  writeGeminiHome(home);
  mkdirSync(work, { recursive: true });
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({
    providers: { gemini: { backend: 'gemini', command: GEMINI_BIN, home, env: geminiTestEnv(model.url, home) } },
    policy: { roots: [work] },
  }));
  await host.start();
  lobby = await Peer.lobby(host.hostId, OWNER);
  await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
  await lobby.socket.request('chat.create', { chatId: CHAT, provider: 'gemini', cwd: work, runtimeMode: 'supervised', selection: { model: TEST_MODEL, options: {} } });
  client = await Peer.chat(host.hostId, CHAT, OWNER);
  await client.socket.request('chat.attach', { chatId: CHAT });
});

afterAll(async () => {
  lobby?.close();
  client?.close();
  await host.stop();
  await model?.close();
});

type Item = Record<string, any>;
const items = (): Item[] => [...client.items().values()];
const inTurn = (turnId: string) => items().filter((i) => i.turnId === turnId);
const turnItem = (turnId: string) => items().find((i) => i.kind === 'turn' && i.id === turnId);
const info = (): Item => client.frames.filter((f) => f.event === 'chat.event' && f.payload.event.type === 'info').at(-1)!.payload.event.info;

async function until<T>(check: () => T | undefined | null | false, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out: ${what}\n${host.output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function send(text: string): Promise<string> {
  const sent = await client.socket.request('chat.send', { chatId: CHAT, text });
  expect(sent.queued, `kept or queued, host said:\n${host.output.slice(-3000)}`).toBe(false);
  return sent.turnId as string;
}

const settled = (turnId: string) => () => {
  const turn = turnItem(turnId);
  return turn && turn.state !== 'running' ? turn : undefined;
};

describe('Gemini CLI through the host, the relay and a client', () => {
  it('lists Gemini CLI as installed, with its version, models and capabilities', async () => {
    const { providers } = await lobby.socket.request('provider.list', {});
    const gemini = providers.find((p: Item) => p.kind === 'gemini')!;
    expect(gemini).toMatchObject({ name: 'Gemini CLI', installed: true, version: '0.61.0', defaultModel: 'auto' });
    expect(gemini.capabilities).toMatchObject({ chat: true, allowAlways: true, denyReason: false, reportsThinking: true, diffs: 'unified' });
    expect(gemini.models.map((m: Item) => m.slug)).toContain(TEST_MODEL);
  });

  it('streams a thought and a reply; the chat holds the session, the model and the confirmed mode', async () => {
    const turnId = await send('hello there');
    expect(await until(settled(turnId), 'the first turn')).toMatchObject({ state: 'done' });
    const thread = inTurn(turnId);
    expect(thread.find((i) => i.kind === 'thinking')).toMatchObject({ text: '**Greeting**\nA greeting; answer briefly.', streaming: false });
    expect(thread.find((i) => i.kind === 'assistant')).toMatchObject({ text: 'Hello from the scripted Gemini.', streaming: false });
    const now = await until(() => (info().usage.turns === 1 ? info() : undefined), 'info after the first turn');
    expect(now).toMatchObject({ model: TEST_MODEL, permissionMode: 'default', effectiveRuntimeMode: 'supervised' });
    expect(now.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(now.usage.contextTokens).toBe(1230);
  });

  it('an approval decided from the client lets the real CLI write the file', async () => {
    const turnId = await send('write the notes');
    const approval = await until(() => inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending'), 'the approval card');
    expect(approval).toMatchObject({ toolName: 'Write', canAllowAlways: true, allowAlways: { label: 'Allow for this session' } });
    expect(approval.input).toMatchObject({ content: NOTES });
    await until(() => info().status === 'needs-you', 'status needs-you');
    await client.socket.request('chat.approve', { chatId: CHAT, requestId: approval.requestId, decision: 'allow-always' });
    expect(await until(settled(turnId), 'the approved turn')).toMatchObject({ state: 'done' });
    expect(readFileSync(path.join(work, 'notes.txt'), 'utf8')).toBe(NOTES);
    expect(inTurn(turnId).find((i) => i.kind === 'approval')).toMatchObject({ decision: 'allow-always' });
    expect(inTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({
      name: 'Write', state: 'done', toolUseId: approval.toolUseId, changes: [{ path: path.join(work, 'notes.txt'), kind: 'add' }],
    });
  });

  it('a denial from the client keeps the command from running, and Gemini goes on', async () => {
    const turnId = await send('run the build');
    const approval = await until(() => inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending'), 'the approval card');
    expect(approval).toMatchObject({ toolName: 'Bash', input: expect.objectContaining({ command: 'echo built > build.txt' }) });
    await client.socket.request('chat.approve', { chatId: CHAT, requestId: approval.requestId, decision: 'deny' });
    expect(await until(settled(turnId), 'the denied turn')).toMatchObject({ state: 'done' });
    expect(inTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({ state: 'error', output: 'Denied' });
    expect(inTurn(turnId).find((i) => i.kind === 'assistant')).toMatchObject({ text: 'Not touching it, then.' });
  });

  it('a 429 from the model ends the turn with a usage limit on the turn and the chat', async () => {
    const turnId = await send('hit the limit');
    expect(await until(settled(turnId), 'the limited turn')).toMatchObject({ state: 'error', limit: { kind: 'usage' } });
    expect(await until(() => info().limit, 'the limit on the chat')).toEqual({ kind: 'usage' });
    expect(model.strays).toEqual([]);
  });
});
