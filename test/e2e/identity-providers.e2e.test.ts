// Sign-in through Cloudflare Access and through OIDC (code flow with PKCE), against the loopback
// identity provider the global setup started (test/support/idp-server.ts) with its own keys. The test
// plays the browser: it follows every redirect itself (`redirect: 'manual'`).
import { describe, expect, inject, it } from 'vitest';
import { oidcBinding } from '../../src/client/index.ts';
import { SignInMethodsSchema } from '../../src/contracts/index.ts';
import { IDP_ACCESS_AUD, type MintRequest, type NextSignIn } from '../support/idp-server.ts';

const relay = () => inject('relayUrl');
const idp = () => inject('idpUrl');
const unique = () => crypto.randomUUID().slice(0, 8);

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

const mint = async (request: MintRequest): Promise<string> => (await post(`${idp()}/test/mint`, request)).token;
const nextSignIn = (next: NextSignIn) => post(`${idp()}/test/next`, next);

interface SessionReply {
  userId: string;
  sessionId: string;
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
}

async function me(accessToken: string): Promise<Response> {
  return fetch(`${relay()}/api/me`, { headers: { Authorization: `Bearer ${accessToken}` } });
}

it('the relay offers Access and OIDC beside passwords once both are configured', async () => {
  const methods = SignInMethodsSchema.parse(await (await fetch(`${relay()}/api/auth/methods`)).json());
  expect(methods).toEqual({ password: true, access: true, oidc: true });
});

describe('Cloudflare Access', () => {
  const assertion = (email: string, patch: Partial<MintRequest> & { claims?: Record<string, unknown> } = {}) =>
    mint({
      ...patch,
      claims: { iss: idp(), aud: [IDP_ACCESS_AUD], sub: `access-${email}`, email, type: 'app', ...patch.claims },
    });
  const signIn = (token: string | null) =>
    fetch(`${relay()}/api/auth/access`, {
      method: 'POST',
      headers: token ? { 'Cf-Access-Jwt-Assertion': token } : {},
    });

  it('trades a valid assertion for a session that opens /api/me; the same email is the same account', async () => {
    const email = `access-${unique()}@example.com`;
    const res = await signIn(await assertion(email));
    expect(res.status).toBe(200);
    const session = (await res.json()) as SessionReply;
    expect(session).toMatchObject({
      userId: expect.any(String),
      sessionId: expect.any(String),
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    });
    const mine = await me(session.accessToken);
    expect(mine.status).toBe(200);
    expect(await mine.json()).toMatchObject({ id: session.userId, email, sessionId: session.sessionId });

    // Signing in again (any case) is the same person, in a new session.
    const again = (await (await signIn(await assertion(email.toUpperCase()))).json()) as SessionReply;
    expect(again.userId).toBe(session.userId);
    expect(again.sessionId).not.toBe(session.sessionId);
  });

  it('refuses a missing assertion, another audience, a foreign key, an expired one, another issuer and one naming no email', async () => {
    const email = `refused-${unique()}@example.com`;
    const cases: [string, string | null][] = [
      ['missing', null],
      ['wrong audience', await assertion(email, { claims: { aud: ['another-application'] } })],
      ['foreign key', await assertion(email, { foreignKey: true })],
      ['expired', await assertion(email, { expiresIn: -120 })],
      ['another issuer', await assertion(email, { claims: { iss: `${idp()}/oidc` } })],
      ['no email (a service token)', await assertion(email, { claims: { email: undefined, common_name: 'svc' } })],
      ['not a JWT', 'not-a-jwt'],
    ];
    for (const [why, token] of cases) {
      const res = await signIn(token);
      expect(res.status, why).toBe(401);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code, why).toBe('unauthorized');
      expect(body.message.length, why).toBeGreaterThan(0);
    }
  });
});

