// A request's JSON body (and query) checked against its zod schema from src/contracts, in the route's
// chain with @hono/zod-validator, so the route's input type is the schema's and the SDK's `hc` client
// reads it from the app's type (client/api.ts). Anything else is a 400 `bad-request` whose message
// names the first field at fault, so a client learns what to fix without reading our code.
import { zValidator } from '@hono/zod-validator';
import type { Context, Env, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { ProtocolError } from '../../contracts/index.ts';

interface Checked {
  success: boolean;
  data?: unknown;
  error?: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> };
}

/** A failed check as `bad-request` naming the first field at fault, answered `{ code, message }` by the app's onError. */
function refuse(result: Checked, whole: string): void {
  if (result.success) return;
  const issue = result.error!.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : whole;
  throw new ProtocolError('bad-request', `${field}: ${issue.message}`);
}

const JSON_MEDIA = /^application\/([\w.-]+\+)?json$/i;

/** The body parsed as JSON (hono keeps its text, so the validator reads it again for free). */
async function readJson(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new ProtocolError('bad-request', 'The body must be JSON');
  }
}

/**
 * The body as the schema's shape, for `c.req.valid('json')`. It is read as JSON whatever its
 * Content-Type says, as before the validator: hono's alone would check `{}` in place of a body sent
 * as text/plain or form data (`curl -d` sends that). A body that is not JSON has its own message.
 */
export function jsonBody<S extends z.ZodType>(schema: S) {
  const validated = zValidator('json', schema, (result) => refuse(result, 'body'));
  const middleware: MiddlewareHandler = async (c, next) => {
    const raw = await readJson(c);
    if (JSON_MEDIA.test(c.req.header('content-type')?.split(';')[0]?.trim() ?? '')) return validated(c, next);
    const parsed = await schema.safeParseAsync(raw);
    refuse(parsed, 'body');
    c.req.addValidatedData('json', parsed.data as object);
    await next();
  };
  return middleware as unknown as typeof validated;
}

/**
 * A body that may be left out (a DELETE that carries a signed revocation only from a device that
 * signs): checked when the request says it is JSON, else the route sees `{}`.
 */
export function optionalJsonBody<S extends z.ZodType>(schema: S) {
  const checked = jsonBody(schema) as unknown as MiddlewareHandler;
  const middleware: MiddlewareHandler = async (c, next) => {
    if (c.req.header('content-type')?.includes('json')) return checked(c, next);
    c.req.addValidatedData('json', {});
    await next();
  };
  return middleware as unknown as MiddlewareHandler<Env, string, { in: { json?: z.input<S> }; out: { json: Partial<z.output<S>> } }>;
}

/** The query as the schema's shape, for `c.req.valid('query')`; a bad one is `bad-request` naming the field. */
export function queryOf<S extends z.ZodType>(schema: S) {
  return zValidator('query', schema, (result) => refuse(result, 'query'));
}

/** The parsed body, for a route whose body is checked only on one of its paths (an invitation accepted signed out). */
export async function parseBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const parsed = schema.safeParse(await readJson(c));
  refuse(parsed, 'body');
  return parsed.data as z.infer<S>;
}
