// The usage page: for one host (the person picks among those they may read), what its Claude Code
// and Codex accounts spent and used over the last days (by day, model and project folder, from the
// CLIs' own session files, which the host reads; priced from the table it ships) and what is left
// of each plan's windows and when they reset. It follows the host while open (usage-feed.ts).
import { useEffect } from 'preact/hooks';
import { navigate } from '../app/router.ts';
import { hosts, hostsError, isOnline, loadHosts } from '../hosts/host-list.ts';
import { ago } from '../hosts/time.ts';
import { PlanLimits } from './PlanLimits.tsx';
import { ByDay, ByModel, ByProject, UsageTotalsCard } from './SpendTables.tsx';
import { momentText } from './format.ts';
import { useUsageFeed } from './usage-feed.ts';
import type { UsageSummaryResult } from '../../contracts/index.ts';
import './usage.css';

const PERIODS = [7, 30, 90] as const;

function Sources({ summary }: { summary: UsageSummaryResult }) {
  const { scan, pricing, roots } = summary;
  return (
    <details class="usage-sources">
      <summary>Where these figures come from</summary>
      <p class="small">
        Read from the CLIs' own session files on the host: {scan.files} {scan.files === 1 ? 'file' : 'files'}, last read {ago(scan.at)}
        {scan.running ? ' (reading now)' : ''}
        {scan.failed ? '; some could not be read' : ''}.
      </p>
      <ul class="small usage-roots">
        {roots.map((root) => (
          <li key={`${root.provider}:${root.path}`} data-status={root.status}>
            <code>{root.path}</code> ({root.provider === 'claude' ? 'Claude Code' : 'Codex'}):{' '}
            {root.status === 'ok' ? 'read' : root.status === 'missing' ? 'not there (nothing used yet)' : `failed${root.message ? `: ${root.message}` : ''}`}
          </li>
        ))}
      </ul>
      <p class="small usage-pricing">
        {pricing.source === 'none'
          ? 'No prices: costs are unknown.'
          : `Costs at list prices from ${pricing.source === 'snapshot' ? 'the table the host ships' : 'LiteLLM'}${pricing.fetchedAt !== null ? ` (prices of ${momentText(pricing.fetchedAt).replace(/,? \d{2}:\d{2}.*$/, '')})` : ''}, ${pricing.models} models; a plan's subscription is not billed this way.`}
      </p>
    </details>
  );
}

function HostUsage({ hostId, days }: { hostId: string; days: number }) {
  const feed = useUsageFeed(hostId, days);
  const { summary } = feed;
  return (
    <>
      <PlanLimits limits={feed.limits} canRefresh refreshing={feed.refreshing} error={feed.limitsError} onRefresh={feed.refreshLimits} />
      <section class="stack" aria-labelledby="spend-title">
        <div class="row">
          <h2 id="spend-title" class="grow">
            Spend and tokens
          </h2>
          <button type="button" onClick={feed.reload}>
            Read again
          </button>
        </div>
        {feed.error ? (
          <p class="notice error" role="alert">
            {feed.error}
          </p>
        ) : null}
        {!summary && !feed.error ? (
          <p class="loading" aria-busy="true">
            Reading the host's session files…
          </p>
        ) : null}
        {summary ? (
          <>
            <UsageTotalsCard summary={summary} />
            <h3>By day</h3>
            <ByDay summary={summary} />
            <h3>By model</h3>
            <ByModel summary={summary} />
            <h3>By project</h3>
            <ByProject summary={summary} />
            <Sources summary={summary} />
          </>
        ) : null}
      </section>
    </>
  );
}

export function UsagePage({ query }: { query: URLSearchParams }) {
  useEffect(() => {
    void loadHosts();
  }, []);
  // The summary names the machine's project folders: read by its operators and owner (usage.summary's role).
  const readable = (hosts.value ?? []).filter((h) => h.role === 'owner' || h.role === 'operator');
  const days = PERIODS.find((d) => String(d) === query.get('days')) ?? 30;
  const picked = readable.find((h) => h.id === query.get('host')) ?? readable.find((h) => isOnline(h)) ?? readable[0];
  const go = (host: string, period: number) => navigate(`/usage?host=${encodeURIComponent(host)}&days=${period}`, { replace: true });
  return (
    <section class="page stack usage-page" aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      {hostsError.value ? (
        <p class="notice error" role="alert">
          {hostsError.value}
        </p>
      ) : null}
      {!hosts.value && !hostsError.value ? (
        <p class="loading" aria-busy="true">
          Loading hosts…
        </p>
      ) : null}
      {hosts.value && readable.length === 0 ? (
        <p class="muted">
          No host you may read the usage of (its operators and owner may). Pair one on the <a href="/hosts">Hosts</a> page.
        </p>
      ) : null}
      {picked ? (
        <>
          <div class="row usage-controls">
            <label class="inline">
              Host{' '}
              <select value={picked.id} onChange={(e) => go(e.currentTarget.value, days)}>
                {readable.map((h) => (
                  <option key={h.id} value={h.id}>
                    {h.name}
                    {isOnline(h) ? '' : ' (offline)'}
                  </option>
                ))}
              </select>
            </label>
            <label class="inline">
              Period{' '}
              <select value={String(days)} onChange={(e) => go(picked.id, Number(e.currentTarget.value))}>
                {PERIODS.map((d) => (
                  <option key={d} value={String(d)}>
                    Last {d} days
                  </option>
                ))}
              </select>
            </label>
          </div>
          {isOnline(picked) ? (
            <HostUsage key={`${picked.id}/${days}`} hostId={picked.id} days={days} />
          ) : (
            <p class="notice" role="status">
              {picked.name} is offline. Its usage is read from the session files on that machine, so it shows once the host is back.
            </p>
          )}
        </>
      ) : null}
    </section>
  );
}
