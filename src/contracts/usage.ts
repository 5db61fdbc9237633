import { z } from 'zod';
import { ProviderAccountIdSchema } from './provider-accounts.ts';

export const USAGE_PROVIDERS = ['claude', 'codex'] as const;

export const UsageProviderSchema = z.enum(USAGE_PROVIDERS);
export type UsageProvider = z.output<typeof UsageProviderSchema>;

export const UsageResolutionSchema = z.enum(['hour', 'day']);
export type UsageResolution = z.output<typeof UsageResolutionSchema>;

const count = z.int().nonnegative();

// Nested parts are kept so nothing is counted twice: `cacheWrite` includes the
// 1h writes, `output` includes reasoning.
export const UsageTotalsSchema = z.object({
  calls: count,
  input: count,
  cacheRead: count,
  cacheWrite: count,
  cacheWrite1h: count,
  output: count,
  reasoning: count,
});
export type UsageTotals = z.output<typeof UsageTotalsSchema>;

export const EMPTY_TOTALS: Readonly<UsageTotals> = Object.freeze({
  calls: 0,
  input: 0,
  cacheRead: 0,
  cacheWrite: 0,
  cacheWrite1h: 0,
  output: 0,
  reasoning: 0,
});

/** Tokens that went through the model; the nested parts are already inside these four. */
export function totalTokensOf(totals: UsageTotals): number {
  return totals.input + totals.cacheRead + totals.cacheWrite + totals.output;
}

/** Field-wise sum as a new object; neither argument is touched. */
export function addTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    calls: a.calls + b.calls,
    input: a.input + b.input,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cacheWrite1h: a.cacheWrite1h + b.cacheWrite1h,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
  };
}

export const UsageAccountSchema = z.object({
  id: ProviderAccountIdSchema,
  kind: UsageProviderSchema,
  label: z.string(),
  color: z.string().optional(),
});
export type UsageAccount = z.output<typeof UsageAccountSchema>;

export const UsageBucketSchema = z.object({
  // `YYYY-MM-DD` or the ISO start of an hour, in the zone the request named.
  slot: z.string(),
  provider: UsageProviderSchema,
  model: z.string(),
  totals: UsageTotalsSchema,
  // null = unknown price, which is not the same as free.
  costUsd: z.number().nullable(),
  cacheSavingsUsd: z.number(),
  sessions: count,
  account: ProviderAccountIdSchema.optional(),
});
export type UsageBucket = z.output<typeof UsageBucketSchema>;

export const UsagePriceBasisSchema = z.enum(['exact', 'family', 'override', 'unknown']);
export type UsagePriceBasis = z.output<typeof UsagePriceBasisSchema>;

export const UsageModelSchema = z.object({
  provider: UsageProviderSchema,
  model: z.string(),
  totals: UsageTotalsSchema,
  costUsd: z.number().nullable(),
  priceBasis: UsagePriceBasisSchema,
  pricedAs: z.string().nullable(),
  account: ProviderAccountIdSchema.optional(),
});
export type UsageModel = z.output<typeof UsageModelSchema>;

// Tether's addition to the contract: the tokens inside a sum whose model has no price, so its
// `costUsd` (which cannot be null) counts only the priced part. Without it a project whose work was
// all on an unpriced model reads as free. Absent (an older host) says nothing either way.
export const UsageUnpricedTokensSchema = count;

export const UsageProviderCostSchema = z.object({
  costUsd: z.number(),
  tokens: z.int(),
  unpricedTokens: UsageUnpricedTokensSchema.optional(),
});
export type UsageProviderCost = z.output<typeof UsageProviderCostSchema>;

export const UsageProjectSchema = z.object({
  folder: z.string(),
  name: z.string(),
  projectId: z.string().nullable(),
  byProvider: z.partialRecord(UsageProviderSchema, UsageProviderCostSchema),
  totals: UsageTotalsSchema,
  // What the priced part cost; `unpricedTokens` says how much is left out.
  costUsd: z.number(),
  unpricedTokens: UsageUnpricedTokensSchema.optional(),
});
export type UsageProject = z.output<typeof UsageProjectSchema>;

