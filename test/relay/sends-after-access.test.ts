// A send runs on the machine later than it was made: one the relay kept while the host was away, or
// one the host queued behind a running turn. Either must still be its sender's to make when it would
// run: a sender who lost the right to send in the chat meanwhile has it refused (`chat.sendRefused`),
// and it never runs.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { ChatQueuedMessage } from '../../src/contracts/index.ts';
import { FakeHost, OWNER, infoFor, until } from './peers.ts';
import { api, chatOf, grant, signIn, type Person, type Watched } from './people.ts';

let hosts = 0;

/** A host, its owner and a person with `role` on one chat of it, both attached to that chat. */
async function chatWithSender(role: 'operator' | 'owner' = 'operator') {
  const host = await new FakeHost(`host-sends-${++hosts}`).connect();
  const chatId = 'c1';
  host.create(chatId, []);
  const owner = await signIn(OWNER);
  const ann = await signIn(`sends-ann-${hosts}`);
  const annGrant = await grant(owner, host.hostId, { type: 'user', id: ann.userId }, role, chatId);
  const ownerChat = await chatOf(owner, host.hostId, chatId);
  const annChat = await chatOf(ann, host.hostId, chatId);
  await ownerChat.client.request('chat.attach', { chatId });
  await annChat.client.request('chat.attach', { chatId });
  return { host, chatId, owner, ann, annGrant, ownerChat, annChat };
}

const lower = (owner: Person, hostId: string, who: Person, chatId: string) => grant(owner, hostId, { type: 'user', id: who.userId }, 'viewer', chatId);
const removeGrant = async (owner: Person, hostId: string, grantId: string) => {
  expect((await api(owner, 'DELETE', `/api/hosts/${hostId}/grants/${grantId}`)).status).toBe(200);
};

/** The length of the queue in the last info a socket was sent. */
const shownQueue = (watched: Watched) =>
  watched.client
    .chatEvents()
    .filter((f) => f.payload.event.type === 'info')
    .at(-1)?.payload.event.info.queue?.length ?? 0;

const refusalsIn = (watched: Watched) => watched.client.frames.filter((f) => f.event === 'chat.sendRefused').map((f) => f.payload);

/**
 * Makes the host queue every send behind a turn that never ends, as a busy host does: each send is
 * answered `{queued: true, turnId}` and shown in `info.queue`; `chat.unqueue` takes one out.
 */
function busyHost(host: FakeHost, chatId: string): { queue: ChatQueuedMessage[] } {
  const state = { queue: [] as ChatQueuedMessage[] };
  const showQueue = () => host.emit(chatId, { type: 'info', info: infoFor(chatId, { status: 'running', queue: [...state.queue] }) });
  host.handlers['chat.send'] = (p, f) => {
    const message = { id: `queued-${f.id}`, turnId: `turn-${f.id}`, text: p.text, createdAt: Date.now() };
    state.queue.push(message);
    showQueue();
    return { queued: true, turnId: message.turnId };
  };
  host.handlers['chat.unqueue'] = (p) => {
    const message = state.queue.find((m) => m.id === p.messageId);
    if (!message) throw Object.assign(new Error('That message is no longer queued'), { code: 'request-not-found' });
    state.queue = state.queue.filter((m) => m !== message);
    showQueue();
    return { message };
  };
  return state;
}

describe('a send kept while the host was away', () => {
  it('is refused when delivered if its sender lost the role to send, never reaching the host; the others still go', async () => {
    const { host, chatId, owner, ann, ownerChat, annChat } = await chatWithSender();
    host.disconnect();
    await annChat.client.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline');
    expect((await annChat.client.request('chat.send', { chatId, text: 'from ann' }, 'ann-kept')).result).toEqual({ queued: true });
    expect((await ownerChat.client.request('chat.send', { chatId, text: 'from the owner' }, 'owner-kept')).result).toEqual({ queued: true });

    // Ann is a viewer now: her socket stays open (she may read), her send is no longer hers to make.
    await lower(owner, host.hostId, ann, chatId);
    await host.connect();
    const refused = await annChat.client.waitFor((f) => f.event === 'chat.sendRefused', 'refusal reaches the sender');
    expect(refused.payload).toMatchObject({ chatId, messageId: 'relay:ann-kept', requestId: 'ann-kept', error: { code: 'forbidden' } });
    await until(() => host.requestsOf('chat.send').length === 1, "the owner's send delivered");
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(['from the owner']);
    expect(host.received.some((f) => String(f.id).endsWith('/ann-kept'))).toBe(false);
    expect(refusalsIn(ownerChat).map((p) => p.requestId)).toEqual(['ann-kept']);
  });

  it('is refused when its sender lost the chat altogether, and they hear it when they may attach again', async () => {
    const { host, chatId, owner, ann, annGrant, ownerChat, annChat } = await chatWithSender();
    host.disconnect();
    await annChat.client.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline');
    expect((await annChat.client.request('chat.send', { chatId, text: 'from ann' }, 'ann-gone')).result).toEqual({ queued: true });
    await removeGrant(owner, host.hostId, annGrant.id);
    expect((await annChat.closed).code).toBe(4403);

    await host.connect();
    await ownerChat.client.waitFor((f) => f.event === 'chat.sendRefused', 'refusal told to who is attached');
    expect(refusalsIn(ownerChat)).toEqual([expect.objectContaining({ requestId: 'ann-gone', error: expect.objectContaining({ code: 'forbidden' }) })]);
    expect(host.requestsOf('chat.send')).toHaveLength(0);

    // Given the chat to read again, her next attach tells her first.
    await grant(owner, host.hostId, { type: 'user', id: ann.userId }, 'viewer', chatId);
    const back = await chatOf(ann, host.hostId, chatId);
    await back.client.request('chat.attach', { chatId });
    expect(refusalsIn(back).map((p) => p.messageId)).toEqual(['relay:ann-gone']);
  });
});

