// The service worker's side of Web Push: show what the relay pushed, and answer an approval from the
// notification itself. The payload (PushPayload, src/contracts/push.ts) arrives decrypted by the
// browser; it carries no message text, only a title, a summary and, for an approval, a single-use
// action token. Approve/Deny POST that token to `/api/push/act` on this origin (the worker holds no
// access token); a tap anywhere else opens the chat. A later push of the same turn has the same tag,
// so it replaces the notification, and it alerts only when the relay says so (`buzz`).
//
// Every push shows a notification, even one nobody needs to see (an approval settled elsewhere
// replaces its notification with a quiet "Approved" rather than closing it): Chrome shows its own
// "updated in the background" notification for a push that showed none unless a tab of the site is in
// front, and Safari ends the subscription of a site whose pushes show nothing. So a person looking at
// the very chat a push is about, on this device, gets it silently instead of not at all: this worker
// sees its window clients (focused and visible, at the chat's path), the relay cannot tell a tab in
// front from one in the background, and a phone put away a second later still has the approval.
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
  focused?: boolean;
  visibilityState?: string;
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
/** Refusals after which the same button may work later (the token was not spent): the buttons stay. */
const TRY_AGAIN = new Set(['host-offline', 'rate-limited', 'internal', 'relay-unreachable']);

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

async function showPush(scope: PushScope, event: PushEventLike): Promise<void> {
  const payload = payloadOf(event);
  if (!payload) return scope.registration.showNotification('Tether', { body: 'Something changed in one of your chats', icon: ICON });
  // The first notice of a turn alerts, unless the chat is in front of the person here; later ones of the turn replace it without a sound.
  const silent = !payload.buzz || await watching(scope, payload.url);
  return scope.registration.showNotification(payload.title, notificationOf(payload, payload.body, silent));
}

/** A notification of the payload's turn; its buttons are the payload's action's, if it still has one. */
function notificationOf(payload: PushPayload, body: string, silent: boolean): NotificationShape {
  const action = payload.action;
  return {
    body,
    tag: payload.tag,
    data: payload,
    silent,
    renotify: false,
    requireInteraction: action !== undefined,
    icon: ICON,
    timestamp: payload.at,
    actions: action?.decisions.map((decision) => ({
      action: decision,
      title: decision === 'allow-always' ? action.allowAlwaysLabel ?? BUTTON[decision] : BUTTON[decision],
    })),
  };
}

/** Whether a window of this app is focused and visible at this path: the person is looking at that chat. */
async function watching(scope: PushScope, path: string): Promise<boolean> {
  const target = new URL(path, scope.location.origin);
  const windows = await scope.clients.matchAll({ type: 'window', includeUncontrolled: true });
  return windows.some((client) => {
    if (client.focused !== true || client.visibilityState !== 'visible') return false;
    const at = new URL(client.url);
    return at.origin === target.origin && at.pathname === target.pathname;
  });
}

async function onClick(scope: PushScope, event: NotificationClickLike): Promise<void> {
  const payload = event.notification.data as PushPayload | undefined;
  const offered = payload?.action?.decisions.find((decision) => decision === event.action);
  if (!payload?.action || !offered) return openChat(scope, payload?.url ?? '/');
  const outcome = await act(scope, payload.action.token, offered);
  // What happened replaces the notification, silently. When the answer may work later (nothing was
  // spent) the buttons stay; otherwise a tap opens the chat to answer or look there.
  const settled = { ...payload, action: undefined };
  const shown = outcome.ok
    ? notificationOf(settled, DONE[offered], true)
    : TRY_AGAIN.has(outcome.code)
      ? notificationOf(payload, `${sentence(outcome.message)} Try again, or tap to open the chat.`, true)
      : notificationOf(settled, `${sentence(outcome.message)} Tap to open the chat.`, true);
  await scope.registration.showNotification(payload.title, shown);
}

function sentence(text: string): string {
  return text.replace(/\.?$/, '.');
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
    return { ok: false, code: 'relay-unreachable', message: 'Tether could not be reached, so nothing was answered' };
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
