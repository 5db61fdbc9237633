// usage.summary over generated session files in the shapes the pinned CLIs write (test/support/
// usage-transcripts.ts): calls counted once however the CLI splits or copies them, buckets in the
// asked zone (a half-hour zone, a DST change), accounts split, prices and their basis, the scan
// going on from where it stopped (also after a restart), and `usage.changed` when it finds more.
import { mkdirSync, symlinkSync, writeFileSync, appendFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageSummaryResultSchema, type UsageSummaryResult } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import { claudeLines, claudeProjectDir, codexCallLines, codexOpening, codexTokenCountLine, writeLines } from '../support/usage-transcripts.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

let data: ReturnType<typeof tempDir>;
// The CLIs' config folders: outside the host's data folder, as the policy asks of an account's.
let outside: ReturnType<typeof tempDir>;
let core: HostCore;
let client: TestClient;
let claudeConfig = '';
let codexHome = '';
let work = '';
let homes = '';

const at = (iso: string) => Date.parse(iso);
const day = { from: '2026-11-01', to: '2026-11-30', resolution: 'day', timeZone: 'UTC' } as const;

async function open(options: Parameters<typeof openCore>[1] = {}): Promise<void> {
  const claude = new ClaudeProvider({ command: path.join(data.dir, 'no-claude-here'), env: { CLAUDE_CONFIG_DIR: claudeConfig, HOME: data.dir } });
  const codex = new CodexProvider({ command: path.join(data.dir, 'no-codex-here'), home: codexHome, clientVersion: '0.0.0' }, { probe: false });
  core = await openCore(data.dir, {
    providers: [claude, codex],
    policy: new HostPolicy({ home: data.dir, roots: [work], accountHomes: [homes] }),
    ...options,
  });
  client = new TestClient(core);
}

beforeEach(async () => {
  data = tempDir('tether-usage-');
  work = path.join(data.dir, 'work');
  outside = tempDir('tether-usage-homes-');
  homes = outside.dir;
  claudeConfig = path.join(homes, 'claude');
  codexHome = path.join(homes, 'codex');
  mkdirSync(work, { recursive: true });
  mkdirSync(claudeConfig, { recursive: true });
  await open();
});

afterEach(async () => {
  await core.close();
  data.cleanup();
  outside.cleanup();
});

const summary = (payload: Record<string, unknown> = {}) => client.ok<UsageSummaryResult>('usage.summary', { ...day, ...payload });

