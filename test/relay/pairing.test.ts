import { SELF, env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hostTokenSigner, newHostKey, type HostKeyPair } from '../../src/host/host-token.ts';
import { WRONG_CODES_MAX } from '../../src/relay/http/pairing.ts';
import { openSocket, userToken } from './peers.ts';

const unique = () => crypto.randomUUID().slice(0, 8);

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return SELF.fetch(`http://relay.test${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

const as = async (userId: string) => ({ Authorization: `Bearer ${await userToken(userId)}` });

/** A host asking to pair: its key and what /api/pair/start answered. */
async function start(
  name = 'laptop',
  ip = `10.0.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
): Promise<{ key: HostKeyPair; deviceCode: string; userCode: string; body: any }> {
  const key = await newHostKey();
  const res = await post('/api/pair/start', { name, publicKey: key.publicJwk }, { 'CF-Connecting-IP': ip });
  expect(res.status).toBe(200);
  const body = (await res.json()) as any;
  return { key, deviceCode: body.deviceCode, userCode: body.userCode, body };
}

const poll = (deviceCode: string) => post('/api/pair/poll', { deviceCode });

describe('pairing a host like a TV app', () => {
  it('start → approve → poll gives the host id; the host then opens its link with a JWT it signs', async () => {
    const owner = `pair-owner-${unique()}`;
    const { key, deviceCode, userCode, body } = await start('workstation');
    expect(userCode).toMatch(/^[2-9A-HJKMNP-TW-Z]{4}-[2-9A-HJKMNP-TW-Z]{4}$/);
    expect(body).toMatchObject({ expiresInMs: 600_000, intervalMs: 2_000, verificationUrl: expect.stringContaining(userCode) });
    expect(await (await poll(deviceCode)).json()).toEqual({ state: 'pending' });
    // The device code is kept only hashed.
    const stored = await env.DB.prepare('SELECT device_code_hash FROM pairings WHERE user_code = ?').bind(userCode).first<{ device_code_hash: string }>();
    expect(stored!.device_code_hash).not.toContain(deviceCode);

    const approved = await post('/api/pair/approve', { userCode: userCode.toLowerCase().replace('-', ' ') }, await as(owner));
    expect(approved.status).toBe(200);
    const { hostId, name } = (await approved.json()) as any;
    expect(hostId).toMatch(/^h_/);
    expect(name).toBe('workstation');
    const polled = (await (await poll(deviceCode)).json()) as any;
    expect(polled).toEqual({ state: 'approved', hostId, relayUrl: 'http://relay.test' });
    // Asked again (the host's answer got lost), it says the same.
    expect(await (await poll(deviceCode)).json()).toEqual(polled);

    const row = await env.DB.prepare('SELECT owner_id, public_key FROM hosts WHERE id = ?').bind(hostId).first<{ owner_id: string; public_key: string }>();
    expect(row!.owner_id).toBe(owner);
    expect(JSON.parse(row!.public_key)).toEqual(key.publicJwk);
    const audit = await env.DB.prepare("SELECT actor FROM audit WHERE host_id = ? AND action = 'pairing.approved'").bind(hostId).first<{ actor: string }>();
    expect(audit!.actor).toBe(owner);

    const link = await openSocket(`/v1/hosts/${hostId}/link`, await hostTokenSigner({ hostId, privateJwk: key.privateJwk })());
    link.close(1000, 'done');
    // A code approved once is spent.
    const again = await post('/api/pair/approve', { userCode }, await as(owner));
    expect(again.status).toBe(404);
  });

  it('makes one host when two people approve the same code at the same moment', async () => {
    const { key, userCode } = await start('contested');
    const [a, b] = await Promise.all([`pair-a-${unique()}`, `pair-b-${unique()}`].map(async (who) => post('/api/pair/approve', { userCode }, await as(who))));
    expect([a!.status, b!.status].sort()).toEqual([200, 404]);
    const hosts = await env.DB.prepare('SELECT id FROM hosts WHERE public_key = ?').bind(JSON.stringify(key.publicJwk)).all<{ id: string }>();
    const winner = (await (a!.status === 200 ? a! : b!).json()) as { hostId: string };
    expect(hosts.results).toEqual([{ id: winner.hostId }]);
  });

  it('refuses an unknown user code, a malformed one, a public key with its private part, and an unknown device code', async () => {
    const who = await as(`pair-stranger-${unique()}`);
    const unknown = await post('/api/pair/approve', { userCode: 'ZZZZ-ZZZZ' }, who);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'pairing-not-found' });
    const malformed = await post('/api/pair/approve', { userCode: 'OIL0-1111' }, who);
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 'bad-request', message: expect.stringContaining('userCode') });
    const unsigned = await post('/api/pair/approve', { userCode: 'ZZZZ-ZZZZ' });
    expect(unsigned.status).toBe(401);
    const key = await newHostKey();
    const leaky = await post('/api/pair/start', { name: 'x', publicKey: key.privateJwk });
    expect(leaky.status).toBe(400);
    expect(await leaky.json()).toMatchObject({ code: 'bad-request', message: expect.stringContaining('publicKey') });
    const nobody = await poll('not-a-device-code');
    expect(nobody.status).toBe(404);
    expect(await nobody.json()).toMatchObject({ code: 'pairing-not-found' });
  });

  it('lets a code expire: the poll answers 410 pairing-expired and nobody can approve it', async () => {
    const { deviceCode, userCode } = await start();
    await env.DB.prepare('UPDATE pairings SET expires_at = ? WHERE user_code = ?')
      .bind(Date.now() - 1, userCode)
      .run();
    const polled = await poll(deviceCode);
    expect(polled.status).toBe(410);
    expect(await polled.json()).toMatchObject({ code: 'pairing-expired' });
    const late = await post('/api/pair/approve', { userCode }, await as(`pair-late-${unique()}`));
    expect(late.status).toBe(404);
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM hosts WHERE public_key = (SELECT public_key FROM pairings WHERE user_code = ?)')
        .bind(userCode)
        .first('n'),
    ).toBe(0);
  });

  it('a denied pairing answers 403 pairing-denied to the host and cannot be approved after', async () => {
    const { deviceCode, userCode } = await start();
    const who = await as(`pair-denier-${unique()}`);
    expect((await post('/api/pair/deny', { userCode }, who)).status).toBe(200);
    const polled = await poll(deviceCode);
    expect(polled.status).toBe(403);
    expect(await polled.json()).toMatchObject({ code: 'pairing-denied' });
    expect((await post('/api/pair/approve', { userCode }, who)).status).toBe(404);
  });

  it('rate-limits pairing starts per IP', async () => {
    const ip = `192.0.2.${Math.floor(Math.random() * 250)}`;
    const key = await newHostKey();
    const answers: number[] = [];
    for (let i = 0; i < 11; i++) answers.push((await post('/api/pair/start', { name: 'spam', publicKey: key.publicJwk }, { 'CF-Connecting-IP': ip })).status);
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(answers[10]).toBe(429);
    const refused = await post('/api/pair/start', { name: 'spam', publicKey: key.publicJwk }, { 'CF-Connecting-IP': ip });
    expect(refused.headers.get('Retry-After')).toMatch(/^\d+$/);
    expect(await refused.json()).toMatchObject({ code: 'rate-limited', retryAfterMs: expect.any(Number) });
    // Another IP is not held back.
    expect((await post('/api/pair/start', { name: 'fine', publicKey: key.publicJwk }, { 'CF-Connecting-IP': `${ip}1` })).status).toBe(200);
  });

  it('caps wrong user codes per person: past the cap even the right code is refused', async () => {
    const who = await as(`pair-guesser-${unique()}`);
    const { deviceCode, userCode } = await start();
    for (let i = 0; i < WRONG_CODES_MAX; i++) {
      expect((await post('/api/pair/approve', { userCode: 'ZZZZ-ZZZ2' }, who)).status).toBe(404);
    }
    const right = await post('/api/pair/approve', { userCode }, who);
    expect(right.status).toBe(429);
    expect(await right.json()).toMatchObject({ code: 'rate-limited' });
    expect(await (await poll(deviceCode)).json()).toEqual({ state: 'pending' });
    // Someone else approves it just fine.
    expect((await post('/api/pair/approve', { userCode }, await as(`pair-helper-${unique()}`))).status).toBe(200);
  });

  it("pairs npm start's own host with the setup secret, under the relay owner; a wrong secret is refused", async () => {
    const key = await newHostKey();
    const wrong = await post('/api/pair/setup', { secret: 'nope', name: 'local', publicKey: key.publicJwk });
    expect(wrong.status).toBe(401);
    const paired = await post('/api/pair/setup', { secret: env.TETHER_SETUP_SECRET, name: 'local', publicKey: key.publicJwk });
    expect(paired.status).toBe(200);
    const { hostId } = (await paired.json()) as any;
    const owner = await env.DB.prepare('SELECT u.is_owner AS owner FROM hosts h JOIN users u ON u.id = h.owner_id WHERE h.id = ?')
      .bind(hostId)
      .first<{ owner: number }>();
    expect(owner!.owner).toBe(1);
    const link = await openSocket(`/v1/hosts/${hostId}/link`, await hostTokenSigner({ hostId, privateJwk: key.privateJwk })());
    link.close(1000, 'done');
    // The next `npm start` asks again with the same key: the same host, not a second one.
    const again = await post('/api/pair/setup', { secret: env.TETHER_SETUP_SECRET, name: 'local', publicKey: key.publicJwk });
    expect(((await again.json()) as any).hostId).toBe(hostId);
    // A revoked key stays out, setup secret or not.
    await env.DB.prepare('UPDATE hosts SET revoked_at = ? WHERE id = ?').bind(Date.now(), hostId).run();
    const revoked = await post('/api/pair/setup', { secret: env.TETHER_SETUP_SECRET, name: 'local', publicKey: key.publicJwk });
    expect(revoked.status).toBe(403);
  });
});
