// The host link against a host that sends what it should not (issue 18): a frame that cannot cross
// between the relay's objects must not hold back the frames behind it, and the link's own control
// frames are rate-limited as clients' frames are.
import { describe, expect, it } from 'vitest';
import { Client, FakeHost, infoFor, until, userItem } from './peers.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-anomaly-${++hosts}`).connect();

/** A value nested `depth` arrays deep: valid JSON the relay parses, too deep to be copied between objects. */
function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

describe('one host frame that cannot cross between the objects', () => {
  it('is dropped alone: the valid event behind it in the same message is stored and acked, and nothing is stuck after a reconnect', async () => {
    const host = await newHost();
    host.create('deep', []);
    const me = await Client.chat(host.hostId, 'deep');
    await me.request('chat.attach', { chatId: 'deep' });
    const ws = host.ws!;
    host.ws = null; // kept in the outbox, then sent as one array message, as a host joins a tick's frames
    host.emit('deep', { type: 'item', item: userItem('u0', 'before the deep frame') });
    host.sendEvent('chat.subagentChanged', { chatId: 'deep', toolUseId: 'tu-deep', detail: '__DEEP__' });
    host.emit('deep', { type: 'item', item: userItem('u1', 'behind the deep frame') });
    host.ws = ws;
    const [firstN, badN, goodN] = [...host.outbox.keys()];
    const bad = host.outbox.get(badN!)!.replace('"__DEEP__"', nested(10_000));
    host.outbox.set(badN!, bad);
    // While the first is being stored the other two queue up and go to the room in one call together.
    ws.send(`[${host.outbox.get(firstN!)!},${bad},${host.outbox.get(goodN!)!}]`);
    await me.waitFor((f) => f.event === 'chat.event' && f.payload.event.item?.id === 'u1', 'the valid event at the client');
    await until(() => host.outbox.size === 0, 'both frames acknowledged: the good one stored, the deep one refused for good');
    // After a reconnect the host has nothing left to send again, and what comes next goes through.
    await host.connect();
    host.emit('deep', { type: 'item', item: userItem('u2', 'after the reconnect') });
    await me.waitFor((f) => f.event === 'chat.event' && f.payload.event.item?.id === 'u2', 'the next event at the client');
    await until(() => host.outbox.size === 0, 'the next event acknowledged');
    expect(me.chatEvents().map((f) => f.payload.event.item.id)).toEqual(['u0', 'u1', 'u2']);
  });

  it('the same on the way to the lobby: a deep host-wide event does not hold back the one behind it', async () => {
    const host = await newHost();
    const lobby = await Client.lobby(host.hostId);
    await lobby.waitFor((f) => f.event === 'host.presence', 'presence');
    const ws = host.ws!;
    host.ws = null;
    host.sendEvent('chat.status', { chatId: 'first', info: infoFor('first') });
    host.sendEvent('chat.status', { chatId: 'deep', info: infoFor('deep'), extra: '__DEEP__' });
    host.sendEvent('chat.status', { chatId: 'behind', info: infoFor('behind') });
    host.ws = ws;
    const [firstN, badN, goodN] = [...host.outbox.keys()];
    const bad = host.outbox.get(badN!)!.replace('"__DEEP__"', nested(10_000));
    ws.send(`[${host.outbox.get(firstN!)!},${bad},${host.outbox.get(goodN!)!}]`);
    await lobby.waitFor((f) => f.event === 'chat.status' && f.payload.chatId === 'behind', 'the status behind the deep frame');
    await until(() => host.outbox.size === 0, 'all three acknowledged');
    expect(lobby.frames.filter((f) => f.event === 'chat.status').map((f) => f.payload.chatId)).toEqual(['first', 'behind']);
  });
});

describe("the host link's own frames", () => {
  it('200 hellos in a row on one socket make no presence broadcast beyond the first', async () => {
    const host = await newHost();
    const lobby = await Client.lobby(host.hostId);
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === true, 'the host online');
    const me = await Client.chat(host.hostId, 'hellos');
    host.create('hellos', []);
    await me.request('chat.attach', { chatId: 'hellos' });
    const presences = (c: Client) => c.frames.filter((f) => f.event === 'host.presence').length;
    const [lobbyBefore, chatBefore] = [presences(lobby), presences(me)];
    for (let i = 0; i < 200; i++) host.ws!.send(JSON.stringify({ link: 'hello', version: `flood-${i}`, pending: 0 }));
    // Frames on one socket are handled in order: once the events sent after the flood are through, so is the flood.
    host.sendEvent('chat.status', { chatId: 'hellos', info: infoFor('hellos') });
    host.emit('hellos', { type: 'item', item: userItem('after', 'after the flood') });
    await lobby.waitFor((f) => f.event === 'chat.status' && f.payload.chatId === 'hellos', 'the status after the flood');
    await me.waitFor((f) => f.event === 'chat.event' && f.payload.event.item?.id === 'after', 'the event after the flood');
    await until(() => host.outbox.size === 0, 'everything after the flood acknowledged');
    expect(presences(lobby) - lobbyBefore).toBe(0);
    expect(presences(me) - chatBefore).toBe(0);
    // The host is still present, and a reconnect's hello (a new socket) is announced as ever.
    host.disconnect();
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline after the disconnect');
    await host.connect();
    await until(() => lobby.frames.filter((f) => f.event === 'host.presence' && f.payload.online === true).length === 2, 'online again after the reconnect');
  });
});
