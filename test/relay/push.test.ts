// Web Push on the relay, inside workerd: the API (key, subscriptions, deliveries) and its validation,
// who hears of a chat, the one-buzz-per-turn rule, the VAPID contact, telling a turn's browsers that
// its request was answered, and acting from a notification with an action token (spent only by an
// answer the host took).
// Sending real pushes (encrypted, VAPID-signed, to a loopback push service) is test/e2e/push.e2e.test.ts.
import { SELF, createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { digestOf, pushApprovePayload, settledRequestDigest, type ChatItem } from '../../src/contracts/index.ts';
import { deviceKeyOf, newDeviceKeyPair, signRequest } from '../../src/client/device-key.ts';
import { generateSigningKey } from '../../src/relay/auth/keys.ts';
import { signRelayJwt } from '../../src/relay/auth/tokens.ts';
import { audienceOf, claimTurn, reachedThisTurn, recordDeliveries } from '../../src/relay/db/push.ts';
import app from '../../src/relay/index.ts';
import { mintPushAction, type ChatPushAction } from '../../src/relay/push/action-token.ts';
import { noticeOf } from '../../src/relay/push/notices.ts';
import { vapidAuthorization, vapidKeysOf, vapidSubject } from '../../src/relay/push/vapid.ts';
import { Client, FakeHost, OWNER, approvalItem, hostKey, until, userItem } from './peers.ts';
import { api, disable, expire, grant, signIn, team, type ApiReply, type Person } from './people.ts';

const VAPID = JSON.stringify([await generateSigningKey('vapid-test')]);
const pushEnv = { ...env, TETHER_VAPID_KEYS: VAPID };

/** The relay's API with push configured (the shared test bindings have no VAPID keys). */
async function pushApi(
  who: Person | null,
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
  origin = 'http://relay.test',
): Promise<ApiReply> {
  const headers: Record<string, string> = { 'User-Agent': 'push-test' };
  if (who) headers.Authorization = `Bearer ${who.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const ctx = createExecutionContext();
  const request = new Request(`${origin}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const res = await app.fetch(request, { ...pushEnv, ...extra }, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: await res.json() };
}

const P256DH = 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4';
const AUTH = 'BTBZMqHH6r4Tts7J_aSIgg';
const subscription = (endpoint: string, keys: Record<string, string> = { p256dh: P256DH, auth: AUTH }) => ({ endpoint, expirationTime: null, keys });
const fcm = (id: string) => `https://fcm.googleapis.com/fcm/send/${id}`;

describe('the push API', () => {
  it('answers the VAPID public key to subscribe with, or null on a relay without push keys', async () => {
    const without = await pushApi(null, 'GET', '/api/push/key', undefined, { TETHER_VAPID_KEYS: '' });
    expect(without).toEqual({ status: 200, body: { publicKey: null } });
    const withKeys = await pushApi(null, 'GET', '/api/push/key');
    const [jwk] = JSON.parse(VAPID);
    const point = Uint8Array.from(atob(withKeys.body.publicKey.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    expect(point).toHaveLength(65);
    expect(point[0]).toBe(4);
    expect(
      btoa(String.fromCharCode(...point.subarray(1, 33)))
        .replace(/\+/g, '-')
        .replace(/\//g, '_')
        .replace(/=+$/, ''),
    ).toBe(jwk.x);
  });

  it('takes only subscriptions it may push to: https on a known push service, loopback http only when allowed', async () => {
    const me = await signIn('push-validator');
    const refused = async (body: unknown, extra?: Record<string, string>) => {
      const reply = await pushApi(me, 'POST', '/api/push/subscriptions', body, extra);
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('bad-request');
      return reply.body.message as string;
    };
    expect(await refused({ endpoint: fcm('a') })).toMatch(/^keys/);
    expect(await refused(subscription(fcm('a'), { p256dh: P256DH.slice(0, 40), auth: AUTH }))).toMatch(/keys\.p256dh.*65 bytes/);
    expect(await refused(subscription(fcm('a'), { p256dh: P256DH, auth: 'not base64url!' }))).toMatch(/keys\.auth/);
    expect(await refused(subscription('ftp://fcm.googleapis.com/x'))).toMatch(/^endpoint/);
    expect(await refused(subscription('http://fcm.googleapis.com/fcm/send/a'))).toBe('endpoint: must be https');
    expect(await refused(subscription('https://evil.example/fcm.googleapis.com'))).toBe('endpoint: evil.example is not a known push service');
    expect(await refused(subscription('https://fcm.googleapis.com.evil.example/x'))).toMatch(/not a known push service/);
    expect(await refused(subscription('https://10.0.0.1/push'))).toBe('endpoint: must name a push service, not an address');
    expect(await refused(subscription('https://[::1]/push'))).toBe('endpoint: must name a push service, not an address');
    expect(await refused(subscription('https://fcm.googleapis.com:8443/x'))).toBe('endpoint: must use the https port');
    expect(await refused(subscription('https://user:pw@fcm.googleapis.com/x'))).toBe('endpoint: must not carry credentials');
    expect(await refused(subscription('http://127.0.0.1:9/push/a'))).toBe('endpoint: must be https');
    expect(await refused(subscription('http://127.0.0.1.evil.example/push/a'), { PUSH_ALLOW_LOOPBACK: '1' })).toBe('endpoint: must be https');
    // An operator's own push service, and loopback for local use and tests.
    const own = await pushApi(me, 'POST', '/api/push/subscriptions', subscription('https://push.example.org/a'), { PUSH_ENDPOINT_HOSTS: 'example.org' });
    expect(own.status).toBe(201);
    const loopback = await pushApi(me, 'POST', '/api/push/subscriptions', subscription('http://127.0.0.1:9/push/a'), { PUSH_ALLOW_LOOPBACK: '1' });
    expect(loopback.status).toBe(201);
    expect((await pushApi(me, 'POST', '/api/push/subscriptions', subscription('https://updates.push.services.mozilla.com/wpush/v2/x'))).status).toBe(201);
    // Push not configured at all: a clear refusal rather than a subscription nothing can be sent to.
    const unconfigured = await pushApi(me, 'POST', '/api/push/subscriptions', subscription(fcm('b')), { TETHER_VAPID_KEYS: '' });
    expect(unconfigured.status).toBe(400);
    expect(unconfigured.body.message).toMatch(/not configured/);
    expect((await pushApi(null, 'GET', '/api/push/subscriptions')).status).toBe(401);
    expect((await pushApi(null, 'POST', '/api/push/subscriptions', subscription(fcm('c')))).body.code).toBe('unauthorized');
  });

  it('lists and removes only one’s own subscriptions; an endpoint is one subscription, of whoever subscribed last', async () => {
    const alice = await signIn('push-alice');
    const alicePhone = await signIn('push-alice');
    const bob = await signIn('push-bob');
    const first = await pushApi(alice, 'POST', '/api/push/subscriptions', subscription(fcm('alice-1')));
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id: expect.stringMatching(/^ps_/), endpoint: fcm('alice-1'), userAgent: 'push-test', current: true });
    await pushApi(alicePhone, 'POST', '/api/push/subscriptions', subscription(fcm('alice-2')));
    const listed = (await pushApi(alice, 'GET', '/api/push/subscriptions')).body.subscriptions;
    expect(listed.map((s: any) => [s.endpoint, s.current])).toEqual([
      [fcm('alice-2'), false],
      [fcm('alice-1'), true],
    ]);
    expect((await pushApi(bob, 'GET', '/api/push/subscriptions')).body.subscriptions).toEqual([]);

    const notBobs = await pushApi(bob, 'DELETE', `/api/push/subscriptions/${first.body.id}`);
    expect(notBobs).toEqual({ status: 404, body: { code: 'subscription-not-found', message: 'No such subscription of yours' } });
    // The same browser subscribing for Bob now is Bob's, not Alice's.
    const moved = await pushApi(bob, 'POST', '/api/push/subscriptions', subscription(fcm('alice-1')));
    expect(moved.body.id).toBe(first.body.id);
    expect((await pushApi(alice, 'GET', '/api/push/subscriptions')).body.subscriptions.map((s: any) => s.endpoint)).toEqual([fcm('alice-2')]);
    expect((await pushApi(bob, 'DELETE', `/api/push/subscriptions/${first.body.id}`)).status).toBe(200);
    expect((await pushApi(bob, 'GET', '/api/push/subscriptions')).body.subscriptions).toEqual([]);
    // A session that ended takes its subscriptions out of the list (and out of every push).
    await expire(alicePhone.sessionId);
    expect((await pushApi(alice, 'GET', '/api/push/subscriptions')).body.subscriptions).toEqual([]);
  });

  it('keeps at most ten subscriptions a person, dropping the oldest', async () => {
    const me = await signIn('push-many');
    for (let i = 0; i < 12; i++) expect((await pushApi(me, 'POST', '/api/push/subscriptions', subscription(fcm(`many-${i}`)))).status).toBe(201);
    const listed = (await pushApi(me, 'GET', '/api/push/subscriptions')).body.subscriptions.map((s: any) => s.endpoint);
    expect(listed).toHaveLength(10);
    expect(listed).not.toContain(fcm('many-0'));
    expect(listed).not.toContain(fcm('many-1'));
  });

  it('lists one’s deliveries, newest first, and checks the limit', async () => {
    const me = await signIn('push-deliveries');
    expect((await pushApi(me, 'GET', '/api/push/deliveries')).body).toEqual({ deliveries: [] });
    expect((await pushApi(me, 'GET', '/api/push/deliveries?limit=0')).body.code).toBe('bad-request');
    expect((await pushApi(null, 'GET', '/api/push/deliveries')).status).toBe(401);
  });
});

describe('the VAPID contact', () => {
  it('is PUSH_SUBJECT when set, else the relay’s https origin the browser subscribed at, else a mailto', async () => {
    expect(vapidSubject({ PUSH_SUBJECT: 'mailto:ops@example.org' }, 'https://relay.example.org')).toBe('mailto:ops@example.org');
    expect(vapidSubject({}, 'https://relay.example.org')).toBe('https://relay.example.org');
    expect(vapidSubject({}, 'http://127.0.0.1:8787')).toBe('mailto:push@tether.invalid');
    expect(vapidSubject({}, null)).toBe('mailto:push@tether.invalid');

    // A subscription keeps the origin its request came to; the push's JWT names it.
    const me = await signIn('push-origin');
    const made = await pushApi(me, 'POST', '/api/push/subscriptions', subscription(fcm('origin-1')), {}, 'https://relay.example.org');
    expect(made.status).toBe(201);
    const row = await env.DB.prepare('SELECT relay_origin FROM push_subscriptions WHERE id = ?').bind(made.body.id).first<{ relay_origin: string }>();
    expect(row?.relay_origin).toBe('https://relay.example.org');
    const keys = await vapidKeysOf(pushEnv)!;
    const header = await vapidAuthorization(keys.current, fcm('origin-1'), vapidSubject(pushEnv, row!.relay_origin));
    const jwt = /^vapid t=([^,]+), k=(.+)$/.exec(header)!;
    expect(jwt[2]).toBe(keys.current.publicKey);
    expect(decodeJwt(jwt[1]!)).toMatchObject({ aud: 'https://fcm.googleapis.com', sub: 'https://relay.example.org' });
  });
});

describe('who hears of a chat', () => {
  it('is the host’s owner and everyone granted the host or that chat, directly or through a team, with their live subscriptions', async () => {
    const hostId = 'host-push-audience';
    await hostKey(hostId, 'push-aud-owner');
    const owner = await signIn('push-aud-owner');
    const viewer = await signIn('push-aud-viewer');
    const member = await signIn('push-aud-member');
    const elsewhere = await signIn('push-aud-elsewhere');
    const stranger = await signIn('push-aud-stranger');
    const gone = await signIn('push-aud-disabled');
    await grant(owner, hostId, { type: 'user', id: viewer.userId }, 'viewer');
    await grant(owner, hostId, { type: 'team', id: await team(owner, 'push team', [member]) }, 'operator', 'c1');
    await grant(owner, hostId, { type: 'user', id: elsewhere.userId }, 'owner', 'c2');
    await grant(owner, hostId, { type: 'user', id: gone.userId }, 'operator');
    for (const person of [owner, viewer, member, elsewhere, stranger, gone]) {
      expect((await pushApi(person, 'POST', '/api/push/subscriptions', subscription(fcm(`aud-${person.userId}`)))).status).toBe(201);
    }
    await disable(gone.userId);

    const { hostName, recipients } = await audienceOf(env.DB, hostId, 'c1', Date.now());
    expect(hostName).toBe(hostId);
    const heard = Object.fromEntries(recipients.map((r) => [r.userId, [r.role, r.subscriptions.map((s) => s.endpoint)]]));
    expect(heard).toEqual({
      [owner.userId]: ['owner', [fcm(`aud-${owner.userId}`)]],
      [viewer.userId]: ['viewer', [fcm(`aud-${viewer.userId}`)]],
      [member.userId]: ['operator', [fcm(`aud-${member.userId}`)]],
    });
    await env.DB.prepare('UPDATE hosts SET revoked_at = ? WHERE id = ?').bind(Date.now(), hostId).run();
    expect((await audienceOf(env.DB, hostId, 'c1', Date.now())).recipients).toEqual([]);
  });
});

describe('many people', () => {
  it('reaches a team of 120 and records all their deliveries (D1 binds at most 100 parameters a statement)', async () => {
    const hostId = 'host-push-many';
    await hostKey(hostId, 'push-many-owner');
    const now = Date.now();
    const people = Array.from({ length: 120 }, (_, i) => `push-many-${i}`);
    await env.DB.batch([
      env.DB.prepare('INSERT INTO teams (id, name, created_by, created_at) VALUES (?, ?, ?, ?)').bind('team-many', 'many', 'push-many-owner', now),
      env.DB.prepare(
        "INSERT INTO grants (id, host_id, chat_id, subject_type, subject_id, role, created_by, created_at) VALUES ('g-many', ?, '', 'team', 'team-many', 'operator', 'x', ?)",
      ).bind(hostId, now),
      ...people.flatMap((id, i) => [
        env.DB.prepare('INSERT INTO users (id, email, name, created_at) VALUES (?, ?, ?, ?)').bind(id, `${id}@test.invalid`, id, now),
        env.DB.prepare("INSERT INTO team_members (team_id, user_id, role, created_at) VALUES ('team-many', ?, 'member', ?)").bind(id, now),
        env.DB.prepare("INSERT INTO sessions (id, user_id, method, created_at, last_used_at, expires_at) VALUES (?, ?, 'test', ?, ?, ?)").bind(
          `s-${id}`,
          id,
          now,
          now,
          now + 60_000,
        ),
        env.DB.prepare(
          'INSERT INTO push_subscriptions (id, user_id, session_id, endpoint, p256dh, auth, vapid_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        ).bind(`ps-${id}`, id, `s-${id}`, fcm(`team-many-${i}`), P256DH, AUTH, 'k', now),
      ]),
    ]);
    const { recipients } = await audienceOf(env.DB, hostId, 'c1', now);
    expect(recipients).toHaveLength(120);
    expect(new Set(recipients.map((r) => r.role))).toEqual(new Set(['operator']));
    await recordDeliveries(
      env.DB,
      recipients.map((r, i) => ({
        userId: r.userId,
        subscriptionId: r.subscriptions[0]!.id,
        hostId,
        chatId: 'c1',
        sessionId: null,
        kind: 'turn-ended',
        turnKey: 't1',
        buzz: true,
        status: i === 0 ? 410 : 201,
        error: null,
        removed: i === 0,
        at: now,
      })),
      now,
    );
    const counted = await env.DB.prepare('SELECT count(*) AS n FROM push_deliveries WHERE host_id = ?').bind(hostId).first<{ n: number }>();
    expect(counted?.n).toBe(120);
    expect((await audienceOf(env.DB, hostId, 'c1', now)).recipients).toHaveLength(119);
  });
});

describe('a turn buzzes once', () => {
  const turn = (state: 'running' | 'done' | 'aborted' | 'error'): ChatItem => ({
    kind: 'turn',
    id: 't1',
    turnId: 't1',
    createdAt: 1,
    state,
    endedAt: state === 'running' ? null : 2,
    costUsd: 0,
  });

  it('pushes only on transitions: a request starting to wait, a turn that stopped running', () => {
    const pending = approvalItem('ap1', 'req-1');
    expect(noticeOf(pending, undefined)).toEqual({
      kind: 'needs-you',
      turnKey: 't1',
      body: 'Approval needed: Bash',
      approval: { requestId: 'req-1', itemId: 'ap1', decisions: ['allow', 'deny'], toolName: 'Bash', input: { command: 'rm -rf build' } },
    });
    const always = { ...pending, canAllowAlways: true, allowAlways: { label: 'Always allow rm', description: '' } };
    expect(noticeOf(always, undefined)?.approval).toEqual({
      requestId: 'req-1',
      itemId: 'ap1',
      decisions: ['allow', 'deny', 'allow-always'],
      allowAlwaysLabel: 'Always allow rm',
      toolName: 'Bash',
      input: { command: 'rm -rf build' },
    });
    expect(noticeOf(pending, pending)).toBeNull();
    expect(noticeOf({ ...pending, turnId: null }, undefined)?.turnKey).toBe('item:ap1');
    const question: ChatItem = {
      kind: 'question',
      id: 'q1',
      createdAt: 1,
      turnId: 't1',
      requestId: 'req-q',
      answers: null,
      state: 'pending',
      questions: [{ id: 'x', header: 'X', question: 'Which?', choices: [], multiSelect: false }],
    };
    expect(noticeOf(question, undefined)).toEqual({ kind: 'needs-you', turnKey: 't1', body: 'A question is waiting for you' });
    expect(noticeOf(turn('running'), undefined)).toBeNull();
    expect(noticeOf(turn('done'), turn('running'))).toEqual({ kind: 'turn-ended', turnKey: 't1', body: 'Turn finished' });
    expect(noticeOf(turn('error'), undefined)?.body).toBe('Turn failed');
    expect(noticeOf(turn('done'), turn('done'))).toBeNull();
    expect(noticeOf(userItem('u1', 'hello'), undefined)).toBeNull();
  });

  it('tells of a request that stopped waiting, however it was settled, so its notification loses its buttons', () => {
    const pending = approvalItem('ap1', 'req-1');
    expect(noticeOf({ ...pending, decision: 'allow' }, pending)).toEqual({ kind: 'answered', turnKey: 't1', body: 'Approved: Bash' });
    expect(noticeOf({ ...pending, decision: 'deny' }, pending)?.body).toBe('Denied: Bash');
    expect(noticeOf({ ...pending, decision: 'allow-always' }, pending)?.body).toBe('Always allowed: Bash');
    expect(noticeOf({ ...pending, decision: 'cancelled' }, pending)?.body).toBe('No longer needed: Bash');
    // Only on the transition: a settled approval seen again, or first seen settled, tells nothing.
    expect(noticeOf({ ...pending, decision: 'allow' }, { ...pending, decision: 'allow' })).toBeNull();
    expect(noticeOf({ ...pending, decision: 'allow' }, undefined)).toBeNull();
    const question: ChatItem = {
      kind: 'question',
      id: 'q1',
      createdAt: 1,
      turnId: null,
      requestId: 'req-q',
      answers: null,
      state: 'pending',
      questions: [{ id: 'x', header: 'X', question: 'Which?', choices: [], multiSelect: false }],
    };
    expect(noticeOf({ ...question, state: 'answered', answers: { x: 'a' } }, question)).toEqual({
      kind: 'answered',
      turnKey: 'item:q1',
      body: 'Question answered',
    });
    expect(noticeOf({ ...question, state: 'dismissed' }, question)?.body).toBe('Question dismissed');
  });

  it('tells that a request was answered only to the browsers a push of that turn reached', async () => {
    const now = Date.now();
    const delivery = (subscriptionId: string, turnKey: string, status: number | null) => ({
      userId: 'u',
      subscriptionId,
      hostId: 'host-reached',
      chatId: 'c1',
      sessionId: null,
      kind: 'needs-you' as const,
      turnKey,
      buzz: true,
      status,
      error: null,
      removed: false,
      at: now,
    });
    await recordDeliveries(
      env.DB,
      [
        delivery('ps-phone', 't1', 201),
        delivery('ps-laptop', 't1', 201),
        delivery('ps-laptop', 't1', 201),
        delivery('ps-gone', 't1', 410),
        delivery('ps-timeout', 't1', null),
        delivery('ps-other-turn', 't2', 201),
      ],
      now,
    );
    expect(await reachedThisTurn(env.DB, 'host-reached', 'c1', 't1')).toEqual(new Set(['ps-phone', 'ps-laptop']));
    expect(await reachedThisTurn(env.DB, 'host-reached', 'c2', 't1')).toEqual(new Set());
  });

  it('lets only the first notice of a turn buzz, per chat and turn', async () => {
    const now = Date.now();
    expect(await claimTurn(env.DB, 'host-buzz', 'c1', 't1', now)).toBe(true);
    expect(await claimTurn(env.DB, 'host-buzz', 'c1', 't1', now)).toBe(false);
    expect(await claimTurn(env.DB, 'host-buzz', 'c1', 't2', now)).toBe(true);
    expect(await claimTurn(env.DB, 'host-buzz', 'c2', 't1', now)).toBe(true);
    const racing = await Promise.all([1, 2, 3].map(() => claimTurn(env.DB, 'host-buzz', 'c3', 't1', now)));
    expect(racing.filter(Boolean)).toHaveLength(1);
  });
});

describe('acting from a notification', () => {
  let hosts = 0;
  /** A host (owned by OWNER) with chat `c` whose approval `req-1` waits, and a room that has seen it. */
  async function waitingApproval() {
    const host = await new FakeHost(`host-push-act-${++hosts}`).connect();
    host.create('c', [userItem('u1', 'hi'), approvalItem('ap1', 'req-1')]);
    host.handlers['chat.approve'] = (p) => host.emit('c', { type: 'item', item: { ...approvalItem('ap1', 'req-1'), decision: p.decision } });
    const owner = await signIn(OWNER);
    const attached = await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/chats/c`, {
      headers: { Upgrade: 'websocket', Authorization: `Bearer ${owner.token}` },
    });
    const ws = attached.webSocket!;
    ws.accept();
    const answered = new Promise((resolve) =>
      ws.addEventListener('message', (e) => {
        if (String(e.data).includes('"attach-1"')) resolve(null);
      }),
    );
    ws.send(JSON.stringify({ id: 'attach-1', type: 'chat.attach', payload: { chatId: 'c' } }));
    await answered;
    const action = (person: Person, decisions: ChatPushAction['decisions'] = ['allow', 'deny']): ChatPushAction => ({
      kind: 'chat',
      userId: person.userId,
      sessionId: person.sessionId,
      hostId: host.hostId,
      chatId: 'c',
      requestId: 'req-1',
      itemId: 'ap1',
      decisions,
    });
    return { host, owner, action, close: () => ws.close(1000, 'done') };
  }

  it('approves once as its person, through the chat’s room: the host hears it, the audit records it, a second use is refused', async () => {
    const { host, owner, action, close } = await waitingApproval();
    const { token } = await mintPushAction(env, action(owner));
    const acted = await api(null, 'POST', '/api/push/act', { token, decision: 'deny', message: 'not now' });
    expect(acted).toEqual({ status: 200, body: { ok: true, requestId: 'req-1', decision: 'deny' } });
    expect(host.requestsOf('chat.approve').map((f) => [f.payload.decision, f.payload.message])).toEqual([['deny', 'not now']]);

    const again = await api(null, 'POST', '/api/push/act', { token, decision: 'deny' });
    expect(again).toEqual({ status: 404, body: { code: 'request-not-found', message: 'This approval was already answered' } });
    // Another token for the same (now settled) request: the first answer won.
    const late = await api(null, 'POST', '/api/push/act', { token: (await mintPushAction(env, action(owner))).token, decision: 'allow' });
    expect(late).toEqual({ status: 404, body: { code: 'request-not-found', message: 'This approval was already answered' } });
    expect(host.requestsOf('chat.approve')).toHaveLength(1);

    let lines: any[] = [];
    await until(async () => {
      lines = (await api(owner, 'GET', `/api/hosts/${host.hostId}/audit`)).body.entries.filter((e: any) => e.action === 'chat.approve');
      return lines.length >= 1;
    }, 'the audit line');
    expect(lines[0]).toMatchObject({ actor: OWNER, sessionId: owner.sessionId, chatId: 'c', detail: { requestId: expect.stringMatching(/^push-/) } });
    close();
  });

  it("carries a device's signature to the host beside the chat.approve, under the id it signed and with the payload it signed; an id not of a notification is refused before the token is spent", async () => {
    const { host, owner, action, close } = await waitingApproval();
    const { token } = await mintPushAction(env, action(owner));
    const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    const payload = pushApprovePayload({ chatId: 'c', requestId: 'req-1' }, 'allow');
    const settles = await settledRequestDigest({ kind: 'approval', requestId: 'req-1', toolName: 'Bash', input: { command: 'rm -rf build' } });
    const elsewhere = await signRequest(key, { id: 'not-a-push-id', type: 'chat.approve', payload }, { hostId: host.hostId, settles });
    expect(await api(null, 'POST', '/api/push/act', { token, decision: 'allow', signature: elsewhere })).toMatchObject({
      status: 400,
      body: { code: 'bad-request' },
    });
    expect(host.requestsOf('chat.approve')).toHaveLength(0);

    const signature = await signRequest(key, { id: 'push-sw-1', type: 'chat.approve', payload }, { hostId: host.hostId, settles });
    expect(await api(null, 'POST', '/api/push/act', { token, decision: 'allow', signature })).toEqual({
      status: 200,
      body: { ok: true, requestId: 'req-1', decision: 'allow' },
    });
    const [got] = host.requestsOf('chat.approve');
    expect(got!.signature).toEqual(signature);
    expect(got!.id).toContain('push-sw-1');
    expect(await digestOf(got!.payload)).toBe(signature.statement.payload);
    close();
  });

  it('keeps the token when the host is offline: nothing is answered, and the same button works once the host is back', async () => {
    const { host, owner, action, close } = await waitingApproval();
    const { token } = await mintPushAction(env, action(owner));
    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId));
    host.disconnect();
    await until(async () => !(await link.isOnline()), 'host offline');
    const away = await api(null, 'POST', '/api/push/act', { token, decision: 'allow' });
    expect(away).toEqual({
      status: 503,
      body: { code: 'host-offline', message: 'The host is offline, so nothing was answered' },
    });
    // Still waiting for an answer, from anyone: the room reopened the request it had settled for the press.
    expect(await env.DB.prepare('SELECT state FROM requests WHERE host_id = ? AND request_id = ?').bind(host.hostId, 'req-1').first('state')).toBe('pending');

    await host.connect();
    await until(() => link.isOnline(), 'host back');
    const back = await api(null, 'POST', '/api/push/act', { token, decision: 'allow' });
    expect(back).toEqual({ status: 200, body: { ok: true, requestId: 'req-1', decision: 'allow' } });
    expect(host.requestsOf('chat.approve').map((f) => f.payload.decision)).toEqual(['allow']);
    expect((await api(null, 'POST', '/api/push/act', { token, decision: 'allow' })).body.code).toBe('request-not-found');
    close();
  });

  it('answers "already answered" for a request settled in the app first, and never reaches the host twice', async () => {
    const { host, owner, action, close } = await waitingApproval();
    const { token } = await mintPushAction(env, action(owner));
    const app = await Client.chat(host.hostId, 'c');
    expect((await app.request('chat.approve', { chatId: 'c', requestId: 'req-1', decision: 'deny' })).ok).toBe(true);
    const stale = await api(null, 'POST', '/api/push/act', { token, decision: 'allow' });
    expect(stale).toEqual({ status: 404, body: { code: 'request-not-found', message: 'This approval was already answered' } });
    expect(host.requestsOf('chat.approve').map((f) => f.payload.decision)).toEqual(['deny']);
    app.ws.close(1000, 'done');
    close();
  });

  it('refuses an expired, forged or mismatched token, a decision it did not offer, a role no longer enough and an ended session', async () => {
    const { host, owner, action, close } = await waitingApproval();
    const refusal = async (token: string, decision = 'allow') => await api(null, 'POST', '/api/push/act', { token, decision });

    const a = action(owner);
    const claims = {
      typ: 'push-action',
      sid: a.sessionId,
      jti: 'expired-1',
      host: a.hostId,
      chat: a.chatId,
      req: a.requestId,
      item: a.itemId,
      dec: a.decisions,
    };
    const expired = await signRelayJwt(env, claims, a.userId, 'tether-push-action', -60);
    expect(await refusal(expired)).toEqual({ status: 401, body: { code: 'unauthorized', message: 'action token expired' } });
    const otherKeys = { TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('test-current')]) };
    const forged = (await mintPushAction(otherKeys, a)).token;
    expect(await refusal(forged)).toEqual({ status: 401, body: { code: 'unauthorized', message: 'invalid action token' } });
    // An access token is not an action token (its audience is its own).
    expect((await refusal(owner.token)).body).toEqual({ code: 'unauthorized', message: 'invalid action token' });
    expect(await refusal((await mintPushAction(env, a)).token, 'allow-always')).toEqual({
      status: 400,
      body: { code: 'bad-request', message: 'decision: this notification offers allow, deny' },
    });
    expect((await api(null, 'POST', '/api/push/act', { decision: 'allow' })).body).toEqual({
      code: 'bad-request',
      message: 'token: Invalid input: expected string, received undefined',
    });

    // A person whose grant went down to viewer after the push: refused now, whatever the token says.
    const demoted = await signIn('push-demoted');
    await grant(owner, host.hostId, { type: 'user', id: demoted.userId }, 'operator');
    const demotedToken = (await mintPushAction(env, action(demoted))).token;
    await grant(owner, host.hostId, { type: 'user', id: demoted.userId }, 'viewer');
    expect(await refusal(demotedToken)).toEqual({ status: 403, body: { code: 'forbidden', message: 'chat.approve needs the operator role on this chat' } });

    const signedOut = await signIn(OWNER);
    const signedOutToken = (await mintPushAction(env, action(signedOut))).token;
    await expire(signedOut.sessionId);
    expect((await refusal(signedOutToken)).status).toBe(401);

    expect(host.requestsOf('chat.approve')).toHaveLength(0);
    close();
  });
});
