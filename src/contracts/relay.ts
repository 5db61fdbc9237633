// What the relay adds to the client wire. The agent-contracts tables are spoken unchanged; these are
// extra events a client may ignore, since a plain agent-contracts host has no notion of a relay.
import { z } from 'zod';

/** A host's link to the relay went up or down. Sent on the lobby and on every chat socket of that host. */
export const HostPresenceEventSchema = z.object({
  hostId: z.string().min(1),
  online: z.boolean(),
  /** When the relay saw the change (ms). */
  at: z.number(),
});
export type HostPresenceEvent = z.output<typeof HostPresenceEventSchema>;

export const TETHER_EVENT_SCHEMAS = {
  'host.presence': HostPresenceEventSchema,
} as const;
export type TetherEventName = keyof typeof TETHER_EVENT_SCHEMAS;
