// The service worker's side of Web Push: show what the relay pushed, and answer an approval from the
// notification itself. The payload (PushPayload, src/contracts/push.ts) arrives decrypted by the
// browser; it carries no message text, only a title, a summary and, for an approval, a single-use
// action token. Approve/Deny POST that token to `/api/push/act` on this origin (the worker holds no
// access token); a tap anywhere else opens the chat. A later push of the same turn has the same tag,
// so it replaces the notification, and it alerts only when the relay says so (`buzz`).
//
// `installPushHandlers(self)` is called once by sw.ts. The scope is typed by what is used here, so this
// file compiles with or without the WebWorker lib and a test can drive it with its own scope.
import type { ChatApproveDecision, PushPayload } from '../../contracts/index.ts';

interface ShownNotification {
  data: unknown;
  close(): void;
}

interface PushEventLike {
  data: { json(): unknown } | null;
  waitUntil(work: Promise<unknown>): void;
}

interface NotificationClickLike {
  action: string;
  notification: ShownNotification;
  waitUntil(work: Promise<unknown>): void;
}

/** A window client (matchAll with `type: 'window'` answers only those, though its type says Client). */
interface WindowLike {
  url: string;
  focus?(): Promise<unknown>;
  navigate?(url: string): Promise<unknown>;
}

export interface NotificationShape {
  body?: string;
  tag?: string;
  data?: unknown;
  silent?: boolean;
  renotify?: boolean;
  requireInteraction?: boolean;
  icon?: string;
  timestamp?: number;
  actions?: { action: string; title: string }[];
}

export interface PushScope {
  addEventListener(type: 'push', listener: (event: PushEventLike) => void): void;
  addEventListener(type: 'notificationclick', listener: (event: NotificationClickLike) => void): void;
  registration: { showNotification(title: string, options?: NotificationShape): Promise<void> };
  clients: {
    matchAll(options?: { type?: 'window'; includeUncontrolled?: boolean }): Promise<readonly WindowLike[]>;
    openWindow(url: string): Promise<unknown>;
  };
  location: { origin: string };
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

const ICON = '/icon.svg';
const BUTTON: Record<ChatApproveDecision, string> = { allow: 'Approve', deny: 'Deny', 'allow-always': 'Always allow' };
const DONE: Record<ChatApproveDecision, string> = { allow: 'Approved', deny: 'Denied', 'allow-always': 'Always allowed' };

export function installPushHandlers(scope: PushScope): void {
  scope.addEventListener('push', (event) => event.waitUntil(showPush(scope, event)));
  scope.addEventListener('notificationclick', (event) => {
    event.notification.close();
    event.waitUntil(onClick(scope, event));
  });
}

/** The payload, or null for one this app did not make (a browser must still show something for every push). */
function payloadOf(event: PushEventLike): PushPayload | null {
  try {
    const data = event.data?.json() as Partial<PushPayload> | undefined;
    return data?.v === 1 && typeof data.title === 'string' && typeof data.tag === 'string' ? data as PushPayload : null;
  } catch {
    return null;
  }
}

function showPush(scope: PushScope, event: PushEventLike): Promise<void> {
  const payload = payloadOf(event);
  if (!payload) return scope.registration.showNotification('Tether', { body: 'Something changed in one of your chats', icon: ICON });
  const action = payload.action;
  return scope.registration.showNotification(payload.title, {
    body: payload.body,
    tag: payload.tag,
    data: payload,
    // The first notice of a turn alerts; later ones of the turn replace it without a sound.
    silent: !payload.buzz,
    renotify: false,
    requireInteraction: action !== undefined,
    icon: ICON,
    timestamp: payload.at,
    actions: action?.decisions.map((decision) => ({
      action: decision,
      title: decision === 'allow-always' ? action.allowAlwaysLabel ?? BUTTON[decision] : BUTTON[decision],
    })),
  });
}

async function onClick(scope: PushScope, event: NotificationClickLike): Promise<void> {
  const payload = event.notification.data as PushPayload | undefined;
  const offered = payload?.action?.decisions.find((decision) => decision === event.action);
  if (!payload?.action || !offered) return openChat(scope, payload?.url ?? '/');
  const outcome = await act(scope, payload.action.token, offered);
  // What happened replaces the notification, silently; on failure a tap opens the chat to answer there.
  await scope.registration.showNotification(payload.title, {
    body: outcome.ok ? DONE[offered] : `${outcome.message.replace(/\.?$/, '.')} Tap to open the chat.`,
    tag: payload.tag,
    data: { ...payload, action: undefined },
    silent: true,
    icon: ICON,
  });
}

/** Answers an approval with a notification's action token; the relay's `{code, message}` on refusal. */
async function act(scope: PushScope, token: string, decision: ChatApproveDecision): Promise<{ ok: true } | { ok: false; code: string; message: string }> {
  try {
    const res = await scope.fetch(new URL('/api/push/act', scope.location.origin).href, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token, decision }),
    });
    if (res.ok) return { ok: true };
    const error = await res.json().catch(() => ({})) as { code?: string; message?: string };
    return { ok: false, code: error.code ?? 'internal', message: error.message ?? `The relay answered ${res.status}.` };
  } catch {
    return { ok: false, code: 'host-offline', message: 'The relay could not be reached.' };
  }
}

async function openChat(scope: PushScope, path: string): Promise<void> {
  const url = new URL(path, scope.location.origin).href;
  const windows = await scope.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const open = windows.find((client) => client.url === url) ?? windows.find((client) => client.url.startsWith(scope.location.origin));
  if (!open) {
    await scope.clients.openWindow(url);
    return;
  }
  if (open.url !== url && open.navigate) await open.navigate(url);
  await open.focus?.();
}
