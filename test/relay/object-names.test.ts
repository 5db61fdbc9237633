// Each Durable Object learns its host (and chat) once, from the name its stub was made from
// (objects/stubs.ts), and keeps it in its own SQLite: a wake whose id carries no name (an alarm
// after eviction) still knows who it is, and no call to it passes the ids again.
import { env, evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ChatRoom } from '../../src/relay/objects/chat-room/chat-room.ts';
import { withIdentity } from '../../src/relay/objects/client-sockets.ts';
import { HostLink } from '../../src/relay/objects/host-link.ts';
import { Lobby } from '../../src/relay/objects/lobby.ts';
import { roomKeyOf, roomName } from '../../src/relay/objects/stubs.ts';

// Each object as a wake whose id carries no name sees itself: the same storage, no name.
class UnnamedRoom extends ChatRoom {
  protected override get stubName() {
    return undefined;
  }
}
class UnnamedLobby extends Lobby {
  protected override get stubName() {
    return undefined;
  }
}
class UnnamedLink extends HostLink {
  protected override get stubName() {
    return undefined;
  }
}
const placeOf = (object: unknown) => (object as { place(): unknown }).place();

describe("the objects' names, set once", () => {
  it('a room keeps the host and chat of its name, and knows them again on a wake whose id has none', async () => {
    const stub = env.CHAT_ROOM.get(env.CHAT_ROOM.idFromName(roomName('h-names', 'c:1')));
    expect(await runInDurableObject(stub, (room) => placeOf(room))).toEqual({ hostId: 'h-names', chatId: 'c:1' });
    await evictDurableObject(stub);
    const again = await runInDurableObject(stub, (_room, state) => {
      const row = state.storage.sql.exec<{ host_id: string; chat_id: string }>('SELECT host_id, chat_id FROM room').one();
      return { row, place: placeOf(new UnnamedRoom(state, env)) };
    });
    expect(again).toEqual({ row: { host_id: 'h-names', chat_id: 'c:1' }, place: { hostId: 'h-names', chatId: 'c:1' } });
  });

  it('a lobby and a host link keep their host the same way', async () => {
    const lobby = env.LOBBY.get(env.LOBBY.idFromName('h-names-lobby'));
    await runInDurableObject(lobby, () => undefined);
    await evictDurableObject(lobby);
    expect(await runInDurableObject(lobby, (_o, state) => placeOf(new UnnamedLobby(state, env)))).toEqual({ hostId: 'h-names-lobby' });

    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName('h-names-link'));
    await runInDurableObject(link, () => undefined);
    await evictDurableObject(link);
    expect(
      await runInDurableObject(link, (_o, state) => {
        const fresh = new UnnamedLink(state, env);
        return (fresh as unknown as { getMeta(key: string): string | null }).getMeta('hostId');
      }),
    ).toBe('h-names-link');
  });

  it('a room never reached by a name knows none: the names above came from storage', async () => {
    const stub = env.CHAT_ROOM.get(env.CHAT_ROOM.newUniqueId());
    expect(await runInDurableObject(stub, (_room, state) => placeOf(new UnnamedRoom(state, env)))).toBeNull();
  });

  it('a room reached by no name refuses a socket rather than serve a chat it cannot name', async () => {
    const stub = env.CHAT_ROOM.get(env.CHAT_ROOM.newUniqueId());
    const request = withIdentity(new Request('https://relay.test/v1/hosts/h/chats/c', { headers: { Upgrade: 'websocket' } }), {
      kind: 'user',
      userId: 'u',
      sessionId: 's',
    });
    const response = await stub.fetch(request);
    expect(response.status).toBe(400);
    expect(await runInDurableObject(stub, (room) => placeOf(room))).toBeNull();
  });

  it("reads a room's host and chat back from its name, and nothing from a name no room has", () => {
    expect(roomKeyOf(roomName('h', 'a\nb'))).toEqual({ hostId: 'h', chatId: 'a\nb' });
    expect(roomKeyOf(roomName('h', ''))).toEqual({ hostId: 'h', chatId: '' });
    expect(roomKeyOf('h-only')).toBeNull();
    expect(roomKeyOf(undefined)).toBeNull();
  });
});
