import { SELF, env } from 'cloudflare:test';
import { SignJWT, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { newHostKey, type HostPrivateJwk } from '../../src/host/host-token.ts';
import { Client, FakeHost, hostKey, openSocket, userToken } from './peers.ts';

const unique = () => crypto.randomUUID().slice(0, 8);

async function api(method: string, path: string, userId: string | null, body?: unknown): Promise<Response> {
  return SELF.fetch(`http://relay.test${path}`, {
    method,
    headers: { ...(userId ? { Authorization: `Bearer ${await userToken(userId)}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
}

async function grant(hostId: string, userId: string, role: string, chatId = ''): Promise<void> {
  await userToken(userId);
  await env.DB.prepare(
    "INSERT INTO grants (id, host_id, chat_id, subject_type, subject_id, role, created_by, created_at) VALUES (?, ?, ?, 'user', ?, ?, 'test', ?)",
  )
    .bind(`g-${unique()}`, hostId, chatId, userId, role, Date.now())
    .run();
}

/** Opens the link and answers the close event as a promise (code and reason). */
async function link(hostId: string, token: string) {
  const ws = await openSocket(`/v1/hosts/${hostId}/link`, token);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })));
  ws.send(JSON.stringify({ link: 'hello', version: 'test', pending: 0 }));
  return { ws, closed };
}

/** Asks for the link upgrade and answers the refusal's status and body (or 101). */
async function knock(hostId: string, token: string): Promise<{ status: number; body: any }> {
  const res = await SELF.fetch(`http://relay.test/v1/hosts/${hostId}/link`, { headers: { Upgrade: 'websocket', Authorization: `Bearer ${token}` } });
  if (res.webSocket) {
    res.webSocket.accept();
    res.webSocket.close(1000, 'done');
    return { status: 101, body: null };
  }
  return { status: res.status, body: await res.json() };
}

/** A host token built by hand, to try what a real host would never send. */
async function forged(hostId: string, privateJwk: HostPrivateJwk, tune: (jwt: SignJWT) => SignJWT): Promise<string> {
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', kid: hostId })
    .setSubject(hostId)
    .setAudience('tether-link')
    .setIssuedAt()
    .setExpirationTime('60s')
    .setJti(crypto.randomUUID());
  return tune(jwt).sign(await importJWK(privateJwk, 'EdDSA'));
}

const b64url = (value: unknown) => btoa(JSON.stringify(value)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

describe('hosts: list, rename, revoke', () => {
  it('lists what a person owns or was granted, with their role and whether the host is online', async () => {
    const owner = `hosts-owner-${unique()}`;
    const [a, b] = [`h-list-a-${unique()}`, `h-list-b-${unique()}`];
    const keyA = await hostKey(a, owner);
    await hostKey(b, owner);
    const { ws } = await link(a, await keyA.sign());
    const viewer = `hosts-viewer-${unique()}`;
    await grant(b, viewer, 'viewer');

    const mine = (await (await api('GET', '/api/hosts', owner)).json()) as any;
    expect(mine.hosts.map((h: any) => [h.id, h.role, h.online, h.ownerId])).toEqual([
      [a, 'owner', true, owner],
      [b, 'owner', false, owner],
    ]);
    const theirs = (await (await api('GET', '/api/hosts', viewer)).json()) as any;
    expect(theirs.hosts.map((h: any) => [h.id, h.role])).toEqual([[b, 'viewer']]);
    expect(((await (await api('GET', '/api/hosts', `hosts-nobody-${unique()}`)).json()) as any).hosts).toEqual([]);
    expect((await api('GET', '/api/hosts', null)).status).toBe(401);
    ws.close(1000, 'done');
  });

  it('lets only the owner rename a host', async () => {
    const owner = `hosts-owner-${unique()}`;
    const hostId = `h-rename-${unique()}`;
    await hostKey(hostId, owner);
    const operator = `hosts-operator-${unique()}`;
    await grant(hostId, operator, 'operator');
    const renamed = await api('PATCH', `/api/hosts/${hostId}`, owner, { name: '  Studio Mac ' });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toEqual({ id: hostId, name: 'Studio Mac' });
    expect(await env.DB.prepare('SELECT name FROM hosts WHERE id = ?').bind(hostId).first('name')).toBe('Studio Mac');
    const byOperator = await api('PATCH', `/api/hosts/${hostId}`, operator, { name: 'mine now' });
    expect(byOperator.status).toBe(403);
    expect(await byOperator.json()).toMatchObject({ code: 'forbidden' });
    expect((await api('PATCH', `/api/hosts/${hostId}`, `hosts-outsider-${unique()}`, { name: 'x' })).status).toBe(404);
    const empty = await api('PATCH', `/api/hosts/${hostId}`, owner, { name: '' });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ code: 'bad-request', message: expect.stringContaining('name') });
    expect(await env.DB.prepare('SELECT name FROM hosts WHERE id = ?').bind(hostId).first('name')).toBe('Studio Mac');
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM audit WHERE host_id = ? AND action = 'host.renamed'").bind(hostId).first('n')).toBe(1);
  });

  it("revoking closes the open link at once (4401) and every person's socket on the host (4403), and neither the same key nor a token signed before gets back in", async () => {
    const owner = `hosts-owner-${unique()}`;
    const hostId = `h-revoke-${unique()}`;
    const key = await hostKey(hostId, owner);
    const held = await key.sign(); // signed before the revocation, replayed after it
    const operator = `hosts-operator-${unique()}`;
    await grant(hostId, operator, 'operator');
    const { closed } = await link(hostId, await key.sign());
    // People's sockets on the host, the owner's too, end with it.
    const people = await Promise.all([
      openSocket(`/v1/hosts/${hostId}/lobby`, await userToken(owner)),
      openSocket(`/v1/hosts/${hostId}/chats/c-revoke`, await userToken(operator)),
    ]);
    const peopleClosed = people.map((ws) => new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code))));

    expect((await api('DELETE', `/api/hosts/${hostId}`, operator)).status).toBe(403);
    const revoked = await api('DELETE', `/api/hosts/${hostId}`, owner);
    expect(revoked.status).toBe(200);
    expect(await closed).toEqual({ code: 4401, reason: 'host revoked' });
    expect(await Promise.all(peopleClosed)).toEqual([4403, 4403]);

    for (const token of [held, await key.sign()]) {
      expect(await knock(hostId, token)).toEqual({ status: 401, body: { code: 'unauthorized', message: 'host revoked' } });
    }
    expect(((await (await api('GET', '/api/hosts', owner)).json()) as any).hosts).toEqual([]);
    expect((await api('PATCH', `/api/hosts/${hostId}`, owner, { name: 'back?' })).status).toBe(404);
    expect(await env.DB.prepare("SELECT actor FROM audit WHERE host_id = ? AND action = 'host.revoked'").bind(hostId).first('actor')).toBe(owner);
  });

  it("refuses host tokens that are not the host's own: another key, alg none, expired, wrong audience, too long-lived, another host", async () => {
    const hostId = `h-attack-${unique()}`;
    const key = await hostKey(hostId);
    const other = await newHostKey();
    const now = Math.floor(Date.now() / 1000);
    const attempts: [string, string][] = [
      ['signed by another key', await forged(hostId, other.privateJwk, (j) => j)],
      ['alg none', `${b64url({ alg: 'none', kid: hostId })}.${b64url({ sub: hostId, aud: 'tether-link', iat: now, exp: now + 60, jti: 'x' })}.`],
      ['expired', await forged(hostId, key.privateJwk, (j) => j.setIssuedAt(now - 120).setExpirationTime(now - 60))],
      ['wrong audience', await forged(hostId, key.privateJwk, (j) => j.setAudience('tether-api'))],
      ['lives an hour', await forged(hostId, key.privateJwk, (j) => j.setExpirationTime('1h'))],
      [
        'no jti',
        await new SignJWT({})
          .setProtectedHeader({ alg: 'EdDSA', kid: hostId })
          .setSubject(hostId)
          .setAudience('tether-link')
          .setIssuedAt()
          .setExpirationTime('60s')
          .sign(await importJWK(key.privateJwk, 'EdDSA')),
      ],
      ['subject is another host', await forged(hostId, key.privateJwk, (j) => j.setSubject('h-someone-else'))],
      ['unknown kid', await forged(`h-nobody-${unique()}`, key.privateJwk, (j) => j.setSubject(hostId))],
    ];
    for (const [what, token] of attempts) {
      const answer = await knock(hostId, token);
      expect({ what, status: answer.status, code: answer.body?.code }).toEqual({ what, status: 401, code: 'unauthorized' });
    }
    // A good token opens only its own host's link.
    const elsewhere = `h-attack-other-${unique()}`;
    await hostKey(elsewhere);
    expect((await knock(elsewhere, await key.sign())).status).toBe(403);
    expect((await knock(hostId, await key.sign())).status).toBe(101);
  });

  it('a captured link token opens nothing a second time: the host it was signed by stays connected', async () => {
    const hostId = `h-replay-${unique()}`;
    const host = await new FakeHost(hostId).connect();
    const client = await Client.lobby(hostId);
    expect((await client.request('chat.list', {})).ok).toBe(true);
    let displaced = false;
    host.ws!.addEventListener('close', () => (displaced = true));
    // Someone who saw the token (a log, a proxy) presents it again within its minute.
    expect(await knock(hostId, host.token!)).toEqual({ status: 401, body: { code: 'unauthorized', message: expect.stringContaining('used already') } });
    // The host's own link is still the one the relay holds: a request still reaches it and is answered.
    const before = host.requestsOf('chat.list').length;
    expect((await client.request('chat.list', {})).ok).toBe(true);
    expect(host.requestsOf('chat.list').length).toBe(before + 1);
    expect(displaced).toBe(false);
    // The spent jti is remembered until the token expires, no longer.
    const row = await env.DB.prepare('SELECT expires_at FROM link_tokens WHERE host_id = ?').bind(hostId).first<{ expires_at: number }>();
    expect(row!.expires_at - Date.now()).toBeGreaterThan(0);
    expect(row!.expires_at - Date.now()).toBeLessThanOrEqual(60_000);
    // Left connected, as every other file leaves its hosts: a disconnect as a file's last step sets the
    // relay announcing the host's absence while vitest tears the file down, and that announcement's log
    // line then meets vitest's closed channel (an unhandled EnvironmentTeardownError).
  });
});
