// Sign-in through Cloudflare Access and through an OIDC provider, mounted under /api/auth. Each ends
// like a password sign-in: a session (refresh token + access token). Both are off unless configured
// (ACCESS_TEAM_DOMAIN + ACCESS_AUD; OIDC_ISSUER + OIDC_CLIENT_ID), and answer 404 `not-found` then.
import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { LoginCodeExchangeSchema, ProtocolError, type SignInMethods } from '../../contracts/index.ts';
import { accessConfigured, verifyAccessAssertion, userForEmail, type ProviderAccount } from '../auth/external.ts';
import { AppChallengeSchema, OIDC_STATE_SECONDS, finishSignIn, issueLoginCode, oidcConfigured, startSignIn, takeLoginCode, takeState } from '../auth/oidc.ts';
import { LIMITS, rateLimit } from '../auth/rate-limit.ts';
import { createSession } from '../auth/sessions.ts';
import { record } from '../db/audit.ts';
import type { Env } from '../env.ts';
import { jsonBody } from './body.ts';
import { appOrigins, clientIp } from './identity.ts';

const perIp = rateLimit('signin', LIMITS.signin, (c) => {
  const ip = clientIp(c);
  return [ip && `ip:${ip}`];
});

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const external = new Hono<{ Bindings: Env }>()

  // What the sign-in page offers: a password always, Access and OIDC when this relay is configured for them.
  .get('/methods', (c) => c.json({ password: true, access: accessConfigured(c.env), oidc: oidcConfigured(c.env) } satisfies SignInMethods))

  // An unconfigured provider is no route at all.
  .use('/access', async (c, next) => {
    if (!accessConfigured(c.env)) return c.json({ code: 'not-found', message: 'Cloudflare Access sign-in is not configured on this relay' }, 404);
    await next();
  })
  .use('/oidc/*', async (c, next) => {
    if (!oidcConfigured(c.env)) return c.json({ code: 'not-found', message: 'OIDC sign-in is not configured on this relay' }, 404);
    await next();
  })

  // The app, once behind Access, trades the assertion Access added to its request for a session, once.
  .post('/access', perIp, async (c) => {
    const assertion = c.req.header('Cf-Access-Jwt-Assertion');
    if (!assertion) throw new ProtocolError('unauthorized', 'No Cf-Access-Jwt-Assertion header: is this relay behind Cloudflare Access?');
    // Access lets a person through only after its identity provider (or its one-time PIN by mail)
    // proved them, so the address it asserts counts as verified.
    const found = await refused(
      c,
      'access',
      verifyAccessAssertion(c.env, assertion).then((email) => userForEmail(c.env.DB, email, null)),
    );
    return c.json(await signIn(c, await accountFound(c, found, 'access'), 'access'));
  })

  .get('/oidc/start', perIp, async (c) => {
    const returnTo = returnAddress(c, c.req.query('return'));
    const appChallenge = AppChallengeSchema.safeParse(c.req.query('app_challenge'));
    if (!appChallenge.success) throw new ProtocolError('bad-request', `app_challenge: ${appChallenge.error.issues[0]?.message ?? 'invalid'}`);
    const redirectUri = `${new URL(c.req.url).origin}/api/auth/oidc/callback`;
    const { url, browser } = await startSignIn(c.env, redirectUri, returnTo, appChallenge.data);
    const cookie = browserCookie(c);
    setCookie(c, cookie.name, browser, { ...cookie.options, maxAge: OIDC_STATE_SECONDS });
    return c.redirect(url, 302);
  })

  .get('/oidc/callback', async (c) => {
    const state = c.req.query('state');
    if (!state) throw new ProtocolError('bad-request', 'state: missing');
    const cookie = browserCookie(c);
    const started = await takeState(c.env, state, getCookie(c, cookie.name));
    deleteCookie(c, cookie.name, cookie.options);
    if (!started) throw new ProtocolError('unauthorized', 'This sign-in is unknown, already finished or expired; start again');
    if (started === 'other-browser') {
      // Someone else's sign-in brought here by a link (login CSRF): finishing it would sign this browser in as them.
      await record(c.env.DB, { actor: null, ip: clientIp(c), action: 'signin-failed', detail: { method: 'oidc', why: 'started in another browser' } });
      throw new ProtocolError('unauthorized', 'This sign-in was started in another browser; start it again here');
    }
    // From here the address is trusted: failures go back to the app, which can say what happened.
    const back = (fragment: Record<string, string>) => c.redirect(`${started.returnTo}#${new URLSearchParams(fragment)}`, 302);
    const providerError = c.req.query('error');
    const code = c.req.query('code');
    if (providerError || !code) return back({ 'login-error': `The sign-in provider said: ${providerError ?? 'no code'}` });
    try {
      const userId = await accountFound(c, await refused(c, 'oidc', finishSignIn(c.env, code, started)), 'oidc');
      return back({ login: await issueLoginCode(c.env, userId, started) });
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      return back({ 'login-error': error.message });
    }
  })

  .post('/oidc/exchange', jsonBody(LoginCodeExchangeSchema), async (c) => {
    const { code, verifier } = c.req.valid('json');
    const userId = await takeLoginCode(c.env, code, verifier);
    return c.json(await signIn(c, userId, 'oidc'));
  });

