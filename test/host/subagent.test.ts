// chat.subagent: a subagent's own work paged from Claude Code's transcript of it (the real `claude`,
// whose scripted subagent runs one command and reports), and chat.stopSubagent's refusal.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openClaudeChat, turnAllowingAll } from './claude-scenario.ts';
import type { TestClient } from './harness.ts';

let client: TestClient;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ client, close } = await openClaudeChat('tether-subagent-'));
}, 30_000);

afterAll(async () => {
  await close?.();
});

describe('chat.subagent with the real Claude Code', { timeout: 90_000 }, () => {
  it('pages the subagent\'s command and report from its transcript', async () => {
    await turnAllowingAll(client, 'c', 'KW-TASK');
    const row = client.threads.get('c')!.items.find((i) => i.kind === 'subagent');
    if (row?.kind !== 'subagent') throw new Error('no subagent row');

    // Claude Code writes the subagent's transcript on its own schedule: its last line (the report) can
    // land after the turn's result reached the host (seen on a loaded machine). So the page is asked
    // until the transcript holds the report, the way a person opening it a moment later sees it.
    let page = await client.ok('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId });
    await vi.waitFor(async () => {
      page = await client.ok('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId });
      expect(page.items.length).toBeGreaterThanOrEqual(3);
    }, { timeout: 30_000, interval: 200 });
    expect(page).toMatchObject({ source: 'claude-transcript', live: false, history: { start: 0, cursor: null }, context: { provider: 'claude', chatId: 'c' } });
    expect(page.items.map((i: { kind: string }) => i.kind)).toEqual(['user', 'tool', 'assistant']);
    expect(page.items[0]).toMatchObject({ text: 'SUBAGENT-PROMPT: list the files' });
    expect(page.items[1]).toMatchObject({ name: 'Bash', input: { command: 'echo sub-echo' }, output: 'sub-echo', state: 'done', parentToolUseId: row.toolUseId });
    expect(page.items[2]).toMatchObject({ text: 'Subagent report: found 3 files.', parentToolUseId: row.toolUseId });

    const newest = await client.ok('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, limit: 1 });
    expect(newest.items.map((i: { kind: string }) => i.kind)).toEqual(['assistant']);
    const older = await client.ok('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, limit: 2, cursor: newest.history.cursor });
    expect(older.items.map((i: { kind: string }) => i.kind)).toEqual(['user', 'tool']);
    expect(older.history.cursor).toBeNull();

    expect(await client.fails('chat.subagent', { chatId: 'c', toolUseId: 'toolu_none' })).toBe('subagent-not-found');
    expect(await client.fails('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, cursor: 'forged' })).toBe('history-expired');
    expect(await client.fails('chat.stopSubagent', { chatId: 'c', toolUseId: row.toolUseId })).toBe('chat-unsupported');
  });
});
