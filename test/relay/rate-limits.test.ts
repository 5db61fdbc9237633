import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject, SELF } from 'cloudflare:test';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { FrameBudget, rateLimit, takeToken, RateLimited } from '../../src/relay/auth/rate-limit.ts';
import type { Env } from '../../src/relay/env.ts';
import type { RateGate } from '../../src/relay/objects/rate-gate.ts';
import { Client, FakeHost } from './peers.ts';
import { passwordAccount } from './people.ts';

const unique = () => crypto.randomUUID().slice(0, 8);

/** A clock the test moves by hand, so refills are exact and nothing waits on real time; years ahead, so
 * no alarm set by it fires on its own. */
const clock = { t: Date.now() + 10 * 365 * 24 * 3600 * 1000 };

/** Makes the gate of `bucket` run on the test's clock (before its first take). */
async function holdClock(bucket: string): Promise<void> {
  const gate = env.RATE_GATE.get(env.RATE_GATE.idFromName(bucket));
  await runInDurableObject(gate, (instance) => {
    (instance as unknown as RateGate).now = () => clock.t;
  });
}

/** A tiny app with one limited door, keyed by the header `X-Who` (and `X-Also` when given). */
function door(name: string, max: number, perSeconds: number) {
  const app = new Hono<{ Bindings: Env }>();
  app.post(
    '/knock',
    rateLimit(name, { max, perSeconds }, (c) => [`who:${c.req.header('X-Who')}`, c.req.header('X-Also') && `also:${c.req.header('X-Also')}`]),
    (c) => c.json({ ok: true }),
  );
  return (who: string, also?: string) => app.request('/knock', { method: 'POST', headers: { 'X-Who': who, ...(also ? { 'X-Also': also } : {}) } }, env);
}

describe('rate limits on HTTP doors', () => {
  it('lets max requests through, then answers 429 with Retry-After and the protocol body', async () => {
    const name = `door-${unique()}`;
    await holdClock(`${name}:who:a`);
    const knock = door(name, 3, 60);
    for (let i = 0; i < 3; i++) expect((await knock('a')).status).toBe(200);
    const refused = await knock('a');
    expect(refused.status).toBe(429);
    // One token comes back every 20 s: that is when to retry.
    expect(refused.headers.get('Retry-After')).toBe('20');
    expect(await refused.json()).toEqual({ code: 'rate-limited', message: 'Try again in 20 s', retryAfterMs: 20_000 });
  });

  it("keeps each key in its own bucket, and refuses when any of a request's keys is empty", async () => {
    const name = `door-${unique()}`;
    const knock = door(name, 2, 60);
    expect((await knock('a')).status).toBe(200);
    expect((await knock('a')).status).toBe(200);
    expect((await knock('a')).status).toBe(429);
    expect((await knock('b')).status).toBe(200);
    expect((await knock('b')).status).toBe(200);
    // c is fresh, but the second key (`also:a`) is shared and runs out after two.
    expect((await knock('c', 'shared')).status).toBe(200);
    expect((await knock('d', 'shared')).status).toBe(200);
    expect((await knock('e', 'shared')).status).toBe(429);
    // The same key under another limit's name is another bucket.
    expect((await door(`other-${unique()}`, 2, 60)('a')).status).toBe(200);
  });

  it('refills evenly over the window, never past max', async () => {
    const bucket = `refill-${unique()}`;
    await holdClock(bucket);
    const limit = { max: 4, perSeconds: 2 };
    for (let i = 0; i < 4; i++) await takeToken(env, bucket, limit);
    const empty = await takeToken(env, bucket, limit).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(RateLimited);
    expect((empty as RateLimited).retryAfterMs).toBe(500);
    expect((empty as RateLimited).code).toBe('rate-limited');

    clock.t += 500; // one token back
    await takeToken(env, bucket, limit);
    await expect(takeToken(env, bucket, limit)).rejects.toBeInstanceOf(RateLimited);

    clock.t += 60_000; // long idle: full, and no more than full
    for (let i = 0; i < 4; i++) await takeToken(env, bucket, limit);
    await expect(takeToken(env, bucket, limit)).rejects.toBeInstanceOf(RateLimited);
  });

  it('keeps a bucket across an evicted gate, and forgets it once it is full again', async () => {
    const bucket = `kept-${unique()}`;
    await holdClock(bucket);
    const limit = { max: 2, perSeconds: 60 };
    await takeToken(env, bucket, limit);
    await takeToken(env, bucket, limit);
    const gate = env.RATE_GATE.get(env.RATE_GATE.idFromName(bucket));
    // A fresh instance reads the stored bucket: still empty (its clock is the test's again).
    await evictDurableObject(gate);
    await holdClock(bucket);
    expect((await gate.take(limit)).ok).toBe(false);

    clock.t += 60_000;
    expect(await runDurableObjectAlarm(gate)).toBe(true);
    const keys = await runInDurableObject(gate, async (_instance, state) => [...(await state.storage.list()).keys()]);
    expect(keys).toEqual([]);
    expect((await gate.take(limit)).ok).toBe(true);
  });
});

