// Background work: the commands Claude Code keeps running after a turn (a Bash call with
// `run_in_background`) are the chat's `background`, and `chat.stopTask` stops one through the CLI's
// own `stop_task`. The real `claude` against the scripted model server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { openClaudeChat, turnAllowingAll } from './claude-scenario.ts';
import { type TestClient, until } from './harness.ts';

let core: HostCore;
let client: TestClient;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ core, client, close } = await openClaudeChat('tether-background-'));
}, 30_000);

afterAll(async () => {
  await close?.();
});

describe('background tasks with the real Claude Code', { timeout: 90_000 }, () => {
  it('a background command outlives its turn in ChatInfo.background, and chat.stopTask stops it', async () => {
    const turnId = await turnAllowingAll(client, 'c', 'KW-BACKGROUND');
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
