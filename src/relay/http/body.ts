// A JSON request body checked against its zod schema. Anything else is a 400 `bad-request` whose
// message names the first field at fault, so a client learns what to fix without reading our code.
import type { Context } from 'hono';
import type { z } from 'zod';
import { ProtocolError } from '../../contracts/index.ts';

/** The parsed body; throws ProtocolError('bad-request') for a body that is not JSON or not the schema's shape. */
export async function parseBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new ProtocolError('bad-request', 'The body must be JSON');
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  throw new ProtocolError('bad-request', `${field}: ${issue.message}`);
}
