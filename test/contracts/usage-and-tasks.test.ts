import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TaskChangedEventSchema, TaskSchema } from '../../src/contracts/task.ts';
import {
  addTotals,
  EMPTY_TOTALS,
  totalTokensOf,
  USAGE_PROVIDERS,
  UsageLimitsSnapshotSchema,
  UsageSummaryPayloadSchema,
  UsageSummaryResultSchema,
  UsageTotalsSchema,
  UsageWindowSchema,
} from '../../src/contracts/usage.ts';
import type { UsageTotals } from '../../src/contracts/usage.ts';

const totals = { calls: 1, input: 10, cacheRead: 20, cacheWrite: 30, cacheWrite1h: 5, output: 40, reasoning: 8 };

describe('usage totals', () => {
  it('are seven non-negative integers', () => {
    expect(UsageTotalsSchema.safeParse(EMPTY_TOTALS).success).toBe(true);
    expect(UsageTotalsSchema.safeParse({ ...totals, output: -1 }).success).toBe(false);
    expect(UsageTotalsSchema.safeParse({ ...totals, input: 1.5 }).success).toBe(false);
  });

  it('count tokens without the nested parts twice', () => {
    expect(totalTokensOf(totals)).toBe(100);
  });

  it('add field by field into a new object', () => {
    const count = fc.nat({ max: 1e9 });
    const arbitraryTotals = fc.record({
      calls: count,
      input: count,
      cacheRead: count,
      cacheWrite: count,
      cacheWrite1h: count,
      output: count,
      reasoning: count,
    });
    fc.assert(
      fc.property(arbitraryTotals, arbitraryTotals, (a: UsageTotals, b: UsageTotals) => {
        const sum = addTotals(a, b);
        expect(sum).not.toBe(a);
        expect(totalTokensOf(sum)).toBe(totalTokensOf(a) + totalTokensOf(b));
        expect(addTotals(a, EMPTY_TOTALS)).toEqual(a);
      }),
    );
  });

  it('cover claude and codex only', () => {
    expect(USAGE_PROVIDERS).toEqual(['claude', 'codex']);
  });
});

describe('usage summary', () => {
  it('takes dates and a zone unvalidated', () => {
    const ask = { from: '2026-10-01', to: 'whenever', resolution: 'day', timeZone: 'Mars/Olympus' };
    expect(UsageSummaryPayloadSchema.safeParse(ask).success).toBe(true);
    expect(UsageSummaryPayloadSchema.safeParse({ ...ask, resolution: 'week' }).success).toBe(false);
    expect(UsageSummaryPayloadSchema.safeParse({ ...ask, accounts: ['Work'] }).success).toBe(false);
  });

  const summary = {
    from: '2026-10-01',
    to: '2026-10-07',
    resolution: 'day',
    timeZone: 'Europe/Amsterdam',
    buckets: [{ slot: '2026-10-01', provider: 'codex', model: 'gpt-x', totals, costUsd: null, cacheSavingsUsd: 0, sessions: 2 }],
    models: [{ provider: 'codex', model: 'gpt-x', totals, costUsd: null, priceBasis: 'unknown', pricedAs: null }],
    projects: [
      {
        folder: '/p',
        name: 'p',
        projectId: null,
        byProvider: { codex: { costUsd: 1, tokens: 100 } },
        totals,
        costUsd: 1,
      },
    ],
    sessions: 2,
    scan: { at: 1, files: 3, changedFiles: 1, durationMs: 20, running: false, failed: false },
    pricing: { source: 'snapshot', fetchedAt: null, models: 300 },
    rate: null,
    roots: [{ provider: 'claude', path: '~/.claude/projects', status: 'missing', message: null }],
  };

  it('answers with an unknown price as null, not zero', () => {
    expect(UsageSummaryResultSchema.safeParse(summary).success).toBe(true);
    const bucket = { ...summary.buckets[0] };
    delete (bucket as Partial<typeof bucket>).costUsd;
    expect(UsageSummaryResultSchema.safeParse({ ...summary, buckets: [bucket] }).success).toBe(false);
  });

  it("names the tokens a project, a provider's part of it and the period leave unpriced, optionally (an older host says nothing)", () => {
    const project = { ...summary.projects[0], unpricedTokens: 40, byProvider: { codex: { costUsd: 1, tokens: 100, unpricedTokens: 40 } } };
    expect(UsageSummaryResultSchema.safeParse({ ...summary, projects: [project], unpricedTokens: 40 }).success).toBe(true);
    for (const bad of [-1, 1.5, null, '40']) {
      expect(UsageSummaryResultSchema.safeParse({ ...summary, unpricedTokens: bad }).success).toBe(false);
      expect(UsageSummaryResultSchema.safeParse({ ...summary, projects: [{ ...project, unpricedTokens: bad }] }).success).toBe(false);
      expect(
        UsageSummaryResultSchema.safeParse({ ...summary, projects: [{ ...project, byProvider: { codex: { costUsd: 1, tokens: 100, unpricedTokens: bad } } }] })
          .success,
      ).toBe(false);
    }
  });

  it('refuses near misses', () => {
    expect(UsageSummaryResultSchema.safeParse({ ...summary, rate: { currency: 'EUR', rate: 0, date: 'd', fetchedAt: 1 } }).success).toBe(false);
    expect(
      UsageSummaryResultSchema.safeParse({ ...summary, projects: [{ ...summary.projects[0], byProvider: { gemini: { costUsd: 1, tokens: 1 } } }] }).success,
    ).toBe(false);
    expect(UsageSummaryResultSchema.safeParse({ ...summary, pricing: { ...summary.pricing, source: 'web' } }).success).toBe(false);
  });
});

