// A signed team grant after its team changed, in workerd with real D1 and the real HostLink: the
// grants list names who joined and who left since the owner's device signed (`resign`), a grant
// signed again with the members as they are now clears it and replaces the old statement on the way
// to the host, and a signature over a member list the team no longer has is refused (`team-changed`).
// Hosts are left connected at the end of each test, as in every other file (see hosts.test.ts: a
// disconnect as a file's last step meets vitest's teardown).
import { SELF, env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair, type DeviceKey } from '../../src/client/device-key.ts';
import { RelayApi } from '../../src/client/api.ts';
import { MemoryTokenStore } from '../../src/client/tokens.ts';
import { resignTeamGrant, shareSigned, signGrant } from '../../src/client/trust.ts';
import {
  GrantSchema,
  LinkTrustSchema,
  TeamGrantsToSignSchema,
  TeamMembersToSignSchema,
  type Grant,
  type GrantStatement,
  type HostSummary,
} from '../../src/contracts/index.ts';
import { putSignedGrant } from '../../src/relay/db/trust.ts';
import { FakeHost, OWNER, until } from './peers.ts';
import { api, signIn, team, type Person } from './people.ts';

const unique = () => crypto.randomUUID().slice(0, 8);

async function deviceOf(person: Person): Promise<DeviceKey> {
  const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  expect((await api(person, 'POST', '/api/devices', { name: `sdk-${unique()}`, publicKey: key.publicKey })).status).toBe(201);
  return key;
}

async function grantsOf(owner: Person, hostId: string): Promise<Grant[]> {
  const listed = await api(owner, 'GET', `/api/hosts/${hostId}/grants`);
  expect(listed.status).toBe(200);
  return listed.body.grants.map((g: unknown) => GrantSchema.parse(g));
}

