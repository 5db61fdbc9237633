import type { ChatRoom } from './objects/chat-room.ts';
import type { HostLink } from './objects/host-link.ts';
import type { Lobby } from './objects/lobby.ts';

export interface Env {
  DB: D1Database;
  HOST_LINK: DurableObjectNamespace<HostLink>;
  CHAT_ROOM: DurableObjectNamespace<ChatRoom>;
  LOBBY: DurableObjectNamespace<Lobby>;
  /** Signs and verifies every token (HS256 until accounts and host keys land). */
  TETHER_TOKEN_SECRET: string;
  HOST_TIMEOUT_MS?: string;
  /** Origins that may frame visual pages (CSP frame-ancestors); the relay's own by default. */
  APP_ORIGINS?: string;
}