describe('usage.summary from Claude Code transcripts', () => {
  it('counts each call once (split lines, a forked copy), per day, model and folder, with the price and its basis', async () => {
    const alpha = path.join(work, 'alpha');
    const beta = path.join(work, 'beta');
    const callA = {
      at: at('2026-11-02T10:00:00Z'),
      model: 'claude-opus-4-8',
      messageId: 'msg_a',
      input: 1000,
      output: 100,
      cacheRead: 5000,
      cacheWrite: 400,
      cacheWrite1h: 100,
      blocks: 3,
    };
    const callB = { at: at('2026-11-02T11:00:00Z'), model: 'claude-opus-4-8', messageId: 'msg_b', input: 10, output: 20 };
    const callC = { at: at('2026-11-03T09:00:00Z'), model: 'claude-sonnet-4-5-20250929', messageId: 'msg_c', input: 2000, output: 300 };
    writeLines(path.join(claudeProjectDir(claudeConfig, alpha), 's1.jsonl'), [...claudeLines('s1', alpha, callA), ...claudeLines('s1', alpha, callB)]);
    // A fork copies its parent's lines into its own file before going on: the copied call is not new.
    writeLines(path.join(claudeProjectDir(claudeConfig, alpha), 's2.jsonl'), [...claudeLines('s2', alpha, callA), ...claudeLines('s2', alpha, callC)]);
    // A subagent's file names its parent session.
    writeLines(
      path.join(claudeProjectDir(claudeConfig, beta), 's3', 'subagents', 'agent-x.jsonl'),
      claudeLines('s3', beta, { ...callB, messageId: 'msg_sub' }),
    );
    // An error the CLI shows as a reply: no call was made.
    writeLines(path.join(claudeProjectDir(claudeConfig, beta), 's3.jsonl'), [
      ...claudeLines('s3', beta, { ...callB, messageId: 'msg_synth', model: '<synthetic>' }),
      'not json at all',
    ]);

    const result = await summary();
    expect(result.buckets.map((b) => [b.slot, b.model, b.totals.calls, b.sessions])).toEqual([
      ['2026-11-02', 'claude-opus-4-8', 3, 2],
      ['2026-11-03', 'claude-sonnet-4-5-20250929', 1, 1],
    ]);
    const opus = result.buckets[0];
    expect(opus.totals).toEqual({ calls: 3, input: 1020, cacheRead: 5000, cacheWrite: 400, cacheWrite1h: 100, output: 140, reasoning: 0 });
    // Opus after 4.5: $5 in, $25 out, reads 0.1×, 5-minute writes 1.25×, 1-hour writes 2×.
    const opusCost = (1020 * 5 + 5000 * 0.5 + 300 * 6.25 + 100 * 10 + 140 * 25) / 1e6;
    expect(opus.costUsd).toBeCloseTo(opusCost, 12);
    expect(opus.cacheSavingsUsd).toBeCloseTo((5000 * 4.5) / 1e6, 12);
    expect(result.models.map((m) => [m.model, m.priceBasis, m.pricedAs])).toEqual([
      ['claude-opus-4-8', 'family', 'claude-opus-4'],
      ['claude-sonnet-4-5-20250929', 'exact', 'claude-sonnet-4-5-20250929'],
    ]);
    expect(result.projects.map((p) => [p.name, p.folder, p.totals.calls])).toEqual([
      ['alpha', alpha, 3],
      ['beta', beta, 1],
    ]);
    expect(result.projects[0].byProvider.claude?.costUsd).toBeCloseTo(opusCost - (10 * 5 + 20 * 25) / 1e6 + (2000 * 3 + 300 * 15) / 1e6, 12);
    expect(result.sessions).toBe(3);
    expect(result.pricing).toMatchObject({ source: 'snapshot' });
    expect(result.pricing.fetchedAt).toBeGreaterThan(0);
    expect(result.roots).toContainEqual({ provider: 'claude', path: path.join(claudeConfig, 'projects'), status: 'ok', message: null });
    expect(result.roots).toContainEqual({ provider: 'codex', path: path.join(codexHome, 'sessions'), status: 'missing', message: null });
    expect(result.scan).toMatchObject({ files: 4, changedFiles: 4, running: false, failed: false });
    expect(result.accounts).toBeUndefined();
  });

  it('places 15-minute slots in the asked zone: a +05:45 zone splits a UTC hour across days, a DST morning has no 02:00', async () => {
    const folder = path.join(work, 'zones');
    const file = path.join(claudeProjectDir(claudeConfig, folder), 'z.jsonl');
    writeLines(file, [
      ...claudeLines('z', folder, { at: at('2026-11-01T18:10:00Z'), model: 'claude-haiku-4-5-20251001', messageId: 'k1', input: 1, output: 1 }),
      ...claudeLines('z', folder, { at: at('2026-11-01T18:20:00Z'), model: 'claude-haiku-4-5-20251001', messageId: 'k2', input: 2, output: 2 }),
      ...claudeLines('z', folder, { at: at('2026-03-29T00:50:00Z'), model: 'claude-haiku-4-5-20251001', messageId: 'd1', input: 4, output: 4 }),
      ...claudeLines('z', folder, { at: at('2026-03-29T01:10:00Z'), model: 'claude-haiku-4-5-20251001', messageId: 'd2', input: 8, output: 8 }),
    ]);
    const kathmandu = await summary({ timeZone: 'Asia/Kathmandu', resolution: 'hour' });
    expect(kathmandu.buckets.map((b) => [b.slot, b.totals.input])).toEqual([
      ['2026-11-01T23:00:00+05:45', 1],
      ['2026-11-02T00:00:00+05:45', 2],
    ]);
    const days = await summary({ timeZone: 'Asia/Kathmandu', from: '2026-11-02', to: '2026-11-02' });
    expect(days.buckets.map((b) => [b.slot, b.totals.input])).toEqual([['2026-11-02', 2]]);
    const amsterdam = await summary({ timeZone: 'Europe/Amsterdam', resolution: 'hour', from: '2026-03-29', to: '2026-03-29' });
    expect(amsterdam.buckets.map((b) => [b.slot, b.totals.input])).toEqual([
      ['2026-03-29T01:00:00+01:00', 4],
      ['2026-03-29T03:00:00+02:00', 8],
    ]);
  });

  it('refuses a zone or days it cannot read, and an account it does not have', async () => {
    expect(await client.fails('usage.summary', { ...day, timeZone: 'Mars/Olympus' })).toBe('bad-request');
    expect(await client.fails('usage.summary', { ...day, from: 'yesterday' })).toBe('bad-request');
    expect(await client.fails('usage.summary', { ...day, from: '2026-12-01' })).toBe('bad-request');
    expect(await client.fails('usage.summary', { ...day, accounts: ['nobody'] })).toBe('account-unavailable');
  });

  it('goes on where it stopped: appended lines, a line still being written, a rewritten file, a restart', async () => {
    const folder = path.join(work, 'grow');
    const file = path.join(claudeProjectDir(claudeConfig, folder), 'g.jsonl');
    const call = (n: number) => ({
      at: at('2026-11-05T12:00:00Z'),
      model: 'claude-opus-4-5-20251101',
      messageId: `g${n}`,
      input: 100 * n,
      output: n,
      blocks: 1,
    });
    writeLines(file, claudeLines('g', folder, call(1)));
    expect((await summary()).buckets[0].totals.input).toBe(100);

    const nothing = await summary();
    expect(nothing.scan.changedFiles).toBe(0);
    expect(nothing.buckets[0].totals.input).toBe(100);

    // The CLI is in the middle of writing a line: only the whole lines count, the rest once it is whole.
    const [user, assistant] = claudeLines('g', folder, call(2));
    appendFileSync(file, `${user}\n${assistant.slice(0, 200)}`);
    expect((await summary()).buckets[0].totals.input).toBe(100);
    appendFileSync(file, `${assistant.slice(200)}\n`);
    const grown = await summary();
    expect(grown.scan.changedFiles).toBe(1);
    expect(grown.buckets[0].totals).toMatchObject({ calls: 2, input: 300 });

    // After a restart nothing is read again, and nothing is lost.
    await core.close();
    await open();
    const restarted = await summary();
    expect(restarted.scan.changedFiles).toBe(0);
    expect(restarted.buckets[0].totals).toMatchObject({ calls: 2, input: 300 });

    // A file written anew (shorter) is counted anew, not on top of what it had.
    writeLines(file, claudeLines('g', folder, call(5)));
    const rewritten = await summary();
    expect(rewritten.buckets[0].totals).toMatchObject({ calls: 1, input: 500 });
  });

  it('reads past a line longer than its read buffer (a 6 MiB tool output)', async () => {
    const folder = path.join(work, 'big');
    const lines = [
      ...claudeLines('b', folder, { at: at('2026-11-05T12:00:00Z'), model: 'claude-opus-4-5', messageId: 'b1', input: 3, output: 3 }, 6 * 1024 * 1024),
      ...claudeLines('b', folder, { at: at('2026-11-05T12:00:00Z'), model: 'claude-opus-4-5', messageId: 'b2', input: 4, output: 4 }, 6 * 1024 * 1024),
    ];
    writeLines(path.join(claudeProjectDir(claudeConfig, folder), 'b.jsonl'), lines);
    expect((await summary()).buckets[0].totals).toMatchObject({ calls: 2, input: 7 });
  });

  it('does not follow a symbolic link out of the CLI folder', async () => {
    const outside = path.join(data.dir, 'outside.jsonl');
    writeLines(outside, claudeLines('o', work, { at: at('2026-11-05T12:00:00Z'), model: 'claude-opus-4-5', messageId: 'o1', input: 7, output: 7 }));
    const project = claudeProjectDir(claudeConfig, work);
    mkdirSync(project, { recursive: true });
    symlinkSync(outside, path.join(project, 'linked.jsonl'));
    symlinkSync(data.dir, path.join(project, 'linked-folder'));
    const result = await summary();
    expect(result.buckets).toEqual([]);
    expect(result.scan.files).toBe(0);
  });
});