describe('a signed team grant after its team changed', () => {
  it('is listed with who joined and who left; signed again with the members now, it is in sync and replaces the old statement on the host', async () => {
    const owner = await signIn(OWNER);
    const key = await deviceOf(owner);
    const host = await new FakeHost(`host-resign-${unique()}`).connect();
    const [ann, ben] = [await signIn(`ann-${unique()}`), await signIn(`ben-${unique()}`)];
    const teamId = await team(owner, `crew-${unique()}`, [ann]);
    const subject = { type: 'team', id: teamId } as const;
    const sign = (members: string[]) => signGrant(key, { hostId: host.hostId, subject: { kind: 'team', teamId, members }, role: 'operator', devices: [] });
    const post = (signed: Awaited<ReturnType<typeof sign>>) => api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject, role: 'operator', signed });

    const first = await sign([owner.userId, ann.userId]);
    expect((await post(first)).status).toBe(201);
    expect(await grantsOf(owner, host.hostId)).toMatchObject([{ id: first.statement.grantId, signed: true, resign: null }]);

    // Ben joins: the owner's signature does not vouch for him yet.
    const invitation = await api(owner, 'POST', `/api/teams/${teamId}/invitations`, { role: 'member' });
    expect((await api(ben, 'POST', `/api/invitations/${invitation.body.token}/accept`)).status).toBe(200);
    expect((await grantsOf(owner, host.hostId))[0]!.resign).toEqual({ joined: [{ userId: ben.userId, name: expect.any(String) }], left: [] });

    // The owner's list of hosts says one grant needs signing again; a member's does not (they cannot sign it).
    const listed = async (who: Person) => ((await api(who, 'GET', '/api/hosts')).body.hosts as HostSummary[]).find((h) => h.id === host.hostId);
    expect((await listed(owner))!.teamGrantsToSign).toBe(1);
    expect(await listed(ben)).toMatchObject({ role: 'operator' });
    expect((await listed(ben))!.teamGrantsToSign).toBeUndefined();

    // Ann leaves: the old signature still names her.
    expect((await api(owner, 'DELETE', `/api/teams/${teamId}/members/${ann.userId}`)).status).toBe(200);
    const stale = (await grantsOf(owner, host.hostId))[0]!;
    expect(stale.resign).toEqual({ joined: [{ userId: ben.userId, name: expect.any(String) }], left: [{ userId: ann.userId, name: expect.any(String) }] });
    // The names are the people's, as the relay knows them.
    const benName = (await api(ben, 'GET', '/api/me')).body.name;
    expect(stale.resign!.joined[0]!.name).toBe(benName);

    // Signed again over the members it had (Ann, no Ben): refused, with the drift in the message, and nothing reaches the host.
    const framesBefore = host.received.filter((f) => f.link === 'trust').length;
    const wrong = await post(await sign([owner.userId, ann.userId]));
    expect(wrong.status).toBe(409);
    expect(wrong.body).toEqual({ code: 'team-changed', message: expect.stringContaining('1 joined, 1 left') });
    // Half right (Ben added, Ann kept) is as wrong.
    expect((await post(await sign([owner.userId, ann.userId, ben.userId]))).body.code).toBe('team-changed');
    expect((await grantsOf(owner, host.hostId))[0]!.id).toBe(first.statement.grantId);

    // Signed again with the members now: the grant is in sync, under the new statement's id.
    const again = await sign([ben.userId, owner.userId]);
    const resigned = await post(again);
    expect(resigned.status).toBe(200);
    expect(GrantSchema.parse(resigned.body)).toMatchObject({ id: again.statement.grantId, signed: true, resign: null });
    expect(await grantsOf(owner, host.hostId)).toMatchObject([{ id: again.statement.grantId, signed: true, resign: null }]);
    expect((await listed(owner))!.teamGrantsToSign).toBeUndefined();

    // The host got the new statement (the only one sent since the refusals), and the relay keeps it alone.
    await until(() => host.received.filter((f) => f.link === 'trust').length === framesBefore + 1, 'the new grant on the link');
    const sent = host.received
      .filter((f) => f.link === 'trust')
      .slice(framesBefore)
      .map((f) => LinkTrustSchema.parse(f).statements);
    expect(sent).toEqual([[again]]);
    host.disconnect();
    host.received.length = 0;
    await host.connect();
    await until(() => host.received.some((f) => f.link === 'trust'), 'the whole set on connect');
    const all = LinkTrustSchema.parse(host.received.find((f) => f.link === 'trust')).statements as { statement: GrantStatement }[];
    expect(all.map((s) => s.statement.grantId)).toEqual([again.statement.grantId]);
  });

  it('keeps a signed team grant only while the team has the members it names, in the same write (a change after the route checked cannot slip in)', async () => {
    const owner = await signIn(OWNER);
    const key = await deviceOf(owner);
    const host = await new FakeHost(`host-resign-${unique()}`).connect();
    const hal = await signIn(`hal-${unique()}`);
    const teamId = await team(owner, `crew-${unique()}`, [hal]);
    const row = { chatId: '', subjectType: 'team' as const, subjectId: teamId, createdBy: owner.userId, createdAt: Date.now() };
    const sign = (members: string[]) => signGrant(key, { hostId: host.hostId, subject: { kind: 'team', teamId, members }, role: 'viewer', devices: [] });
    // As the route would have checked them a moment before Hal joined, or after someone else left: not kept.
    for (const members of [[owner.userId], [owner.userId, hal.userId, `ivy-${unique()}`], [owner.userId, `ivy-${unique()}`]]) {
      expect(await putSignedGrant(env.DB, await sign(members), row)).toEqual({ kept: false });
    }
    expect(await grantsOf(owner, host.hostId)).toEqual([]);
    // The members now, in any order and named twice: kept, and kept again when signed anew.
    const now = await sign([hal.userId, owner.userId, hal.userId]);
    expect(await putSignedGrant(env.DB, now, row)).toEqual({ kept: true });
    const later = await sign([owner.userId, hal.userId]);
    expect(await putSignedGrant(env.DB, later, row)).toEqual({ kept: true });
    expect((await grantsOf(owner, host.hostId)).map((g) => [g.id, g.resign])).toEqual([[later.statement.grantId, null]]);
  });

  it('a member who is no owner of the host sees the grants that reach them, with the drift, and nothing else', async () => {
    const owner = await signIn(OWNER);
    const key = await deviceOf(owner);
    const host = await new FakeHost(`host-resign-${unique()}`).connect();
    const [dot, eli, fay] = [await signIn(`dot-${unique()}`), await signIn(`eli-${unique()}`), await signIn(`fay-${unique()}`)];
    const teamId = await team(owner, `crew-${unique()}`, [dot]);
    const signed = await signGrant(key, {
      hostId: host.hostId,
      subject: { kind: 'team', teamId, members: [owner.userId, dot.userId] },
      role: 'operator',
      devices: [],
    });
    expect((await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: teamId }, role: 'operator', signed })).status).toBe(
      201,
    );
    expect((await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'user', id: fay.userId }, role: 'viewer' })).status).toBe(201);
    const invitation = await api(owner, 'POST', `/api/teams/${teamId}/invitations`, { role: 'member' });
    expect((await api(eli, 'POST', `/api/invitations/${invitation.body.token}/accept`)).status).toBe(200);

    const mine = async (who: Person) => api(who, 'GET', `/api/hosts/${host.hostId}/grants/mine`);
    for (const member of [dot, eli]) {
      const seen = await mine(member);
      expect(seen.status).toBe(200);
      expect(seen.body.grants.map((g: unknown) => GrantSchema.parse(g))).toMatchObject([
        { id: signed.statement.grantId, resign: { joined: [{ userId: eli.userId }], left: [] } },
      ]);
    }
    // Fay's own grant, not the team's; nobody without a role here sees anything.
    expect((await mine(fay)).body.grants.map((g: Grant) => [g.subject.id, g.resign])).toEqual([[fay.userId, null]]);
    expect(await mine(await signIn(`gus-${unique()}`))).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    // The owners' list stays theirs.
    expect((await api(dot, 'GET', `/api/hosts/${host.hostId}/grants`)).status).toBe(403);
  });

  it("an unsigned team grant and a person's grant carry no drift: the relay's own grant follows the team, and no host was told otherwise", async () => {
    const owner = await signIn(OWNER);
    const host = await new FakeHost(`host-resign-${unique()}`).connect();
    const cy = await signIn(`cy-${unique()}`);
    const plainTeam = await team(owner, `plain-${unique()}`, [cy]);
    expect((await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: plainTeam }, role: 'viewer' })).status).toBe(201);
    expect(
      (await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'user', id: cy.userId }, role: 'viewer', chatId: 'c1' })).status,
    ).toBe(201);
    // Cy leaves the unsigned team: the relay's own grant follows the team, there is nothing to sign again.
    expect((await api(owner, 'DELETE', `/api/teams/${plainTeam}/members/${cy.userId}`)).status).toBe(200);
    expect((await grantsOf(owner, host.hostId)).map((g) => [g.subject.type, g.signed, g.resign])).toEqual([
      ['team', false, null],
      ['user', false, null],
    ]);
  });
});

