// Turning on push notifications in a browser: fetch the relay's VAPID key, subscribe this browser's
// push manager with it, and register the subscription with the relay (for the signed-in session).
// Turning them off unsubscribes the browser and removes the relay's record. The service worker's side
// is src/web/sw/push.ts.
import type { PushKey, PushSubscriptionInfo } from '../contracts/index.ts';

/** What this needs of RelayApi (src/client/api.ts): an authenticated JSON call that throws ProtocolError. */
export interface PushApi {
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/** What this needs of a ServiceWorkerRegistration's PushManager. */
export interface PushManagerLike {
  getSubscription(): Promise<BrowserSubscription | null>;
  subscribe(options: { userVisibleOnly: boolean; applicationServerKey: BufferSource }): Promise<BrowserSubscription>;
}

interface BrowserSubscription {
  endpoint: string;
  options?: { applicationServerKey: ArrayBuffer | null };
  toJSON(): unknown;
  unsubscribe(): Promise<boolean>;
}

/** Null when this relay sends no pushes (no VAPID keys configured). */
export async function pushKey(api: PushApi): Promise<string | null> {
  return (await api.call<PushKey>('GET', '/api/push/key')).publicKey;
}

/**
 * Subscribes this browser and registers it with the relay; null when the relay sends no pushes. A
 * subscription made under another key (the relay's key changed) is replaced, since its pushes could
 * no longer be signed. Call from a user gesture: the browser asks for permission here.
 */
export async function subscribeToPush(api: PushApi, pushManager: PushManagerLike): Promise<PushSubscriptionInfo | null> {
  const key = await pushKey(api);
  if (key === null) return null;
  const applicationServerKey = fromBase64url(key);
  let subscription = await pushManager.getSubscription();
  if (subscription && !sameKey(subscription.options?.applicationServerKey ?? null, applicationServerKey)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  subscription ??= await pushManager.subscribe({ userVisibleOnly: true, applicationServerKey });
  return api.call<PushSubscriptionInfo>('POST', '/api/push/subscriptions', subscription.toJSON());
}

/** Unsubscribes this browser and removes the relay's record of it (if the relay has one for this endpoint). */
export async function unsubscribeFromPush(api: PushApi, pushManager: PushManagerLike): Promise<void> {
  const subscription = await pushManager.getSubscription();
  if (!subscription) return;
  const { subscriptions } = await api.call<{ subscriptions: PushSubscriptionInfo[] }>('GET', '/api/push/subscriptions');
  const mine = subscriptions.find((one) => one.endpoint === subscription.endpoint);
  if (mine) await api.call('DELETE', `/api/push/subscriptions/${encodeURIComponent(mine.id)}`);
  await subscription.unsubscribe();
}

function sameKey(held: ArrayBuffer | null, wanted: Uint8Array): boolean {
  if (!held) return false;
  const bytes = new Uint8Array(held);
  return bytes.length === wanted.length && bytes.every((byte, i) => byte === wanted[i]);
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
