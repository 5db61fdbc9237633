// Background work: the commands Claude Code keeps running after a turn (a Bash call with
// `run_in_background`) are the chat's `background`, and `chat.stopTask` stops one through the CLI's
// own `stop_task`. The real `claude` against the scripted model server.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { CLAUDE_BIN, startScenario } from './claude-scenario.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

let data: ReturnType<typeof tempDir>;
let server: AnthropicServer;
let core: HostCore;
let client: TestClient;

beforeAll(async () => {
  data = tempDir('tether-background-');
  const work = path.join(data.dir, 'work');
  mkdirSync(work, { recursive: true });
  const scenario = await startScenario();
  server = scenario.server;
  core = await openCore(data.dir, { providers: [new ClaudeProvider({ command: CLAUDE_BIN, env: scenario.env })], policy: new HostPolicy({ home: data.dir, roots: [work] }) });
  client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'c', cwd: work, runtimeMode: 'auto-accept-edits' });
  await client.attach('c');
}, 30_000);

afterAll(async () => {
  await core?.close();
  await server?.close();
  data?.cleanup();
});

describe('background tasks with the real Claude Code', { timeout: 90_000 }, () => {
  it('a background command outlives its turn in ChatInfo.background, and chat.stopTask stops it', async () => {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'KW-BACKGROUND' });
    const approved = new Set<string>();
    await until(() => {
      // The command may ask first (root may not skip Claude Code's permissions): allowed.
      for (const item of client.threads.get('c')?.items ?? []) {
        if (item.kind === 'approval' && item.decision === 'pending' && !approved.has(item.requestId)) {
          approved.add(item.requestId);
          void client.ok('chat.approve', { chatId: 'c', requestId: item.requestId, decision: 'allow' });
        }
      }
      const turn = client.threads.get('c')?.get(turnId);
      return turn?.kind === 'turn' && turn.state !== 'running';
    }, 'the turn', 60_000);
    const turn = client.threads.get('c')!.get(turnId)!;
    expect(turn.kind === 'turn' && turn.state).toBe('done');
    await until(() => (client.statuses.get('c')?.background?.length ?? 0) === 1, 'the background task in chat.status', 30_000);
    const [task] = client.statuses.get('c')!.background!;
    expect(task).toMatchObject({ kind: 'shell', description: 'Wait in the background', command: 'sleep 300' });
    expect(task.id).toMatch(/\S/);

    expect(await client.fails('chat.stopTask', { chatId: 'c', taskId: 'not-a-task' })).toBe('task-not-found');
    await client.ok('chat.stopTask', { chatId: 'c', taskId: task.id });
    await until(() => client.statuses.get('c')?.background === undefined, 'the list to empty', 30_000);
    expect(core.session('c').info.background).toBeUndefined();
  });
});
