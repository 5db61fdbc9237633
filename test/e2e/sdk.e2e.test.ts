// The client SDK against the real relay (wrangler dev) and a real host process with the `script`
// provider: RelayApi over the real routes, a ChatChannel that survives a relay restart mid-stream, a
// send made while the network is down delivered once (by two channels sharing one outbox, as two tabs
// would), a send the relay kept for an offline host and the host refused while this device was away
// learned on reconnecting, once, and a socket whose grant is removed stopping for good on 4403.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ChatChannel, HostConnection, MemoryOutboxStore, RelayApi, type LinkState, type LiveSocket } from '../../src/client/index.ts';
import { LinkProxy } from '../support/link-proxy.ts';
import { until as poll, type NotYet } from '../support/until.ts';
import { HostProcess, Peer, RELAY_OWNER, relayUrl } from './peers.ts';

const host = new HostProcess('sdk-host', RELAY_OWNER);
/** A reply long and slow enough (60 pieces, 40 ms apart) that a relay restart lands in its middle. */
const STREAMED = Array.from({ length: 60 }, (_, i) => `word${i} `).join('');
const fast = { backoff: { baseMs: 100, maxMs: 1_000 } };
const CONFIG = { providers: { claude: { backend: 'script', script: 'sdk-script.json' } } };
let api: RelayApi;
let lobby: HostConnection;
const opened: LiveSocket[] = [];

function track<T extends LiveSocket>(socket: T): T {
  opened.push(socket);
  return socket;
}

const until = <T>(check: () => T | NotYet | Promise<T | NotYet>, what: string, ms = 20_000): Promise<T> =>
  poll(check, what, { ms, every: 20, detail: () => host.output.slice(-2000) });

const states = (socket: LiveSocket): LinkState[] => {
  const seen: LinkState[] = [socket.state];
  socket.onState((s) => seen.push(s));
  return seen;
};

const turnsDone = (channel: ChatChannel) => channel.thread.items.filter((i) => i.kind === 'turn' && i.state !== 'running').length;

beforeAll(async () => {
  writeFileSync(
    path.join(host.dataDir, 'sdk-script.json'),
    JSON.stringify({
      replies: [
        { match: '\\bstream', steps: [{ type: 'text', text: STREAMED, deltas: 60, delayMs: 40 }] },
        { steps: [{ type: 'text', text: 'Got it: {{text}}', deltas: 2, delayMs: 5 }] },
      ],
    }),
  );
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify(CONFIG));
  await host.start();
  api = new RelayApi(relayUrl());
  await api.signIn(inject('ownerEmail'), inject('ownerPassword'));
  lobby = track(new HostConnection(api, host.hostId, fast));
  await until(() => lobby.online, 'the host online in its lobby');
  for (const chatId of ['sdk-restart', 'sdk-offline', 'sdk-queued', 'sdk-refused', 'sdk-shared']) await lobby.request('chat.create', { chatId });
});

afterAll(async () => {
  for (const socket of opened) socket.close();
  await host.stop();
});

