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
// Approve/Deny are signed with this browser's device key (the signed-in person's, read from IndexedDB:
// src/web/app/device-key.ts) when the push carries the approval as the host presented it
// (`action.shown`): the signature names that exact request (settledRequestDigest), so a host that
// requires signatures carries the answer out, and a relay that swapped the request gets it refused.
// Without `shown` (an input too big for a push) or without a key the answer goes unsigned, as before.
//
// A terminal session's approval (the CLI a person runs in their own terminal) carries the approval's
// own choices as its buttons (a SessionPushAction); a press signs `session.approve` over the request
// and the choice, naming the approval as the push showed it, and posts the choice. The terminal may
// have answered first: the relay then refuses with `request-not-found`, as for a chat answered
// elsewhere, and the notification says so.
//
// `installPushHandlers(self)` is called once by sw.ts. The scope is typed by what is used here, so this
// file compiles with or without the WebWorker lib and a test can drive it with its own scope.
// Only zod-free modules at run time (types are erased): a schema would bring all of zod into sw.js.
import type {
  ApprovalChoiceKind,
  ChatApproveDecision,
  ChatPushAction,
  PushActResult,
  PushPayload,
  RequestSignature,
  SessionPushAction,
} from '../../contracts/index.ts';
import { PUSH_REQUEST_PREFIX, pushApprovePayload, pushSessionApprovePayload } from '../../contracts/push-action.ts';
import { settledRequestDigest, terminalApprovalShown } from '../../contracts/signing-core.ts';
import { signRequest, type DeviceKey } from '../../client/device-sign.ts';

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
  postMessage?(message: unknown): void;
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

/**
 * What this worker tells the app's open windows once a notification is on screen, or could not be:
 * Settings says so, and whoever reads `getNotifications()` waits for it. Chromium (156, headless and
 * not) drops the stored record of a notification when `getNotifications()` runs while that
 * notification is still being shown (it keeps only what its display reports, and the new one is not
 * there yet), so a read that races a push can lose it for good: 5 of 40 pushes read at once, 0 of 80
 * read after this notice.
 */
export interface NotificationNotice {
  type: typeof NOTIFICATION_NOTICE;
  tag: string;
  body: string;
  shown: boolean;
  /** Why the browser refused to show it (no permission, a bad option), when it did. */
  error?: string;
}
export const NOTIFICATION_NOTICE = 'tether.notification';

const ICON = '/icon.svg';
const BUTTON: Record<ChatApproveDecision, string> = { allow: 'Approve', deny: 'Deny', 'allow-always': 'Always allow' };
const DONE: Record<ChatApproveDecision, string> = { allow: 'Approved', deny: 'Denied', 'allow-always': 'Always allowed' };
const CHOSEN: Record<ApprovalChoiceKind, string> = { allow: 'Approved', remember: 'Approved and remembered', deny: 'Denied' };
/** Refusals after which the same button may work later (the token was not spent): the buttons stay. */
const TRY_AGAIN = new Set(['host-offline', 'rate-limited', 'internal', 'relay-unreachable']);

export interface PushHandlerOptions {
  /** The key to sign answers with (the signed-in person's on this browser), or null: answers go unsigned. */
  deviceKey?: () => Promise<DeviceKey | null>;
}

export function installPushHandlers(scope: PushScope, options: PushHandlerOptions = {}): void {
  scope.addEventListener('push', (event) => event.waitUntil(showPush(scope, event)));
  scope.addEventListener('notificationclick', (event) => {
    event.notification.close();
    event.waitUntil(onClick(scope, event, options));
  });
}

/** The payload, or null for one this app did not make (a browser must still show something for every push). */
function payloadOf(event: PushEventLike): PushPayload | null {
  try {
    const data = event.data?.json() as Partial<PushPayload> | undefined;
    return data?.v === 1 && typeof data.title === 'string' && typeof data.tag === 'string' ? (data as PushPayload) : null;
  } catch {
    return null;
  }
}

async function showPush(scope: PushScope, event: PushEventLike): Promise<void> {
  const payload = payloadOf(event);
  if (!payload) return show(scope, 'Tether', { body: 'Something changed in one of your chats', icon: ICON });
  // The first notice of a turn alerts, unless the chat is in front of the person here; later ones of the turn replace it without a sound.
  const silent = !payload.buzz || (await watching(scope, payload.url));
  return show(scope, payload.title, notificationOf(payload, payload.body, silent));
}

/** Shows a notification, then tells the open windows it is on screen (or why not): NotificationNotice. */
async function show(scope: PushScope, title: string, options: NotificationShape): Promise<void> {
  let failure: unknown = null;
  await scope.registration.showNotification(title, options).catch((error: unknown) => {
    failure = error ?? new Error('refused');
  });
  const notice: NotificationNotice = { type: NOTIFICATION_NOTICE, tag: options.tag ?? '', body: options.body ?? '', shown: failure === null };
  if (failure !== null) notice.error = failure instanceof Error ? failure.message : String(failure);
  const windows = await scope.clients.matchAll({ type: 'window', includeUncontrolled: true }).catch(() => []);
  for (const window of windows) window.postMessage?.(notice);
  // The push or click event still ends as the browser's refusal did.
  if (failure !== null) throw failure;
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
    actions: action && buttonsOf(action),
  };
}

