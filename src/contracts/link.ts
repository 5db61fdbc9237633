// The link between a Tether host and the relay: Tether's own composition around the agent-contracts
// frames, the way the protocol asks an app with a wire of its own to compose it.
//
// Over the link the relay is ONE client of the host, attached to every chat for good: the host sends
// the events of all its chats, each `chat.event` carrying the host's own per-chat `seq`. Everything
// the host sends that must not be lost (events) carries an outbox position `n`; the relay acknowledges
// `n` once it has stored what the event changed, and the host forgets it only then. On reconnect the
// host sends every unacknowledged frame again, in order; the relay drops what it already holds by the
// chat's `seq`, so an event is applied once however often it crosses.
//
// A host → relay message may carry several frames as a JSON array, in order: each message costs the
// relay a delivery into its object, so a host sends what one tick produced together.
//
// Relay → host: agent-contracts Request frames (with `by`, the user the relay acts for, for the host's
// own records), `{ link: 'ack', n }` and `{ link: 'trust', all, statements }` (signed trust statements). Host → relay: Reply frames, Event frames with `n`, and
// `{ link: 'hello' }` right after connecting. Heartbeats are the plain text frames `ping`/`pong`, which
// the relay answers without waking its object.
import { z } from 'zod';
import { EventSchema, RequestSchema } from './envelope.ts';
import { SignedTrustStatementSchema, TRUST_STATEMENTS_PER_FRAME } from './trust.ts';

export const LINK_HEARTBEAT = {
  ping: 'ping',
  pong: 'pong',
  /** How often the host pings. */
  intervalMs: 2_000,
  /** Silence after which the relay takes the host for gone; with the check period this keeps presence within 5 s. */
  silenceMs: 3_000,
} as const;

/** The largest frame either side of the link accepts (the agent-contracts limits assume a 16 MiB transport frame). */
export const LINK_MAX_FRAME_BYTES = 16 * 1024 * 1024 + 64 * 1024;

/**
 * The UTF-8 size of a text frame, as it crossed the socket: what a limit stated in bytes counts, not
 * `length` (UTF-16 units: a frame of `é` is twice as many bytes as units). Counted without encoding
 * it, and stops once past `stopAbove` (answering a number above it).
 */
export function utf8Bytes(text: string, stopAbove = Infinity): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3; // the rest of the plane, and a lone surrogate (sent as U+FFFD, 3 bytes)
    if (bytes > stopAbove) return bytes;
  }
  return bytes;
}

/**
 * Whether a frame is over `limit` bytes. A text frame's length settles most: every unit is at least
 * one byte and at most three, so only a frame between a third of the limit and the limit in units has
 * its characters counted (once, without encoding, stopping past the limit).
 */
export function overFrameLimit(message: string | ArrayBuffer, limit: number): boolean {
  if (typeof message !== 'string') return message.byteLength > limit;
  if (message.length > limit) return true;
  if (message.length * 3 <= limit) return false;
  return utf8Bytes(message, limit) > limit;
}

/** How much a host joins into one array message before it starts the next. */
export const LINK_BATCH_BYTES = 1024 * 1024;

/**
 * The id a request from a person carries on the link: their user id and the id their client chose,
 * so two people's ids never meet in the host's journal. The host follows a signed request's id
 * through this (the device signs the id it chose; the host knows the device's person).
 */
export function linkRequestId(userId: string, requestId: string): string {
  return `${userId}/${requestId}`;
}

export const LinkRequestSchema = RequestSchema.extend({
  /** The relay user this request acts for; the host records it, it grants nothing. */
  by: z.string().min(1).optional(),
  /**
   * The sender's device signature (RequestSignatureSchema, src/contracts/signing.ts), carried beside
   * the frame as the client sent it; the host checks it, the relay only passes it on.
   */
  signature: z.unknown().optional(),
});
export type LinkRequest = z.output<typeof LinkRequestSchema>;

export const LinkEventFrameSchema = EventSchema.extend({
  /** Outbox position; present on every frame the host keeps until the relay acknowledges it. */
  n: z.int().positive().optional(),
});
export type LinkEventFrame = z.output<typeof LinkEventFrameSchema>;

export const LinkAckSchema = z.object({
  link: z.literal('ack'),
  n: z.array(z.int().positive()).min(1),
});
export type LinkAck = z.output<typeof LinkAckSchema>;

export const LinkHelloSchema = z.object({
  link: z.literal('hello'),
  /** Host software version, for the relay's records and `tether host status`. */
  version: z.string(),
  /** Unacknowledged frames the host is about to send again. */
  pending: z.int().nonnegative(),
  /**
   * The request types this host carries out without a device signature: `all` when it does not
   * require signatures, else those its config lets through (often none). The relay reads it only to
   * spare itself requests of its own the host would refuse (its take-back of a queued send); it
   * grants nothing, and a relay that ignores it is refused by the host as before. Absent (a host
   * older than this field): taken as `all`.
   */
  unsigned: z.union([z.literal('all'), z.array(z.string().min(1).max(100)).max(200)]).optional(),
});
export type LinkHello = z.output<typeof LinkHelloSchema>;

/**
 * Relay → host: signed trust statements (grants, device vouches, revocations; src/contracts/trust.ts)
 * for the host's own trust book. `all`: these are every current statement about this host, sent when
 * its link connects (in several frames when there are many, each with `all`); otherwise new ones, as
 * they arrive. The host checks each itself; the relay's word adds nothing to them.
 */
export const LinkTrustSchema = z.object({
  link: z.literal('trust'),
  all: z.boolean(),
  statements: z.array(SignedTrustStatementSchema).min(1).max(TRUST_STATEMENTS_PER_FRAME),
});
export type LinkTrust = z.output<typeof LinkTrustSchema>;

/** Relay → host control frames (anything with a `link` key); everything else is a Request. */
export const RelayControlFrameSchema = z.discriminatedUnion('link', [LinkAckSchema, LinkTrustSchema]);
/** Host → relay control frames. */
export const HostControlFrameSchema = z.discriminatedUnion('link', [LinkHelloSchema]);

// ---------------------------------------------------------------------------
// Tether's own requests on the link, beside the agent-contracts table (a host answers them itself).

/**
 * `attachment.read`: the bytes of one stored attachment of one chat, for the relay's attachment route.
 * A host keeps uploads under the chat's attachment folder by content hash (40 hex digits and the
 * upload's short extension), so the file is named by that alone: nothing else can be read this way.
 */
export const LINK_ATTACHMENT_READ = 'attachment.read';

/** A stored attachment's file name: its content hash and an optional short lower-case extension. */
export const ATTACHMENT_FILE_NAME = /^[0-9a-f]{40}(\.[a-z0-9]{1,10})?$/;

export const AttachmentReadPayloadSchema = z.object({
  chatId: z.string().min(1),
  file: z.string().regex(ATTACHMENT_FILE_NAME, 'An attachment file is its content hash and extension'),
});
export type AttachmentReadPayload = z.output<typeof AttachmentReadPayloadSchema>;

export const AttachmentReadResultSchema = z.object({
  /** The file's bytes, base64. */
  data: z.string(),
});
export type AttachmentReadResult = z.output<typeof AttachmentReadResultSchema>;

/** The stored file name of an attachment from its host path (either separator), or null when it is not one the store wrote. */
export function attachmentFileName(hostPath: string): string | null {
  const name = hostPath.slice(Math.max(hostPath.lastIndexOf('/'), hostPath.lastIndexOf('\\')) + 1);
  return ATTACHMENT_FILE_NAME.test(name) ? name : null;
}