/** The SDK as this person calls the relay (their session's access token, never refreshed here). */
function sdkOf(person: Person): RelayApi {
  const tokens = new MemoryTokenStore({
    sessionId: person.sessionId,
    refreshToken: 'unused',
    accessToken: person.token,
    expiresAt: Date.now() + 600_000,
    userId: person.userId,
  });
  return new RelayApi('http://relay.test', { tokens, fetch: (input, init) => SELF.fetch(String(input), init) });
}

describe('an owner of the host who is not in the team', () => {
  it("reads the team's members (ids and names only) and signs its grant, first and again after the team changed; the grant is kept and reaches the host", async () => {
    const owner = await signIn(OWNER);
    const key = await deviceOf(owner);
    const host = await new FakeHost(`host-outsider-${unique()}`).connect();
    const [ada, bo, cas] = [await signIn(`ada-${unique()}`), await signIn(`bo-${unique()}`), await signIn(`cas-${unique()}`)];
    // Ada's team; the host's owner is not in it.
    const teamId = await team(ada, `theirs-${unique()}`, [bo]);
    expect((await api(owner, 'GET', `/api/teams/${teamId}`)).body.code).toBe('team-not-found');
    const sdk = sdkOf(owner);
    const framesBefore = host.received.filter((f) => f.link === 'trust').length;

    // The first grant: the relay's grant is made, then signed over Ada and Bo.
    const given = await shareSigned(sdk, key, host.hostId, { subject: { type: 'team', id: teamId }, role: 'operator' });
    expect(given).toMatchObject({ subject: { type: 'team', id: teamId }, role: 'operator', signed: true, resign: null });
    const members = await api(owner, 'GET', `/api/hosts/${host.hostId}/grants/teams/${teamId}/members`);
    expect(members.status).toBe(200);
    expect(members.body).toEqual({
      teamId,
      members: [
        { userId: ada.userId, name: expect.any(String) },
        { userId: bo.userId, name: expect.any(String) },
      ],
    });
    expect(
      TeamMembersToSignSchema.strict()
        .parse(members.body)
        .members.every((m) => Object.keys(m).sort().join() === 'name,userId'),
    ).toBe(true);

    // Cas joins: the owner outside the team signs again and the grant is in sync, under the new id.
    const invitation = await api(ada, 'POST', `/api/teams/${teamId}/invitations`, { role: 'member' });
    expect((await api(cas, 'POST', `/api/invitations/${invitation.body.token}/accept`)).status).toBe(200);
    const stale = (await grantsOf(owner, host.hostId)).find((g) => g.subject.id === teamId)!;
    expect(stale.resign).toMatchObject({ joined: [{ userId: cas.userId }], left: [] });
    const again = await resignTeamGrant(sdk, key, stale);
    expect(again).toMatchObject({ signed: true, resign: null });
    expect(again.id).not.toBe(stale.id);
    expect(await grantsOf(owner, host.hostId)).toMatchObject([{ id: again.id, signed: true, resign: null }]);

    // The host got both statements; the last names the three members.
    await until(() => host.received.filter((f) => f.link === 'trust').length >= framesBefore + 2, 'both signed grants on the link');
    const sent = host.received
      .filter((f) => f.link === 'trust')
      .slice(framesBefore)
      .flatMap((f) => LinkTrustSchema.parse(f).statements) as { statement: GrantStatement }[];
    const last = sent.at(-1)!.statement;
    expect(last.grantId).toBe(again.id);
    expect(last.subject).toEqual({ kind: 'team', teamId, members: [ada.userId, bo.userId, cas.userId] });
  });

  it("is the only one who reads them: a viewer or operator of the host, a team's stranger, and an owner of another host are refused with a code and a reason", async () => {
    const owner = await signIn(OWNER);
    const host = await new FakeHost(`host-outsider-${unique()}`).connect();
    const [dee, vic, opal, stan] = [
      await signIn(`dee-${unique()}`),
      await signIn(`vic-${unique()}`),
      await signIn(`opal-${unique()}`),
      await signIn(`stan-${unique()}`),
    ];
    const teamId = await team(dee, `theirs-${unique()}`);
    expect((await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: teamId }, role: 'viewer' })).status).toBe(201);
    expect((await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'user', id: vic.userId }, role: 'viewer' })).status).toBe(201);
    expect((await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'user', id: opal.userId }, role: 'operator' })).status).toBe(201);
    const path = `/api/hosts/${host.hostId}/grants/teams/${teamId}/members`;
    for (const who of [vic, opal, stan]) {
      expect(await api(who, 'GET', path)).toEqual({ status: 403, body: { code: 'forbidden', message: 'This needs the owner role on the host' } });
    }
    // Even the team's own member, who is only a viewer of the host through it, reads the list on the team's page, not here.
    expect((await api(dee, 'GET', path)).body.code).toBe('forbidden');
    expect((await api(null, 'GET', path)).status).toBe(401);
    // The owner, for a team that holds nothing on the host and that they are not in: not listed.
    const other = await team(stan, `elsewhere-${unique()}`);
    expect(await api(owner, 'GET', `/api/hosts/${host.hostId}/grants/teams/${other}/members`)).toEqual({
      status: 404,
      body: { code: 'team-not-found', message: expect.stringContaining('No such team holds a grant on this host') },
    });
    expect((await api(owner, 'GET', path)).status).toBe(200);
  });
});