/** An address a provider just proved, taken from the account that had only typed it: recorded for the owner. */
async function accountFound(c: Context<{ Bindings: Env }>, found: ProviderAccount, method: 'access' | 'oidc'): Promise<string> {
  if (found.releasedFrom) {
    await record(c.env.DB, { actor: found.userId, ip: clientIp(c), action: 'account.email-released', detail: { method, from: found.releasedFrom } });
  }
  return found.userId;
}

/** A session for someone a provider vouched for, recorded in the audit log like a password sign-in. */
async function signIn(c: Context<{ Bindings: Env }>, userId: string, method: 'access' | 'oidc') {
  const session = await createSession(c.env, userId, method, { ip: clientIp(c), userAgent: c.req.header('User-Agent') ?? null });
  await record(c.env.DB, { actor: userId, sessionId: session.sessionId, ip: clientIp(c), action: 'signin', detail: { method } });
  return { userId, ...session };
}

/** A refused provider sign-in, recorded (never the token) before the refusal goes out. */
async function refused<T>(c: Context<{ Bindings: Env }>, method: 'access' | 'oidc', attempt: Promise<T>): Promise<T> {
  try {
    return await attempt;
  } catch (error) {
    await record(c.env.DB, {
      actor: null,
      ip: clientIp(c),
      action: 'signin-failed',
      detail: { method, why: error instanceof ProtocolError ? error.message : 'error' },
    });
    throw error;
  }
}

/**
 * The app address a sign-in returns to: a path on the relay's own origin, or an address on one of the
 * app's origins (APP_ORIGINS). Anything else would hand a login code to a stranger's page.
 */
function returnAddress(c: Context<{ Bindings: Env }>, raw: string | undefined): string {
  const own = new URL(c.req.url).origin;
  if (!raw) return `${own}/`;
  let url: URL;
  try {
    url = raw.startsWith('/') && !raw.startsWith('//') && !raw.startsWith('/\\') ? new URL(raw, own) : new URL(raw);
  } catch {
    throw new ProtocolError('bad-request', 'return: not an address');
  }
  if (url.origin !== own && !appOrigins(c.env).includes(url.origin)) {
    throw new ProtocolError('bad-request', 'return: must be a path on this relay or an address on one of its APP_ORIGINS');
  }
  if (url.origin === own && servesForeignPages(url.pathname)) {
    // /v1/visuals serves an agent's HTML, whose scripts could read the login code in the fragment.
    throw new ProtocolError('bad-request', 'return: must not be under /v1/ (pages there are not the app)');
  }
  url.hash = '';
  return url.toString();
}

/** Whether a path on the relay reaches /v1/ as the router reads it (percent-decoded, repeated slashes and all). */
function servesForeignPages(pathname: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return true;
  }
  return decoded.replace(/\/+/g, '/').startsWith('/v1/');
}

/**
 * The cookie that binds a sign-in to the browser that started it: HttpOnly, SameSite=Lax (sent on the
 * provider's top-level redirect back, never on a cross-site subrequest), `__Host-` on https so no
 * sibling subdomain can plant one.
 */
function browserCookie(c: Context<{ Bindings: Env }>): { name: string; options: { path: string; httpOnly: true; sameSite: 'Lax'; secure: boolean } } {
  const secure = new URL(c.req.url).protocol === 'https:';
  return { name: secure ? '__Host-tether-oidc' : 'tether-oidc', options: { path: '/', httpOnly: true, sameSite: 'Lax', secure } };
}
