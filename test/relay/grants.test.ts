// Grants: a host's owner gives a user or a team a role on the whole host or on one chat; a chat-level
// grantee sees only that chat everywhere the relay lists chats, and cannot make new ones.
import { describe, expect, it } from 'vitest';
import { FakeHost, OWNER, infoFor, until, userItem, visualTicket } from './peers.ts';
import { api, chatOf, grant, lobbyOf, refusedAt, signIn, team } from './people.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-grants-${++hosts}`).connect();

describe('a grant on one chat', () => {
  it('shows only that chat in chat.list, chat.status and GET /api/chats, and cannot create chats', async () => {
    const host = await newHost();
    host.create('g1', [userItem('u1', 'one')]);
    host.create('g2', [userItem('u2', 'two')]);
    const owner = await signIn(OWNER);
    const ivy = await signIn(`grants-ivy-${hosts}`);
    await grant(owner, host.hostId, { type: 'user', id: ivy.userId }, 'operator', 'g1');

    const lobby = await lobbyOf(ivy, host.hostId);
    const ownerLobby = await lobbyOf(owner, host.hostId);
    const listed = await lobby.client.request('chat.list', {});
    expect(listed.result.chats.map((c: any) => c.chatId)).toEqual(['g1']);
    expect((await ownerLobby.client.request('chat.list', {})).result.chats.map((c: any) => c.chatId).sort()).toEqual(['g1', 'g2']);

    // g2's status is pushed first: by the time g1's arrives, g2's would have too.
    host.sendEvent('chat.status', { chatId: 'g2', info: infoFor('g2', { status: 'running' }) });
    host.sendEvent('chat.status', { chatId: 'g1', info: infoFor('g1', { status: 'running' }) });
    await lobby.client.waitFor((f) => f.event === 'chat.status' && f.payload.chatId === 'g1', 'g1 status');
    await ownerLobby.client.waitFor((f) => f.event === 'chat.status' && f.payload.chatId === 'g1', 'g1 status for the owner');
    expect(lobby.client.frames.filter((f) => f.event === 'chat.status').map((f) => f.payload.chatId)).toEqual(['g1']);
    expect(ownerLobby.client.frames.filter((f) => f.event === 'chat.status').map((f) => f.payload.chatId)).toEqual(['g2', 'g1']);

    await until(async () => (await api(owner, 'GET', '/api/chats')).body.chats.filter((c: any) => c.hostId === host.hostId).length === 2, 'both chats indexed');
    const index = await api(ivy, 'GET', '/api/chats');
    expect(index.status).toBe(200);
    expect(index.body.chats.map((c: any) => [c.hostId, c.info.chatId, c.role])).toEqual([[host.hostId, 'g1', 'operator']]);

    const create = await lobby.client.request('chat.create', { chatId: 'g3' });
    expect(create.error.code).toBe('forbidden');
    expect(host.requestsOf('chat.create')).toHaveLength(0);

    // Their chat works at their role; the other one does not open at all.
    const chat = await chatOf(ivy, host.hostId, 'g1');
    expect((await chat.client.request('chat.send', { chatId: 'g1', text: 'hi' })).ok).toBe(true);
    expect(await refusedAt(ivy, `/v1/hosts/${host.hostId}/chats/g2`)).toEqual({ status: 403, code: 'forbidden' });
    // A chat request for g2 sent on the lobby is refused too, by g2's room.
    expect((await lobby.client.request('chat.send', { chatId: 'g2', text: 'sneaky' })).error.code).toBe('forbidden');
    expect(host.requestsOf('chat.send').map((f) => f.payload.chatId)).toEqual(['g1']);

    // Visual pages open for their chat only.
    expect((await visualTicket(host.hostId, 'g1', 'v1', ivy.userId)).status).toBe(200);
    expect((await visualTicket(host.hostId, 'g2', 'v1', ivy.userId)).status).toBe(403);

    // While the host is away, the list comes from the index: filtered the same way.
    host.disconnect();
    await lobby.client.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'host offline');
    expect((await lobby.client.request('chat.list', {})).result.chats.map((c: any) => c.chatId)).toEqual(['g1']);
  });
});

