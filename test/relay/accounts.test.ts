// Accounts through the relay's HTTP API, inside workerd with real D1: claiming the owner account once,
// password sign-in, refresh rotation and reuse, signing out, one's sessions, disabled users.
import { SELF, env } from 'cloudflare:test';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { SignInMethodsSchema } from '../../src/contracts/index.ts';
import { MemoryTokenStore, RelayApi } from '../../src/client/index.ts';
import { hashOpaque } from '../../src/relay/auth/opaque.ts';
import { REFRESH_RETRY_MS } from '../../src/relay/auth/sessions.ts';
import { rotateRefreshToken } from '../../src/relay/db/sessions.ts';
import { hostToken, userToken } from './peers.ts';
import { api, lobbyOf, passwordAccount, signInWithPassword, type Person } from './people.ts';

const SETUP_SECRET = env.TETHER_SETUP_SECRET!;
let n = 0;

async function post(path: string, body: unknown, token?: string) {
  const res = await SELF.fetch(`http://relay.test${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const asPerson = (session: { userId: string; accessToken: string; sessionId: string }): Person => ({
  userId: session.userId,
  token: session.accessToken,
  sessionId: session.sessionId,
});

describe('the owner account', () => {
  // Before the claim below: once an owner has a password, setup answers forbidden whatever the email.
  it('is not claimed with an email another account uses', async () => {
    const other = await passwordAccount();
    const taken = await post('/api/auth/setup', { email: other.email, password: 'a long enough password', name: 'Olive', secret: SETUP_SECRET });
    expect(taken).toEqual({ status: 400, body: { code: 'bad-request', message: 'email: already used by another account' } });
  });

  it('is claimed once with the setup secret, and never again', async () => {
    const fields = { email: 'Owner@Example.com', password: 'a long enough password', name: 'Olive' };
    expect(await post('/api/auth/setup', { ...fields, secret: 'wrong' })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const short = await post('/api/auth/setup', { ...fields, secret: SETUP_SECRET, password: 'short' });
    expect(short).toMatchObject({ status: 400, body: { code: 'bad-request' } });
    expect(short.body.message).toMatch(/^password: /);

    const claimed = await post('/api/auth/setup', { ...fields, secret: SETUP_SECRET });
    expect(claimed.status).toBe(201);
    const me = await api(asPerson(claimed.body), 'GET', '/api/me');
    // The setup secret is the owner's proof: the address they chose counts as verified.
    expect(me).toMatchObject({ status: 200, body: { id: claimed.body.userId, email: 'owner@example.com', emailVerified: true, name: 'Olive', isOwner: true } });

    const again = await post('/api/auth/setup', { ...fields, email: 'other@example.com', secret: SETUP_SECRET });
    expect(again).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    // The owner signs in with the password they chose (emails compare case-insensitively).
    expect((await signInWithPassword('OWNER@example.com', fields.password)).status).toBe(200);
  });
});

describe('password sign-in', () => {
  it('is the only method a relay without Access or OIDC settings offers', async () => {
    const res = await SELF.fetch('http://relay.test/api/auth/methods');
    expect(res.status).toBe(200);
    expect(SignInMethodsSchema.parse(await res.json())).toEqual({ password: true, access: false, oidc: false });
  });

  it('opens a session for the right password; a wrong password and an unknown email get the same answer', async () => {
    const user = await passwordAccount();
    const ok = await signInWithPassword(user.email, user.password);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ userId: user.id, accessToken: expect.any(String), refreshToken: expect.any(String), sessionId: expect.any(String) });
    expect(decodeJwt(ok.body.accessToken)).toMatchObject({ sub: user.id, sid: ok.body.sessionId, iss: 'tether', aud: 'tether-api' });
    expect((await api(asPerson(ok.body), 'GET', '/api/me')).body.id).toBe(user.id);

    const wrong = await signInWithPassword(user.email, 'not the password');
    const unknown = await signInWithPassword(`nobody-${user.id}@example.com`, user.password);
    expect(wrong).toEqual({ status: 401, body: { code: 'unauthorized', message: 'Wrong email or password' } });
    expect(unknown).toEqual(wrong);
    expect(await signInWithPassword('not an email', 'x')).toMatchObject({
      status: 400,
      body: { code: 'bad-request', message: expect.stringMatching(/^email: /) },
    });

    const audit = await env.DB.prepare('SELECT action, actor FROM audit WHERE actor = ? ORDER BY id').bind(user.id).all();
    expect(audit.results).toEqual([
      { action: 'signin', actor: user.id },
      { action: 'signin-failed', actor: user.id },
    ]);
  });
});

describe('refresh tokens', () => {
  it('rotate on every use', async () => {
    const user = await passwordAccount();
    const first = (await signInWithPassword(user.email, user.password)).body;
    const second = await post('/api/auth/refresh', { refreshToken: first.refreshToken });
    expect(second.status).toBe(200);
    expect(second.body.sessionId).toBe(first.sessionId);
    expect(second.body.refreshToken).not.toBe(first.refreshToken);
    expect((await api(asPerson({ ...second.body, userId: user.id }), 'GET', '/api/me')).status).toBe(200);
    expect((await post('/api/auth/refresh', { refreshToken: second.body.refreshToken })).status).toBe(200);
    expect(await post('/api/auth/refresh', { refreshToken: 'never-issued' })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it('reused after its successor was used, revoke the whole session: its refresh tokens, its access tokens and its open sockets', async () => {
    const user = await passwordAccount();
    const first = (await signInWithPassword(user.email, user.password)).body;
    const person = asPerson(first);
    const hostId = `host-${user.id}`;
    await hostToken(hostId, user.id);
    const socket = await lobbyOf(person, hostId);
    const rotated = (await post('/api/auth/refresh', { refreshToken: first.refreshToken })).body;
    const latest = (await post('/api/auth/refresh', { refreshToken: rotated.refreshToken })).body;

    const reused = await post('/api/auth/refresh', { refreshToken: first.refreshToken });
    expect(reused).toMatchObject({ status: 401, body: { code: 'unauthorized', message: expect.stringMatching(/already used/) } });
    expect(await socket.closed).toEqual({ code: 4401, reason: 'session ended' });
    expect((await post('/api/auth/refresh', { refreshToken: latest.refreshToken })).status).toBe(401);
    for (const token of [first.accessToken, rotated.accessToken, latest.accessToken]) {
      expect((await api({ ...person, token }, 'GET', '/api/me')).status).toBe(401);
      const door = await SELF.fetch(`http://relay.test/v1/hosts/${hostId}/lobby`, { headers: { Upgrade: 'websocket', Authorization: `Bearer ${token}` } });
      expect(door.status).toBe(401);
    }
    const row = await env.DB.prepare('SELECT revoked_why FROM sessions WHERE id = ?').bind(first.sessionId).first();
    expect(row).toEqual({ revoked_why: 'refresh-reused' });
  });
});