describe("the team's page says where its grant must be signed again", () => {
  it('lists, for a member who owns the host, the hosts whose signed grant of the team is stale; a member who owns nothing and a stranger learn nothing', async () => {
    const owner = await signIn(OWNER);
    const key = await deviceOf(owner);
    const host = await new FakeHost(`host-teampage-${unique()}`).connect();
    const [ike, jo] = [await signIn(`ike-${unique()}`), await signIn(`jo-${unique()}`)];
    const teamId = await team(owner, `crew-${unique()}`, [ike]);
    const toSign = (who: Person) => api(who, 'GET', `/api/teams/${teamId}/grants-to-sign`);
    const signed = await signGrant(key, {
      hostId: host.hostId,
      subject: { kind: 'team', teamId, members: [owner.userId, ike.userId] },
      role: 'viewer',
      devices: [],
    });
    expect((await api(owner, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'team', id: teamId }, role: 'viewer', signed })).status).toBe(201);
    // In sync: nothing to sign.
    expect(await toSign(owner)).toEqual({ status: 200, body: { hosts: [] } });

    const invitation = await api(owner, 'POST', `/api/teams/${teamId}/invitations`, { role: 'member' });
    expect((await api(jo, 'POST', `/api/invitations/${invitation.body.token}/accept`)).status).toBe(200);
    const hostName = ((await api(owner, 'GET', '/api/hosts')).body.hosts as HostSummary[]).find((h) => h.id === host.hostId)!.name;
    const answer = await toSign(owner);
    expect(answer).toEqual({ status: 200, body: { hosts: [{ hostId: host.hostId, hostName, grants: 1 }] } });
    expect(TeamGrantsToSignSchema.parse(answer.body).hosts).toHaveLength(1);
    // Ike and Jo are members (viewers of the host through the team) and own nothing: no hosts.
    for (const member of [ike, jo]) expect(await toSign(member)).toEqual({ status: 200, body: { hosts: [] } });
    expect(await toSign(await signIn(`kit-${unique()}`))).toEqual({ status: 404, body: { code: 'team-not-found', message: 'No such team' } });
  });
});
