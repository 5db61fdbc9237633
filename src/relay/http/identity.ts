// Who is calling an /api route: a person with a live session, proved by `Authorization: Bearer <access
// token>`. Also the caller's IP (from Cloudflare's header; none locally) and the origins of the web app.
import type { Context, MiddlewareHandler } from 'hono';
import { requireHostRole } from '../auth/access.ts';
import { sessionIsLive } from '../auth/sessions.ts';
import { bearerOf, verifyAccessToken } from '../auth/tokens.ts';
import type { Env } from '../env.ts';

export interface SignedIn {
  userId: string;
  sessionId: string;
}

/** Answers 401 `unauthorized` unless the request carries an access token of a live session; sets `user`. */
export const requireUser: MiddlewareHandler<{ Bindings: Env; Variables: { user: SignedIn } }> = async (c, next) => {
  const user = await signedInUser(c.env, c.req.raw);
  if (!user) return c.json({ code: 'unauthorized', message: 'Sign in first: a valid access token is required' }, 401);
  c.set('user', user);
  await next();
};

/**
 * After requireUser: answers unless the caller holds `owner` on the whole host of the route's `:id`.
 * A route puts it before its body or query check, so a caller without the role learns nothing of their shape.
 */
export const requireHostOwner: MiddlewareHandler<{ Bindings: Env; Variables: { user: SignedIn } }> = async (c, next) => {
  await requireHostRole(c.env.DB, c.get('user'), c.req.param('id')!, 'owner');
  await next();
};

/** The person behind a request's bearer token when the token is valid and its session lives; else null. */
export async function signedInUser(env: Env, request: Request): Promise<SignedIn | null> {
  const token = bearerOf(request);
  if (!token) return null;
  try {
    const user = await verifyAccessToken(env, token);
    return (await sessionIsLive(env.DB, user.userId, user.sessionId)) ? user : null;
  } catch {
    return null;
  }
}

/** The caller's IP as Cloudflare saw it; null where no edge sets it (wrangler dev, tests). */
export function clientIp(c: Context): string | null {
  return c.req.header('CF-Connecting-IP') ?? null;
}

/** The web app's origins from `APP_ORIGINS` (comma- or space-separated). */
export function appOrigins(env: Env): string[] {
  return (env.APP_ORIGINS ?? '')
    .split(/[\s,]+/)
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter(Boolean);
}
