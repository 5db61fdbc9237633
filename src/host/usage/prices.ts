// The price table the host ships: list prices per million tokens, the newest the vendors had
// published when it was written (`PRICES_DATE`; a snapshot: `pricing.source: 'snapshot'`). The host never fetches prices from the
// network, so a summary's cost is only as new as this table: the date travels with every answer.
//
// A model is priced `exact` when its slug is in the table, `family` when it is a dated or named
// variant of a family the table knows (`claude-opus-4-8` of `claude-opus-4`; the longest matching
// family wins), and `unknown` otherwise:
// then its cost is null (not free). `override` is for prices a host's config sets (none yet).
import type { UsagePriceBasis, UsageProvider, UsageTotals } from '../../contracts/index.ts';

/** USD per million tokens. `cacheWrite1h` defaults to 2× input, `cacheWrite` to 1.25× input (Anthropic's multipliers). */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h: number;
}

export const PRICES_DATE = '2025-12-11';

function anthropic(input: number, output: number): ModelPrice {
  return { input, output, cacheRead: input * 0.1, cacheWrite: input * 1.25, cacheWrite1h: input * 2 };
}

/** OpenAI bills no cache writes; cached input is a tenth of input (the GPT-5 family's rate). */
function openai(input: number, output: number, cacheRead = input * 0.1): ModelPrice {
  return { input, output, cacheRead, cacheWrite: input, cacheWrite1h: input };
}

/** Exact slugs and family prefixes, per provider. A prefix entry ends in `*`. */
const TABLE: Record<UsageProvider, Record<string, ModelPrice>> = {
  claude: {
    'claude-opus-4-20250514': anthropic(15, 75),
    'claude-opus-4-1-20250805': anthropic(15, 75),
    'claude-opus-4-5-20251101': anthropic(5, 25),
    'claude-sonnet-4-20250514': anthropic(3, 15),
    'claude-sonnet-4-5-20250929': anthropic(3, 15),
    'claude-haiku-4-5-20251001': anthropic(1, 5),
    'claude-3-5-haiku-20241022': anthropic(0.8, 4),
    'claude-3-7-sonnet-20250219': anthropic(3, 15),
    // Families: Opus 4 and 4.1 at the old price, every later Opus at the new one.
    'claude-opus-4-0*': anthropic(15, 75),
    'claude-opus-4-1*': anthropic(15, 75),
    'claude-opus-4*': anthropic(5, 25),
    'claude-sonnet-4*': anthropic(3, 15),
    'claude-haiku-4*': anthropic(1, 5),
    'claude-3-5-haiku*': anthropic(0.8, 4),
    'claude-3-7-sonnet*': anthropic(3, 15),
    'claude-3-5-sonnet*': anthropic(3, 15),
  },
  codex: {
    'gpt-5': openai(1.25, 10),
    'gpt-5-codex': openai(1.25, 10),
    'gpt-5-mini': openai(0.25, 2),
    'gpt-5-nano': openai(0.05, 0.4),
    'gpt-5.1': openai(1.25, 10),
    'gpt-5.1-codex': openai(1.25, 10),
    'gpt-5.1-codex-mini': openai(0.25, 2),
    'gpt-5.2': openai(1.75, 14),
    'gpt-5.2-codex': openai(1.75, 14),
    'gpt-5-mini*': openai(0.25, 2),
    'gpt-5-nano*': openai(0.05, 0.4),
    'gpt-5.1-codex-mini*': openai(0.25, 2),
    'gpt-5.2*': openai(1.75, 14),
    'gpt-5.1*': openai(1.25, 10),
    'gpt-5*': openai(1.25, 10),
    'o4-mini*': openai(1.1, 4.4, 0.275),
    'o3*': openai(2, 8, 0.5),
    'gpt-4.1*': openai(2, 8, 0.5),
  },
};

/** How many models the table prices (what `pricing.models` says). */
export const PRICED_MODELS = Object.values(TABLE).reduce((n, models) => n + Object.keys(models).length, 0);

export interface PriceMatch {
  price: ModelPrice | null;
  basis: UsagePriceBasis;
  /** The table entry used (a family shows as its prefix, without the `*`). */
  pricedAs: string | null;
}

const matches = new Map<string, PriceMatch>();

export function priceOf(provider: UsageProvider, model: string): PriceMatch {
  const key = `${provider}\0${model}`;
  let found = matches.get(key);
  if (found) return found;
  const table = TABLE[provider];
  const exact = table[model];
  if (exact) {
    found = { price: exact, basis: 'exact', pricedAs: model };
  } else {
    let best: string | null = null;
    for (const entry of Object.keys(table)) {
      if (!entry.endsWith('*')) continue;
      const prefix = entry.slice(0, -1);
      // A family takes its dated or named variants (`-…`), never another version (`gpt-5` is not `gpt-5.5`).
      const variant = model === prefix || (model.startsWith(prefix) && model[prefix.length] === '-');
      if (variant && (best === null || prefix.length > best.length - 1)) best = entry;
    }
    found = best ? { price: table[best], basis: 'family', pricedAs: best.slice(0, -1) } : { price: null, basis: 'unknown', pricedAs: null };
  }
  matches.set(key, found);
  return found;
}

/** What `totals` cost at `price`, in USD (the 1h cache writes are inside `cacheWrite`). */
export function costOf(totals: UsageTotals, price: ModelPrice): number {
  const perToken = 1 / 1_000_000;
  return (
    (totals.input * price.input +
      totals.cacheRead * price.cacheRead +
      (totals.cacheWrite - totals.cacheWrite1h) * price.cacheWrite +
      totals.cacheWrite1h * price.cacheWrite1h +
      totals.output * price.output) *
    perToken
  );
}

/** What reading from the cache saved against paying full input for the same tokens. */
export function cacheSavingsOf(totals: UsageTotals, price: ModelPrice): number {
  return (totals.cacheRead * (price.input - price.cacheRead)) / 1_000_000;
}
