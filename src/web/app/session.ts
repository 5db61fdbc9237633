// The app's one signed-in session and the live connections it holds. Every view reaches the relay
// through `api`; a host's lobby socket is opened once and shared by every view that shows that host
// (hosts list, chat list, create dialog); a chat's socket lives while a view of it is open.
import { signal } from '@preact/signals';
import {
  ChatChannel, HostConnection, LocalStorageTokenStore, RelayApi, defaultOutboxStore, type Me, type OutboxStore,
} from '../../client/index.ts';

/** The relay is this page's own origin: the Worker serves the app and the API together. */
export const api = new RelayApi(undefined, { tokens: new LocalStorageTokenStore() });

/** Whether someone is signed in here; views redraw when it changes. */
export const signedIn = signal(api.signedIn);

const hosts = new Map<string, HostConnection>();
const chats = new Map<string, { channel: ChatChannel; holders: number }>();
let outbox: OutboxStore | null = null;

/** The lobby of one host, opened on first use and kept for the session. */
export function hostConnection(hostId: string): HostConnection {
  let connection = hosts.get(hostId);
  if (!connection || connection.state === 'closed') {
    connection = new HostConnection(api, hostId);
    hosts.set(hostId, connection);
  }
  return connection;
}

/** Closes a host's lobby (it was revoked or its access removed). */
export function releaseHost(hostId: string): void {
  hosts.get(hostId)?.close();
  hosts.delete(hostId);
}

const chatKey = (hostId: string, chatId: string) => `${hostId}/${chatId}`;

/**
 * The socket of one chat, shared while any view of it is open. Each call holds it once; pair it with
 * `releaseChat` when the view closes (the last release closes the socket).
 */
export function chatChannel(hostId: string, chatId: string): ChatChannel {
  const key = chatKey(hostId, chatId);
  let held = chats.get(key);
  if (!held || held.channel.state === 'closed') {
    held = { channel: new ChatChannel(api, hostId, chatId, { outbox: outbox ??= defaultOutboxStore() }), holders: 0 };
    chats.set(key, held);
  }
  held.holders++;
  return held.channel;
}

export function releaseChat(hostId: string, chatId: string): void {
  const key = chatKey(hostId, chatId);
  const held = chats.get(key);
  if (!held) return;
  if (--held.holders > 0) return;
  held.channel.close();
  chats.delete(key);
}

/** Every socket closes with the session: a new sign-in may be someone else. */
function closeAll(): void {
  for (const connection of hosts.values()) connection.close();
  hosts.clear();
  for (const { channel } of chats.values()) channel.close();
  chats.clear();
}

/** Who is signed in (`/api/me`), once asked for. */
export const me = signal<Me | null>(null);
let asking: Promise<Me> | null = null;

export function loadMe(): Promise<Me> {
  asking ??= api.me().then((who) => (me.value = who), (error: unknown) => { asking = null; throw error; });
  return asking;
}

api.onSignedOut(() => {
  closeAll();
  me.value = null;
  asking = null;
  signedIn.value = false;
});

// Another tab signed in or out: this one follows (its sockets and state belong to the old session).
addEventListener('storage', (event) => {
  if (event.key === 'tether.session' && (event.oldValue === null) !== (event.newValue === null)) location.reload();
});

/** Called after any sign-in path (password, Access, OIDC code, accepted invitation). */
export function markSignedIn(): void {
  signedIn.value = api.signedIn;
}
