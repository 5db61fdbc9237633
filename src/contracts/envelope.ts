import { z } from 'zod';

// The envelope only: whether a frame is a request, a reply or an event. What a
// payload or result holds is checked afterwards against the protocol tables,
// so an unknown request name still parses here and the host refuses it later.

// `payload` and `result` may be anything, including absent.
const anything = z.unknown().optional();

export const RequestSchema = z.object({
  // Correlates the reply; not a permission and not a chat id.
  id: z.string().min(1),
  type: z.string().min(1),
  payload: anything,
});
export type Request = z.output<typeof RequestSchema>;

// Clients branch on `code` and show `message`.
export const ErrorSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
});
export type WireError = z.output<typeof ErrorSchema>;

export const ReplyOkSchema = z.object({
  id: z.string().min(1),
  ok: z.literal(true),
  result: anything,
});
export type ReplyOk = z.output<typeof ReplyOkSchema>;

export const ReplyErrorSchema = z.object({
  // null when the request had no usable id, so no pending request can settle.
  id: z.string().min(1).nullable(),
  ok: z.literal(false),
  error: ErrorSchema,
});
export type ReplyError = z.output<typeof ReplyErrorSchema>;

export const ReplySchema = z.discriminatedUnion('ok', [ReplyOkSchema, ReplyErrorSchema]);
export type Reply = z.output<typeof ReplySchema>;

export const EventSchema = z.object({
  type: z.literal('event'),
  event: z.string().min(1),
  payload: anything,
});
export type EventFrame = z.output<typeof EventSchema>;

// A client tells them apart by `'type' in frame`: events have it, replies have `ok`.
export const ServerFrameSchema = z.union([ReplySchema, EventSchema]);
export type ServerFrame = z.output<typeof ServerFrameSchema>;

export type FrameParse<T> = { ok: true; value: T } | { ok: false; message: string };

function parseFrame<T>(schema: z.ZodType<T>, frame: unknown): FrameParse<T> {
  try {
    const parsed = schema.safeParse(frame);
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: z.prettifyError(parsed.error) };
  } catch {
    // safeParse only throws when the input itself does (a getter or proxy
    // trap); a transport must still get an answer it can send back.
    return { ok: false, message: 'Frame could not be read' };
  }
}

/** Reads a client frame. Never throws: a bad frame becomes a `bad-request` reply, not a crash. */
export function parseRequest(frame: unknown): FrameParse<Request> {
  return parseFrame(RequestSchema, frame);
}

/** Reads a host frame. Never throws. */
export function parseServerFrame(frame: unknown): FrameParse<ServerFrame> {
  return parseFrame(ServerFrameSchema, frame);
}

/**
 * One client's connection, whatever carries it (structured clone over a
 * MessagePort, JSON over a socket). Connecting, closing, timeouts, auth and
 * reconnects belong to the adapter, not here; nor does a frame size limit.
 */
export interface FramePort {
  send(frame: Request | ServerFrame): void;
  /** Frames arrive unparsed; the listener validates them. Returns a release function. */
  onFrame(listener: (frame: unknown) => void): () => void;
}
