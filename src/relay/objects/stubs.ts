// How the relay finds its Durable Objects: one HostLink and one Lobby per host, one ChatRoom per chat.
// Each stub hands the caller's request id on to the object (scoped-calls.ts). An object is reached by
// name only, and learns its host (and chat) from that name once (ScopedObject.stubName): no call to
// it passes them again.
import type { Env } from '../env.ts';
import { scoped } from './scoped-calls.ts';

/** A chat's room name: host and chat id, joined by a character neither may hold in a path segment. */
export function roomName(hostId: string, chatId: string): string {
  return `${hostId}\n${chatId}`;
}

/** A room's host and chat from its name; null for a name no roomName made. */
export function roomKeyOf(name: string | undefined): { hostId: string; chatId: string } | null {
  const at = name?.indexOf('\n') ?? -1;
  return name && at > 0 ? { hostId: name.slice(0, at), chatId: name.slice(at + 1) } : null;
}

export function roomOf(env: Env, hostId: string, chatId: string) {
  return scoped(env.CHAT_ROOM.get(env.CHAT_ROOM.idFromName(roomName(hostId, chatId))));
}

export function hostLinkOf(env: Env, hostId: string) {
  return scoped(env.HOST_LINK.get(env.HOST_LINK.idFromName(hostId)));
}

export function lobbyOf(env: Env, hostId: string) {
  return scoped(env.LOBBY.get(env.LOBBY.idFromName(hostId)));
}
