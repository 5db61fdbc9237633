// Token attacks, each against the real doors (an /api route and a socket): forged, foreign, expired,
// premature, misaddressed and unsigned access tokens; spent and foreign socket tickets; cross-origin
// sockets; and the key rotation that must keep honest tokens working.
import { SELF, createExecutionContext, env } from 'cloudflare:test';
import { SignJWT, base64url, decodeJwt, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import app from '../../src/relay/index.ts';
import { hostToken, userToken } from './peers.ts';

const KEYS = JSON.parse(env.TETHER_SIGNING_KEYS) as (JWK & { kid: string })[];
const [CURRENT, PREVIOUS] = KEYS as [JWK & { kid: string }, JWK & { kid: string }];
const NOW = () => Math.floor(Date.now() / 1000);
let n = 0;

/** A user who owns a host, with a live session: the claims an honest access token would carry. */
async function someone() {
  const userId = `tok-user-${++n}`;
  const token = await userToken(userId);
  const hostId = `host-tok-${n}`;
  await hostToken(hostId, userId);
  return { userId, hostId, token, sessionId: String(decodeJwt(token).sid) };
}

interface Forge {
  key?: CryptoKey;
  kid?: string;
  iss?: string;
  aud?: string;
  exp?: number;
  nbf?: number;
  typ?: string;
}

async function keyOf(jwk: JWK): Promise<CryptoKey> {
  return importJWK({ ...jwk, kid: undefined }, 'ES256') as Promise<CryptoKey>;
}

/** An access token for this session, honest unless told otherwise. */
async function forge(who: { userId: string; sessionId: string }, f: Forge = {}): Promise<string> {
  const jwt = new SignJWT({ typ: f.typ ?? 'access', sid: who.sessionId })
    .setProtectedHeader({ alg: 'ES256', kid: f.kid ?? CURRENT.kid })
    .setIssuer(f.iss ?? 'tether')
    .setAudience(f.aud ?? 'tether-api')
    .setSubject(who.userId)
    .setIssuedAt(NOW() - 60)
    .setExpirationTime(f.exp ?? NOW() + 600);
  if (f.nbf !== undefined) jwt.setNotBefore(f.nbf);
  return jwt.sign(f.key ?? (await keyOf(CURRENT)));
}

async function me(token: string): Promise<{ status: number; code?: string }> {
  const res = await SELF.fetch('http://relay.test/api/me', { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, code: ((await res.json()) as { code?: string }).code };
}

/** The socket door's answer: 101 when it opened (then closed again), else the refusal's status. */
async function door(hostId: string, init: { token?: string; ticket?: string; origin?: string; query?: string } = {}): Promise<number> {
  const headers: Record<string, string> = { Upgrade: 'websocket' };
  if (init.token) headers.Authorization = `Bearer ${init.token}`;
  if (init.origin) headers.Origin = init.origin;
  const query = init.ticket ? `?ticket=${encodeURIComponent(init.ticket)}` : (init.query ?? '');
  const res = await SELF.fetch(`http://relay.test/v1/hosts/${hostId}/lobby${query}`, { headers });
  if (!res.webSocket) return res.status;
  res.webSocket.accept();
  res.webSocket.close(1000, 'done');
  return res.status;
}

async function ticketFor(token: string): Promise<string> {
  const res = await SELF.fetch('http://relay.test/api/auth/tickets', { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { ticket: string; expiresInMs: number };
  expect(body.expiresInMs).toBe(30_000);
  return body.ticket;
}

describe('access tokens', () => {
  it('an honest token opens both doors (the forger below is right but for what each test changes)', async () => {
    const who = await someone();
    const token = await forge(who);
    expect(await me(token)).toEqual({ status: 200, code: undefined });
    expect(await door(who.hostId, { token })).toBe(101);
  });

  const attacks: [string, (who: { userId: string; sessionId: string }) => Promise<string>][] = [
    [
      'alg none',
      async (who) => {
        const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: CURRENT.kid }));
        const body = base64url.encode(
          JSON.stringify({ typ: 'access', sid: who.sessionId, sub: who.userId, iss: 'tether', aud: 'tether-api', iat: NOW(), exp: NOW() + 600 }),
        );
        return `${header}.${body}.`;
      },
    ],
    ['an unknown kid', (who) => forge(who, { kid: 'no-such-key' })],
    [
      'no kid',
      async (who) =>
        new SignJWT({ typ: 'access', sid: who.sessionId })
          .setProtectedHeader({ alg: 'ES256' })
          .setIssuer('tether')
          .setAudience('tether-api')
          .setSubject(who.userId)
          .setIssuedAt()
          .setExpirationTime('10m')
          .sign(await keyOf(CURRENT)),
    ],
    ['a wrong kid (signed by the other relay key)', async (who) => forge(who, { kid: CURRENT.kid, key: await keyOf(PREVIOUS) })],
    ['a foreign key under the right kid', async (who) => forge(who, { key: (await generateKeyPair('ES256')).privateKey })],
    ['expired', (who) => forge(who, { exp: NOW() - 120 })],
    ['not yet valid', (who) => forge(who, { nbf: NOW() + 300 })],
    ['a wrong audience', (who) => forge(who, { aud: 'tether-link' })],
    ['a wrong issuer', (who) => forge(who, { iss: 'someone-else' })],
    ['a visual ticket in place of an access token', (who) => forge(who, { typ: 'visual', aud: 'tether-visual' })],
    [
      'another alg (HS256 keyed with the public key)',
      async (who) =>
        new SignJWT({ typ: 'access', sid: who.sessionId })
          .setProtectedHeader({ alg: 'HS256', kid: CURRENT.kid })
          .setIssuer('tether')
          .setAudience('tether-api')
          .setSubject(who.userId)
          .setIssuedAt()
          .setExpirationTime('10m')
          .sign(new TextEncoder().encode(JSON.stringify({ kty: 'EC', crv: 'P-256', x: CURRENT.x, y: CURRENT.y }))),
    ],
  ];

  for (const [name, make] of attacks) {
    it(`refuses ${name} at the API and at the socket door`, async () => {
      const who = await someone();
      const token = await make(who);
      expect(await me(token)).toEqual({ status: 401, code: 'unauthorized' });
      expect(await door(who.hostId, { token })).toBe(401);
    });
  }

  it('refuses a token for a session that does not exist, and one in a URL', async () => {
    const who = await someone();
    expect(await me(await forge({ ...who, sessionId: 's_made_up' }))).toEqual({ status: 401, code: 'unauthorized' });
    expect(await door(who.hostId, { query: `?access_token=${who.token}` })).toBe(401);
  });

  it('keeps verifying tokens a rotated-out signing key made, while the key stays in the set', async () => {
    const who = await someone();
    const old = await forge(who, { kid: PREVIOUS.kid, key: await keyOf(PREVIOUS) });
    expect(await me(old)).toEqual({ status: 200, code: undefined });
    expect(await door(who.hostId, { token: old })).toBe(101);
    // New tokens come from the first key of the set.
    expect(JSON.parse(new TextDecoder().decode(base64url.decode(who.token.split('.')[0]!)))).toMatchObject({ alg: 'ES256', kid: CURRENT.kid });
  });

  it('publishes the public halves of every key, and nothing private', async () => {
    const res = await SELF.fetch('http://relay.test/api/auth/jwks');
    const { keys } = (await res.json()) as { keys: JWK[] };
    expect(keys.map((k) => k.kid)).toEqual([CURRENT.kid, PREVIOUS.kid]);
    for (const key of keys) expect(key).not.toHaveProperty('d');
  });
});

describe('socket tickets', () => {
  it('open one socket once', async () => {
    const who = await someone();
    const ticket = await ticketFor(who.token);
    expect(await door(who.hostId, { ticket })).toBe(101);
    expect(await door(who.hostId, { ticket })).toBe(401);
    expect(await door(who.hostId, { ticket: 'made-up' })).toBe(401);
  });

  it('die with their session', async () => {
    const who = await someone();
    const ticket = await ticketFor(who.token);
    const out = await SELF.fetch('http://relay.test/api/auth/signout', { method: 'POST', headers: { Authorization: `Bearer ${who.token}` } });
    expect(out.status).toBe(200);
    expect(await door(who.hostId, { ticket })).toBe(401);
  });

  it('are minted only for a live access token', async () => {
    const res = await SELF.fetch('http://relay.test/api/auth/tickets', { method: 'POST', headers: { Authorization: 'Bearer nope' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthorized' });
  });
});

describe('socket origins', () => {
  it('refuses a socket from a page on another origin, and lets the app and the relay itself in', async () => {
    const who = await someone();
    const ticket = await ticketFor(who.token);
    expect(await door(who.hostId, { ticket, origin: 'https://evil.example' })).toBe(403);
    expect(await door(who.hostId, { token: who.token, origin: 'https://app.tether.test.evil.example' })).toBe(403);
    expect(await door(who.hostId, { ticket, origin: env.APP_ORIGINS! })).toBe(101);
    expect(await door(who.hostId, { token: who.token, origin: 'http://relay.test' })).toBe(101);
  });
});

describe('the API from a browser', () => {
  it("answers CORS for the app's origins only", async () => {
    const preflight = (origin: string) =>
      SELF.fetch('http://relay.test/api/auth/tickets', {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' },
      });
    const app = await preflight(env.APP_ORIGINS!);
    expect(app.headers.get('Access-Control-Allow-Origin')).toBe(env.APP_ORIGINS);
    expect(app.headers.get('Access-Control-Allow-Headers')?.toLowerCase()).toContain('authorization');
    expect((await preflight('https://evil.example')).headers.get('Access-Control-Allow-Origin')).toBeNull();
  });
});

describe('the OIDC return address', () => {
  // OIDC is off in these bindings: the app is called with it configured. The address is checked
  // before the provider is asked anything, so a refused one answers 400 and an accepted one goes on
  // to discovery (which fails here: this provider does not exist).
  const start = async (back: string) => {
    const oidc = { ...env, OIDC_ISSUER: 'https://idp.invalid', OIDC_CLIENT_ID: 'tether' };
    const res = await app.fetch(new Request(`http://relay.test/api/auth/oidc/start?return=${encodeURIComponent(back)}`), oidc, createExecutionContext());
    return { status: res.status, body: (await res.json()) as { code: string; message: string } };
  };

  it('is never a page of agent-made HTML on the relay, whose scripts would read the login code in the fragment', async () => {
    for (const back of [
      '/v1/visuals/h_1/c_1/v_1?ticket=t',
      '/%76%31/visuals/h_1/c_1/v_1',
      '/x/../v1/visuals/h_1/c_1/v_1',
      'http://relay.test/v1/visuals/h_1/c_1/v_1',
      '//evil.example/',
      'https://evil.example/',
    ]) {
      const answer = await start(back);
      expect(answer, back).toMatchObject({ status: 400, body: { code: 'bad-request' } });
      expect(answer.body.message, back).toMatch(/^return:/);
    }
    for (const back of ['/', '/chats/1', `${env.APP_ORIGINS}/signed-in`]) {
      expect((await start(back)).body.message, back).not.toMatch(/^return:/);
    }
  });
});
