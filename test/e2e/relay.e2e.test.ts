// The real relay on workerd (`wrangler dev`), a real host process with the `script` provider, and two
// clients, over real sockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until as poll } from '../support/until.ts';
import { HostProcess, Peer } from './peers.ts';

const OWNER = 'e2e-owner';
const host = new HostProcess('e2e-host', OWNER);
let lobby: Peer;
let laptop: Peer;
let phone: Peer;

beforeAll(async () => {
  await host.start();
  lobby = await Peer.lobby(host.hostId, OWNER);
  await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
  const info = await lobby.socket.request('chat.create', { chatId: 'e2e-chat' });
  expect(info.chatId).toBe('e2e-chat');
  laptop = await Peer.chat(host.hostId, 'e2e-chat', OWNER);
  phone = await Peer.chat(host.hostId, 'e2e-chat', OWNER);
  await laptop.socket.request('chat.attach', { chatId: 'e2e-chat' });
  await phone.socket.request('chat.attach', { chatId: 'e2e-chat' });
});

afterAll(async () => {
  for (const p of [lobby, laptop, phone]) p?.close();
  await host.stop();
});

const lastTurnDone = (peer: Peer, count: number) => () => [...peer.items().values()].filter((i) => i.kind === 'turn' && i.state !== 'running').length >= count;

const until = (check: () => boolean, what: string, ms = 30_000) => poll(check, what, { ms, every: 25, detail: () => host.output.slice(-3000) });

describe('end to end through wrangler dev', () => {
  it('streams a turn from the host process to both clients, once each and in order', async () => {
    const sent = await laptop.socket.request('chat.send', { chatId: 'e2e-chat', text: 'hello there' });
    expect(sent.queued).toBe(false);
    await until(lastTurnDone(phone, 1), 'turn done on the phone');
    await until(lastTurnDone(laptop, 1), 'turn done on the laptop');
    for (const peer of [laptop, phone]) {
      const seqs = peer.seqs();
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      const kinds = [...peer.items().values()].map((i) => i.kind);
      expect(kinds).toContain('user');
      expect(kinds).toContain('assistant');
      const turn = [...peer.items().values()].find((i) => i.kind === 'turn');
      expect(turn?.state).toBe('done');
    }
    expect(phone.frames.some((f) => f.event === 'chat.event' && f.payload.event.type === 'delta')).toBe(true);
    // The reply text the phone folded from deltas equals the laptop's.
    const snapshot = await (await Peer.chat(host.hostId, 'e2e-chat', OWNER)).socket.request('chat.attach', { chatId: 'e2e-chat' });
    const reply = snapshot.items.find((i) => i.kind === 'assistant');
    expect(reply && reply.kind === 'assistant' && reply.text.length).toBeGreaterThan(0);
  });

  it('lets the phone approve while the laptop sees the card settle, and refuses the late answer', async () => {
    await laptop.socket.request('chat.send', { chatId: 'e2e-chat', text: 'please approve the build' });
    const card = await phone.waitFor(
      (f) => f.event === 'chat.event' && f.payload.event.item?.kind === 'approval' && f.payload.event.item.decision === 'pending',
      'approval card',
    );
    const requestId = card.payload.event.item.requestId as string;
    await phone.socket.request('chat.approve', { chatId: 'e2e-chat', requestId, decision: 'allow' });
    await laptop.waitFor(
      (f) => f.event === 'chat.event' && f.payload.event.item?.requestId === requestId && f.payload.event.item.decision === 'allow',
      'settled on laptop',
    );
    await expect(laptop.socket.request('chat.approve', { chatId: 'e2e-chat', requestId, decision: 'deny' })).rejects.toMatchObject({
      code: 'request-not-found',
    });
    await until(lastTurnDone(laptop, 2), 'second turn done');
  });

  it('answers a question and bookmarks a message', async () => {
    await phone.socket.request('chat.send', { chatId: 'e2e-chat', text: 'ask me a question' });
    const q = await laptop.waitFor(
      (f) => f.event === 'chat.event' && f.payload.event.item?.kind === 'question' && f.payload.event.item.state === 'pending',
      'question',
    );
    const item = q.payload.event.item;
    const answers = Object.fromEntries(item.questions.map((question: any) => [question.id, question.choices[0]?.label ?? 'yes']));
    await laptop.socket.request('chat.answer', { chatId: 'e2e-chat', requestId: item.requestId, answers });
    await phone.waitFor((f) => f.event === 'chat.event' && f.payload.event.item?.id === item.id && f.payload.event.item.state === 'answered', 'answered');
    const userItem = [...laptop.items().values()].find((i) => i.kind === 'user')!;
    const marked = await phone.socket.request('chat.addBookmark', { chatId: 'e2e-chat', itemId: userItem.id, name: 'first' });
    expect(marked.bookmarks.map((b) => b.itemId)).toEqual([userItem.id]);
    await laptop.waitFor((f) => f.event === 'chat.bookmarks' && f.payload.bookmarks.length === 1, 'bookmarks pushed');
  });

  it('fails a request on a socket that closed at once, with host-offline', async () => {
    const closed = await Peer.chat(host.hostId, 'e2e-chat', OWNER);
    closed.close();
    await until(() => closed.socket.closed !== null, 'socket closed');
    await expect(closed.socket.request('chat.attach', { chatId: 'e2e-chat' })).rejects.toMatchObject({ code: 'host-offline' });
  });

  it('keeps a send while the host process is down and delivers it once when it restarts', async () => {
    await until(lastTurnDone(laptop, 3), 'earlier turns done');
    const before = lobby.frames.length;
    await host.stop('SIGKILL');
    // The lobby's first frame (sent before the host's link opened) says offline too: only a later one counts.
    await lobby.waitFor((f) => lobby.frames.indexOf(f) >= before && f.event === 'host.presence' && f.payload.online === false, 'host offline', 15_000);
    const kept = await laptop.socket.request('chat.send', { chatId: 'e2e-chat', text: 'sent while the machine sleeps' });
    expect(kept).toEqual({ queued: true });
    await phone.waitFor(
      (f) =>
        f.event === 'chat.event' &&
        f.payload.event.type === 'info' &&
        (f.payload.event.info.queue ?? []).some((m: any) => m.text === 'sent while the machine sleeps'),
      'queued on the phone',
    );
    // Reading still works while the host is away.
    const offlineRead = await (await Peer.chat(host.hostId, 'e2e-chat', OWNER)).socket.request('chat.attach', { chatId: 'e2e-chat' });
    expect(offlineRead.items.length).toBeGreaterThan(0);

    await host.start();
    await until(() => [...phone.items().values()].filter((i) => i.kind === 'user' && i.text === 'sent while the machine sleeps').length === 1, 'delivered');
    await until(lastTurnDone(phone, 4), 'its turn done');
    const users = [...phone.items().values()].filter((i) => i.kind === 'user').map((i) => i.text);
    expect(users.filter((t) => t === 'sent while the machine sleeps')).toHaveLength(1);
    const seqs = phone.seqs();
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});
