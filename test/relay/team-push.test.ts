// The push to a host's owners when a team's change of members leaves its signed grant on the host
// stale (issue 15), inside workerd: "Team changed: sign again · <host>", opening the host's page, once
// per change to each browser of each owner (the host's owner, and whoever holds owner on the whole
// host), none to operators, viewers or the team's members, none for a grant in sync or unsigned.
// Pushes are caught in front of `fetch` and decrypted as a browser would (push-capture.ts).
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair } from '../../src/client/device-key.ts';
import { signGrant } from '../../src/client/trust.ts';
import type { HostSummary, PushDelivery } from '../../src/contracts/index.ts';
import app from '../../src/relay/index.ts';
import { FakeHost, OWNER } from './peers.ts';
import { api, grant, signIn, team, type Person } from './people.ts';
import { catchPushesForThisFile } from './push-capture.ts';

const catcher = await catchPushesForThisFile('vapid-team-push-test');

const unique = () => crypto.randomUUID().slice(0, 8);

/** A call to the relay that returns once everything it left running (its pushes) is done. */
async function call(who: Person, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { Authorization: `Bearer ${who.token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await app.fetch(
    new Request(`http://relay.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: await res.json() };
}

async function subscribe(who: Person, name: string): Promise<void> {
  const reply = await call(who, 'POST', '/api/push/subscriptions', await catcher.subscribe(name));
  if (reply.status !== 201) throw new Error(`subscribe refused: ${reply.status} ${JSON.stringify(reply.body)}`);
}

async function joins(owner: Person, teamId: string, who: Person): Promise<void> {
  const invitation = await call(owner, 'POST', `/api/teams/${teamId}/invitations`, { role: 'member' });
  expect((await call(who, 'POST', `/api/invitations/${invitation.body.token}/accept`)).status).toBe(200);
}

describe("a team's change of members that leaves its signed grant stale", () => {
  it("pushes each owner of the host once on a join and once on a leave, to open the host's page; nobody else hears of it", async () => {
    const owner = await signIn(OWNER);
    const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    expect((await api(owner, 'POST', '/api/devices', { name: `sdk-${unique()}`, publicKey: key.publicKey })).status).toBe(201);
    const host = await new FakeHost(`host-team-push-${unique()}`).connect();
    const hostName = ((await api(owner, 'GET', '/api/hosts')).body.hosts as HostSummary[]).find((h) => h.id === host.hostId)!.name;
    const [coOwner, operator, viewer, mo, ned] = await Promise.all(['co', 'op', 'vi', 'mo', 'ned'].map((n) => signIn(`tp-${n}-${unique()}`)));
    await grant(owner, host.hostId, { type: 'user', id: coOwner.userId }, 'owner');
    await grant(owner, host.hostId, { type: 'user', id: operator.userId }, 'operator');
    await grant(owner, host.hostId, { type: 'user', id: viewer.userId }, 'viewer');
    const teamName = `pushed crew ${unique()}`;
    const teamId = await team(owner, teamName, [mo]);
    const sign = (members: string[]) => signGrant(key, { hostId: host.hostId, subject: { kind: 'team', teamId, members }, role: 'operator', devices: [] });
    expect(
      (
        await call(owner, 'POST', `/api/hosts/${host.hostId}/grants`, {
          subject: { type: 'team', id: teamId },
          role: 'operator',
          signed: await sign([owner.userId, mo.userId]),
        })
      ).status,
    ).toBe(201);
    const names = {
      owner: `tp-owner-${unique()}`,
      coOwner: `tp-co-${unique()}`,
      operator: `tp-op-${unique()}`,
      viewer: `tp-vi-${unique()}`,
      mo: `tp-mo-${unique()}`,
      ned: `tp-ned-${unique()}`,
    };
    await subscribe(owner, names.owner);
    await subscribe(coOwner, names.coOwner);
    await subscribe(operator, names.operator);
    await subscribe(viewer, names.viewer);
    await subscribe(mo, names.mo);
    await subscribe(ned, names.ned);
    const heard = () => Object.fromEntries(Object.entries(names).map(([who, name]) => [who, catcher.of(name).length]));
    const expected = {
      v: 1,
      kind: 'team-changed',
      title: teamName,
      body: `Team changed: sign again · ${hostName}`,
      hostId: host.hostId,
      chatId: '',
      url: `/hosts/${host.hostId}`,
      buzz: true,
    };

    // Ned joins: one push to each owner's browser, none to anyone else (Ned and Mo included).
    await joins(owner, teamId, ned);
    expect(heard()).toEqual({ owner: 1, coOwner: 1, operator: 0, viewer: 0, mo: 0, ned: 0 });
    const first = catcher.of(names.owner)[0]!;
    expect(first.payload).toMatchObject(expected);
    expect(first.payload.action).toBeUndefined();
    expect(first.urgency).toBe('normal');
    expect(first.topic).toBe(first.payload.tag);

    // Signed again with the members now: signing pushes nothing.
    expect(
      (
        await call(owner, 'POST', `/api/hosts/${host.hostId}/grants`, {
          subject: { type: 'team', id: teamId },
          role: 'operator',
          signed: await sign([owner.userId, mo.userId, ned.userId]),
        })
      ).status,
    ).toBe(200);
    expect(heard()).toEqual({ owner: 1, coOwner: 1, operator: 0, viewer: 0, mo: 0, ned: 0 });

    // Mo leaves: one more each, the same notification (its tag) replaced.
    expect((await call(mo, 'DELETE', `/api/teams/${teamId}/members/${mo.userId}`)).status).toBe(200);
    expect(heard()).toEqual({ owner: 2, coOwner: 2, operator: 0, viewer: 0, mo: 0, ned: 0 });
    const second = catcher.of(names.owner)[1]!;
    expect(second.payload).toMatchObject(expected);
    expect(second.payload.tag).toBe(first.payload.tag);

    // The owner's deliveries list them, about the host (no chat).
    const deliveries = (await call(owner, 'GET', '/api/push/deliveries')).body.deliveries as PushDelivery[];
    expect(deliveries.filter((d) => d.hostId === host.hostId).map((d) => [d.kind, d.chatId, d.sessionId, d.status])).toEqual([
      ['team-changed', '', null, 201],
      ['team-changed', '', null, 201],
    ]);
  });

  it('pushes nothing for a change that leaves the grant in sync, or to a team whose grant is unsigned', async () => {
    const owner = await signIn(OWNER);
    const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    expect((await api(owner, 'POST', '/api/devices', { name: `sdk-${unique()}`, publicKey: key.publicKey })).status).toBe(201);
    const host = await new FakeHost(`host-team-push-${unique()}`).connect();
    const [pia, quin] = [await signIn(`tp-pia-${unique()}`), await signIn(`tp-quin-${unique()}`)];
    // Signed over Pia before she joined (as an owner who invites and signs at once would): her joining brings it in sync.
    const teamId = await team(owner, `sync crew ${unique()}`);
    const signed = await signGrant(key, { hostId: host.hostId, subject: { kind: 'team', teamId, members: [owner.userId] }, role: 'viewer', devices: [] });
    expect((await call(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: teamId }, role: 'viewer', signed })).status).toBe(201);
    const plainTeam = await team(owner, `plain crew ${unique()}`);
    expect((await call(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: plainTeam }, role: 'viewer' })).status).toBe(201);
    const name = `tp-owner-quiet-${unique()}`;
    await subscribe(owner, name);
    await joins(owner, plainTeam, quin);
    expect((await call(owner, 'DELETE', `/api/teams/${plainTeam}/members/${quin.userId}`)).status).toBe(200);
    expect(catcher.of(name)).toEqual([]);
    // Pia joins the signed team and leaves it: stale once (one push), then in sync again (none).
    await joins(owner, teamId, pia);
    expect(catcher.of(name)).toHaveLength(1);
    expect((await call(pia, 'DELETE', `/api/teams/${teamId}/members/${pia.userId}`)).status).toBe(200);
    expect(catcher.of(name)).toHaveLength(1);
  });
});
