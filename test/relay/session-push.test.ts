// Push for terminal sessions (issue 16), inside workerd: the Lobby diffs each session's approvals list
// (`session.approvals` from the host) against the one it kept, pushes a new approval to everyone with
// a role on the whole host (buttons, built from the approval's own choices, only for those who may
// answer it), replaces that notification quietly once the approval settles or expires, never pushes
// the same list twice (across a restart of the Lobby too), and a button's answer reaches the host as
// a signed `session.approve` through the Lobby; a press after the terminal answered is refused with `request-not-found`, as a chat's late press is.
// Pushes are caught in front of `fetch` and decrypted as a browser would (push-capture.ts).
import { createExecutionContext, env, evictDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { digestOf, pushSessionApprovePayload, type ApprovalRequest, type PushPayload, type SessionPushAction } from '../../src/contracts/index.ts';
import { deviceKeyOf, newDeviceKeyPair, signRequest } from '../../src/client/device-key.ts';
import app from '../../src/relay/index.ts';
import { FakeHost, OWNER, until } from './peers.ts';
import { api, grant, signIn, type Person } from './people.ts';
import { catchPushesForThisFile } from './push-capture.ts';

const catcher = await catchPushesForThisFile('vapid-session-test');

async function subscribe(who: Person, name: string): Promise<void> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request('http://relay.test/api/push/subscriptions', {
      method: 'POST',
      headers: { Authorization: `Bearer ${who.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(await catcher.subscribe(name)),
    }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  if (res.status !== 201) throw new Error(`subscribe refused: ${res.status} ${await res.text()}`);
}

const CHOICES = [
  { id: 'allow', kind: 'allow' as const, label: 'Allow once' },
  { id: 'remember', kind: 'remember' as const, label: 'Allow and remember' },
  { id: 'deny', kind: 'deny' as const, label: 'Deny' },
];
/** The buttons' order: a browser may show only two, and Deny matters more than remembering. */
const BUTTONS = [CHOICES[0], CHOICES[2], CHOICES[1]];

function approval(requestId: string, patch: Partial<ApprovalRequest> = {}): ApprovalRequest {
  const now = Date.now();
  return { requestId, sessionId: 's1', toolName: 'Bash', summary: 'rm -rf build', choices: CHOICES, createdAt: now, expiresAt: now + 120_000, ...patch };
}

let hosts = 0;
/** A host of OWNER's with an operator, a viewer and someone granted one chat only, each with one browser subscribed. */
async function team() {
  const host = await new FakeHost(`host-session-push-${++hosts}`).connect();
  const owner = await signIn(OWNER);
  const operator = await signIn(`sp-operator-${hosts}`);
  const viewer = await signIn(`sp-viewer-${hosts}`);
  const oneChat = await signIn(`sp-one-chat-${hosts}`);
  await grant(owner, host.hostId, { type: 'user', id: operator.userId }, 'operator');
  await grant(owner, host.hostId, { type: 'user', id: viewer.userId }, 'viewer');
  await grant(owner, host.hostId, { type: 'user', id: oneChat.userId }, 'owner', 'c1');
  const names = { owner: `owner-${hosts}`, operator: `operator-${hosts}`, viewer: `viewer-${hosts}`, oneChat: `one-chat-${hosts}` };
  await subscribe(owner, names.owner);
  await subscribe(operator, names.operator);
  await subscribe(viewer, names.viewer);
  await subscribe(oneChat, names.oneChat);
  const approvals = (sessionId: string, list: ApprovalRequest[]) => host.sendEvent('session.approvals', { sessionId, approvals: list });
  /** The pushes each named browser got, once `count` of them arrived in all (pushes leave in order). */
  const pushes = async (count: number) => {
    const all = () => Object.values(names).flatMap((name) => catcher.of(name));
    await until(() => all().length >= count, `${count} pushes`);
    return all();
  };
  return { host, owner, operator, viewer, oneChat, names, approvals, pushes };
}

const actOf = (payload: PushPayload) => payload.action as SessionPushAction;

describe('push for a terminal session', () => {
  it('pushes a new approval once to everyone with a role on the host, buttons only for who may answer, and replaces it quietly once it settles', async () => {
    const { host, operator, viewer, oneChat, names, approvals, pushes } = await team();
    approvals('s1', [approval('tu-1')]);
    const asked = await pushes(3);
    expect(asked.map((p) => p.name).sort()).toEqual([names.operator, names.owner, names.viewer].sort());
    const [ownerPush] = catcher.of(names.owner);
    expect(ownerPush!.payload).toMatchObject({
      v: 1,
      kind: 'needs-you',
      title: 'In your terminal',
      body: `Approval needed: Bash · ${host.hostId}`,
      hostId: host.hostId,
      chatId: '',
      sessionId: 's1',
      buzz: true,
      url: `/hosts/${host.hostId}/sessions/s1`,
      // The tool and summary ride along (not shown): the worker's signature names the approval with them.
      action: { requestId: 'tu-1', choices: BUTTONS, token: expect.any(String), shown: { toolName: 'Bash', summary: 'rm -rf build' } },
    });
    expect(ownerPush!.urgency).toBe('high');
    expect(ownerPush!.topic).toBe(ownerPush!.payload.tag);
    expect(catcher.of(names.operator)[0]!.payload.action).toMatchObject({ requestId: 'tu-1', choices: BUTTONS });
    // A viewer is told, not asked; a grant on one chat hears nothing of the host's terminal sessions.
    const told = catcher.of(names.viewer)[0]!.payload;
    expect(told).toMatchObject({ kind: 'needs-you', body: `Approval needed: Bash · ${host.hostId}`, url: `/hosts/${host.hostId}/sessions/s1` });
    expect(told.action).toBeUndefined();
    expect(catcher.of(names.oneChat)).toEqual([]);

    // The same list again (the host sends the whole list on every change): nothing new. Then it settles.
    approvals('s1', [approval('tu-1')]);
    approvals('s1', []);
    const all = await pushes(6);
    expect(all.filter((p) => p.payload.kind === 'needs-you')).toHaveLength(3);
    const settled = catcher.of(names.owner)[1]!.payload;
    expect(settled).toMatchObject({
      kind: 'answered',
      body: `No longer waiting: Bash · ${host.hostId}`,
      tag: ownerPush!.payload.tag,
      buzz: false,
      sessionId: 's1',
    });
    expect(settled.action).toBeUndefined();
    expect(catcher.of(names.viewer)[1]!.payload).toMatchObject({ kind: 'answered', tag: told.tag, buzz: false });
    expect(catcher.of(names.oneChat)).toEqual([]);

    // What became of them, in each person's list: about the session, not a chat.
    const operatorDeliveries = (await api(operator, 'GET', '/api/push/deliveries')).body.deliveries;
    expect(operatorDeliveries.map((d: any) => [d.kind, d.chatId, d.sessionId, d.buzz, d.status])).toEqual([
      ['answered', '', 's1', false, 201],
      ['needs-you', '', 's1', true, 201],
    ]);
    expect((await api(viewer, 'GET', '/api/push/deliveries')).body.deliveries).toHaveLength(2);
    expect((await api(oneChat, 'GET', '/api/push/deliveries')).body.deliveries).toEqual([]);
    host.disconnect();
  });

  it('says an approval expired when it left the list at its expiry, and keeps each approval of a session apart', async () => {
    const { host, names, approvals, pushes } = await team();
    const past = Date.now() - 5;
    approvals('s1', [approval('tu-old', { expiresAt: past, toolName: 'Write' })]);
    approvals('s1', [approval('tu-old', { expiresAt: past, toolName: 'Write' }), approval('tu-new')]);
    await pushes(6);
    approvals('s1', [approval('tu-new')]);
    await pushes(9);
    const mine = catcher.of(names.owner).map((p) => p.payload);
    expect(mine.map((p) => [p.kind, p.body.split(' · ')[0], p.buzz])).toEqual([
      ['needs-you', 'Approval needed: Write', true],
      ['needs-you', 'Approval needed: Bash', true],
      ['answered', 'Expired: Write', false],
    ]);
    expect(mine[2]!.tag).toBe(mine[0]!.tag);
    expect(mine[1]!.tag).not.toBe(mine[0]!.tag);
    host.disconnect();
  });

  it("tells without buttons when the host's choices, or its summary, would not fit a push", async () => {
    const { host, names, approvals, pushes } = await team();
    const wordy = CHOICES.map((c) => ({ ...c, label: `${c.label} ${'and so on '.repeat(60)}` }));
    approvals('s1', [approval('tu-long', { choices: wordy }), approval('tu-summary', { summary: `Bash: ${'x'.repeat(1600)}` })]);
    await pushes(6);
    const told = catcher.of(names.owner);
    expect(told.map((p) => p.payload.kind)).toEqual(['needs-you', 'needs-you']);
    for (const push of told) {
      expect(push.payload).toMatchObject({ kind: 'needs-you', body: `Approval needed: Bash · ${host.hostId}` });
      expect(push.payload.action).toBeUndefined();
    }
    host.disconnect();
  });

  it('neither pushes a kept approval again nor misses its settling after the Lobby restarts', async () => {
    const { host, names, approvals, pushes } = await team();
    approvals('s1', [approval('tu-r')]);
    await pushes(3);
    await evictDurableObject(env.LOBBY.get(env.LOBBY.idFromName(host.hostId)));
    approvals('s1', [approval('tu-r')]);
    approvals('s1', []);
    await pushes(6);
    expect(catcher.of(names.owner).map((p) => [p.payload.kind, p.payload.body.split(' · ')[0]])).toEqual([
      ['needs-you', 'Approval needed: Bash'],
      ['answered', 'No longer waiting: Bash'],
    ]);
    host.disconnect();
  }, 40_000); // the eviction waits out the in-flight push's send timeout (send.ts SEND_TIMEOUT_MS, 10 s)
});

describe('answering a terminal session from a notification', () => {
  it('carries the signed session.approve to the host through the Lobby, under the id the device signed; a late press is refused as already answered, and its token stays spent', async () => {
    const { host, owner, operator, names, approvals, pushes } = await team();
    // The host's own rule: the first answer wins, and a later one is `accepted: false`.
    const settled = new Set<string>();
    host.handlers['session.approve'] = (p) => {
      const accepted = !settled.has(p.requestId);
      settled.add(p.requestId);
      return { accepted };
    };
    approvals('s1', [approval('tu-a')]);
    await pushes(3);
    const action = actOf(catcher.of(names.operator)[0]!.payload);
    const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    const payload = pushSessionApprovePayload({ sessionId: 's1', requestId: 'tu-a' }, 'remember');
    const signature = await signRequest(key, { id: 'push-sw-session-1', type: 'session.approve', payload }, { hostId: host.hostId });

    // A choice the notification did not offer is refused before anything is spent or sent.
    expect(await api(null, 'POST', '/api/push/act', { token: action.token, choiceId: 'always' })).toEqual({
      status: 400,
      body: { code: 'bad-request', message: 'choiceId: this notification offers allow, deny, remember' },
    });
    expect(await api(null, 'POST', '/api/push/act', { token: action.token, decision: 'allow', choiceId: 'allow' })).toMatchObject({
      status: 400,
      body: { code: 'bad-request' },
    });
    expect(host.requestsOf('session.approve')).toHaveLength(0);

    const acted = await api(null, 'POST', '/api/push/act', { token: action.token, choiceId: 'remember', signature });
    expect(acted).toEqual({ status: 200, body: { ok: true, requestId: 'tu-a', choiceId: 'remember' } });
    const [got] = host.requestsOf('session.approve');
    expect(got!.payload).toEqual({ sessionId: 's1', requestId: 'tu-a', choiceId: 'remember' });
    expect(got!.signature).toEqual(signature);
    expect(got!.id).toContain('push-sw-session-1');
    expect(got!.by).toBe(operator.userId);
    expect(await digestOf(got!.payload)).toBe(signature.statement.payload);
    // Spent: the same button again is refused at the relay.
    expect((await api(null, 'POST', '/api/push/act', { token: action.token, choiceId: 'remember' })).body.code).toBe('request-not-found');

    // The owner's notification of the same approval, pressed after it was answered: the host's
    // `accepted: false` is the same refusal a chat's late press gets, in words.
    const ownerToken = actOf(catcher.of(names.owner)[0]!.payload).token;
    const late = await api(null, 'POST', '/api/push/act', { token: ownerToken, choiceId: 'deny' });
    expect(late).toEqual({
      status: 404,
      body: { code: 'request-not-found', message: expect.stringMatching(/already answered in the terminal .*or it expired/) },
    });
    expect(host.requestsOf('session.approve')).toHaveLength(2);
    // Nothing is left to answer, so that token stays spent: pressed again, the relay refuses it without asking the host.
    expect((await api(null, 'POST', '/api/push/act', { token: ownerToken, choiceId: 'allow' })).body).toEqual({
      code: 'request-not-found',
      message: 'This approval was already answered',
    });
    expect(host.requestsOf('session.approve')).toHaveLength(2);

    let lines: any[] = [];
    await until(async () => {
      lines = (await api(owner, 'GET', `/api/hosts/${host.hostId}/audit`)).body.entries.filter((e: any) => e.action === 'session.approve');
      return lines.length >= 2;
    }, 'the audit lines');
    expect(lines.map((l) => l.actor).sort()).toEqual([OWNER, operator.userId].sort());
    expect(lines.every((l) => String(l.detail.requestId).startsWith('push-'))).toBe(true);
    host.disconnect();
  });

  it('checks the role on the whole host now, and keeps the token when the host is offline', async () => {
    const { host, owner, operator, names, approvals, pushes } = await team();
    host.handlers['session.approve'] = () => ({ accepted: true });
    approvals('s1', [approval('tu-b')]);
    await pushes(3);
    const token = actOf(catcher.of(names.operator)[0]!.payload).token;
    await grant(owner, host.hostId, { type: 'user', id: operator.userId }, 'viewer');
    expect(await api(null, 'POST', '/api/push/act', { token, choiceId: 'allow' })).toEqual({
      status: 403,
      body: { code: 'forbidden', message: 'session.approve needs the operator role on this host' },
    });
    await grant(owner, host.hostId, { type: 'user', id: operator.userId }, 'operator');

    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId));
    host.disconnect();
    await until(async () => !(await link.isOnline()), 'host offline');
    expect(await api(null, 'POST', '/api/push/act', { token, choiceId: 'allow' })).toEqual({
      status: 503,
      body: { code: 'host-offline', message: 'The host is offline, so nothing was answered' },
    });
    await host.connect();
    expect(await api(null, 'POST', '/api/push/act', { token, choiceId: 'allow' })).toEqual({
      status: 200,
      body: { ok: true, requestId: 'tu-b', choiceId: 'allow' },
    });
    expect(host.requestsOf('session.approve').map((f) => f.payload.choiceId)).toEqual(['allow']);
    host.disconnect();
  });
});
