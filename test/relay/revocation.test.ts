// Taking access away reaches open sockets: each test waits for the relay to close the socket (or for
// the next frame's refusal) and fails if that does not come; vitest's timeout bounds the wait, and the
// 5 s target is asserted on the elapsed time.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hostsReachableBy } from '../../src/relay/objects/revocations.ts';
import { FakeHost, OWNER, until, userItem } from './peers.ts';
import { api, chatOf, expire, grant, lobbyOf, signIn, team } from './people.ts';

const TARGET_MS = 5_000;
let hosts = 0;

async function setup(chatIds = ['r1']) {
  const host = await new FakeHost(`host-revoke-${++hosts}`).connect();
  for (const chatId of chatIds) host.create(chatId, [userItem('u1', 'hi')]);
  const owner = await signIn(OWNER);
  return { host, owner };
}

/** Resolves with the close once it comes, and how long after `since` it came. */
async function closedWithin<T extends { code: number; reason: string }>(closed: Promise<T>, since: number): Promise<T> {
  const result = await closed;
  expect(Date.now() - since).toBeLessThan(TARGET_MS);
  return result;
}

describe('revocation reaches open sockets', () => {
  it("removing a grant closes that person's lobby and chat sockets (4403), even one that only listens", async () => {
    const { host, owner } = await setup();
    const bob = await signIn(`revoke-bob-${hosts}`);
    const { id } = await grant(owner, host.hostId, { type: 'user', id: bob.userId }, 'operator');
    const lobby = await lobbyOf(bob, host.hostId);
    const chat = await chatOf(bob, host.hostId, 'r1');
    expect((await chat.client.request('chat.attach', { chatId: 'r1' })).ok).toBe(true);
    const ownerChat = await chatOf(owner, host.hostId, 'r1');

    const since = Date.now();
    expect((await api(owner, 'DELETE', `/api/hosts/${host.hostId}/grants/${id}`)).status).toBe(200);
    expect(await closedWithin(lobby.closed, since)).toEqual({ code: 4403, reason: 'access revoked' });
    expect(await closedWithin(chat.closed, since)).toEqual({ code: 4403, reason: 'access revoked' });
    // The owner's socket on the same chat keeps going.
    expect((await ownerChat.client.request('chat.attach', { chatId: 'r1' })).ok).toBe(true);
  });

  it('lowering a grant keeps the sockets open and refuses the next frame the new role does not cover', async () => {
    const { host, owner } = await setup();
    const carol = await signIn(`revoke-carol-${hosts}`);
    await grant(owner, host.hostId, { type: 'user', id: carol.userId }, 'operator');
    const chat = await chatOf(carol, host.hostId, 'r1');
    expect((await chat.client.request('chat.send', { chatId: 'r1', text: 'before' })).ok).toBe(true);

    const since = Date.now();
    await grant(owner, host.hostId, { type: 'user', id: carol.userId }, 'viewer');
    const refused = await chat.client.request('chat.send', { chatId: 'r1', text: 'after' });
    expect(Date.now() - since).toBeLessThan(TARGET_MS);
    expect(refused.error).toMatchObject({ code: 'forbidden', message: 'chat.send needs the operator role' });
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['before']);
    expect((await chat.client.request('chat.attach', { chatId: 'r1' })).ok).toBe(true);
  });

  it('a grant lowered and raised back serves the raised role at once on the sockets that stayed open', async () => {
    const { host, owner } = await setup();
    const ivy = await signIn(`revoke-ivy-${hosts}`);
    await grant(owner, host.hostId, { type: 'user', id: ivy.userId }, 'operator');
    const chat = await chatOf(ivy, host.hostId, 'r1');
    const lobby = await lobbyOf(ivy, host.hostId);
    expect((await chat.client.request('chat.send', { chatId: 'r1', text: 'as operator' })).ok).toBe(true);

    // Lowering rechecks every socket of the host, which reads (and caches) her viewer role.
    await grant(owner, host.hostId, { type: 'user', id: ivy.userId }, 'viewer');
    expect((await chat.client.request('chat.send', { chatId: 'r1', text: 'as viewer' })).error).toMatchObject({ code: 'forbidden' });
    expect((await lobby.client.request('chat.create', { chatId: 'r-viewer' })).error).toMatchObject({ code: 'forbidden' });

    // Raised back: the very next frames on the same sockets (same session) are served as an operator's.
    await grant(owner, host.hostId, { type: 'user', id: ivy.userId }, 'operator');
    const sent = await chat.client.request('chat.send', { chatId: 'r1', text: 'raised back' });
    expect(sent.error).toBeUndefined();
    const created = await lobby.client.request('chat.create', { chatId: 'r-raised' });
    expect(created.error).toBeUndefined();
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['as operator', 'raised back']);
    expect(host.requestsOf('chat.create').map((f) => f.payload.chatId)).toEqual(['r-raised']);
  });

  it('a chat grant widened to the whole host shows every chat on the lobby that stayed open, and its events reach it, at once', async () => {
    const { host, owner } = await setup(['w1', 'w2']);
    const kim = await signIn(`revoke-kim-${hosts}`);
    await grant(owner, host.hostId, { type: 'user', id: kim.userId }, 'viewer', 'w1');
    const lobby = await lobbyOf(kim, host.hostId);
    const listed = async () => ((await lobby.client.request('chat.list', {})).result as { chats: { chatId: string }[] }).chats.map((c) => c.chatId).sort();
    expect(await listed()).toEqual(['w1']);
    // Her view is cached now; the grant below reaches it without waiting for it to age out.
    await grant(owner, host.hostId, { type: 'user', id: kim.userId }, 'viewer');
    expect(await listed()).toEqual(['w1', 'w2']);
    host.sendEvent('chat.status', { chatId: 'w2', info: { ...host.chats.get('w2')!.thread.info, title: 'heard at once' } });
    await lobby.client.waitFor((f) => f.event === 'chat.status' && (f.payload as { chatId: string }).chatId === 'w2', "w2's status on her lobby");
  });

  it('a team grant lowered and raised back serves the raised role at once to a member whose socket stayed open', async () => {
    const { host, owner } = await setup();
    const jay = await signIn(`revoke-jay-${hosts}`);
    const teamId = await team(owner, 'raisers', [jay]);
    await grant(owner, host.hostId, { type: 'team', id: teamId }, 'operator');
    const chat = await chatOf(jay, host.hostId, 'r1');
    await grant(owner, host.hostId, { type: 'team', id: teamId }, 'viewer');
    expect((await chat.client.request('chat.send', { chatId: 'r1', text: 'as viewer' })).error).toMatchObject({ code: 'forbidden' });
    await grant(owner, host.hostId, { type: 'team', id: teamId }, 'operator');
    expect((await chat.client.request('chat.send', { chatId: 'r1', text: 'raised back' })).error).toBeUndefined();
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['raised back']);
  });

  it('removing a team membership closes the sockets its grant opened', async () => {
    const { host, owner } = await setup();
    const dana = await signIn(`revoke-dana-${hosts}`);
    const teamId = await team(owner, 'ops', [dana]);
    await grant(owner, host.hostId, { type: 'team', id: teamId }, 'viewer');
    const lobby = await lobbyOf(dana, host.hostId);
    const chat = await chatOf(dana, host.hostId, 'r1');
    expect((await lobby.client.request('chat.list', {})).ok).toBe(true);

    const since = Date.now();
    expect((await api(owner, 'DELETE', `/api/teams/${teamId}/members/${dana.userId}`)).status).toBe(200);
    expect((await closedWithin(lobby.closed, since)).code).toBe(4403);
    expect((await closedWithin(chat.closed, since)).code).toBe(4403);
  });

  it("revoking a session closes its sockets (4401) and leaves the person's other session working", async () => {
    const { host, owner } = await setup();
    const phone = await signIn(`revoke-erin-${hosts}`);
    const laptop = await signIn(phone.userId);
    await grant(owner, host.hostId, { type: 'user', id: phone.userId }, 'operator');
    const onPhone = await chatOf(phone, host.hostId, 'r1');
    const onLaptop = await chatOf(laptop, host.hostId, 'r1');

    const since = Date.now();
    // From the laptop, the person ends the phone's session.
    expect((await api(laptop, 'DELETE', `/api/auth/sessions/${phone.sessionId}`)).status).toBe(200);
    expect(await closedWithin(onPhone.closed, since)).toEqual({ code: 4401, reason: 'session ended' });
    expect((await onLaptop.client.request('chat.attach', { chatId: 'r1' })).ok).toBe(true);
  });

  it('disabling a user closes every socket of theirs (4401)', async () => {
    const { host, owner } = await setup(['r1', 'r2']);
    const finn = await signIn(`revoke-finn-${hosts}`);
    await grant(owner, host.hostId, { type: 'user', id: finn.userId }, 'viewer');
    const teamId = await team(owner, "finn's", [finn]);
    await grant(owner, host.hostId, { type: 'team', id: teamId }, 'viewer', 'r2');
    expect(await hostsReachableBy(env.DB, finn.userId)).toEqual([host.hostId]);
    const sockets = [await lobbyOf(finn, host.hostId), await chatOf(finn, host.hostId, 'r1'), await chatOf(finn, host.hostId, 'r2')];

    const admin = await signIn('revoke-relay-owner', { owner: true });
    const since = Date.now();
    expect((await api(admin, 'POST', `/api/users/${finn.userId}/disable`)).status).toBe(200);
    for (const socket of sockets) expect((await closedWithin(socket.closed, since)).code).toBe(4401);
  });

  it('a session that runs out is refused on its next frames and closed (4401) without anyone rechecking', async () => {
    const { host, owner } = await setup();
    const gus = await signIn(`revoke-gus-${hosts}`);
    await grant(owner, host.hostId, { type: 'user', id: gus.userId }, 'viewer');
    const chat = await chatOf(gus, host.hostId, 'r1');
    expect((await chat.client.request('chat.attach', { chatId: 'r1' })).ok).toBe(true);

    const since = Date.now();
    await expire(gus.sessionId);
    // The room's cached view lives at most two seconds: frames pass until it is read again, then the
    // first refused one closes the socket.
    let refusal: any = null;
    await until(
      async () => {
        const reply = await chat.client.request('chat.attach', { chatId: 'r1' });
        if (!reply.ok) refusal = reply.error;
        return !reply.ok;
      },
      'a refused frame',
      TARGET_MS,
    );
    expect(refusal.code).toBe('unauthorized');
    expect(await closedWithin(chat.closed, since)).toEqual({ code: 4401, reason: 'session ended' });
  });

  it('revoking a chat-only grant closes the socket on that chat and the lobby it opened', async () => {
    const { host, owner } = await setup(['r1', 'r2']);
    const hana = await signIn(`revoke-hana-${hosts}`);
    const { id } = await grant(owner, host.hostId, { type: 'user', id: hana.userId }, 'operator', 'r1');
    const lobby = await lobbyOf(hana, host.hostId);
    const chat = await chatOf(hana, host.hostId, 'r1');
    expect((await chat.client.request('chat.attach', { chatId: 'r1' })).ok).toBe(true);

    const since = Date.now();
    await api(owner, 'DELETE', `/api/hosts/${host.hostId}/grants/${id}`);
    expect((await closedWithin(chat.closed, since)).code).toBe(4403);
    expect((await closedWithin(lobby.closed, since)).code).toBe(4403);
  });
});
