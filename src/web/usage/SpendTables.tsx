// Spend and tokens over the period, by day, by model and by project folder, from the host's summary
// of the CLIs' own session files. A cost the host could not price (no price for the model) is said
// to be unknown, never counted as free: a sum with an unpriced part reads "at least", one that is all
// unpriced "price unknown", and the totals name how many tokens went unpriced.
import type { UsageBucket, UsageSummaryResult, UsageTotals } from '../../contracts/index.ts';
import { costText, dayText, formatTokens, spendText, tokensOf } from './format.ts';

interface Day {
  slot: string;
  costUsd: number;
  unpricedTokens: number;
  tokens: number;
}

/** The buckets of each day folded together (a bucket is one day × provider × model × account). */
export function byDay(buckets: readonly UsageBucket[]): Day[] {
  const days = new Map<string, Day>();
  for (const bucket of buckets) {
    const slot = bucket.slot.slice(0, 10);
    const day = days.get(slot) ?? { slot, costUsd: 0, unpricedTokens: 0, tokens: 0 };
    const tokens = tokensOf(bucket.totals);
    day.tokens += tokens;
    if (bucket.costUsd === null) day.unpricedTokens += tokens;
    else day.costUsd += bucket.costUsd;
    days.set(slot, day);
  }
  return [...days.values()].sort((a, b) => b.slot.localeCompare(a.slot));
}

function Breakdown({ totals }: { totals: UsageTotals }) {
  return (
    <span class="muted small usage-breakdown">
      {formatTokens(totals.input)} in · {formatTokens(totals.cacheRead)} cache read · {formatTokens(totals.cacheWrite)} cache write ·{' '}
      {formatTokens(totals.output)} out
    </span>
  );
}

/** A sum's cost, with a note when part of it had no price (its figure is then a floor). */
function Spend({ costUsd, unpricedTokens, tokens }: { costUsd: number; unpricedTokens: number; tokens: number }) {
  const partly = unpricedTokens > 0 && unpricedTokens < tokens;
  return (
    <>
      {spendText(costUsd, unpricedTokens, tokens)}
      {partly ? <span class="muted small usage-partly">some usage unpriced</span> : null}
    </>
  );
}

const BASIS = { exact: null, family: 'priced as', override: 'host price', unknown: null } as const;

export function UsageTotalsCard({ summary }: { summary: UsageSummaryResult }) {
  const days = byDay(summary.buckets);
  const spend = days.reduce((sum, d) => sum + d.costUsd, 0);
  const tokens = days.reduce((sum, d) => sum + d.tokens, 0);
  // An older host does not name the period's unpriced tokens; its buckets' null costs still do.
  const unpriced = summary.unpricedTokens ?? days.reduce((sum, d) => sum + d.unpricedTokens, 0);
  const known = unpriced < tokens || tokens === 0;
  return (
    <div class="card usage-totals" aria-label="Totals for the period">
      {known ? (
        <p class="usage-total">
          <span class="usage-figure" data-testid="usage-spend">
            {spendText(spend, unpriced, tokens)}
          </span>{' '}
          spent
        </p>
      ) : (
        <p class="usage-total">
          Spent:{' '}
          <span class="usage-figure" data-testid="usage-spend">
            {spendText(spend, unpriced, tokens)}
          </span>
        </p>
      )}
      <p class="usage-total">
        <span class="usage-figure" data-testid="usage-tokens">
          {formatTokens(tokens)}
        </span>{' '}
        tokens
      </p>
      <p class="usage-total">
        <span class="usage-figure" data-testid="usage-sessions">
          {summary.sessions}
        </span>{' '}
        {summary.sessions === 1 ? 'session' : 'sessions'}
      </p>
      {unpriced > 0 ? (
        <p class="muted small usage-unpriced" role="note">
          {formatTokens(unpriced)} tokens were used by models without a price; their cost is unknown, not counted.
        </p>
      ) : null}
    </div>
  );
}

export function ByDay({ summary }: { summary: UsageSummaryResult }) {
  const days = byDay(summary.buckets);
  const most = Math.max(...days.map((d) => d.tokens), 1);
  if (days.length === 0) return <p class="muted">Nothing used in this period.</p>;
  return (
    <table class="usage-table" aria-label="By day">
      <thead>
        <tr>
          <th scope="col">Day</th>
          <th scope="col">Spend</th>
          <th scope="col">Tokens</th>
        </tr>
      </thead>
      <tbody>
        {days.map((day) => (
          <tr key={day.slot} data-slot={day.slot}>
            <th scope="row">{dayText(day.slot)}</th>
            <td class="usage-cost">
              <Spend costUsd={day.costUsd} unpricedTokens={day.unpricedTokens} tokens={day.tokens} />
            </td>
            <td class="usage-tokens">
              <span class="usage-bar" aria-hidden="true">
                <span style={{ width: `${Math.max(2, (day.tokens / most) * 100)}%` }} />
              </span>
              {formatTokens(day.tokens)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ByModel({ summary }: { summary: UsageSummaryResult }) {
  if (summary.models.length === 0) return null;
  return (
    <table class="usage-table" aria-label="By model">
      <thead>
        <tr>
          <th scope="col">Model</th>
          <th scope="col">Spend</th>
          <th scope="col">Tokens</th>
        </tr>
      </thead>
      <tbody>
        {summary.models.map((model) => (
          <tr key={`${model.provider}/${model.model}/${model.account ?? ''}`} data-model={model.model}>
            <th scope="row">
              <span class="usage-model">{model.model}</span>
              <span class="muted small"> · {model.provider === 'claude' ? 'Claude Code' : 'Codex'}</span>
              {BASIS[model.priceBasis] && model.pricedAs ? (
                <span class="muted small usage-basis">
                  {' '}
                  · {BASIS[model.priceBasis]} {model.pricedAs}
                </span>
              ) : null}
            </th>
            <td class="usage-cost">{costText(model.costUsd)}</td>
            <td class="usage-tokens">
              {formatTokens(tokensOf(model.totals))}
              <Breakdown totals={model.totals} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ByProject({ summary }: { summary: UsageSummaryResult }) {
  if (summary.projects.length === 0) return null;
  return (
    <table class="usage-table" aria-label="By project">
      <thead>
        <tr>
          <th scope="col">Project</th>
          <th scope="col">Spend</th>
          <th scope="col">Tokens</th>
        </tr>
      </thead>
      <tbody>
        {summary.projects.map((project) => (
          <tr key={project.folder} data-folder={project.folder}>
            <th scope="row">
              <span class="usage-project">{project.name}</span>
              <span class="muted small usage-folder" title={project.folder}>
                {project.folder}
              </span>
            </th>
            <td class="usage-cost">
              <Spend costUsd={project.costUsd} unpricedTokens={project.unpricedTokens ?? 0} tokens={tokensOf(project.totals)} />
            </td>
            <td class="usage-tokens">{formatTokens(tokensOf(project.totals))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