describe('OIDC with PKCE', () => {
  /** One browser: the cookie the relay set at the start, and the secret its app tab kept. */
  interface Browser {
    cookie: string | null;
    verifier: string;
    challenge: string;
  }

  const newBrowser = async (): Promise<Browser> => ({ cookie: null, ...(await oidcBinding()) });

  /** GETs without following, as `browser` (its cookie sent, a cookie set kept); answers the Location of the 302 it must be. */
  async function hop(url: string | URL, browser?: Browser): Promise<URL> {
    const res = await fetch(url, { redirect: 'manual', headers: browser?.cookie ? { Cookie: browser.cookie } : {} });
    if (res.status !== 302) throw new Error(`${url}: expected a redirect, got ${res.status} ${await res.text()}`);
    const set = res.headers.get('Set-Cookie');
    if (browser && set) browser.cookie = set.split(';')[0]!;
    return new URL(res.headers.get('Location')!, url);
  }

  /** Starts a sign-in in `browser`; answers the provider's authorization URL the relay sent it to. */
  const start = (browser: Browser, returnTo = '/app/signed-in') =>
    hop(`${relay()}/api/auth/oidc/start?return=${encodeURIComponent(returnTo)}&app_challenge=${browser.challenge}`, browser);

  /** The app page the relay sent the browser back to, after the provider approved. */
  async function throughProvider(authorize: URL, browser: Browser): Promise<{ callback: URL; back: URL; fragment: URLSearchParams }> {
    const callback = await hop(authorize);
    const back = await hop(callback, browser);
    return { callback, back, fragment: new URLSearchParams(back.hash.slice(1)) };
  }

  const exchange = (code: string, verifier: string) =>
    fetch(`${relay()}/api/auth/oidc/exchange`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code, verifier }),
    });

  /** A sign-in that went all the way, in the browser that started it: the login code. */
  async function codeThrough(browser: Browser): Promise<string> {
    const { fragment } = await throughProvider(await start(browser), browser);
    const code = fragment.get('login');
    if (!code) throw new Error(`no login code: ${fragment}`);
    return code;
  }

  it('signs a person in: PKCE challenge, provider, callback, one-time login code, session', async () => {
    const email = `oidc-${unique()}@example.com`;
    await nextSignIn({ email, emailVerified: true, name: 'Oidc Person' });
    const browser = await newBrowser();
    const authorize = await start(browser);
    // The browser now holds the cookie that binds this sign-in to it.
    expect(browser.cookie).toMatch(/^tether-oidc=./);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${idp()}/oidc/authorize`);
    const q = authorize.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('redirect_uri')).toBe(`${relay()}/api/auth/oidc/callback`);
    expect(q.get('state')).toBeTruthy();
    expect(q.get('nonce')).toBeTruthy();

    const { back, fragment } = await throughProvider(authorize, browser);
    expect(`${back.origin}${back.pathname}`).toBe(`${relay()}/app/signed-in`);
    const code = fragment.get('login');
    expect(code, back.hash).toBeTruthy();

    const res = await exchange(code!, browser.verifier);
    expect(res.status).toBe(200);
    const session = (await res.json()) as SessionReply;
    const mine = await me(session.accessToken);
    expect(mine.status).toBe(200);
    expect(await mine.json()).toMatchObject({ id: session.userId, email, emailVerified: true, sessionId: session.sessionId });

    // The login code works once.
    const reused = await exchange(code!, browser.verifier);
    expect(reused.status).toBe(401);
    expect(((await reused.json()) as { code: string }).code).toBe('unauthorized');
  });

  it('refuses a replayed state: the callback works once', async () => {
    await nextSignIn({ email: `replay-${unique()}@example.com`, emailVerified: true });
    const browser = await newBrowser();
    const { callback, fragment } = await throughProvider(await start(browser), browser);
    expect(fragment.get('login')).toBeTruthy();
    const replay = await fetch(callback, { redirect: 'manual', headers: { Cookie: browser.cookie! } });
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ code: 'unauthorized' });
  });

  it("refuses a start without the app's challenge: a login code must belong to the app tab that asked for it", async () => {
    const res = await fetch(`${relay()}/api/auth/oidc/start?return=%2F`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'bad-request', message: expect.stringContaining('app_challenge') });
  });

  it('refuses a callback in a browser that did not start the sign-in, and the state is spent', async () => {
    // The attacker starts a sign-in as themselves and stops before the callback; the victim gets the link.
    await nextSignIn({ email: `csrf-${unique()}@example.com`, emailVerified: true });
    const attacker = await newBrowser();
    const callback = await hop(await start(attacker));
    const noCookie = await fetch(callback, { redirect: 'manual' });
    expect(noCookie.status).toBe(401);
    expect(await noCookie.json()).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('another browser') });
    // The victim's browser has a sign-in of its own going: its cookie does not fit the attacker's state either.
    const victim = await newBrowser();
    await start(victim);
    expect((await fetch(callback, { redirect: 'manual', headers: { Cookie: victim.cookie! } })).status).toBe(401);
    // And the attacker's state is spent by the first refusal: it works nowhere now.
    const own = await fetch(callback, { redirect: 'manual', headers: { Cookie: attacker.cookie! } });
    expect(own.status).toBe(401);
    expect(await own.json()).toMatchObject({ message: expect.stringContaining('unknown, already finished') });
  });

  it('trades a login code only with the secret of the app tab that started the sign-in', async () => {
    // The attacker finishes a sign-in as themselves and sends the victim `<app>#login=<code>`.
    await nextSignIn({ email: `lifted-${unique()}@example.com`, emailVerified: true });
    const attacker = await newBrowser();
    const code = await codeThrough(attacker);
    const victim = await newBrowser();
    const lifted = await exchange(code, victim.verifier);
    expect(lifted.status).toBe(401);
    expect(await lifted.json()).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('started elsewhere') });
    // Tried once, it is spent: not even its own tab can use it now.
    expect((await exchange(code, attacker.verifier)).status).toBe(401);
  });

  it('an OIDC sign-in for an address an invitation gave an unverified password account lands in a new account', async () => {
    const email = `ceo-${unique()}@corp.example`;
    const owner = await post(`${relay()}/api/auth/signin`, { email: inject('ownerEmail'), password: inject('ownerPassword') });
    const auth = { Authorization: `Bearer ${owner.accessToken}`, 'Content-Type': 'application/json' };
    const team = (await (
      await fetch(`${relay()}/api/teams`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `squat-${unique()}` }) })
    ).json()) as { id: string };
    const invitation = (await (
      await fetch(`${relay()}/api/teams/${team.id}/invitations`, { method: 'POST', headers: auth, body: JSON.stringify({ email }) })
    ).json()) as { token: string };
    const squatter = (await post(`${relay()}/api/invitations/${invitation.token}/accept`, {
      email,
      password: 'squatter password 1',
      name: 'CEO',
    })) as SessionReply;
    await nextSignIn({ email, emailVerified: true, name: 'Real CEO' });
    const browser = await newBrowser();
    const session = (await (await exchange(await codeThrough(browser), browser.verifier)).json()) as SessionReply;
    expect(session.userId).not.toBe(squatter.userId);
    expect(await (await me(session.accessToken)).json()).toMatchObject({ email, emailVerified: true });
    expect(await (await me(squatter.accessToken)).json()).toMatchObject({ id: squatter.userId, email: null, emailVerified: false });
  });

  it('refuses when the verifier does not match the challenge the provider saw', async () => {
    await nextSignIn({ email: `pkce-${unique()}@example.com` });
    const browser = await newBrowser();
    const authorize = await start(browser);
    // Someone swapped the challenge on the way to the provider: the relay's verifier no longer fits.
    authorize.searchParams.set('code_challenge', 'A'.repeat(43));
    const { fragment } = await throughProvider(authorize, browser);
    expect(fragment.get('login')).toBeNull();
    expect(fragment.get('login-error')).toMatch(/refused the code \(invalid_grant\)/);
    const { requests } = (await (await fetch(`${idp()}/test/token-requests`)).json()) as { requests: { ok: boolean; error?: string }[] };
    expect(requests.at(-1)).toEqual({ ok: false, error: 'invalid_grant' });
  });

  it('refuses an ID token with another nonce', async () => {
    await nextSignIn({ email: `nonce-${unique()}@example.com` });
    const browser = await newBrowser();
    const authorize = await start(browser);
    authorize.searchParams.set('nonce', 'a-nonce-of-another-sign-in');
    const { fragment } = await throughProvider(authorize, browser);
    expect(fragment.get('login')).toBeNull();
    expect(fragment.get('login-error')).toMatch(/nonce/);
  });

  it('refuses an ID token signed by a key the provider never published', async () => {
    await nextSignIn({ email: `foreign-${unique()}@example.com`, foreignKey: true });
    const browser = await newBrowser();
    const { fragment } = await throughProvider(await start(browser), browser);
    expect(fragment.get('login')).toBeNull();
    expect(fragment.get('login-error')).toMatch(/ID token is not valid/);
  });

  it('refuses an email the provider says it has not verified', async () => {
    await nextSignIn({ email: `unverified-${unique()}@example.com`, emailVerified: false });
    const browser = await newBrowser();
    const { fragment } = await throughProvider(await start(browser), browser);
    expect(fragment.get('login')).toBeNull();
    expect(fragment.get('login-error')).toMatch(/not verified/);
  });

  it('refuses an email whose verification the provider does not state', async () => {
    await nextSignIn({ email: `unstated-${unique()}@example.com` });
    const browser = await newBrowser();
    const { fragment } = await throughProvider(await start(browser), browser);
    expect(fragment.get('login')).toBeNull();
    expect(fragment.get('login-error')).toMatch(/not verified/);
  });

  it('refuses to return anywhere but the relay or the app origins', async () => {
    const { challenge } = await oidcBinding();
    const res = await fetch(`${relay()}/api/auth/oidc/start?return=${encodeURIComponent('https://evil.example/steal')}&app_challenge=${challenge}`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'bad-request', message: expect.stringContaining('return') });
    const sneaky = await fetch(`${relay()}/api/auth/oidc/start?return=${encodeURIComponent('//evil.example/steal')}&app_challenge=${challenge}`, {
      redirect: 'manual',
    });
    expect(sneaky.status).toBe(400);
  });
});