describe('frame budgets', () => {
  const fakeSocket = () => ({}) as WebSocket;

  it('counts each socket, and each person across their sockets', () => {
    const budget = new FrameBudget({ RATE_FRAMES: '3/60', RATE_FRAMES_USER: '5/60' } as Env);
    const [one, two, three] = [fakeSocket(), fakeSocket(), fakeSocket()];
    const t = 1_000;
    for (let i = 0; i < 3; i++) expect(budget.take(one, 'alice', t)).toBeNull();
    const over = budget.take(one, 'alice', t);
    expect(over).toBeInstanceOf(RateLimited);
    expect(over!.retryAfterMs).toBe(20_000);
    // Alice's second socket has its own 3, but she has only 2 left in all.
    expect(budget.take(two, 'alice', t)).toBeNull();
    expect(budget.take(two, 'alice', t)).toBeNull();
    expect(budget.take(two, 'alice', t)?.message).toBe('Try again in 12 s');
    // Bob is not held back by Alice.
    expect(budget.take(three, 'bob', t)).toBeNull();
    // Time refills both.
    expect(budget.take(one, 'alice', t + 20_000)).toBeNull();
  });

  it('refuses a malformed setting by name', () => {
    expect(() => new FrameBudget({ RATE_FRAMES: 'lots' } as Env)).toThrow(/RATE_FRAMES must look like/);
  });

  it("answers a flooding socket rate-limited, holds back the same person's other socket, and what it refuses never reaches the host", async () => {
    const host = await new FakeHost(`host-flood-${unique()}`).connect();
    // This lobby gets a small budget (the default, 300 a minute, is only a bigger number), set in the
    // object before the socket opens.
    await runInDurableObject(env.LOBBY.get(env.LOBBY.idFromName(host.hostId)), (lobby) => {
      (lobby as unknown as { frameBudget: FrameBudget }).frameBudget = new FrameBudget({ RATE_FRAMES: '20/60', RATE_FRAMES_USER: '30/60' } as Env);
    });
    const lobby = await Client.lobby(host.hostId);
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => lobby.request('chat.list', {}, `flood-${i}`)));
    const refused = replies.filter((r) => !r.ok && r.error.code === 'rate-limited');
    const served = replies.filter((r) => !refused.includes(r)).map((r) => r.id);
    // The whole budget is honoured (a token or two may have come back meanwhile), the rest refused.
    expect(served.length).toBeGreaterThanOrEqual(20);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.error.message).toMatch(/^Try again in \d+ s$/);
      expect(r.error.retryAfterMs).toBeGreaterThan(0);
    }
    // The same person's second socket has its own 20, but only what is left of their 30.
    const phone = await Client.lobby(host.hostId);
    const fromPhone = await Promise.all(Array.from({ length: 20 }, (_, i) => phone.request('chat.list', {}, `phone-${i}`)));
    const phoneServed = fromPhone.filter((r) => r.ok || r.error.code !== 'rate-limited').map((r) => r.id);
    expect(phoneServed.length).toBeLessThan(20);
    expect(phoneServed.length).toBeGreaterThanOrEqual(30 - served.length);

    const reachedHost = host.requestsOf('chat.list').map((f) => String(f.id).split('/').pop());
    expect(reachedHost.sort()).toEqual([...served, ...phoneServed].sort());
    lobby.close();
    phone.close();
    host.disconnect();
  });
});

describe('sign-in is rate-limited per IP', () => {
  it('answers the 11th attempt from one IP with 429, Retry-After and the protocol body; another IP still gets through', async () => {
    const ip = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    await holdClock(`signin:ip:${ip}`);
    const attempt = (from: string, n: number) =>
      SELF.fetch('http://relay.test/api/auth/signin', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': from },
        body: JSON.stringify({ email: `nobody-${unique()}-${n}@example.com`, password: 'wrong password' }),
      });
    for (let i = 0; i < 10; i++) expect((await attempt(ip, i)).status).toBe(401);
    const refused = await attempt(ip, 10);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    const body = (await refused.json()) as { code: string; message: string; retryAfterMs: number };
    expect(body).toEqual({ code: 'rate-limited', message: expect.stringMatching(/^Try again in \d+ s$/), retryAfterMs: expect.any(Number) });
    expect((await attempt(`203.0.113.${Math.floor(Math.random() * 200) + 1}`, 11)).status).toBe(401);
  });
});

describe('a known email cannot be locked out of sign-in', () => {
  it("failures from one IP lock out that IP only; the owner signs in from another, and past the account's limit attempts are slowed, never refused", async () => {
    const { email, password } = await passwordAccount("the owner's own password", 'lockout');
    await holdClock(`signin-account:${email}`);
    const attempt = (from: string, guess: string) =>
      SELF.fetch('http://relay.test/api/auth/signin', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': from },
        body: JSON.stringify({ email, password: guess }),
      });
    const attacker = `192.0.2.${Math.floor(Math.random() * 200) + 1}`;
    await holdClock(`signin:ip:${attacker}`);
    for (let i = 0; i < 10; i++) expect((await attempt(attacker, `guess ${i}`)).status).toBe(401);
    // The attacker's own source is refused now…
    expect((await attempt(attacker, password)).status).toBe(429);
    // …but not the owner, from anywhere else.
    expect((await attempt(`2001:db8::${unique()}`, password)).status).toBe(200);
    // A botnet spends the account's whole budget (30 a minute) from many IPs (here: taken straight from
    // the account's gate, as its attempts would): nobody is refused for the account's sake, each attempt
    // is only held back, and the owner still gets in.
    const gate = env.RATE_GATE.get(env.RATE_GATE.idFromName(`signin-account:${email}`));
    for (let i = 0; i < 30; i++) await gate.take({ max: 30, perSeconds: 60 });
    expect((await gate.take({ max: 30, perSeconds: 60 })).ok).toBe(false);
    expect((await attempt(`2001:db8:1::${unique().slice(0, 4)}`, 'botnet guess')).status).toBe(401);
    expect((await attempt(`2001:db8:2::${unique().slice(0, 4)}`, password)).status).toBe(200);
  });
});
