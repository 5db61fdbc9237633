// The relay's counters, for its owner (`GET /api/relay/metrics`): what is connected now, and what
// happened, per hour over the last day and in total. The relay counts; the web app's Settings shows it.
import { z } from 'zod';

/**
 * The counters' names. Errors are counted by the code answered (`errors.bad-request`,
 * `errors.host-timeout`, …) and by the relay's own failures named below; any other name may appear
 * too (a newer relay counts more), so readers show what they do not know as it is.
 */
export const RELAY_COUNTERS = {
  /** Event frames hosts sent the relay: every one, resends after a reconnect included. */
  eventsIn: 'events.in',
  /** Event frames the relay sent to client sockets: one event fanned out to three sockets counts three. */
  eventsDelivered: 'events.delivered',
  /** Frames from a host the relay dropped: not JSON, not a frame it knows, an event it cannot route or read. */
  hostFramesDropped: 'errors.host-frame-dropped',
  /** Batches of host events a chat or lobby failed to store (not acknowledged: the host sends them again). */
  ingestFailed: 'errors.ingest-failed',
} as const;

/** `errors.<code>`: each error the relay answered, by its code (ProtocolError codes, `internal` for failures). */
export const ERROR_COUNTER_PREFIX = 'errors.';

export function errorCounter(code: string): string {
  return `${ERROR_COUNTER_PREFIX}${code}`;
}

/** Counter name → value; a name absent counted nothing. */
const CountsSchema = z.record(z.string(), z.number().int().nonnegative());

export const RelayMetricsSchema = z.object({
  /** When the relay read them (ms). */
  at: z.number(),
  /** Sockets open now, as the Durable Objects last wrote them (within seconds of a change). */
  connected: z.object({
    /** Hosts whose link is up (said hello and not silent). */
    hosts: z.number().int().nonnegative(),
    /** Client sockets on hosts' lobbies: about one per app or SDK client per host it shows. */
    lobbySockets: z.number().int().nonnegative(),
    /** Client sockets on chats: one per open chat view. */
    chatSockets: z.number().int().nonnegative(),
  }),
  /** The last 24 hours, oldest first, every hour present (the current one last, still counting). */
  hours: z.array(
    z.object({
      /** The hour's start (ms). */
      hour: z.number(),
      counts: CountsSchema,
    }),
  ),
  /** Everything counted since the relay began counting. */
  totals: CountsSchema,
  /** Whether the counters also go to Workers Analytics Engine (the `METRICS` binding is set). */
  analyticsEngine: z.boolean(),
  /** How often each Durable Object writes what it counted (ms): the newest counts may lag by this much. */
  flushEveryMs: z.number().int().positive(),
});
export type RelayMetrics = z.output<typeof RelayMetricsSchema>;