/** A chat's decisions, or a terminal session's own choices (their ids are the actions). */
function buttonsOf(action: ChatPushAction | SessionPushAction): { action: string; title: string }[] {
  if ('choices' in action) return action.choices.map((choice) => ({ action: choice.id, title: choice.label }));
  return action.decisions.map((decision) => ({
    action: decision,
    title: decision === 'allow-always' ? (action.allowAlwaysLabel ?? BUTTON[decision]) : BUTTON[decision],
  }));
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

async function onClick(scope: PushScope, event: NotificationClickLike, options: PushHandlerOptions): Promise<void> {
  const payload = event.notification.data as PushPayload | undefined;
  const pressed = payload?.action && pressOf(payload, payload.action, event.action);
  if (!payload || !pressed) return openChat(scope, payload?.url ?? '/');
  const outcome = await act(scope, payload.action!.token, pressed.answer, await pressed.sign(options).catch(() => undefined));
  // What happened replaces the notification, silently. When the answer may work later (nothing was
  // spent) the buttons stay; otherwise a tap opens the chat (or the session) to answer or look there.
  const settled = { ...payload, action: undefined };
  const where = payload.sessionId !== undefined ? 'the session' : 'the chat';
  const shown = outcome.ok
    ? notificationOf(settled, pressed.done, true)
    : TRY_AGAIN.has(outcome.code)
      ? notificationOf(payload, `${sentence(outcome.message)} Try again, or tap to open ${where}.`, true)
      : notificationOf(settled, `${sentence(outcome.message)} Tap to open ${where}.`, true);
  await show(scope, payload.title, shown);
}

/** A button of this notification pressed: what to post, how to sign it, and what it says once done; null for no button it offered. */
interface Press {
  answer: { decision: ChatApproveDecision } | { choiceId: string };
  sign(options: PushHandlerOptions): Promise<RequestSignature | undefined>;
  done: string;
}

function pressOf(payload: PushPayload, action: ChatPushAction | SessionPushAction, pressed: string): Press | null {
  if ('choices' in action) {
    const choice = action.choices.find((c) => c.id === pressed);
    if (!choice || payload.sessionId === undefined) return null;
    const sessionId = payload.sessionId;
    return {
      answer: { choiceId: choice.id },
      sign: (options) => signedSession(payload.hostId, sessionId, action, choice.id, options),
      done: CHOSEN[choice.kind],
    };
  }
  const decision = action.decisions.find((d) => d === pressed);
  if (!decision) return null;
  return { answer: { decision }, sign: (options) => signed(payload, action, decision, options), done: DONE[decision] };
}

function sentence(text: string): string {
  return text.replace(/\.?$/, '.');
}

/**
 * This device's signature of the `chat.approve` a button asks for, over the approval as the push
 * showed it; undefined when the push did not carry it or there is no key here.
 */
async function signed(
  payload: PushPayload,
  action: ChatPushAction,
  decision: ChatApproveDecision,
  options: PushHandlerOptions,
): Promise<RequestSignature | undefined> {
  if (!action.shown || !options.deviceKey) return undefined;
  const key = await options.deviceKey();
  if (!key) return undefined;
  const frame = {
    id: `${PUSH_REQUEST_PREFIX}${crypto.randomUUID()}`,
    type: 'chat.approve',
    payload: pushApprovePayload({ chatId: payload.chatId, requestId: action.requestId }, decision),
  };
  const settles = await settledRequestDigest({ kind: 'approval', requestId: action.requestId, toolName: action.shown.toolName, input: action.shown.input });
  return signRequest(key, frame, { hostId: payload.hostId, settles });
}

/**
 * This device's signature of the `session.approve` a terminal session's button asks for: over the
 * request id and the choice, naming the approval as the push showed it (its tool, summary and
 * choices with their words); undefined with no key here.
 */
async function signedSession(
  hostId: string,
  sessionId: string,
  action: SessionPushAction,
  choiceId: string,
  options: PushHandlerOptions,
): Promise<RequestSignature | undefined> {
  const key = await options.deviceKey?.();
  if (!key) return undefined;
  const frame = {
    id: `${PUSH_REQUEST_PREFIX}${crypto.randomUUID()}`,
    type: 'session.approve',
    payload: pushSessionApprovePayload({ sessionId, requestId: action.requestId }, choiceId),
  };
  const settles = await settledRequestDigest(terminalApprovalShown({ sessionId, requestId: action.requestId, ...action.shown, choices: action.choices }));
  return signRequest(key, frame, { hostId, settles });
}

/** Answers an approval with a notification's action token (and this device's signature); the relay's `{code, message}` on refusal. */
async function act(
  scope: PushScope,
  token: string,
  answer: Press['answer'],
  signature: RequestSignature | undefined,
): Promise<({ ok: true } & Partial<PushActResult>) | { ok: false; code: string; message: string }> {
  try {
    const res = await scope.fetch(new URL('/api/push/act', scope.location.origin).href, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token, ...answer, ...(signature ? { signature } : {}) }),
    });
    if (res.ok) return { ...((await res.json().catch(() => ({}))) as Partial<PushActResult>), ok: true };
    const error = (await res.json().catch(() => ({}))) as { code?: string; message?: string };
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
