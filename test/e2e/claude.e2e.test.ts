// The real `claude` binary (pinned @anthropic-ai/claude-code) behind a real host process, the relay on
// workerd and an SDK client: the model is the scripted Anthropic Messages server on loopback
// (test/host/claude-scenario.ts), so nothing leaves this machine. One chat, one CLI process, every
// thing the scenario does checked in the thread the client holds.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { CLAUDE_BIN, startScenario } from '../host/claude-scenario.ts';
import { until as poll } from '../support/until.ts';
import { HostProcess, Peer } from './peers.ts';

const OWNER = 'claude-owner';
const CHAT = 'claude-chat';
const host = new HostProcess('claude-host', OWNER);
const work = mkdtempSync(path.join(tmpdir(), 'tether-claude-e2e-work-'));
let model: AnthropicServer;
let lobby: Peer;
let client: Peer;

beforeAll(async () => {
  const scenario = await startScenario();
  model = scenario.server;
  writeFileSync(
    path.join(host.dataDir, 'config.json'),
    JSON.stringify({
      providers: { claude: { backend: 'claude', command: CLAUDE_BIN, env: scenario.env } },
      policy: { roots: [work] },
    }),
  );
  await host.start();
  lobby = await Peer.lobby(host.hostId, OWNER);
  await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
  await lobby.socket.request('chat.create', { chatId: CHAT, provider: 'claude', cwd: work, runtimeMode: 'supervised' });
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

const until = <T>(check: () => T | undefined | null | false, what: string, ms = 45_000): Promise<T> =>
  poll(check, what, { ms, every: 25, detail: () => host.output.slice(-3000) });

async function send(text: string): Promise<string> {
  const sent = await client.socket.request('chat.send', { chatId: CHAT, text });
  expect(sent.queued, `kept or queued, host said:\n${host.output.slice(-3000)}`).toBe(false);
  return sent.turnId as string;
}

const settled = (turnId: string) => () => {
  const turn = turnItem(turnId);
  return turn && turn.state !== 'running' ? turn : undefined;
};

describe('Claude Code through the host, the relay and a client', () => {
  it('lists Claude Code with its version and models', async () => {
    const { providers } = await lobby.socket.request('provider.list', {});
    const claude = providers.find((p: Item) => p.kind === 'claude');
    expect(claude).toMatchObject({ name: 'Claude Code', installed: true, version: '2.1.197', defaultModel: 'opus' });
    expect(claude!.models.map((m: Item) => m.slug)).toContain('sonnet');
  });

  it('streams thinking and a reply; the turn carries its cost, the chat its context and confirmed mode', async () => {
    const turnId = await send('KW-HELLO');
    const turn = await until(settled(turnId), 'first turn');
    expect(turn).toMatchObject({ state: 'done' });
    expect(turn.costUsd).toBeGreaterThan(0);
    const thread = inTurn(turnId);
    expect(thread.find((i) => i.kind === 'thinking')).toMatchObject({ text: 'The user greets me; I answer briefly.', streaming: false });
    expect(thread.find((i) => i.kind === 'assistant')).toMatchObject({ text: 'Hello! How can I help today?', streaming: false });
    expect(client.frames.some((f) => f.event === 'chat.event' && f.payload.event.type === 'delta')).toBe(true);
    // The turn's item and the chat's info are two events: wait for the info that counts the turn.
    const now = await until(() => (info().usage.turns === 1 ? info() : undefined), 'info after the first turn');
    expect(now.usage).toMatchObject({ contextTokens: 2030, contextWindow: 200_000, turns: 1 });
    expect(now.usage.costUsd).toBeCloseTo(turn.costUsd, 9);
    expect(now).toMatchObject({ effectiveRuntimeMode: 'supervised', permissionMode: 'default', model: 'claude-opus-4-8', running: true });
    expect(now.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an approval decided from the client runs the real tool', async () => {
    const turnId = await send('KW-APPROVE');
    const approval = await until(() => inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending'), 'approval card');
    expect(approval).toMatchObject({ toolName: 'Bash', canAllowAlways: true, input: { command: 'mkdir -p probe && date > probe/stamp.txt' } });
    // The card and the chat's status are two events: wait for the status.
    await until(() => info().status === 'needs-you', 'status needs-you');
    await client.socket.request('chat.approve', { chatId: CHAT, requestId: approval.requestId, decision: 'allow-always' });
    expect(await until(settled(turnId), 'approved turn')).toMatchObject({ state: 'done' });
    const tool = inTurn(turnId).find((i) => i.kind === 'tool');
    expect(tool).toMatchObject({ name: 'Bash', state: 'done', toolUseId: approval.toolUseId, parentToolUseId: null });
    expect(inTurn(turnId).find((i) => i.kind === 'approval')).toMatchObject({ decision: 'allow-always' });
    expect(existsSync(path.join(work, 'probe', 'stamp.txt'))).toBe(true);
  });

  it('a question is answered from the client and the answer reaches the model', async () => {
    const turnId = await send('KW-QUESTION');
    const question = await until(() => inTurn(turnId).find((i) => i.kind === 'question' && i.state === 'pending'), 'question');
    expect(question.questions[0]).toMatchObject({ id: 'q1', header: 'Color', question: 'Which color?' });
    await client.socket.request('chat.answer', { chatId: CHAT, requestId: question.requestId, answers: { q1: 'Blue' } });
    await until(settled(turnId), 'answered turn');
    expect(inTurn(turnId).find((i) => i.kind === 'assistant' && i.text.includes('"Which color?"="Blue"'))).toBeTruthy();
  });

  it('a Task becomes a subagent item, and its work names it as parent', async () => {
    const turnId = await send('KW-TASK');
    await until(settled(turnId), 'task turn');
    const subagent = inTurn(turnId).find((i) => i.kind === 'subagent');
    expect(subagent).toMatchObject({
      description: 'Find files',
      subagentType: 'general-purpose',
      status: 'done',
      result: 'Subagent report: found 3 files.',
      summary: 'Find files',
    });
    expect(subagent!.usage.toolUses).toBe(1);
    expect(inTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({
      name: 'Bash',
      state: 'done',
      output: 'sub-echo',
      parentToolUseId: subagent!.toolUseId,
    });
  });

  it('an interrupt mid-tool ends the turn aborted, and the chat goes on', async () => {
    const turnId = await send('KW-SLEEP');
    await until(() => inTurn(turnId).find((i) => i.kind === 'tool' && i.state === 'running'), 'sleep running');
    await client.socket.request('chat.cancel', { chatId: CHAT });
    expect(await until(settled(turnId), 'aborted turn')).toMatchObject({ state: 'aborted' });
    const next = await send('KW-HELLO');
    expect(await until(settled(next), 'turn after the interrupt')).toMatchObject({ state: 'done' });
    expect(
      inTurn(next)
        .filter((i) => i.kind === 'assistant')
        .map((i) => i.text),
    ).toEqual(['Hello! How can I help today?']);
  });

  it('a 429 ends the turn as an error with a usage limit on the turn and the chat', async () => {
    const turnId = await send('KW-LIMIT');
    const turn = await until(settled(turnId), 'limited turn');
    expect(turn).toMatchObject({ state: 'error', limit: { kind: 'usage' } });
    expect(await until(() => info().limit, 'the limit on the chat')).toEqual({ kind: 'usage' });
    expect(inTurn(turnId).find((i) => i.kind === 'note' && i.level === 'error')?.text).toContain('429');
    expect(model.unexpected).toEqual([]);
  });
});
