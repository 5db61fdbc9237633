// chat.subagent: a subagent's own work paged from Claude Code's transcript of it (the real `claude`,
// whose scripted subagent runs one command and reports), and chat.stopSubagent's refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClaudeChat, turnAllowingAll } from './claude-scenario.ts';
import { until, type TestClient } from './harness.ts';

let client: TestClient;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ client, close } = await openClaudeChat('tether-subagent-'));
}, 30_000);

afterAll(async () => {
  await close?.();
});

describe('chat.subagent with the real Claude Code', { timeout: 90_000 }, () => {
  it("pages the subagent's command and report from its transcript", async () => {
    await turnAllowingAll(client, 'c', 'KW-TASK');
    const row = client.threads.get('c')!.items.find((i) => i.kind === 'subagent');
    if (row?.kind !== 'subagent') throw new Error('no subagent row');

    // Claude Code writes the subagent's transcript on its own schedule: its last line (the report) can
    // land after the turn's result reached the host (seen on a loaded machine). So the page is asked
    // until the transcript holds the report, the way a person opening it a moment later sees it.
    const page = await until(
      async () => {
        const asked = await client.ok('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId });
        return asked.items.length >= 3 && asked;
      },
      "the subagent's transcript to hold its report",
      { ms: 30_000, every: 200 },
    );
    expect(page).toMatchObject({ source: 'claude-transcript', live: false, history: { start: 0, cursor: null }, context: { provider: 'claude', chatId: 'c' } });
    expect(page.items.map((i: { kind: string }) => i.kind)).toEqual(['user', 'tool', 'assistant']);
    expect(page.items[0]).toMatchObject({ text: 'SUBAGENT-PROMPT: list the files' });
    expect(page.items[1]).toMatchObject({
      name: 'Bash',
      input: { command: 'echo sub-echo' },
      output: 'sub-echo',
      state: 'done',
      parentToolUseId: row.toolUseId,
    });
    expect(page.items[2]).toMatchObject({ text: 'Subagent report: found 3 files.', parentToolUseId: row.toolUseId });

    const newest = await client.ok('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, limit: 1 });
    expect(newest.items.map((i: { kind: string }) => i.kind)).toEqual(['assistant']);
    const older = await client.ok('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, limit: 2, cursor: newest.history.cursor });
    expect(older.items.map((i: { kind: string }) => i.kind)).toEqual(['user', 'tool']);
    expect(older.history.cursor).toBeNull();

    expect(await client.fails('chat.subagent', { chatId: 'c', toolUseId: 'toolu_none' })).toBe('subagent-not-found');
    expect(await client.fails('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, cursor: 'forged' })).toBe('history-expired');
    // It finished: nothing to stop.
    expect(await client.fails('chat.stopSubagent', { chatId: 'c', toolUseId: row.toolUseId })).toBe('subagent-not-found');
    expect(await client.fails('chat.stopSubagent', { chatId: 'c', toolUseId: 'toolu_none' })).toBe('subagent-not-found');
  });

  it('chat.stopSubagent stops a running subagent through Claude Code (its task), and the turn goes on without it', async () => {
    const { turnId } = await client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'KW-LONGTASK' });
    const approved = new Set<string>();
    const thread = () => client.threads.get('c')!;
    const slow = () => thread().items.find((i) => i.kind === 'tool' && (i.input as { command?: string })?.command === 'sleep 120');
    // Running once its own command runs (allowed when it asks: root may not skip Claude Code's permissions).
    await until(
      () => {
        for (const item of thread().items) {
          if (item.kind === 'approval' && item.decision === 'pending' && !approved.has(item.requestId)) {
            approved.add(item.requestId);
            void client.ok('chat.approve', { chatId: 'c', requestId: item.requestId, decision: 'allow' });
          }
        }
        return slow()?.kind === 'tool' && (slow() as { state: string }).state === 'running';
      },
      "the subagent's sleep running",
      60_000,
    );
    const row = thread().items.find((i) => i.kind === 'subagent' && i.description === 'Wait long');
    if (row?.kind !== 'subagent') throw new Error('no subagent row');
    expect(row.status).toBe('running');

    await client.ok('chat.stopSubagent', { chatId: 'c', toolUseId: row.toolUseId });
    await until(
      () => {
        const now = thread().get(row.id);
        const turn = thread().get(turnId);
        return now?.kind === 'subagent' && now.status !== 'running' && turn?.kind === 'turn' && turn.state !== 'running';
      },
      'the subagent stopped and the turn over',
      60_000,
    );
    const stopped = thread().get(row.id);
    expect(stopped?.kind === 'subagent' && stopped.status).toBe('failed');
    // The turn ended on its own terms (the model got the Task call's result), not cancelled.
    const turn = thread().get(turnId);
    expect(turn?.kind === 'turn' && turn.state).toBe('done');
    // The subagent's command never ran out its 120 s.
    const sleep = slow();
    expect(sleep?.kind === 'tool' ? sleep.state : null).not.toBe('done');
    expect(await client.fails('chat.stopSubagent', { chatId: 'c', toolUseId: row.toolUseId })).toBe('subagent-not-found');
  });
});
