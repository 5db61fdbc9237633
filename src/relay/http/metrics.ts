// The relay's counters for its owner (`GET /api/relay/metrics`, shape in src/contracts/metrics.ts):
// what is connected now, the last 24 hours hour by hour, and totals. Anyone else: 403 `forbidden`.
import { Hono } from 'hono';
import { ProtocolError, type RelayMetrics } from '../../contracts/index.ts';
import { HOUR_MS, RECENT_HOURS, hourOf, readMetrics } from '../db/metrics.ts';
import { isRelayOwner } from '../db/users.ts';
import type { Env } from '../env.ts';
import { FLUSH_EVERY_MS } from '../metrics/meter.ts';
import { requireUser, type SignedIn } from './identity.ts';

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const metricsApi = new Hono<{ Bindings: Env; Variables: { user: SignedIn } }>()
  .use('*', requireUser)

  .get('/', async (c) => {
    if (!(await isRelayOwner(c.env.DB, c.get('user').userId))) throw new ProtocolError('forbidden', "Only the relay's owner reads its counters");
    const now = Date.now();
    const stored = await readMetrics(c.env.DB, now);
    const first = hourOf(now) - (RECENT_HOURS - 1) * HOUR_MS;
    const hours: RelayMetrics['hours'] = Array.from({ length: RECENT_HOURS }, (_, i) => ({ hour: first + i * HOUR_MS, counts: {} }));
    for (const { hour, name, value } of stored.recent) {
      const slot = hours[(hour - first) / HOUR_MS];
      if (slot) slot.counts[name] = value;
    }
    const answer: RelayMetrics = {
      at: now,
      connected: { hosts: stored.connected.host, lobbySockets: stored.connected.lobby, chatSockets: stored.connected.chat },
      hours,
      totals: Object.fromEntries(stored.totals.map(({ name, value }) => [name, value])),
      analyticsEngine: c.env.METRICS !== undefined,
      flushEveryMs: FLUSH_EVERY_MS,
    };
    return c.json(answer);
  });