describe('usage.summary from Codex rollouts', () => {
  it('counts token_usage_record calls, or a token_count whose total moved; the model from the turn context; an unknown price is null', async () => {
    const folder = path.join(work, 'codexed');
    const sessions = path.join(codexHome, 'sessions', '2026', '11', '04');
    const t = at('2026-11-04T08:00:00Z');
    writeLines(path.join(sessions, 'rollout-new.jsonl'), [
      ...codexOpening('cx1', folder, 'gpt-5.1-codex', t),
      ...codexCallLines('cx1', { at: t, input: 1200, cached: 200, output: 40, reasoning: 10 }, 1240),
      ...codexCallLines('cx1', { at: t + 1000, input: 2000, cached: 1500, output: 60, reasoning: 0 }, 3300),
    ]);
    // An older build: only token_count events; the same total again is the same call.
    writeLines(path.join(sessions, 'rollout-old.jsonl'), [
      ...codexOpening('cx2', folder, 'tether-test-model', t),
      codexTokenCountLine({ at: t, input: 500, output: 5 }, 505),
      codexTokenCountLine({ at: t, input: 500, output: 5 }, 505),
      codexTokenCountLine({ at: t + 10, input: 700, cached: 100, output: 7 }, 1212),
    ]);
    const result = await summary();
    const byModel = Object.fromEntries(result.models.map((m) => [m.model, m]));
    expect(byModel['gpt-5.1-codex']).toMatchObject({
      provider: 'codex',
      priceBasis: 'exact',
      pricedAs: 'gpt-5.1-codex',
      totals: { calls: 2, input: 1500, cacheRead: 1700, cacheWrite: 0, cacheWrite1h: 0, output: 100, reasoning: 10 },
    });
    expect(byModel['gpt-5.1-codex'].costUsd).toBeCloseTo((1500 * 1.25 + 1700 * 0.125 + 100 * 10) / 1e6, 12);
    expect(byModel['tether-test-model']).toMatchObject({
      priceBasis: 'unknown',
      pricedAs: null,
      costUsd: null,
      totals: { calls: 2, input: 1100, cacheRead: 100, output: 12 },
    });
    expect(result.buckets.find((b) => b.model === 'tether-test-model')?.costUsd).toBeNull();
    expect(result.projects).toHaveLength(1);
    expect(result.projects[0].byProvider.codex?.tokens).toBe(1500 + 1700 + 100 + 1100 + 100 + 12);
    expect(result.sessions).toBe(2);
  });
});

