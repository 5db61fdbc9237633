// The app's one signed-in session and the live connections it holds. Every view reaches the relay
// through `api`; a host's lobby socket is opened once and shared by every view that shows that host
// (hosts list, chat list, create dialog); a chat's socket lives while a view of it is open.
import { signal } from '@preact/signals';
import { ChatChannel, HostConnection, LocalStorageTokenStore, RelayApi, defaultOutboxStore, type Me, type OutboxStore } from '../../client/index.ts';
import type { DeviceKey } from '../../client/device-key.ts';
import { ProtocolError } from '../../contracts/index.ts';
import { browserDeviceKey, deviceLabel, forgetBrowserDeviceKey, setCurrentUser } from './device-key.ts';

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
    connection = new HostConnection(api, hostId, { deviceKey: thisDevice() });
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
    held = { channel: new ChatChannel(api, hostId, chatId, { outbox: (outbox ??= defaultOutboxStore()), deviceKey: thisDevice() }), holders: 0 };
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
  asking ??= api.me().then(
    (who) => (me.value = who),
    (error: unknown) => {
      asking = null;
      throw error;
    },
  );
  return asking;
}

/**
 * This browser's device key for the signed-in person, loaded (or made) once per session and
 * registered with the relay (`/api/devices`; the same key again is the same device): every socket
 * signs what acts on a machine with it, and the pairing page signs approvals with it. The sockets do
 * not wait for it: reads go at once, and only a signed request waits for the key (in order, see
 * RelaySocket). Null where the browser has no Ed25519 (or no IndexedDB): requests then go unsigned,
 * and a host that requires signatures says so.
 */
let device: Promise<DeviceKey | null> | null = null;

export function thisDevice(): Promise<DeviceKey | null> {
  device ??= loadDevice().catch(() => null);
  return device;
}

async function loadDevice(): Promise<DeviceKey> {
  const who = await loadMe();
  let key = await browserDeviceKey(who.id);
  try {
    await api.registerDevice({ name: deviceLabel(navigator.userAgent), publicKey: key.publicKey });
  } catch (error) {
    // Revoked (from Settings here or on another device): a revoked key never comes back, so this
    // browser makes a new one, which registers as a new device of the person's (waiting for a vouch).
    if (!(error instanceof ProtocolError && error.code === 'forbidden')) {
      // The relay unreachable now: the key still signs (a host that knows it takes it); registered next time.
      await setCurrentUser(who.id);
      return key;
    }
    await forgetBrowserDeviceKey(who.id);
    key = await browserDeviceKey(who.id);
    await api.registerDevice({ name: deviceLabel(navigator.userAgent), publicKey: key.publicKey });
  }
  await setCurrentUser(who.id);
  return key;
}

/**
 * This device's key was just revoked here: it never signs again. The page starts over, so every socket
 * and view signs with the new key made and registered on load.
 */
export function deviceRevoked(): void {
  device = null;
  location.reload();
}

api.onSignedOut(() => {
  closeAll();
  me.value = null;
  asking = null;
  device = null;
  // The service worker must not sign for someone who signed out.
  void setCurrentUser(null).catch(() => undefined);
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
