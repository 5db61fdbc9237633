// Plan limits: what each CLI reports becomes `usage.limits` (windows, reset times, checkedAt) and
// `usage.limitsChanged`. Codex is the real `codex app-server` against the scripted Responses server,
// whose replies carry the `x-codex-*` rate-limit headers a ChatGPT plan's replies carry. Claude Code
// reports limits only for a claude.ai sign-in, which cannot exist here (with an API key, 2.1.197
// sends no `rate_limit_event` even when the replies carry the `anthropic-ratelimit-unified-*`
// headers), so its part is tested from recorded frames in the shape the CLI writes them.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageLimitsSnapshotSchema } from '../../src/contracts/index.ts';
import type { UsageLimitsSnapshot } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeStreamMapper } from '../../src/host/providers/claude/mapper.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import { OpenAiServer } from '../support/openai-server.ts';
import { codexScenario, RESET_AT_SECONDS, TEST_KEY_VARIABLE, writeCodexHome } from './fixtures/codex/scenario.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

const CODEX_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/codex');

describe('Claude Code rate_limit_event (recorded frames)', () => {
  const frame = (info: Record<string, unknown>) => JSON.stringify({ type: 'rate_limit_event', rate_limit_info: info, uuid: 'u1', session_id: 's1' });

  it('a warning names its window, its use and its reset', () => {
    const mapper = new ClaudeStreamMapper();
    const { outputs } = mapper.map(frame({ status: 'allowed_warning', resetsAt: 1_700_000_000, rateLimitType: 'five_hour', utilization: 0.85 }));
    expect(outputs[0]).toEqual({
      type: 'limits',
      windows: [{ id: 'five_hour', kind: 'session', label: '5-hour limit', used: 0.85, resetsAt: 1_700_000_000_000, durationMs: 5 * 3600_000 }],
    });
    expect(outputs[1]).toMatchObject({ type: 'note', level: 'warning' });
  });

  it('a rejection is the whole window used; a reading without utilization is unknown, not room left', () => {
    const mapper = new ClaudeStreamMapper();
    expect(mapper.map(frame({ status: 'rejected', resetsAt: 1_700_000_000, rateLimitType: 'seven_day_opus' })).outputs).toEqual([
      {
        type: 'limits',
        windows: [{ id: 'seven_day_opus', kind: 'weekly', label: 'Weekly limit (Opus)', used: 1, resetsAt: 1_700_000_000_000, durationMs: 7 * 86_400_000 }],
      },
    ]);
    expect(new ClaudeStreamMapper().map(frame({ status: 'allowed', rateLimitType: 'seven_day' })).outputs).toEqual([]);
  });
});

describe('usage.limits with the real Codex', { timeout: 120_000 }, () => {
  let data: ReturnType<typeof tempDir>;
  let model: OpenAiServer;
  let core: HostCore;
  let client: TestClient;
  let other: TestClient;

  beforeAll(async () => {
    data = tempDir('tether-limits-');
    model = await OpenAiServer.start(codexScenario);
    const home = path.join(data.dir, 'codex-home');
    const work = path.join(data.dir, 'work');
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    writeCodexHome(home, model.url);
    const provider = new CodexProvider({ command: CODEX_BIN, home, env: { [TEST_KEY_VARIABLE]: 'k' }, clientVersion: '0.0.0' }, { probe: false });
    core = await openCore(data.dir, { providers: [provider], policy: new HostPolicy({ home: data.dir, roots: [work] }) });
    client = new TestClient(core);
    other = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c', provider: 'codex', cwd: work, runtimeMode: 'auto-accept-edits' });
    await client.attach('c');
  }, 30_000);

  afterAll(async () => {
    await core?.close();
    await model?.close();
    data?.cleanup();
  });

  async function turn(text: string): Promise<void> {
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text });
    await until(
      () => {
        const item = client.threads.get('c')?.get(turnId);
        return item?.kind === 'turn' && item.state !== 'running';
      },
      text,
      60_000,
    );
  }

  it('knows nothing before Codex said anything', async () => {
    expect(await client.ok('usage.limits', {})).toEqual({ providers: [] });
  });

  it('takes the windows Codex read from its replies, and tells every client', async () => {
    const before = Date.now();
    await turn('check my plan');
    await until(() => other.events('usage.limitsChanged').length > 0, 'usage.limitsChanged');
    const snapshot = UsageLimitsSnapshotSchema.parse(await client.ok('usage.limits', {}));
    expect(snapshot.providers).toHaveLength(1);
    const [codex] = snapshot.providers;
    expect(codex).toMatchObject({ kind: 'codex', source: 'event', cost: null, unavailable: null, account: { id: 'codex', label: 'Codex' } });
    expect(codex.checkedAt).toBeGreaterThanOrEqual(before);
    expect(codex.windows).toEqual([
      { id: 'codex.primary', kind: 'session', label: '5-hour limit', used: 0.42, resetsAt: RESET_AT_SECONDS * 1000, durationMs: 300 * 60_000 },
      { id: 'codex.secondary', kind: 'weekly', label: 'Weekly limit', used: 0.07, resetsAt: (RESET_AT_SECONDS + 86_400) * 1000, durationMs: 10_080 * 60_000 },
    ]);
    expect(other.events('usage.limitsChanged').at(-1)?.payload).toEqual(snapshot);
  });

  it('a turn that stops on the limit leaves the chat its limit and the window full', async () => {
    await turn('hit the limit');
    expect(core.session('c').info.limit).toEqual({ kind: 'usage', resetsAt: RESET_AT_SECONDS * 1000 });
    const snapshot = (await client.ok('usage.limits', {})) as UsageLimitsSnapshot;
    expect(snapshot.providers[0].windows.find((w) => w.id === 'codex.primary')?.used).toBe(1);
  });

  it('refreshLimits asks a new app-server; an API-key account has no plan to read, which it says, and the windows stay', async () => {
    const snapshot = UsageLimitsSnapshotSchema.parse(await client.ok('usage.refreshLimits', {}));
    const [codex] = snapshot.providers;
    expect(codex.source).toBe('probe');
    expect(codex.unavailable?.reason).toBe('no-subscription');
    expect(codex.unavailable?.message).toBeTruthy();
    expect(codex.windows.map((w) => w.id)).toEqual(['codex.primary', 'codex.secondary']);
  });

  it('a restarted host still knows the readings', async () => {
    const kept = await client.ok('usage.limits', {});
    await core.close();
    core = await openCore(data.dir, {
      providers: [new CodexProvider({ command: CODEX_BIN, clientVersion: '0.0.0' }, { probe: false })],
      policy: new HostPolicy({ home: data.dir }),
    });
    client = new TestClient(core);
    expect(await client.ok('usage.limits', {})).toEqual(kept);
  });
});