describe('a refresh whose answer was lost', () => {
  const DEVICE = { 'User-Agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Tether-test' };
  const refresh = async (refreshToken: string, headers: Record<string, string> = DEVICE) => {
    const res = await SELF.fetch('http://relay.test/api/auth/refresh', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ refreshToken }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const revokedWhy = async (sessionId: string) =>
    (await env.DB.prepare('SELECT revoked_why FROM sessions WHERE id = ?').bind(sessionId).first<{ revoked_why: string | null }>())!.revoked_why;
  /** A session signed in from DEVICE. */
  async function phoneSession() {
    const user = await passwordAccount();
    const res = await SELF.fetch('http://relay.test/api/auth/signin', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...DEVICE },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    return { user, session: (await res.json()) as any };
  }

  it('is retried with the same token and answered with the same successor, which then works', async () => {
    const { user, session } = await phoneSession();
    const lost = await refresh(session.refreshToken); // this answer never reaches the phone
    expect(lost.status).toBe(200);
    const retried = await refresh(session.refreshToken);
    expect(retried.status).toBe(200);
    expect(retried.body.sessionId).toBe(session.sessionId);
    expect(retried.body.refreshToken).toBe(lost.body.refreshToken);
    expect(await revokedWhy(session.sessionId)).toBeNull();
    expect((await api(asPerson({ ...retried.body, userId: user.id }), 'GET', '/api/me')).status).toBe(200);
    // The chain goes on from the successor, and the retried token is still not a way in for later.
    const next = await refresh(retried.body.refreshToken);
    expect(next.status).toBe(200);
    expect(await refresh(session.refreshToken)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await revokedWhy(session.sessionId)).toBe('refresh-reused');
  });

  it('revokes when replayed after the retry window', async () => {
    const { session } = await phoneSession();
    expect((await refresh(session.refreshToken)).status).toBe(200);
    // Time passing, told to the row: its rotation is older than the window.
    await env.DB.prepare('UPDATE refresh_tokens SET used_at = used_at - ? WHERE session_id = ? AND used_at IS NOT NULL')
      .bind(REFRESH_RETRY_MS + 1_000, session.sessionId)
      .run();
    expect(await refresh(session.refreshToken)).toMatchObject({ status: 401, body: { code: 'unauthorized', message: expect.stringMatching(/already used/) } });
    expect(await revokedWhy(session.sessionId)).toBe('refresh-reused');
  });

  it('revokes when replayed from another device, even at once', async () => {
    const { session } = await phoneSession();
    expect((await refresh(session.refreshToken)).status).toBe(200);
    expect(await refresh(session.refreshToken, { 'User-Agent': 'curl/8.5.0' })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await revokedWhy(session.sessionId)).toBe('refresh-reused');
  });

  it('answers many retries at once with one successor, and spends the token only once', async () => {
    const { session } = await phoneSession();
    const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(session.refreshToken)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.refreshToken)).size).toBe(1);
    const rows = await env.DB.prepare('SELECT used_at IS NOT NULL AS used FROM refresh_tokens WHERE session_id = ? ORDER BY created_at')
      .bind(session.sessionId)
      .all();
    expect(rows.results).toEqual([{ used: 1 }, { used: 0 }]);
    expect(await revokedWhy(session.sessionId)).toBeNull();
  });

  it('is retried by the SDK when the answer never came, and the person stays signed in', async () => {
    const { user, session } = await phoneSession();
    let lost = 0;
    // The relay does the rotation; its answer is lost on the way back, twice.
    const fetcher: typeof fetch = async (input, init) => {
      const res = await SELF.fetch(String(input), { ...init, headers: { ...(init?.headers as Record<string, string>), ...DEVICE } });
      if (new URL(String(input)).pathname === '/api/auth/refresh' && lost < 2) {
        lost++;
        throw new TypeError('network connection lost');
      }
      return res;
    };
    const sdk = new RelayApi('http://relay.test', { tokens: new MemoryTokenStore({ ...session, expiresAt: Date.now() }), fetch: fetcher });
    expect((await sdk.me()).id).toBe(user.id);
    expect(lost).toBe(2);
    expect(await revokedWhy(session.sessionId)).toBeNull();
    const rows = await env.DB.prepare('SELECT used_at IS NOT NULL AS used FROM refresh_tokens WHERE session_id = ? ORDER BY created_at')
      .bind(session.sessionId)
      .all();
    expect(rows.results).toEqual([{ used: 1 }, { used: 0 }]);
  });

  it('is one atomic step: a rotation that fails part way spends nothing', async () => {
    const { session } = await phoneSession();
    const tokenHash = await hashOpaque(session.refreshToken);
    // A successor that cannot be inserted (its hash is a token that exists) fails the batch after
    // the token was marked used within it: the mark is rolled back with it.
    const now = Date.now();
    await expect(
      rotateRefreshToken(env.DB, {
        tokenHash,
        successorSalt: 'salt',
        nextHash: tokenHash,
        now,
        expiresAt: now + 1_000,
        ip: null,
        userAgent: null,
      }),
    ).rejects.toThrow();
    const row = await env.DB.prepare('SELECT used_at, successor_salt FROM refresh_tokens WHERE token_hash = ?').bind(tokenHash).first();
    expect(row).toEqual({ used_at: null, successor_salt: null });
    expect((await refresh(session.refreshToken)).status).toBe(200);
  });

  it('never rotates the token of an ended session, and says it ended', async () => {
    const { session } = await phoneSession();
    expect((await post('/api/auth/signout', {}, session.accessToken)).status).toBe(200);
    expect(await refresh(session.refreshToken)).toEqual({ status: 401, body: { code: 'unauthorized', message: 'The session has ended' } });
    const rows = await env.DB.prepare('SELECT used_at FROM refresh_tokens WHERE session_id = ?').bind(session.sessionId).all();
    expect(rows.results).toEqual([{ used_at: null }]);
  });
});