describe('usage limits', () => {
  const window = { id: 'five-hour', kind: 'session', label: '5 hours', used: 0.4, resetsAt: null, durationMs: 18_000_000 };
  const provider = {
    kind: 'claude',
    plan: 'Max',
    checkedAt: 1,
    source: 'probe',
    windows: [window],
    cost: null,
    unavailable: null,
    account: { id: 'claude', label: 'Default' },
  };

  it('read a used fraction between 0 and 1', () => {
    expect(UsageWindowSchema.safeParse(window).success).toBe(true);
    expect(UsageWindowSchema.safeParse({ ...window, used: 40 }).success).toBe(false);
    expect(UsageWindowSchema.safeParse({ ...window, used: -0.1 }).success).toBe(false);
  });

  it('snapshot every provider, unavailable ones with a reason', () => {
    const unavailable = { ...provider, kind: 'codex', windows: [], unavailable: { reason: 'not-installed', message: null } };
    delete (unavailable as Partial<typeof unavailable>).account;
    expect(UsageLimitsSnapshotSchema.safeParse({ providers: [provider, unavailable] }).success).toBe(true);
    expect(UsageLimitsSnapshotSchema.safeParse({ providers: [{ ...provider, unavailable: { reason: 'offline', message: null } }] }).success).toBe(false);
    expect(UsageLimitsSnapshotSchema.safeParse({ providers: [{ ...provider, cost: { sessionUsd: -1 } }] }).success).toBe(false);
    const { cost: _, ...withoutCost } = provider;
    expect(UsageLimitsSnapshotSchema.safeParse({ providers: [withoutCost] }).success).toBe(false);
  });

  it('name the account without repeating its kind', () => {
    const parsed = UsageLimitsSnapshotSchema.parse({ providers: [{ ...provider, account: { id: 'work', label: 'Work', kind: 'claude' } }] });
    expect(parsed.providers[0]?.account).toEqual({ id: 'work', label: 'Work' });
  });
});

describe('tasks', () => {
  const task = {
    id: 'task-1',
    projectId: 'p',
    parentId: 'chat-1',
    childId: 'chat-2',
    title: 'Write docs',
    prompt: 'Write the docs',
    status: 'open',
    result: null,
    createdAt: 1,
    settledAt: null,
    wake: 'pending',
  };

  it('parse an open task and a settled one', () => {
    expect(TaskSchema.safeParse(task).success).toBe(true);
    const settled = {
      ...task,
      status: 'done',
      result: { text: 'Done', source: 'turn', at: 2 },
      settledAt: 2,
      wake: 'sent',
      background: { turnId: 't', itemIds: [], commands: ['npm run watch'] },
      paused: { kind: 'usage' },
    };
    expect(TaskChangedEventSchema.safeParse({ task: settled }).success).toBe(true);
  });

  it('refuse near misses', () => {
    expect(TaskSchema.safeParse({ ...task, status: 'running' }).success).toBe(false);
    expect(TaskSchema.safeParse({ ...task, childId: '' }).success).toBe(false);
    expect(TaskSchema.safeParse({ ...task, result: { text: '', source: 'crash', at: 1 } }).success).toBe(false);
    expect(TaskSchema.safeParse({ ...task, batchId: '' }).success).toBe(false);
    const { settledAt: _, ...withoutSettled } = task;
    expect(TaskSchema.safeParse(withoutSettled).success).toBe(false);
  });
});
