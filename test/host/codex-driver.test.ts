// The Codex driver with the real `codex app-server` (pinned @openai/codex) inside a HostCore, the
// model being the scripted Responses server on loopback. What the end-to-end test does not cover:
// images as image input, steering a running turn, compaction, resuming the thread in a new process,
// and a fork's branch resumed by a later driver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import type { OpenAiServer } from '../support/openai-server.ts';
import { openCodexChat, type CodexChat } from './codex-chat.ts';
import { COMPACT_SUMMARY } from './fixtures/codex/scenario.ts';
import { until, type TestClient } from './harness.ts';

// A 1×1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let chat: CodexChat;
let model: OpenAiServer;
let core: HostCore;
let client: TestClient;

beforeAll(async () => {
  chat = await openCodexChat('tether-codex-');
  ({ model, core, client } = chat);
}, 30_000);

afterAll(async () => {
  await chat?.close();
});

const thread = () => client.threads.get('c')!;
const turnState = (turnId: string) => {
  const turn = thread().get(turnId);
  return turn?.kind === 'turn' ? turn.state : undefined;
};

describe('the Codex driver with the real binary', () => {
  it('hands an image attachment to Codex as image input', async () => {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'hello there', attachments: [{ name: 'dot.png', mime: 'image/png', data: PNG }] });
    await until(() => turnState(turnId) === 'done', 'the image turn', 30_000);
    const input = JSON.stringify(model.requests.at(-1)!.body.input);
    expect(input).toContain('"type":"input_image"');
    expect(input).toContain('data:image/png;base64,');
  });

  it('steers a turn waiting on an approval: the message reaches the model after the tool', async () => {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'run the build' });
    await until(() => thread().items.some((i) => i.kind === 'approval' && i.turnId === turnId && i.decision === 'pending'), 'the approval', 30_000);
    const steered = await client.ok('chat.send', { chatId: 'c', text: 'also say tether-steered', delivery: 'steer' });
    expect(steered).toEqual({ queued: false, turnId });
    const approval = thread().items.find((i) => i.kind === 'approval' && i.turnId === turnId)!;
    await client.ok('chat.approve', { chatId: 'c', requestId: approval.kind === 'approval' ? approval.requestId : '', decision: 'allow-always' });
    await until(() => turnState(turnId) === 'done', 'the steered turn', 30_000);
    expect(model.requests.some((r) => JSON.stringify(r.body.input).includes('also say tether-steered'))).toBe(true);
  });

  it('compacts through thread/compact/start: the model is asked for a summary, the client holds the compaction in its own turn', async () => {
    const asked = model.requests.length;
    expect(await client.ok('chat.compact', { chatId: 'c' })).toEqual({});
    await until(() => thread().items.some((i) => i.kind === 'turn' && i.label === 'Compact' && i.state !== 'running'), 'the compaction turn', 30_000);
    const turn = thread().items.find((i) => i.kind === 'turn' && i.label === 'Compact')!;
    expect(turn).toMatchObject({ state: 'done' });
    expect(
      thread()
        .items.filter((i) => i.kind === 'compaction')
        .map((i) => i.turnId),
    ).toEqual([turn.id]);
    expect(thread().items.filter((i) => i.kind === 'user' && i.turnId === turn.id)).toEqual([]);
    expect(model.requests.slice(asked).map((r) => r.userText.toLowerCase())).toEqual([expect.stringContaining('context checkpoint compaction')]);
    // The next turn goes on from the summary.
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'hello there' });
    await until(() => turnState(turnId) === 'done', 'the turn after', 30_000);
    expect(JSON.stringify(model.requests.at(-1)!.body.input)).toContain(COMPACT_SUMMARY);
  });

  it('resumes the same Codex thread in a new process after the mode changed', async () => {
    const before = core.sessions.get('c')!.info.agentSessionId;
    expect(before).toBeTruthy();
    await client.ok('chat.configure', { chatId: 'c', runtimeMode: 'supervised' });
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'hello there' });
    await until(() => turnState(turnId) === 'done', 'the resumed turn', 30_000);
    const info = core.sessions.get('c')!.info;
    expect(info.agentSessionId).toBe(before);
    expect(info.effectiveRuntimeMode).toBe('supervised');
    // The resumed thread still holds the earlier turns: the model sees them.
    expect(JSON.stringify(model.requests.at(-1)!.body.input)).toContain('run the build');
  });

  it('forks the chat at its last turn through thread/fork: a new thread that holds the conversation, resumed as itself later', async () => {
    const source = core.sessions.get('c')!.info.agentSessionId!;
    const last = thread().items.findLast((i) => i.kind === 'turn')!;
    const { info } = await client.ok('chat.fork', { chatId: 'c', turnId: last.id });
    const forkId = info.chatId as string;
    await client.attach(forkId);
    const forked = () => client.threads.get(forkId)!;
    const settled = (turnId: string) =>
      until(() => forked().items.some((i) => i.kind === 'turn' && i.id === turnId && i.state === 'done'), "the fork's turn", 30_000);
    const { turnId } = await client.ok('chat.send', { chatId: forkId, text: 'hello there' });
    await settled(turnId);
    const branch = core.sessions.get(forkId)!.info.agentSessionId!;
    expect(branch).toMatch(/^[0-9a-f-]{36}$/);
    expect(branch).not.toBe(source);
    expect(core.sessions.get('c')!.info.agentSessionId).toBe(source);
    // The model sees the source's conversation in the fork's thread (Codex keys its cache by thread).
    const request = model.requests.at(-1)!;
    expect(JSON.stringify(request.body.input)).toContain('run the build');
    expect(request.body.prompt_cache_key).toBe(branch);
    // The next driver (the mode changed) resumes the branch: the fork's id is its own now.
    await client.ok('chat.configure', { chatId: forkId, runtimeMode: 'auto-accept-edits' });
    const next = await client.ok('chat.send', { chatId: forkId, text: 'hello there' });
    await settled(next.turnId);
    expect(core.sessions.get(forkId)!.info.agentSessionId).toBe(branch);
    expect(model.requests.at(-1)!.body.prompt_cache_key).toBe(branch);
  });
});