describe('the client SDK end to end', () => {
  it('RelayApi: who am I, sessions, hosts with presence, the chat index, a visual ticket, and refusals as ProtocolErrors', async () => {
    const me = await api.me();
    expect(me.isOwner).toBe(true);
    expect((await api.sessions()).some((s) => s.current && s.id === me.sessionId)).toBe(true);
    const listed = (await api.hosts()).find((h) => h.id === host.hostId);
    expect(listed).toMatchObject({ online: true, role: 'owner' });
    expect((await api.chats()).filter((c) => c.hostId === host.hostId).map((c) => c.info.chatId)).toEqual(expect.arrayContaining(['sdk-restart']));
    expect(await lobby.chats()).toEqual(expect.arrayContaining([expect.objectContaining({ chatId: 'sdk-offline' })]));
    const ticket = await api.visualTicket(host.hostId, 'sdk-restart', 'no-such-visual');
    expect(new URL(ticket.url).searchParams.get('ticket')).toBeTruthy();
    expect(await api.pushSubscriptions()).toEqual([]);
    expect(await api.pushDeliveries(5)).toEqual([]);
    await expect(api.denyPairing('ABCD-EFGH')).rejects.toMatchObject({ code: 'pairing-not-found' });
    await expect(api.renameHost('h_nope', 'x')).rejects.toMatchObject({ code: 'host-not-found' });
    // A forced refresh rotates the pair; the old access token's session goes on under the new one.
    const before = await api.accessToken();
    const next = await api.refresh(before);
    expect(next.accessToken).not.toBe(before);
    expect((await api.me()).id).toBe(me.id);
  });

  it('a ChatChannel survives a relay restart mid-stream: every delta once, the thread equal to a fresh snapshot', async () => {
    const channel = track(new ChatChannel(api, host.hostId, 'sdk-restart', fast));
    const seen = states(channel);
    let snapshots = 0;
    channel.thread.subscribe((change) => {
      if (change.kind === 'snapshot') snapshots += 1;
    });
    await until(() => channel.state === 'open', 'the channel open');
    const sent = channel.send({ text: 'please stream a long reply' });
    expect((await sent.settled).state).toBe('delivered');
    const replyId = await until(() => channel.thread.items.find((i) => i.kind === 'assistant' && i.text.length > 0)?.id, 'the reply streaming');

    const restart = await fetch(`${inject('relayControlUrl')}/restart`, { method: 'POST' });
    expect(restart.status, await restart.clone().text()).toBe(200);
    const atRestart = (channel.thread.get(replyId) as { text: string }).text;
    expect(atRestart.length, 'the restart landed while the reply streamed').toBeLessThan(STREAMED.length);

    await until(() => turnsDone(channel) === 1, 'the turn done after the restart');
    expect((channel.thread.get(replyId) as { text: string }).text).toBe(STREAMED);
    expect(seen).toContain('offline');
    expect(channel.state).toBe('open');
    expect(snapshots, 'the reconnect replayed the missed events instead of replacing the thread').toBe(1);
    const fresh = track(new ChatChannel(api, host.hostId, 'sdk-restart'));
    await until(() => fresh.state === 'open', 'a fresh channel open');
    expect(channel.thread.items).toEqual(fresh.thread.items);
    expect(channel.thread.seq).toBe(fresh.thread.seq);
  });

  it('a send made while the network is down is kept, then delivered once when it returns, even by two channels at once', async () => {
    const proxy = await LinkProxy.start(relayUrl());
    try {
      const viaProxy = new RelayApi(proxy.url);
      await viaProxy.signIn(inject('ownerEmail'), inject('ownerPassword'));
      const outbox = new MemoryOutboxStore(); // shared, as two tabs share IndexedDB
      const tab1 = track(new ChatChannel(viaProxy, host.hostId, 'sdk-offline', { ...fast, outbox }));
      await until(() => tab1.state === 'open', 'the first tab open');
      proxy.offline();
      await until(() => tab1.state === 'offline', 'the first tab offline');
      const send = tab1.send({ text: 'sent while offline' });
      expect((await outbox.list({ userId: viaProxy.userId!, hostId: host.hostId, chatId: 'sdk-offline' })).map((e) => e.id)).toEqual([send.id]);
      expect(send.state).toBe('kept');
      // A second tab opens while still offline: it finds the kept send and will send it too (same id).
      const tab2 = track(new ChatChannel(viaProxy, host.hostId, 'sdk-offline', { ...fast, outbox }));
      await until(() => tab2.pendingSends.some((s) => s.id === send.id), 'the second tab holds the kept send');
      proxy.online();
      expect((await send.settled).state).toBe('delivered');
      expect((await tab2.pendingSends.find((s) => s.id === send.id)!.settled).state).toBe('delivered');
      await until(() => turnsDone(tab1) === 1 && turnsDone(tab2) === 1, 'its turn done in both tabs');
      const users = (channel: ChatChannel) => channel.thread.items.filter((i) => i.kind === 'user' && i.text === 'sent while offline');
      expect(users(tab1)).toHaveLength(1);
      expect(users(tab2)).toHaveLength(1);
      expect(await outbox.list({ userId: viaProxy.userId!, hostId: host.hostId, chatId: 'sdk-offline' })).toEqual([]);
      const fresh = track(new ChatChannel(api, host.hostId, 'sdk-offline'));
      await until(() => fresh.state === 'open', 'a fresh channel open');
      expect(fresh.thread.items.filter((i) => i.kind === 'turn')).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('a send to an offline host is queued by the relay (not kept here), then delivered once the host returns', async () => {
    const channel = track(new ChatChannel(api, host.hostId, 'sdk-queued', fast));
    await until(() => channel.state === 'open' && channel.online, 'the channel open, the host online');
    await host.stop();
    await until(() => channel.online === false && lobby.online === false, 'the host offline on the chat socket and the lobby');
    const send = channel.send({ text: 'kept by the relay' });
    await until(() => send.state === 'queued', 'the send queued by the relay');
    expect(channel.thread.info?.queue?.map((q) => q.id)).toContain(`relay:${send.id}`);
    expect(send.result).toMatchObject({ queued: true });
    await host.start();
    expect((await send.settled).state).toBe('delivered');
    await until(() => turnsDone(channel) === 1, 'its turn done');
    expect(channel.thread.items.filter((i) => i.kind === 'user' && i.text === 'kept by the relay')).toHaveLength(1);
    expect(channel.thread.info?.queue ?? []).toEqual([]);
    await until(() => lobby.online, 'the host back in the lobby');
  });

  it('a send the relay kept for an offline host, refused by the host while this device was offline, fails with why on reconnecting, once', async () => {
    const proxy = await LinkProxy.start(relayUrl());
    const watcher = await Peer.chat(host.hostId, 'sdk-refused', RELAY_OWNER);
    try {
      const viaProxy = new RelayApi(proxy.url);
      await viaProxy.signIn(inject('ownerEmail'), inject('ownerPassword'));
      const outbox = new MemoryOutboxStore();
      const channel = track(new ChatChannel(viaProxy, host.hostId, 'sdk-refused', { ...fast, outbox }));
      const refusals: unknown[] = [];
      channel.onFrame((frame) => {
        if ((frame as { event?: string }).event === 'chat.sendRefused') refusals.push(frame);
      });
      await until(() => channel.state === 'open' && channel.online, 'the channel open, the host online');
      await watcher.socket.request('chat.attach', { chatId: 'sdk-refused' });

      await host.stop();
      await until(() => channel.online === false, 'the host offline on the chat socket');
      const send = channel.send({ text: 'kept by the relay, then refused' });
      await until(() => send.state === 'queued', 'the send queued by the relay');
      const failures: unknown[] = [];
      send.onChange((changed) => {
        if (changed.state === 'failed') failures.push(changed.error);
      });
      proxy.offline();
      await until(() => channel.state === 'offline', 'this device offline');

      // The host returns with a policy that no longer allows the chat's folder: it refuses the kept send.
      writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({ ...CONFIG, policy: { roots: [path.join(host.dataDir, 'elsewhere')] } }));
      await host.start();
      const refused = await watcher.waitFor(
        (f) => f.event === 'chat.sendRefused' && f.payload.requestId === send.id,
        'the refusal, live, to whoever was attached',
      );
      expect(refused.payload.error.code).toBe('folder-denied');
      await watcher.waitFor(
        (f) => f.event === 'chat.event' && f.payload.event.type === 'info' && (f.payload.event.info.queue ?? []).length === 0,
        'the relay queue emptied',
      );
      expect(send.state, 'away, this device knows nothing yet').toBe('queued');

      proxy.online();
      const settled = await send.settled;
      expect(settled.state).toBe('failed');
      expect(settled.error).toMatchObject({ code: 'folder-denied' });
      expect(failures).toHaveLength(1);
      expect(refusals).toHaveLength(1);
      expect(channel.thread.info?.queue ?? []).toEqual([]);
      expect(
        channel.thread.items.filter((i) => i.kind === 'user'),
        'it never reached the thread',
      ).toEqual([]);
      await until(
        async () => (await outbox.list({ userId: viaProxy.userId!, hostId: host.hostId, chatId: 'sdk-refused' })).length === 0,
        'the send gone from this device',
      );

      // Reconnecting again (replaying from where it is) hears it no more.
      proxy.offline();
      await until(() => channel.state === 'offline', 'offline again');
      proxy.online();
      await until(() => channel.state === 'open', 'open again');
      expect(refusals).toHaveLength(1);
      expect(failures).toHaveLength(1);
    } finally {
      watcher.close();
      await proxy.close();
      await host.stop();
      writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify(CONFIG));
      await host.start();
      await until(() => lobby.online, 'the host back in the lobby');
    }
  });

  it('a channel whose grant is removed closes with forbidden and stops reconnecting', async () => {
    const email = `sdk-guest-${crypto.randomUUID().slice(0, 8)}@e2e.test`;
    const team = await api.createTeam('sdk guests');
    const invitation = await api.invite(team.id, { email });
    const guest = new RelayApi(relayUrl());
    await guest.acceptInvitation(invitation.token, { email, password: 'sdk-guest-password-0123', name: 'Guest' });
    expect(guest.signedIn).toBe(true);
    // By id: an account made by accepting an invitation holds its address unverified, which a grant by email does not reach.
    await expect(api.grant(host.hostId, { subject: { type: 'user', email }, role: 'viewer', chatId: 'sdk-shared' })).rejects.toMatchObject({
      code: 'user-not-found',
    });
    const grant = await api.grant(host.hostId, { subject: { type: 'user', id: guest.userId! }, role: 'viewer', chatId: 'sdk-shared' });
    const channel = track(new ChatChannel(guest, host.hostId, 'sdk-shared', fast));
    await until(() => channel.state === 'open', 'the guest attached');
    expect(channel.thread.info?.chatId).toBe('sdk-shared');
    await api.revokeGrant(host.hostId, grant.id);
    await until(() => channel.state === 'closed', 'the guest channel closed');
    expect(channel.ended).toMatchObject({ code: 'forbidden' });
    expect((await channel.send({ text: 'too late' }).settled).error).toMatchObject({ code: 'forbidden' });
    await expect(channel.request('chat.history', { chatId: 'sdk-shared', cursor: 'h1.0.1' })).rejects.toMatchObject({ code: 'forbidden' });
    expect(channel.state).toBe('closed');
    await guest.signOut();
    expect(guest.signedIn).toBe(false);
  });
});
