// chat.subagent: a subagent's own work paged from Claude Code's transcript of it (the real `claude`,
// whose scripted subagent runs one command and reports), and chat.stopSubagent's refusal.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
  data = tempDir('tether-subagent-');
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

describe('chat.subagent with the real Claude Code', { timeout: 90_000 }, () => {
  it('pages the subagent\'s command and report from its transcript', async () => {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'KW-TASK' });
    const approved = new Set<string>();
    await until(() => {
      for (const item of client.threads.get('c')?.items ?? []) {
        if (item.kind === 'approval' && item.decision === 'pending' && !approved.has(item.requestId)) {
          approved.add(item.requestId);
          void client.ok('chat.approve', { chatId: 'c', requestId: item.requestId, decision: 'allow' });
        }
      }
      const turn = client.threads.get('c')?.get(turnId);
      return turn?.kind === 'turn' && turn.state !== 'running';
    }, 'the turn', 60_000);
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
