// usage.summary over the session files the real CLIs write: the pinned `claude` and `codex` run
// turns against the scripted model servers on loopback (as in the driver tests), and the host's
// scan of their config folders counts exactly the calls the scripted models answered, subagents'
// included, priced like Claude Code prices them itself.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageSummaryResult } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { OpenAiServer } from '../support/openai-server.ts';
import { CLAUDE_BIN, startScenario, turnAllowingAll } from './claude-scenario.ts';
import { codexScenario, TEST_KEY_VARIABLE, TEST_MODEL, writeCodexHome } from './fixtures/codex/scenario.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

const CODEX_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/codex');

let data: ReturnType<typeof tempDir>;
let anthropic: AnthropicServer;
let openai: OpenAiServer;
let core: HostCore;
let client: TestClient;
let work = '';
let claudeHome = '';

const today = () => new Date().toISOString().slice(0, 10);
const summary = () => client.ok<UsageSummaryResult>('usage.summary', { from: today(), to: today(), resolution: 'day', timeZone: 'UTC' });

/**
 * The summary once the CLI's file holds `calls` calls of `provider`: Claude Code appends its
 * transcript on its own schedule, and may still be writing the last reply when its `result` arrives.
 */
async function summaryWith(provider: 'claude' | 'codex', calls: number): Promise<UsageSummaryResult> {
  let result: UsageSummaryResult | undefined;
  return until(
    async () => {
      result = await summary();
      return result.models.filter((m) => m.provider === provider).reduce((n, m) => n + m.totals.calls, 0) >= calls && result;
    },
    `the scan to find ${calls} ${provider} calls`,
    { ms: 20_000, every: 20, detail: () => `it found: ${JSON.stringify(result?.models)}` },
  );
}

async function turn(chatId: string, text: string): Promise<number> {
  // The subagent's command asks first (root may not skip Claude Code's permissions): allowed.
  const turnId = await turnAllowingAll(client, chatId, text);
  const thread = client.threads.get(chatId)!;
  const item = thread.get(turnId)!;
  const notes = thread.items.filter((i) => i.kind === 'note' && i.turnId === turnId).map((i) => (i.kind === 'note' ? i.text : ''));
  expect({ state: item.kind === 'turn' ? item.state : item.kind, notes }).toMatchObject({ state: 'done' });
  return item.kind === 'turn' ? item.costUsd : 0;
}

beforeAll(async () => {
  data = tempDir('tether-usage-cli-');
  work = path.join(data.dir, 'work');
  mkdirSync(work, { recursive: true });
  const scenario = await startScenario();
  anthropic = scenario.server;
  claudeHome = scenario.env.CLAUDE_CONFIG_DIR;
  openai = await OpenAiServer.start(codexScenario);
  const codexHome = path.join(data.dir, 'codex-home');
  mkdirSync(codexHome, { recursive: true });
  writeCodexHome(codexHome, openai.url);
  core = await openCore(data.dir, {
    providers: [
      new ClaudeProvider({ command: CLAUDE_BIN, env: scenario.env }),
      new CodexProvider({ command: CODEX_BIN, home: codexHome, env: { [TEST_KEY_VARIABLE]: 'k' }, clientVersion: '0.0.0' }, { probe: false }),
    ],
    policy: new HostPolicy({ home: data.dir, roots: [work] }),
  });
  client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'cl', provider: 'claude', cwd: work, runtimeMode: 'auto-accept-edits' });
  await client.attach('cl');
  await client.ok('chat.create', { chatId: 'cx', provider: 'codex', cwd: work, runtimeMode: 'auto-accept-edits' });
  await client.attach('cx');
}, 60_000);

afterAll(async () => {
  await core?.close();
  await anthropic?.close();
  await openai?.close();
  data?.cleanup();
});

describe("usage from the real CLIs' own files", { timeout: 120_000 }, () => {
  it('Claude Code: one call per scripted reply, priced as Claude Code prices it', async () => {
    const reported = await turn('cl', 'KW-HELLO');
    const first = await summaryWith('claude', 1);
    const opus = first.models.find((m) => m.provider === 'claude');
    expect(opus).toMatchObject({
      model: 'claude-opus-4-8',
      priceBasis: 'family',
      totals: { calls: 1, input: 1200, cacheRead: 800, cacheWrite: 0, output: 30 },
    });
    // The CLI's own cost of the turn (its `total_cost_usd`) is what the shipped table says.
    expect(opus!.costUsd).toBeCloseTo(reported, 9);
    expect(first.projects.map((p) => p.folder)).toEqual([work]);
    expect(first.roots).toContainEqual({ provider: 'claude', path: path.join(claudeHome, 'projects'), status: 'ok', message: null });

    // A subagent's calls are in its own file under the session: the Task call, two of the subagent's, the reply.
    await turn('cl', 'KW-TASK');
    const second = await summaryWith('claude', 5);
    expect(second.scan.files).toBe(2);
    expect(second.models.find((m) => m.provider === 'claude')?.totals).toMatchObject({ calls: 5, input: 1800, cacheRead: 800, output: 130 });
    expect(second.buckets.filter((b) => b.provider === 'claude').map((b) => b.sessions)).toEqual([1]);
  });

  it('Codex: the call of its rollout, the cached part apart, reasoning inside output; a model without a price costs null', async () => {
    await turn('cx', 'hello there');
    const result = await summaryWith('codex', 1);
    const model = result.models.find((m) => m.provider === 'codex');
    expect(model).toMatchObject({
      model: TEST_MODEL,
      priceBasis: 'unknown',
      costUsd: null,
      totals: { calls: 1, input: 1000, cacheRead: 200, cacheWrite: 0, output: 40, reasoning: 10 },
    });
    expect(result.sessions).toBe(2);
    expect(result.projects[0].byProvider).toMatchObject({ codex: { tokens: 1240 } });
  });
});
