// How usage reads: money with its precision, token counts, days and reset moments in the person's
// own zone (with the year only when it is not this year's).
import { formatCost, formatTokens } from '../chat/items/format.ts';
import type { UsageTotals } from '../../contracts/index.ts';

export { formatCost, formatTokens };

/** Every token the model read or wrote (reasoning is part of output, cacheWrite1h part of cacheWrite). */
export function tokensOf(totals: UsageTotals): number {
  return totals.input + totals.cacheRead + totals.cacheWrite + totals.output;
}

/** A cost that may be unknown (null: no price for the model, which is not free). */
export function costText(usd: number | null): string {
  return usd === null ? 'price unknown' : formatCost(usd);
}

/**
 * A sum of costs of which `unpricedTokens` (of `tokens`) were on models without a price: unknown
 * when all of it was, a floor when part was, never "$0" for work nobody priced.
 */
export function spendText(costUsd: number, unpricedTokens: number, tokens: number): string {
  if (unpricedTokens <= 0) return formatCost(costUsd);
  if (unpricedTokens >= tokens) return 'price unknown';
  return `at least ${formatCost(costUsd)}`;
}

/** Today's `YYYY-MM-DD` in `timeZone`, and `days - 1` days before it: a period the host reads inclusively. */
export function period(days: number, timeZone: string, now = Date.now()): { from: string; to: string } {
  const day = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return { from: day.format(now - (days - 1) * 86_400_000), to: day.format(now) };
}

const dayName = new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric', timeZone: 'UTC' });

/** A slot's day (`YYYY-MM-DD`, already in the asked zone) as people read it. */
export function dayText(slot: string): string {
  const at = Date.parse(`${slot.slice(0, 10)}T00:00:00Z`);
  return Number.isNaN(at) ? slot : dayName.format(at);
}

/** A moment (a window's reset, a reading's time): date and time, the year when not this one. */
export function momentText(ms: number, now = Date.now()): string {
  const sameYear = new Date(ms).getFullYear() === new Date(now).getFullYear();
  return new Intl.DateTimeFormat(undefined, {
    ...(sameYear ? {} : { year: 'numeric' }),
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  }).format(ms);
}

/** A fraction 0..1 as a whole percent. */
export function percent(fraction: number): string {
  return `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
}
