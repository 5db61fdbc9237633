// How the relay finds its Durable Objects: one HostLink and one Lobby per host, one ChatRoom per chat.
// Each stub hands the caller's request id on to the object (scoped-calls.ts).
import type { Env } from '../env.ts';
import { scoped } from './scoped-calls.ts';

/** A chat's room name: host and chat id, joined by a character neither may hold in a path segment. */
export function roomName(hostId: string, chatId: string): string {
  return `${hostId}\n${chatId}`;
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