describe('usage.summary with a model it has no price for', () => {
  it('names the unpriced tokens per project, per provider and for the period: a project all on such a model is not free, a mixed one is a floor', async () => {
    const priced = path.join(work, 'priced');
    const mixed = path.join(work, 'mixed');
    const unpriced = path.join(work, 'unpriced');
    const t = at('2026-11-08T12:00:00Z');
    // Codex's input includes its cached part (500 = 400 + 100 read). Sonnet 4.5 at $3 / $15 per million; `claude-mystery-9` and `tether-test-model` are in no table row or family.
    writeLines(
      path.join(claudeProjectDir(claudeConfig, priced), 'p.jsonl'),
      claudeLines('p', priced, { at: t, model: 'claude-sonnet-4-5-20250929', messageId: 'pr1', input: 1000, output: 100 }),
    );
    writeLines(path.join(claudeProjectDir(claudeConfig, mixed), 'm.jsonl'), [
      ...claudeLines('m', mixed, { at: t, model: 'claude-sonnet-4-5-20250929', messageId: 'mx1', input: 2000, output: 200 }),
      ...claudeLines('m', mixed, { at: t + 60_000, model: 'claude-mystery-9', messageId: 'mx2', input: 300, output: 30 }),
    ]);
    writeLines(path.join(codexHome, 'sessions', '2026', '11', '08', 'rollout-u.jsonl'), [
      ...codexOpening('cu1', unpriced, 'tether-test-model', t),
      ...codexCallLines('cu1', { at: t, input: 500, cached: 100, output: 50 }, 550),
    ]);
    // The same unpriced Codex model in the mixed folder too: a second provider in one project.
    writeLines(path.join(codexHome, 'sessions', '2026', '11', '08', 'rollout-m.jsonl'), [
      ...codexOpening('cu2', mixed, 'tether-test-model', t),
      ...codexCallLines('cu2', { at: t, input: 40, output: 4 }, 44),
    ]);

    const result = await summary();
    const project = (folder: string) => result.projects.find((p) => p.folder === folder)!;
    const sonnet = (input: number, output: number) => (input * 3 + output * 15) / 1e6;

    expect(project(priced)).toMatchObject({ unpricedTokens: 0, byProvider: { claude: { tokens: 1100, unpricedTokens: 0 } } });
    expect(project(priced).costUsd).toBeCloseTo(sonnet(1000, 100), 12);

    // All of it on an unpriced model: a cost of 0 that its tokens say is unknown, not free.
    expect(project(unpriced)).toMatchObject({ costUsd: 0, unpricedTokens: 550, byProvider: { codex: { costUsd: 0, tokens: 550, unpricedTokens: 550 } } });
    expect(project(unpriced).byProvider.claude).toBeUndefined();

    // Part of it: the cost is what is known, the rest named per provider.
    const both = project(mixed);
    expect(both.costUsd).toBeCloseTo(sonnet(2000, 200), 12);
    expect(both.unpricedTokens).toBe(330 + 44);
    expect(both.byProvider.claude).toMatchObject({ tokens: 2200 + 330, unpricedTokens: 330 });
    expect(both.byProvider.claude?.costUsd).toBeCloseTo(sonnet(2000, 200), 12);
    expect(both.byProvider.codex).toMatchObject({ costUsd: 0, tokens: 44, unpricedTokens: 44 });

    // Buckets and models are one model each: their cost is null, and the period's total names their tokens.
    expect(
      result.models
        .filter((m) => m.costUsd === null)
        .map((m) => [m.model, m.priceBasis])
        .sort(),
    ).toEqual([
      ['claude-mystery-9', 'unknown'],
      ['tether-test-model', 'unknown'],
    ]);
    expect(
      result.buckets
        .filter((b) => b.costUsd === null)
        .map((b) => b.model)
        .sort(),
    ).toEqual(['claude-mystery-9', 'tether-test-model']);
    expect(result.unpricedTokens).toBe(330 + 550 + 44);
    expect(UsageSummaryResultSchema.parse(result)).toEqual(result);
  });

  it('says nothing is unpriced when every model has a price', async () => {
    const folder = path.join(work, 'all-priced');
    writeLines(
      path.join(claudeProjectDir(claudeConfig, folder), 'a.jsonl'),
      claudeLines('a', folder, { at: at('2026-11-09T12:00:00Z'), model: 'claude-opus-4-8', messageId: 'ap1', input: 10, output: 1 }),
    );
    const result = await summary();
    expect(result.unpricedTokens).toBe(0);
    expect(result.projects.map((p) => [p.unpricedTokens, p.byProvider.claude?.unpricedTokens])).toEqual([[0, 0]]);
  });
});