describe('sessions', () => {
  it('sign out ends this session only', async () => {
    const user = await passwordAccount();
    const phone = (await signInWithPassword(user.email, user.password)).body;
    const laptop = (await signInWithPassword(user.email, user.password)).body;
    expect((await post('/api/auth/signout', {}, phone.accessToken)).status).toBe(200);
    expect((await api(asPerson(phone), 'GET', '/api/me')).status).toBe(401);
    expect((await post('/api/auth/refresh', { refreshToken: phone.refreshToken })).status).toBe(401);
    expect((await api(asPerson(laptop), 'GET', '/api/me')).status).toBe(200);
    expect((await post('/api/auth/signout', {})).status).toBe(401);
  });

  it("are listed to their user, who may end any one of them, and nobody else's", async () => {
    const user = await passwordAccount();
    const phone = asPerson((await signInWithPassword(user.email, user.password)).body);
    const laptop = asPerson((await signInWithPassword(user.email, user.password)).body);
    const listed = await api(phone, 'GET', '/api/auth/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body.sessions.map((s: any) => [s.id, s.current, s.method]).sort()).toEqual(
      [
        [phone.sessionId, true, 'password'],
        [laptop.sessionId, false, 'password'],
      ].sort(),
    );

    const stranger = asPerson((await signInWithPassword((await passwordAccount()).email, 'correct horse battery')).body);
    expect(await api(stranger, 'DELETE', `/api/auth/sessions/${laptop.sessionId}`)).toMatchObject({ status: 404, body: { code: 'not-found' } });
    expect((await api(laptop, 'GET', '/api/me')).status).toBe(200);

    expect((await api(phone, 'DELETE', `/api/auth/sessions/${laptop.sessionId}`)).status).toBe(200);
    expect((await api(laptop, 'GET', '/api/me')).status).toBe(401);
    expect((await api(phone, 'GET', '/api/auth/sessions')).body.sessions.map((s: any) => s.id)).toEqual([phone.sessionId]);
  });
});