describe('a send the host queued', () => {
  it("is taken back from the host, on its sender's behalf, when they lose the role to send, and they hear why", async () => {
    const { host, chatId, owner, ann, ownerChat, annChat } = await chatWithSender();
    const busy = busyHost(host, chatId);
    expect((await annChat.client.request('chat.send', { chatId, text: 'ann waits' }, 'ann-q')).result).toMatchObject({ queued: true });
    expect((await ownerChat.client.request('chat.send', { chatId, text: 'owner waits' }, 'owner-q')).result).toMatchObject({ queued: true });
    expect(busy.queue.map((m) => m.text)).toEqual(['ann waits', 'owner waits']);
    await until(() => shownQueue(ownerChat) === 2, 'both shown queued');

    await lower(owner, host.hostId, ann, chatId);
    const refused = await annChat.client.waitFor((f) => f.event === 'chat.sendRefused', 'refusal reaches the sender');
    expect(refused.payload).toMatchObject({ chatId, messageId: `queued-${ann.userId}/ann-q`, requestId: 'ann-q', error: { code: 'forbidden' } });
    // The host was asked, for Ann, to drop her message and nothing else.
    const unqueues = host.requestsOf('chat.unqueue');
    expect(unqueues.map((f) => [f.payload.messageId, f.by])).toEqual([[`queued-${ann.userId}/ann-q`, ann.userId]]);
    expect(busy.queue.map((m) => m.text)).toEqual(['owner waits']);
    // The host's audit log says the relay did it, for whom.
    const takenBack = () =>
      env.DB.prepare("SELECT actor, detail FROM audit WHERE host_id = ? AND action = 'chat.unqueue'")
        .bind(host.hostId)
        .all<{ actor: string; detail: string }>();
    await until(async () => (await takenBack()).results.length === 1, 'taking back audited');
    const [row] = (await takenBack()).results;
    expect({ actor: row!.actor, detail: JSON.parse(row!.detail) }).toEqual({
      actor: ann.userId,
      detail: { requestId: 'ann-q', messageId: `queued-${ann.userId}/ann-q`, by: 'relay', reason: 'sender lost access' },
    });

    // Another change of access finds nothing more to take back.
    const extra = await grant(owner, host.hostId, { type: 'user', id: ann.userId }, 'viewer');
    await removeGrant(owner, host.hostId, extra.id);
    expect(host.requestsOf('chat.unqueue')).toHaveLength(1);
    expect(busy.queue.map((m) => m.text)).toEqual(['owner waits']);
  });

  it('is taken back when its sender loses the chat altogether, and stays when they keep the role', async () => {
    const { host, chatId, owner, ann, annGrant, ownerChat, annChat } = await chatWithSender('owner');
    // This host says it takes every type unsigned (its requirement off); the one before said nothing (an older host): the same.
    host.unsigned = 'all';
    host.disconnect();
    await host.connect();
    const busy = busyHost(host, chatId);
    await annChat.client.request('chat.send', { chatId, text: 'ann waits' }, 'ann-q2');
    await ownerChat.client.request('chat.send', { chatId, text: 'owner waits' }, 'owner-q2');

    await until(() => shownQueue(ownerChat) === 2, 'both shown queued');
    // Lowered from owner to operator: she may still send, so nothing is taken back.
    await grant(owner, host.hostId, { type: 'user', id: ann.userId }, 'operator', chatId);
    expect(host.requestsOf('chat.unqueue')).toHaveLength(0);
    expect(busy.queue.map((m) => m.text)).toEqual(['ann waits', 'owner waits']);

    await removeGrant(owner, host.hostId, annGrant.id);
    expect((await annChat.closed).code).toBe(4403);
    expect(busy.queue.map((m) => m.text)).toEqual(['owner waits']);
    await ownerChat.client.waitFor((f) => f.event === 'chat.sendRefused', 'refusal told');
    expect(refusalsIn(ownerChat).map((p) => p.requestId)).toEqual(['ann-q2']);
  });

  it('is left to a host that requires signatures: the relay sends it no take-back of its own (the host refuses those and takes the send back itself on a signed revocation)', async () => {
    const { host, chatId, owner, ann, ownerChat, annChat } = await chatWithSender();
    // It takes some types unsigned, not chat.unqueue.
    host.unsigned = ['chat.approve'];
    host.disconnect();
    await host.connect();
    const busy = busyHost(host, chatId);
    await annChat.client.request('chat.send', { chatId, text: 'ann waits' }, 'ann-q3');
    await ownerChat.client.request('chat.send', { chatId, text: 'owner waits' }, 'owner-q3');
    // Both reached the host (kept ones go out only after its hello, which the relay read first).
    await until(() => busy.queue.length === 2 && shownQueue(ownerChat) === 2, 'both shown queued');

    await lower(owner, host.hostId, ann, chatId);
    // The relay has re-read her role (the viewer's sends are refused by it now)...
    expect((await annChat.client.request('chat.send', { chatId, text: 'ann again' })).error).toMatchObject({ code: 'forbidden' });
    // ...and asked the host for nothing, said nothing refused, and audited no take-back of its own.
    expect(host.requestsOf('chat.unqueue')).toHaveLength(0);
    expect(busy.queue.map((m) => m.text)).toEqual(['ann waits', 'owner waits']);
    expect(refusalsIn(annChat)).toEqual([]);
    expect(refusalsIn(ownerChat)).toEqual([]);
    const takenBack = await env.DB.prepare("SELECT actor FROM audit WHERE host_id = ? AND action = 'chat.unqueue'").bind(host.hostId).all();
    expect(takenBack.results).toEqual([]);
  });
});
