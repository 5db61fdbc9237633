// Accounts over HTTP, mounted at /api/auth: claim the owner account (setup secret), sign in with a
// password, refresh, sign out, list and end one's sessions, trade an access token for a socket ticket,
// and the public keys that verify access tokens. `GET /api/me` answers who a token belongs to.
import { Hono, type Context } from 'hono';
import { ProtocolError, RefreshRequestSchema, type Me, type SessionSummary } from '../../contracts/index.ts';
import { SetupSchema, SignInSchema, checkPassword, claimOwner, ownerClaimed, userIdOfEmail } from '../auth/accounts.ts';
import { keySetOf } from '../auth/keys.ts';
import { LIMITS, rateLimit, slowDown } from '../auth/rate-limit.ts';
import { createSession, refreshSession, type SessionMeta } from '../auth/sessions.ts';
import { revokeSessions } from '../objects/revocations.ts';
import { setupSecretMatches } from '../auth/setup-secret.ts';
import { mintSocketTicket } from '../auth/tickets.ts';
import { record } from '../db/audit.ts';
import { liveSessionsOf } from '../db/sessions.ts';
import { findUser } from '../db/users.ts';
import type { Env } from '../env.ts';
import { jsonBody } from './body.ts';
import { clientIp, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

const metaOf = (c: Context): SessionMeta => ({ ip: clientIp(c), userAgent: c.req.header('User-Agent') ?? null });

/** The email a body names, for a rate-limit key (hono keeps the parsed body for the route). */
async function emailOf(c: Context): Promise<string | null> {
  const body = (await c.req.json().catch(() => null)) as { email?: unknown } | null;
  return typeof body?.email === 'string' ? body.email.trim().toLowerCase() : null;
}

// Guessing is refused per IP, and slowed (never refused) per account: a per-email refusal would let
// anyone who knows an address lock its owner out from everywhere by failing on purpose.
const perIp = rateLimit('signin', LIMITS.signin, (c) => {
  const ip = clientIp(c);
  return [ip && `ip:${ip}`];
});
const perAccount = slowDown('signin-account', LIMITS.signinAccount, emailOf);
const signInLimit = [perIp, perAccount] as const;

const perIpTickets = rateLimit('tickets', LIMITS.tickets, (c) => {
  const ip = clientIp(c);
  return [ip && `ip:${ip}`];
});

const perSessionTickets = rateLimit('tickets', LIMITS.tickets, (c) => {
  const ip = clientIp(c);
  return [ip && `ip:${ip}`, `session:${(c.var as { user: SignedIn }).user.sessionId}`];
});

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const accounts = new Hono<App>()

  /** Whether the owner account has been claimed (so `npm start` knows whether to show the setup link). */
  .get('/setup', async (c) => c.json({ claimed: await ownerClaimed(c.env.DB) }))

  .post('/setup', perIp, jsonBody(SetupSchema), async (c) => {
    const body = c.req.valid('json');
    if (!(await setupSecretMatches(c.env, body.secret))) {
      await record(c.env.DB, { actor: null, ip: clientIp(c), action: 'signin-failed', detail: { method: 'setup' } });
      throw new ProtocolError('unauthorized', 'Wrong setup secret');
    }
    const userId = await claimOwner(c.env.DB, body);
    const session = await createSession(c.env, userId, 'setup', metaOf(c));
    await record(c.env.DB, { actor: userId, sessionId: session.sessionId, ip: clientIp(c), action: 'signin', detail: { method: 'setup' } });
    return c.json({ userId, ...session }, 201);
  })

  .post('/signin', ...signInLimit, jsonBody(SignInSchema), async (c) => {
    const body = c.req.valid('json');
    let userId: string;
    try {
      userId = await checkPassword(c.env.DB, body.email, body.password);
    } catch (error) {
      // Never the email itself: people type passwords into the email field.
      await record(c.env.DB, { actor: await userIdOfEmail(c.env.DB, body.email), ip: clientIp(c), action: 'signin-failed', detail: { method: 'password' } });
      throw error;
    }
    const session = await createSession(c.env, userId, 'password', metaOf(c));
    await record(c.env.DB, { actor: userId, sessionId: session.sessionId, ip: clientIp(c), action: 'signin', detail: { method: 'password' } });
    return c.json({ userId, ...session });
  })

  .post('/refresh', perIpTickets, jsonBody(RefreshRequestSchema), async (c) => {
    const { refreshToken } = c.req.valid('json');
    return c.json(await refreshSession(c.env, refreshToken, metaOf(c), revokeSessions));
  })

  .post('/signout', requireUser, async (c) => {
    const { userId, sessionId } = c.get('user');
    await revokeSessions(c.env, { userId, sessionId }, 'signed-out');
    return c.json({ ok: true });
  })

  .get('/sessions', requireUser, async (c) => {
    const { userId, sessionId } = c.get('user');
    const sessions = await liveSessionsOf(c.env.DB, userId, Date.now());
    return c.json({ sessions: sessions.map((s) => ({ ...s, current: s.id === sessionId })) } satisfies { sessions: SessionSummary[] });
  })

  .delete('/sessions/:id', requireUser, async (c) => {
    const { userId } = c.get('user');
    const ended = await revokeSessions(c.env, { userId, sessionId: c.req.param('id') }, 'revoked');
    if (ended.length === 0) return c.json({ code: 'not-found', message: 'No such session of yours, or it has already ended' }, 404);
    return c.json({ ok: true });
  })

  .post('/tickets', requireUser, perSessionTickets, async (c) => {
    return c.json(await mintSocketTicket(c.env, c.get('user')));
  })

  .get('/jwks', async (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.json({ keys: (await keySetOf(c.env)).publicJwks });
  });

export const me = new Hono<App>().get('/', requireUser, async (c) => {
  const { userId, sessionId } = c.get('user');
  const user = await findUser(c.env.DB, userId);
  if (!user) throw new ProtocolError('unauthorized', 'No such user');
  return c.json({ ...user, sessionId } satisfies Me);
});
