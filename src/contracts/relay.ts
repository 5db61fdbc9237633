// What the relay adds to the client wire. The agent-contracts tables are spoken unchanged; these are
// extra events a client may ignore, since a plain agent-contracts host has no notion of a relay.
import { z } from 'zod';
import { ErrorSchema } from './envelope.ts';

/** A host's link to the relay went up or down. Sent on the lobby and on every chat socket of that host. */
export const HostPresenceEventSchema = z.object({
  hostId: z.string().min(1),
  online: z.boolean(),
  /** When the relay saw the change (ms). */
  at: z.number(),
});
export type HostPresenceEvent = z.output<typeof HostPresenceEventSchema>;

/**
 * A send answered `{queued: true}` will not run after all: one the relay kept while the host was
 * offline (shown in `info.queue` as `relay:<request id>`) was refused by the host when it was finally
 * delivered, or by the relay because its sender may no longer send in the chat; or one the host
 * queued was taken back by the relay because its sender lost that right before it ran. Sent to
 * attached clients, and to the sender when they next attach.
 */
export const ChatSendRefusedEventSchema = z.object({
  chatId: z.string().min(1),
  /** The queue entry's id: `relay:<request id>` for a kept send, else the host's own queue id. */
  messageId: z.string().min(1),
  /** The request id the send was made with. */
  requestId: z.string().min(1),
  error: ErrorSchema,
});
export type ChatSendRefusedEvent = z.output<typeof ChatSendRefusedEventSchema>;

/**
 * A client socket's heartbeat: the client sends the text `ping` and the relay answers `pong` without
 * waking its object. A browser learns of a half-open socket (a phone that changed networks) only this
 * way: a client that hears nothing for `silenceMs` drops the socket and reconnects.
 */
export const CLIENT_HEARTBEAT = {
  ping: 'ping',
  pong: 'pong',
  intervalMs: 15_000,
  silenceMs: 40_000,
} as const;

/** The queue id of a send the relay keeps for an offline host. */
export const KEPT_SEND_PREFIX = 'relay:';

export const TETHER_EVENT_SCHEMAS = {
  'host.presence': HostPresenceEventSchema,
  'chat.sendRefused': ChatSendRefusedEventSchema,
} as const;
export type TetherEventName = keyof typeof TETHER_EVENT_SCHEMAS;