describe('requests that make new chats', () => {
  it('need the role on the whole host: a chat-level grantee cannot fork or continue their chat elsewhere', async () => {
    const host = await newHost();
    host.create('f1', [userItem('u1', 'one')]);
    host.handlers['chat.fork'] = () => ({});
    host.handlers['chat.continueOn'] = () => ({});
    const owner = await signIn(OWNER);
    const ola = await signIn(`grants-ola-${hosts}`);
    const pia = await signIn(`grants-pia-${hosts}`);
    // Even `owner` on the one chat (which covers continueOn there) makes no chats on the host.
    await grant(owner, host.hostId, { type: 'user', id: ola.userId }, 'owner', 'f1');
    await grant(owner, host.hostId, { type: 'user', id: pia.userId }, 'operator');

    const chat = await chatOf(ola, host.hostId, 'f1');
    const lobby = await lobbyOf(ola, host.hostId);
    const fork = { chatId: 'f1', turnId: 't1', worktree: {}, account: 'work' };
    expect((await chat.client.request('chat.fork', fork)).error.code).toBe('forbidden');
    expect((await lobby.client.request('chat.fork', fork)).error.code).toBe('forbidden');
    expect((await chat.client.request('chat.continueOn', { chatId: 'f1', account: 'work' })).error.code).toBe('forbidden');
    expect(host.requestsOf('chat.fork')).toHaveLength(0);
    expect(host.requestsOf('chat.continueOn')).toHaveLength(0);
    // Their own chat still works at their role.
    expect((await chat.client.request('chat.send', { chatId: 'f1', text: 'hi' })).ok).toBe(true);

    // A host-wide operator forks as before.
    const byPia = await chatOf(pia, host.hostId, 'f1');
    expect((await byPia.client.request('chat.fork', { chatId: 'f1', turnId: 't1' })).ok).toBe(true);
    expect(host.requestsOf('chat.fork')).toHaveLength(1);
  });
});

describe('the grants API', () => {
  it('is for holders of owner on the host; grants users by id or email and teams, changes and removes them', async () => {
    const host = await newHost();
    const owner = await signIn(OWNER);
    const jay = await signIn(`grants-jay-${hosts}`);
    const kim = await signIn(`grants-kim-${hosts}`);
    const path = `/api/hosts/${host.hostId}/grants`;

    // Nobody without owner on the host lists or gives grants.
    expect((await api(jay, 'GET', path)).body.code).toBe('forbidden');
    await grant(owner, host.hostId, { type: 'user', id: jay.userId }, 'operator');
    expect((await api(jay, 'GET', path)).status).toBe(403);
    expect((await api(jay, 'POST', path, { subject: { type: 'user', id: jay.userId }, role: 'owner' })).status).toBe(403);
    expect((await api(null, 'GET', path)).status).toBe(401);

    // Bad input names its field; unknown subjects are not found.
    const bad = await api(owner, 'POST', path, { subject: { type: 'user', id: kim.userId }, role: 'admin' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('role');
    expect((await api(owner, 'POST', path, { subject: { type: 'user', email: 'nobody@test.invalid' }, role: 'viewer' })).body.code).toBe('user-not-found');
    expect((await api(owner, 'POST', path, { subject: { type: 'team', id: 't_nope' }, role: 'viewer' })).body.code).toBe('team-not-found');
    expect((await api(owner, 'DELETE', `${path}/g_nope`)).status).toBe(404);

    // Giving again changes the role of the same grant.
    const first = await api(owner, 'POST', path, { subject: { type: 'user', email: `${kim.userId}@test.invalid` }, role: 'viewer', chatId: 'k1' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ hostId: host.hostId, chatId: 'k1', role: 'viewer', subject: { type: 'user', id: kim.userId } });
    const again = await api(owner, 'POST', path, { subject: { type: 'user', id: kim.userId }, role: 'operator', chatId: 'k1' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.body.id, role: 'operator' });

    // An owner by grant manages grants too.
    const teamId = await team(owner, 'grants team');
    await grant(owner, host.hostId, { type: 'user', id: jay.userId }, 'owner');
    const byJay = await api(jay, 'POST', path, { subject: { type: 'team', id: teamId }, role: 'viewer' });
    expect(byJay.status).toBe(201);
    const listed = await api(jay, 'GET', path);
    expect(listed.body.grants.map((g: any) => [g.subject.type, g.subject.name, g.chatId, g.role])).toEqual([
      ['user', `${jay.userId}@test.invalid`, null, 'owner'],
      ['user', `${kim.userId}@test.invalid`, 'k1', 'operator'],
      ['team', 'grants team', null, 'viewer'],
    ]);

    expect((await api(owner, 'DELETE', `${path}/${first.body.id}`)).body).toEqual({ removed: first.body.id });
    expect((await api(owner, 'GET', path)).body.grants).toHaveLength(2);
  });

  it("a team's grant reaches every member, whatever their team role", async () => {
    const host = await newHost();
    host.create('t1', []);
    const owner = await signIn(OWNER);
    const lee = await signIn(`grants-lee-${hosts}`);
    const teamId = await team(owner, 'readers', [lee]);
    expect(await refusedAt(lee, `/v1/hosts/${host.hostId}/lobby`)).toEqual({ status: 403, code: 'forbidden' });
    await grant(owner, host.hostId, { type: 'team', id: teamId }, 'viewer');
    const lobby = await lobbyOf(lee, host.hostId);
    expect((await lobby.client.request('chat.list', {})).result.chats.map((c: any) => c.chatId)).toEqual(['t1']);
    expect((await lobby.client.request('chat.create', { chatId: 't2' })).error.code).toBe('forbidden');
  });
});