describe('usage per account and usage.changed', () => {
  it('splits per account when asked, each account read from its own config folder', async () => {
    const second = path.join(homes, 'claude-work');
    await client.ok('accounts.save', { accounts: { work: { kind: 'claude', label: 'Work', color: 'teal', home: second } } });
    const folder = path.join(work, 'both');
    writeLines(
      path.join(claudeProjectDir(claudeConfig, folder), 'a.jsonl'),
      claudeLines('a', folder, { at: at('2026-11-06T12:00:00Z'), model: 'claude-opus-4-5', messageId: 'p1', input: 1, output: 1 }),
    );
    writeLines(
      path.join(claudeProjectDir(second, folder), 'b.jsonl'),
      claudeLines('b', folder, { at: at('2026-11-06T12:00:00Z'), model: 'claude-opus-4-5', messageId: 'w1', input: 2, output: 2 }),
    );

    const merged = await summary();
    expect(merged.buckets.map((b) => [b.account, b.totals.input])).toEqual([[undefined, 3]]);
    const split = await summary({ accounts: ['claude', 'work'] });
    expect(split.buckets.map((b) => [b.account, b.totals.input])).toEqual([
      ['claude', 1],
      ['work', 2],
    ]);
    expect(split.accounts).toEqual([
      { id: 'claude', kind: 'claude', label: 'Claude Code' },
      { id: 'work', kind: 'claude', label: 'Work', color: 'teal' },
    ]);
    const onlyWork = await summary({ accounts: ['work'] });
    expect(onlyWork.models.map((m) => [m.account, m.totals.input])).toEqual([['work', 2]]);
  });

  it('an account whose folder the policy refuses is reported, not read', async () => {
    // Saved by hand before the policy changed: the scan refuses it as a launch would.
    writeFileSync(path.join(data.dir, 'providers.json'), JSON.stringify({ version: 1, accounts: { stray: { kind: 'claude', home: data.dir } } }));
    await core.close();
    await open();
    const result = await summary();
    expect(result.roots.find((r) => r.status === 'failed')?.message).toContain('config folder');
    expect(result.scan.failed).toBe(true);
  });

  it('sends usage.changed to every client when a followed scan finds more, and not when nothing changed', async () => {
    await core.close();
    await open({ usageIntervalMs: 20 });
    const other = new TestClient(core);
    await summary();
    await client.ok('usage.subscribe', {});
    const folder = path.join(work, 'followed');
    writeLines(
      path.join(claudeProjectDir(claudeConfig, folder), 'f.jsonl'),
      claudeLines('f', folder, { at: at('2026-11-07T12:00:00Z'), model: 'claude-opus-4-5', messageId: 'f1', input: 1, output: 1 }),
    );
    await until(() => other.events('usage.changed').length === 1, 'usage.changed');
    const { scannedAt } = other.events('usage.changed')[0].payload as { scannedAt: number };
    expect(scannedAt).toBeGreaterThan(0);
    expect(client.events('usage.changed')).toHaveLength(1);
    // The clock goes on, and reads nothing new: no second event until a file grows again.
    const scans = await summary();
    expect(scans.scan.changedFiles).toBe(0);
    expect(other.events('usage.changed')).toHaveLength(1);
    await client.ok('usage.unsubscribe', {});
    expect(existsSync(path.join(data.dir, 'usage', 'scan.json'))).toBe(true);
  });
});
