// Settings' Relay section, for the relay's owner: whether the deployment can serve (GET /api/health:
// version, commit, D1, migrations, key secrets) and its counters (GET /api/relay/metrics): what is connected now,
// the last 24 hours and the totals.
import { useEffect, useState } from 'preact/hooks';
import { ERROR_COUNTER_PREFIX, HealthSchema, RELAY_COUNTERS, type Health, type RelayMetrics } from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { api } from '../app/session.ts';
import './relay.css';

const LABELS: Record<string, string> = {
  [RELAY_COUNTERS.eventsIn]: 'Events from hosts',
  [RELAY_COUNTERS.eventsDelivered]: 'Events delivered to clients',
  [RELAY_COUNTERS.hostFramesDropped]: 'Host frames dropped',
  [RELAY_COUNTERS.ingestFailed]: 'Host events not stored (sent again)',
};

/** A counter's name as a person reads it: errors answered show their code. */
function labelOf(name: string): string {
  return LABELS[name] ?? (name.startsWith(ERROR_COUNTER_PREFIX) ? `Errors answered: ${name.slice(ERROR_COUNTER_PREFIX.length)}` : name);
}

/** Health answers 503 with the same body when something is wrong: read either way. */
async function readHealth(): Promise<Health> {
  const res = await fetch('/api/health');
  return HealthSchema.parse(await res.json());
}

export function RelayPanel() {
  const [health, setHealth] = useState<Health | null>(null);
  const [metrics, setMetrics] = useState<RelayMetrics | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reload = async () => {
    setBusy(true);
    setError(null);
    try {
      const [h, m] = await Promise.all([readHealth(), api.relayMetrics()]);
      setHealth(h);
      setMetrics(m);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    void reload();
  }, []);
  return (
    <section class="card stack" aria-labelledby="relay-title">
      <h2 id="relay-title">Relay</h2>
      {!health && !metrics && !error && <p class="loading">Loading…</p>}
      {health && <HealthLine health={health} />}
      {metrics && <Counters metrics={metrics} />}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      <div>
        <button type="button" disabled={busy} onClick={() => void reload()}>
          Refresh
        </button>
      </div>
    </section>
  );
}

const SIGNING_TEXT = { ok: 'sign-in keys ok', missing: 'sign-in keys not set', invalid: 'sign-in keys do not parse' } as const;
const PUSH_TEXT = { ok: 'push on', off: 'push off (no keys set)', invalid: 'push keys do not parse' } as const;

/** What keeps the relay from serving, first things first; null when the answer names nothing. */
function problemOf({ db, migrations, keys }: Health): string | null {
  if (db === 'unreachable') return 'D1 does not answer';
  if (migrations.pending?.length) return `migrations not applied: ${migrations.pending.join(', ')}`;
  if (keys.signing !== 'ok') return `${SIGNING_TEXT[keys.signing]} (TETHER_SIGNING_KEYS)`;
  if (keys.push === 'invalid') return `${PUSH_TEXT.invalid} (TETHER_VAPID_KEYS)`;
  return null;
}

function HealthLine({ health }: { health: Health }) {
  const { migrations, keys } = health;
  const problem = problemOf(health);
  return (
    <div class="stack relay-health">
      <p class={`notice ${health.ok ? 'ok' : 'error'}`} data-health={health.ok ? 'ok' : 'failing'}>
        {health.ok ? 'Healthy' : `Not healthy: ${problem ?? "see the relay's logs"}`}
      </p>
      <p class="small muted">
        Version {health.version}
        {health.commit ? ` (${health.commit.slice(0, 12)})` : ''} · D1 {health.db === 'ok' ? 'answers' : 'unreachable'}
        {' · '}migrations up to {migrations.applied ?? 'none'}
        {migrations.applied !== migrations.expected ? ` (this build: ${migrations.expected})` : ''}
        {' · '}
        <span data-keys={`${keys.signing} ${keys.push}`}>
          {SIGNING_TEXT[keys.signing]}, {PUSH_TEXT[keys.push]}
        </span>
      </p>
    </div>
  );
}

function Counters({ metrics }: { metrics: RelayMetrics }) {
  const { connected, hours, totals } = metrics;
  const day: Record<string, number> = {};
  for (const { counts } of hours) for (const [name, n] of Object.entries(counts)) day[name] = (day[name] ?? 0) + n;
  const events = [RELAY_COUNTERS.eventsIn, RELAY_COUNTERS.eventsDelivered];
  const others = Object.keys(totals)
    .filter((name) => !events.includes(name as never))
    .sort((a, b) => (totals[b] ?? 0) - (totals[a] ?? 0));
  const delivered = hours.map((hour) => hour.counts[RELAY_COUNTERS.eventsDelivered] ?? 0);
  const peak = Math.max(1, ...delivered);
  return (
    <div class="stack">
      <dl class="relay-now" aria-label="Connected now">
        <div>
          <dt>Hosts connected</dt>
          <dd data-gauge="hosts">{connected.hosts}</dd>
        </div>
        <div>
          <dt>Client connections</dt>
          <dd data-gauge="lobby">{connected.lobbySockets}</dd>
        </div>
        <div>
          <dt>Open chats</dt>
          <dd data-gauge="chat">{connected.chatSockets}</dd>
        </div>
      </dl>
      <table class="relay-counters">
        <thead>
          <tr>
            <th scope="col">Counter</th>
            <th scope="col">Last 24 h</th>
            <th scope="col">Total</th>
          </tr>
        </thead>
        <tbody>
          {[...events, ...others].map((name) => (
            <tr key={name} data-counter={name}>
              <th scope="row">{labelOf(name)}</th>
              <td>{(day[name] ?? 0).toLocaleString()}</td>
              <td>{(totals[name] ?? 0).toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="relay-hours" role="img" aria-label={`Events delivered per hour, the last 24 hours: ${delivered.join(', ')}`}>
        {delivered.map((n, i) => (
          <span
            key={hours[i]!.hour}
            style={{ height: `${Math.round((n / peak) * 100)}%` }}
            title={`${new Date(hours[i]!.hour).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}: ${n}`}
          />
        ))}
      </div>
      <p class="small muted">
        Each part of the relay writes what it counted about every {Math.round(metrics.flushEveryMs / 1000)} s, so the newest counts may lag.
        {metrics.analyticsEngine ? ' They also go to Workers Analytics Engine.' : ''}
      </p>
    </div>
  );
}