// Dates and the zone are passed through unvalidated; the scanner interprets them.
export const UsageSummaryPayloadSchema = z.object({
  from: z.string(),
  to: z.string(),
  resolution: UsageResolutionSchema,
  timeZone: z.string(),
  // Narrows the summary to these accounts and splits it per account.
  accounts: z.array(ProviderAccountIdSchema).optional(),
});
export type UsageSummaryPayload = z.output<typeof UsageSummaryPayloadSchema>;

export const UsageScanSchema = z.object({
  at: z.number(),
  files: count,
  changedFiles: count,
  durationMs: count,
  running: z.boolean(),
  failed: z.boolean(),
});
export type UsageScan = z.output<typeof UsageScanSchema>;

export const UsagePricingSchema = z.object({
  source: z.enum(['litellm', 'snapshot', 'none']),
  fetchedAt: z.number().nullable(),
  models: count,
});
export type UsagePricing = z.output<typeof UsagePricingSchema>;

export const UsageRootSchema = z.object({
  provider: UsageProviderSchema,
  path: z.string(),
  status: z.enum(['ok', 'missing', 'failed']),
  message: z.string().nullable(),
});
export type UsageRoot = z.output<typeof UsageRootSchema>;

export const UsageRateSchema = z.object({
  currency: z.string(),
  rate: z.number().positive(),
  date: z.string(),
  fetchedAt: z.number(),
});
export type UsageRate = z.output<typeof UsageRateSchema>;

export const UsageSummaryResultSchema = z.object({
  from: z.string(),
  to: z.string(),
  resolution: UsageResolutionSchema,
  timeZone: z.string(),
  buckets: z.array(UsageBucketSchema),
  models: z.array(UsageModelSchema),
  projects: z.array(UsageProjectSchema),
  // Distinct over the whole period, so not the sum of the buckets.
  sessions: count,
  scan: UsageScanSchema,
  pricing: UsagePricingSchema,
  rate: UsageRateSchema.nullable(),
  roots: z.array(UsageRootSchema),
  accounts: z.array(UsageAccountSchema).optional(),
  // Over the whole period: the tokens of the buckets whose `costUsd` is null, so a client summing
  // the buckets' cost knows the sum is a floor (a bucket or model is one model, priced or not).
  unpricedTokens: UsageUnpricedTokensSchema.optional(),
});
export type UsageSummaryResult = z.output<typeof UsageSummaryResultSchema>;

// Only the moment of the scan: clients ask for the period on screen again.
export const UsageChangedEventSchema = z.object({
  scannedAt: z.number(),
});
export type UsageChangedEvent = z.output<typeof UsageChangedEventSchema>;

// A missing reading means unknown, never "room left".
export const UsageWindowSchema = z.object({
  // Stable per provider, so a client can follow one window across snapshots.
  id: z.string(),
  kind: z.enum(['session', 'weekly', 'monthly', 'other']),
  label: z.string(),
  // A fraction, not a percentage.
  used: z.number().min(0).max(1),
  resetsAt: z.int().nullable(),
  durationMs: z.int().nullable(),
});
export type UsageWindow = z.output<typeof UsageWindowSchema>;

export const UsageLimitsUnavailableSchema = z.object({
  reason: z.enum(['not-installed', 'no-subscription', 'failed']),
  message: z.string().nullable(),
});
export type UsageLimitsUnavailable = z.output<typeof UsageLimitsUnavailableSchema>;

export const UsageLimitsProviderSchema = z.object({
  kind: UsageProviderSchema,
  plan: z.string().nullable(),
  checkedAt: z.int(),
  source: z.enum(['probe', 'event']),
  windows: z.array(UsageWindowSchema),
  cost: z.object({ sessionUsd: z.number().nonnegative() }).nullable(),
  unavailable: UsageLimitsUnavailableSchema.nullable(),
  // The provider is already named by `kind`; the default account comes first.
  account: UsageAccountSchema.omit({ kind: true }).optional(),
});
export type UsageLimitsProvider = z.output<typeof UsageLimitsProviderSchema>;

export const UsageLimitsSnapshotSchema = z.object({
  providers: z.array(UsageLimitsProviderSchema),
});
export type UsageLimitsSnapshot = z.output<typeof UsageLimitsSnapshotSchema>;