describe('users, for the relay owner', () => {
  it('a disabled user is signed out everywhere, their sockets close, and they cannot sign in', async () => {
    const ownerId = `relay-owner-${++n}`;
    const owner: Person = { userId: ownerId, token: await userToken(ownerId, { owner: true }), sessionId: '' };
    const user = await passwordAccount();
    const session = asPerson((await signInWithPassword(user.email, user.password)).body);
    const hostId = `host-acct-disabled-${n}`;
    await hostToken(hostId, user.id);
    const socket = await lobbyOf(session, hostId);

    expect(await api(session, 'GET', '/api/users')).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect((await api(session, 'POST', `/api/users/${owner.userId}/disable`)).status).toBe(403);
    const listed = await api(owner, 'GET', '/api/users');
    expect(listed.body.users.find((u: any) => u.id === user.id)).toMatchObject({ email: user.email, disabledAt: null, hasPassword: true });

    expect((await api(owner, 'POST', `/api/users/${user.id}/disable`)).status).toBe(200);
    expect(await socket.closed).toEqual({ code: 4401, reason: 'session ended' });
    expect((await api(session, 'GET', '/api/me')).status).toBe(401);
    expect(await signInWithPassword(user.email, user.password)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await signInWithPassword(user.email, 'wrong password')).toMatchObject({ status: 401 });
    expect((await api(owner, 'GET', '/api/users')).body.users.find((u: any) => u.id === user.id).disabledAt).toEqual(expect.any(Number));
    expect((await api(owner, 'POST', `/api/users/nobody-${n}/disable`)).status).toBe(404);

    expect((await api(owner, 'POST', `/api/users/${user.id}/enable`)).status).toBe(200);
    expect((await signInWithPassword(user.email, user.password)).status).toBe(200);
  });
});
