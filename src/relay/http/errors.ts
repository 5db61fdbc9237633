// How a coded failure answers over HTTP: the protocol's `{ code, message }` with the status its code
// means. Routes throw ProtocolError; the app's error handler answers with this.
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ProtocolError, WireErrorCode } from '../../contracts/index.ts';

const STATUS: Partial<Record<WireErrorCode, ContentfulStatusCode>> = {
  'bad-request': 400,
  unauthorized: 401,
  forbidden: 403,
  'rate-limited': 429,
  'host-offline': 503,
  'host-timeout': 504,
  'frame-too-large': 413,
  'device-taken': 409,
  'team-changed': 409,
  internal: 500,
};

export function statusOf(code: WireErrorCode): ContentfulStatusCode {
  return STATUS[code] ?? (code.endsWith('-not-found') ? 404 : 400);
}

/** The response for a thrown ProtocolError (with any extra fields it carries, like `retryAfterMs`). */
export function errorResponse(c: Context, error: ProtocolError): Response {
  const extra = 'retryAfterMs' in error && typeof error.retryAfterMs === 'number' ? { retryAfterMs: error.retryAfterMs } : {};
  return c.json({ code: error.code, message: error.message, ...extra }, statusOf(error.code));
}
