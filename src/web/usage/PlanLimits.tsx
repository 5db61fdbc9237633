// "How much is left on my plan": each account's windows as its CLI last reported them (used, left,
// when it resets), when that was, and why a CLI has nothing to say (not signed in to a plan, not
// installed, failed). A window without a reading is unknown, never shown as room left.
import type { UsageLimitsProvider, UsageLimitsSnapshot, UsageWindow } from '../../contracts/index.ts';
import { ago } from '../hosts/time.ts';
import { momentText, percent } from './format.ts';

const PROVIDER_NAME = { claude: 'Claude Code', codex: 'Codex' } as const;
const UNAVAILABLE = {
  'not-installed': 'The CLI is not installed on this host.',
  'no-subscription': 'This account has no plan with limits to read (an API key pays per use).',
  failed: 'Reading the plan failed.',
} as const;

function WindowRow({ window }: { window: UsageWindow }) {
  const left = 1 - window.used;
  return (
    <li class="plan-window" data-window={window.id}>
      <div class="row">
        <span class="grow plan-window-label">{window.label}</span>
        <span class="plan-window-left">
          <strong>{percent(left)} left</strong> <span class="muted">({percent(window.used)} used)</span>
        </span>
      </div>
      <meter min={0} max={1} value={window.used} low={0.7} high={0.9} optimum={0} aria-label={`${window.label}: ${percent(window.used)} used`} />
      <p class="muted small plan-window-reset">{window.resetsAt !== null ? `Resets ${momentText(window.resetsAt)}` : 'The CLI named no reset time'}</p>
    </li>
  );
}

function ProviderLimits({ provider }: { provider: UsageLimitsProvider }) {
  const name = provider.account?.label ?? PROVIDER_NAME[provider.kind];
  return (
    <li class="card plan" data-provider={provider.kind} data-account={provider.account?.id}>
      <h3>
        {name}
        {provider.plan ? <span class="muted small"> · {provider.plan} plan</span> : null}
      </h3>
      {provider.windows.length > 0 ? (
        <ul class="plan-windows">
          {provider.windows.map((w) => (
            <WindowRow key={w.id} window={w} />
          ))}
        </ul>
      ) : (
        <p class="muted small">No window reported yet.</p>
      )}
      {provider.cost ? <p class="small">This session so far: ${provider.cost.sessionUsd.toFixed(2)}</p> : null}
      {provider.unavailable ? (
        <p class="small plan-unavailable" role="note">
          {UNAVAILABLE[provider.unavailable.reason]}
          {provider.unavailable.message ? ` ${provider.unavailable.message}` : ''}
          {provider.windows.length > 0 ? ' The windows above are the last the CLI reported.' : ''}
        </p>
      ) : null}
      <p class="muted small plan-checked" title={new Date(provider.checkedAt).toLocaleString()}>
        {provider.source === 'probe' ? 'Asked' : 'Reported by the CLI'} {ago(provider.checkedAt)}
      </p>
    </li>
  );
}

export function PlanLimits({
  limits,
  canRefresh,
  refreshing,
  error,
  onRefresh,
}: {
  limits: UsageLimitsSnapshot | null;
  canRefresh: boolean;
  refreshing: boolean;
  error: string | null;
  onRefresh: () => void;
}) {
  return (
    <section class="stack" aria-labelledby="plan-title">
      <div class="row">
        <h2 id="plan-title" class="grow">
          What is left on your plan
        </h2>
        {canRefresh ? (
          <button type="button" disabled={refreshing} onClick={onRefresh}>
            {refreshing ? 'Checking…' : 'Check again'}
          </button>
        ) : null}
      </div>
      {error ? (
        <p class="notice error" role="alert">
          {error}
        </p>
      ) : null}
      {!limits ? (
        <p class="loading" aria-busy="true">
          Loading…
        </p>
      ) : limits.providers.length === 0 ? (
        <p class="muted small">
          No CLI on this host has reported a plan limit yet. Claude Code reports them for a claude.ai sign-in, Codex for a ChatGPT sign-in, as their turns run.
        </p>
      ) : (
        <ul class="list plans">
          {limits.providers.map((p) => (
            <ProviderLimits key={`${p.kind}/${p.account?.id ?? ''}`} provider={p} />
          ))}
        </ul>
      )}
    </section>
  );
}
