// Web Push end to end: the real relay (wrangler dev) pushes to a push service on loopback
// (test/support/push-endpoint.ts) that checks each push's VAPID signature and decrypts it with
// http_ece, independently of the relay's code. A real host with the `script` provider raises an
// approval; the service worker's own handlers (src/web/sw/push.ts, driven here with a stand-in for the
// browser's scope) show it and approve it from the notification through the relay. Chromium runs the
// app's real service worker on those pushes (delivered through DevTools) and the Settings page lists
// what became of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribeToPush, unsubscribeFromPush, type PushApi, type PushManagerLike } from '../../src/client/index.ts';
import { PushPayloadSchema, type PushPayload } from '../../src/contracts/index.ts';
import { installPushHandlers, type NotificationShape, type PushScope } from '../../src/web/sw/push.ts';
import { PushEndpoint, type ReceivedPush } from '../support/push-endpoint.ts';
import { until as poll } from '../support/until.ts';
import { keepNotificationNotices, notificationNotice, signedInPerson } from './browser.ts';
import { HostProcess, Peer, personId, relayUrl, userToken } from './peers.ts';

const OWNER = 'push-owner';
const VIEWER = 'push-viewer';
const STRANGER = 'push-stranger';
const CHAT = 'push-chat';

const endpoint = new PushEndpoint();
const host = new HostProcess('push-host', OWNER);
let chat: Peer;
let ownerOld = '';
/** The first test's decrypted pushes of one turn: the approval, its answer, then the turn's end. */
const turnPushes: PushPayload[] = [];

async function call(label: string | null, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${relayUrl()}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(label ? { authorization: `Bearer ${await userToken(label)}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function subscribe(label: string, name: string, status = 201): Promise<string> {
  const subscription = endpoint.subscribe(name, status);
  const made = await call(label, 'POST', '/api/push/subscriptions', subscription);
  expect(made.status).toBe(201);
  return subscription.endpoint;
}

/** The SDK's push helper calls the relay as this person. */
const apiOf = (label: string): PushApi => ({
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const reply = await call(label, method, path, body);
    if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body as T;
  },
});

/** A stand-in for a browser's PushManager whose subscriptions are the loopback push service's. */
function pushManager(name: string): PushManagerLike & { keys: Uint8Array[] } {
  let held: Awaited<ReturnType<PushManagerLike['subscribe']>> | null = null;
  const keys: Uint8Array[] = [];
  return {
    keys,
    getSubscription: async () => held,
    async subscribe({ userVisibleOnly, applicationServerKey }) {
      expect(userVisibleOnly).toBe(true);
      const key = new Uint8Array(applicationServerKey as ArrayBuffer);
      keys.push(key);
      const json = endpoint.subscribe(name);
      held = {
        endpoint: json.endpoint,
        options: { applicationServerKey: key.slice().buffer },
        toJSON: () => json,
        unsubscribe: async () => {
          held = null;
          return true;
        },
      };
      return held;
    },
  };
}
const ownerPhone = pushManager('owner-phone');

/** A stand-in for the browser's ServiceWorkerGlobalScope: records notifications, fetches for real. */
function serviceWorker(options: { refuse?: string } = {}) {
  const listeners = new Map<string, (event: any) => void>();
  const shown: (NotificationShape & { title: string })[] = [];
  const opened: string[] = [];
  /** What the worker told its windows (NotificationNotice) after each notification. */
  const notices: unknown[] = [];
  const scope: PushScope = {
    addEventListener: (type: string, listener: (event: any) => void) => listeners.set(type, listener),
    registration: {
      showNotification: async (title, shape) => {
        if (options.refuse) throw new TypeError(options.refuse);
        shown.push({ title, ...shape });
      },
    },
    clients: {
      // The app open in front, elsewhere than the chat: pushes still alert, and a tap brings that window to the chat.
      matchAll: async () => [
        {
          url: `${relayUrl()}/`,
          focused: true,
          visibilityState: 'visible',
          navigate: async (url: string) => {
            opened.push(url);
          },
          postMessage: (message: unknown) => notices.push(message),
        },
      ],
      openWindow: async (url) => {
        opened.push(url);
      },
    },
    location: { origin: relayUrl() },
    fetch: (input, init) => fetch(input, init),
  };
  installPushHandlers(scope);
  const dispatch = async (type: string, event: object) => {
    const work: Promise<unknown>[] = [];
    listeners.get(type)!({ ...event, waitUntil: (p: Promise<unknown>) => work.push(p) });
    await Promise.all(work);
  };
  return {
    shown,
    opened,
    notices,
    push: (payload: PushPayload) => dispatch('push', { data: { json: () => payload } }),
    click: (notification: { data?: unknown }, action = '') => dispatch('notificationclick', { action, notification: { data: notification.data, close() {} } }),
  };
}

const until = (check: () => boolean | Promise<boolean>, what: string, ms = 30_000, detail?: () => string) =>
  poll(check, what, { ms, every: 50, detail: () => `${detail ? `${detail()}\n` : ''}${host.output.slice(-2000)}` });

const deliveries = async (label: string) => (await call(label, 'GET', '/api/push/deliveries')).body.deliveries as any[];

beforeAll(async () => {
  await endpoint.start();
  endpoint.vapidKey = (await call(null, 'GET', '/api/push/key')).body.publicKey;
  expect(endpoint.vapidKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
  await host.start();
  const lobby = await Peer.lobby(host.hostId, OWNER);
  await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
  await lobby.socket.request('chat.create', { chatId: CHAT });
  lobby.close();
  await userToken(VIEWER);
  const granted = await call(OWNER, 'POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'user', id: await personId(VIEWER) }, role: 'viewer' });
  expect(granted.status).toBe(201);
  // The owner's phone subscribes through the SDK's helper: the relay's key, the browser's push manager, the relay.
  const made = await subscribeToPush(apiOf(OWNER), ownerPhone);
  expect(made).toMatchObject({ id: expect.stringMatching(/^ps_/), current: true });
  expect(Buffer.from(ownerPhone.keys[0]!).toString('base64url')).toBe(endpoint.vapidKey);
  // Subscribing again keeps the browser's subscription and the relay's record of it.
  expect((await subscribeToPush(apiOf(OWNER), ownerPhone))!.id).toBe(made!.id);
  expect(ownerPhone.keys).toHaveLength(1);
  ownerOld = await subscribe(OWNER, 'owner-old', 410);
  await subscribe(VIEWER, 'viewer-phone');
  await subscribe(STRANGER, 'stranger-phone');
  chat = await Peer.chat(host.hostId, CHAT, OWNER);
  await chat.socket.request('chat.attach', { chatId: CHAT });
});

afterAll(async () => {
  chat?.close();
  await host.stop();
  await endpoint.stop();
});

describe('push notifications through wrangler dev', () => {
  it('pushes an approval to whoever may see the chat, approves it from the notification, and lets its turn buzz once', async () => {
    const sw = serviceWorker();
    await chat.socket.request('chat.send', { chatId: CHAT, text: 'please approve the build' });

    const asked = await endpoint.waitFor((p) => p.name === 'owner-phone' && p.payload.kind === 'needs-you', 'the approval push');
    expect(asked.payload).toMatchObject({
      v: 1,
      hostId: host.hostId,
      chatId: CHAT,
      buzz: true,
      body: 'Approval needed: Bash · push-host',
      url: `/hosts/${host.hostId}/chats/${CHAT}`,
      action: { requestId: expect.any(String), decisions: ['allow', 'deny', 'allow-always'], allowAlwaysLabel: 'Always allow npm test' },
    });
    expect(PushPayloadSchema.parse(asked.payload)).toEqual(asked.payload);
    expect(asked.payload.title.length).toBeGreaterThan(0);
    expect(asked.payload.action!.expiresAt).toBeGreaterThan(Date.now());
    expect(asked).toMatchObject({ urgency: 'high', topic: asked.payload.tag, ttl: 3600, vapid: { aud: endpoint.url, key: endpoint.vapidKey } });
    // A viewer is told, not asked: no action token in their push.
    const told = await endpoint.waitFor((p) => p.name === 'viewer-phone' && p.payload.kind === 'needs-you', 'the viewer’s push');
    expect(told.payload.action).toBeUndefined();
    expect(told.payload.buzz).toBe(true);

    await sw.push(asked.payload);
    expect(sw.notices).toEqual([{ type: 'tether.notification', tag: asked.payload.tag, body: asked.payload.body, shown: true }]);
    // A browser that refuses to show it (its permission taken back): the push event fails as the
    // browser's refusal did, and the open windows are told why.
    const refusing = serviceWorker({ refuse: 'No notification permission has been granted for this origin.' });
    await expect(refusing.push(asked.payload)).rejects.toThrow('No notification permission');
    expect(refusing.notices).toEqual([
      {
        type: 'tether.notification',
        tag: asked.payload.tag,
        body: asked.payload.body,
        shown: false,
        error: 'No notification permission has been granted for this origin.',
      },
    ]);
    expect(sw.shown[0]).toMatchObject({
      title: asked.payload.title,
      tag: asked.payload.tag,
      silent: false,
      requireInteraction: true,
      actions: [
        { action: 'allow', title: 'Approve' },
        { action: 'deny', title: 'Deny' },
        { action: 'allow-always', title: 'Always allow npm test' },
      ],
    });
    await sw.click(sw.shown[0]!, 'allow');
    expect(sw.shown[1]).toMatchObject({ tag: asked.payload.tag, body: 'Approved', silent: true, actions: undefined, requireInteraction: false });
    await chat.waitFor(
      (f) => f.event === 'chat.event' && f.payload.event.item?.kind === 'approval' && f.payload.event.item.decision === 'allow',
      'the approval settled',
    );

    // The request settled: every browser that was asked hears so, quietly, under the same tag.
    const answered = await endpoint.waitFor((p) => p.name === 'owner-phone' && p.payload.kind === 'answered', 'the answered push');
    expect(answered.payload).toMatchObject({ buzz: false, tag: asked.payload.tag, body: 'Approved: Bash · push-host' });
    expect(answered.payload.action).toBeUndefined();
    expect(answered).toMatchObject({ urgency: 'normal', topic: asked.payload.tag });
    await endpoint.waitFor((p) => p.name === 'viewer-phone' && p.payload.kind === 'answered', 'the viewer’s answered push');

    // The turn's end replaces the approval's notification in place, without a second buzz.
    const ended = await endpoint.waitFor((p) => p.name === 'owner-phone' && p.payload.kind === 'turn-ended', 'the turn-ended push');
    turnPushes.push(asked.payload, answered.payload, ended.payload);
    expect(ended.payload).toMatchObject({ buzz: false, tag: asked.payload.tag, body: 'Turn finished · push-host' });
    expect(ended).toMatchObject({ urgency: 'normal', topic: asked.payload.tag });
    await sw.push(ended.payload);
    expect(sw.shown[2]).toMatchObject({ tag: asked.payload.tag, silent: true, body: 'Turn finished · push-host' });
    expect(endpoint.of('owner-phone').filter((p) => p.payload.buzz)).toHaveLength(1);

    // Every delivery of the turn's end is recorded once all its pushes were answered: by then the
    // stranger (no access to the host) would have had theirs.
    await until(async () => (await deliveries(OWNER)).some((d) => d.kind === 'turn-ended'), 'the turn-ended delivery recorded');
    await until(async () => (await deliveries(VIEWER)).some((d) => d.kind === 'turn-ended'), 'the viewer’s turn-ended delivery recorded');
    expect(endpoint.of('stranger-phone')).toEqual([]);
    expect(await deliveries(STRANGER)).toEqual([]);

    const mine = await deliveries(OWNER);
    // Newest first; the pushes of one notice in any order. The old subscription was gone before the answer.
    expect(mine).toHaveLength(4);
    expect(mine[0]).toMatchObject({ kind: 'turn-ended', status: 201, buzz: false, removed: false, error: null });
    expect(mine[1]).toMatchObject({ kind: 'answered', status: 201, buzz: false, removed: false, error: null });
    expect(
      mine
        .slice(2)
        .map((d) => [d.kind, d.status, d.buzz, d.removed, d.error])
        .sort(),
    ).toEqual([
      ['needs-you', 201, true, false, null],
      ['needs-you', 410, true, true, 'push service answered 410'],
    ]);
    // The push service said the old subscription is gone: the relay forgot it.
    const subscriptions = (await call(OWNER, 'GET', '/api/push/subscriptions')).body.subscriptions.map((s: any) => s.endpoint);
    expect(subscriptions).not.toContain(ownerOld);
    expect(subscriptions).toHaveLength(1);

    // The notification's token worked once.
    const again = await call(null, 'POST', '/api/push/act', { token: asked.payload.action!.token, decision: 'allow' });
    expect(again).toEqual({ status: 404, body: { code: 'request-not-found', message: 'This approval was already answered' } });
    await sw.click(sw.shown[0]!, 'deny');
    expect(sw.shown.at(-1)).toMatchObject({ body: 'This approval was already answered. Tap to open the chat.', silent: true, actions: undefined });
    // The answer is audited like any chat.approve, under the person and the session that subscribed.
    const audit = (await call(OWNER, 'GET', `/api/hosts/${host.hostId}/audit`)).body.entries.filter((e: any) => e.action === 'chat.approve');
    expect(audit).toEqual([expect.objectContaining({ chatId: CHAT, detail: { requestId: expect.stringMatching(/^push-/) } })]);
    // A tap on the notification itself opens the chat.
    await sw.click(sw.shown[2]!);
    expect(sw.opened).toEqual([`${relayUrl()}/hosts/${host.hostId}/chats/${CHAT}`]);
    expect(endpoint.rejected).toEqual([]);
  });

  it('shows those pushes in Chromium through the app’s own service worker: silently while the person looks at that chat, the answer and the turn’s end replacing the approval; Settings lists them', async () => {
    const origin = relayUrl();
    const chatPath = `/hosts/${host.hostId}/chats/${CHAT}`;
    const person = await signedInPerson('desktop', OWNER, { path: chatPath });
    try {
      await person.context.grantPermissions(['notifications'], { origin });
      await person.page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
      // DevTools delivers a push event to the registration, as the browser does once it decrypted one.
      const cdp = await person.context.newCDPSession(person.page);
      // The registration whose worker is activated now (a push delivered to one still installing may be
      // lost): the newest such, not the first seen, and never one DevTools says was deleted, since a
      // registration can be replaced while the app starts. What DevTools says of every version, every
      // error the worker reports and its console are kept, to say why should a notification not come.
      const seen: string[] = [];
      const deleted = new Set<string>();
      let registrationId: string | null = null;
      let activated: () => void = () => undefined;
      const anyActivated = new Promise<void>((resolve) => {
        activated = resolve;
      });
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        for (const r of registrations) {
          seen.push(`registration ${r.registrationId} ${r.scopeURL}${r.isDeleted ? ' deleted' : ''}`);
          if (r.isDeleted) deleted.add(r.registrationId);
        }
      });
      cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
        for (const v of versions) {
          seen.push(`version ${v.versionId} of registration ${v.registrationId}: ${v.status}, ${v.runningStatus} (${v.scriptURL})`);
          if (v.status === 'activated' && v.scriptURL === `${origin}/sw.js` && !deleted.has(v.registrationId)) {
            registrationId = v.registrationId;
            activated();
          }
        }
      });
      cdp.on('ServiceWorker.workerErrorReported', ({ errorMessage }) =>
        seen.push(`worker error: ${errorMessage.errorMessage} at ${errorMessage.sourceURL}:${errorMessage.lineNumber}`),
      );
      person.context.on('console', (message) => seen.push(`console ${message.type()}: ${message.text()}`));
      await cdp.send('ServiceWorker.enable');
      const deliver = async (payload: PushPayload) => {
        await anyActivated;
        seen.push(`push ${payload.kind} delivered to registration ${registrationId}`);
        await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: registrationId!, data: JSON.stringify(payload) });
      };
      const why = () => `what the service worker did:\n${seen.slice(-40).join('\n')}`;
      const shown = () =>
        person.page.evaluate(async () =>
          (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({
            title: n.title,
            body: n.body,
            tag: n.tag,
            silent: n.silent,
            requireInteraction: n.requireInteraction,
            actions: (n as unknown as { actions: { action: string; title: string }[] }).actions.map((a) => ({ action: a.action, title: a.title })),
            data: n.data as unknown,
          })),
        );
      const [asked, answered, ended] = turnPushes;

      // The person is looking at this chat (the page is in front and focused, at the chat's path): the
      // approval that would buzz is still shown, with its buttons, but silently.
      expect(await person.page.evaluate(() => [document.visibilityState, document.hasFocus()])).toEqual(['visible', true]);
      await keepNotificationNotices(person.page);
      await deliver(asked!);
      // Read only once the worker says it is on screen: a read racing it makes Chromium drop it.
      await notificationNotice(person.page, asked!.tag, { body: asked!.body, detail: why });
      const all = await shown();
      expect(all).toHaveLength(1);
      const [first] = all;
      expect(first).toMatchObject({ title: asked!.title, body: asked!.body, tag: asked!.tag, silent: true, requireInteraction: true, data: asked });
      expect(first!.actions.slice(0, 2)).toEqual([
        { action: 'allow', title: 'Approve' },
        { action: 'deny', title: 'Deny' },
      ]);

      // Answered elsewhere: the same notification, without its buttons, quietly.
      await deliver(answered!);
      await notificationNotice(person.page, answered!.tag, { body: answered!.body, detail: why });
      expect(await shown()).toEqual([
        expect.objectContaining({ tag: asked!.tag, silent: true, requireInteraction: false, actions: [], body: 'Approved: Bash · push-host' }),
      ]);
      await deliver(ended!);
      await notificationNotice(person.page, ended!.tag, { body: ended!.body, detail: why });
      expect(await shown()).toEqual([expect.objectContaining({ tag: asked!.tag, silent: true, actions: [], body: 'Turn finished · push-host' })]);

      // Elsewhere in the app (Settings, not that chat), the same approval alerts.
      await person.page.goto('/settings');
      // Settings' list comes after its first render's effects ran, so its listener for the worker's
      // notices is there before the push below (Settings loads lazily: the page alone is no sign of it).
      const list = person.page.getByRole('list', { name: 'Recent notifications' });
      await list.getByRole('listitem').nth(3).waitFor();
      await keepNotificationNotices(person.page);
      await deliver(asked!);
      await notificationNotice(person.page, asked!.tag, { body: asked!.body, detail: why });
      expect(await shown()).toEqual([expect.objectContaining({ tag: asked!.tag, silent: false, requireInteraction: true })]);
      // Settings, open while it came, says this browser showed it (only the browser can know that).
      const lastShown = person.page.getByTestId('last-shown');
      await lastShown.waitFor();
      expect(await lastShown.textContent()).toMatch(/^This browser showed a notification at \d{1,2}:\d\d/);
      expect(await lastShown.textContent()).toContain(asked!.body);

      // Settings lists what became of each push of the first test, newest first.
      const rows = await list
        .getByRole('listitem')
        .evaluateAll((items) =>
          items.map((li) => [li.querySelector('a')?.textContent ?? '', (li.querySelector('span')?.textContent ?? '').replace(/^.* · /, '')]),
        );
      expect(rows.slice(0, 2)).toEqual([
        ['Turn ended', 'sent silently'],
        ['Answered', 'sent silently'],
      ]);
      expect(rows.slice(2).sort()).toEqual([
        ['Needs you', 'sent'],
        ['Needs you', 'subscription gone'],
      ]);
      expect(await list.getByRole('link', { name: 'Turn ended' }).getAttribute('href')).toBe(chatPath);
      expect(person.errors).toEqual([]);
    } finally {
      await person.close();
    }
  });

  it('tells of a question without buttons, and lets that turn buzz once too', async () => {
    const before = endpoint.of('owner-phone').length;
    await chat.socket.request('chat.send', { chatId: CHAT, text: 'a question for you' });
    const asked = await endpoint.waitFor(
      (p) => p.name === 'owner-phone' && p.payload.kind === 'needs-you' && endpoint.of('owner-phone').indexOf(p) >= before,
      'the question push',
    );
    expect(asked.payload).toMatchObject({ buzz: true, body: 'A question is waiting for you · push-host' });
    expect(asked.payload.action).toBeUndefined();
    const item = (
      await chat.waitFor(
        (f) => f.event === 'chat.event' && f.payload.event.item?.kind === 'question' && f.payload.event.item.state === 'pending',
        'the question',
      )
    ).payload.event.item;
    await chat.socket.request('chat.answer', { chatId: CHAT, requestId: item.requestId, answers: { color: 'Blue' } });
    const ended = await endpoint.waitFor(
      (p) => p.name === 'owner-phone' && p.payload.kind === 'turn-ended' && endpoint.of('owner-phone').indexOf(p) >= before,
      'the question turn’s end',
    );
    expect(ended.payload).toMatchObject({ buzz: false, tag: asked.payload.tag });
  });

  it('lets the next turn buzz again', async () => {
    const before = endpoint.of('owner-phone').length;
    await chat.socket.request('chat.send', { chatId: CHAT, text: 'hello again' });
    const ended = await endpoint.waitFor((p) => p.name === 'owner-phone' && endpoint.of('owner-phone').indexOf(p) >= before, 'the next turn’s push');
    expect(ended.payload).toMatchObject({ kind: 'turn-ended', buzz: true });
    expect(ended.payload.tag).not.toBe(endpoint.of('owner-phone')[0]!.payload.tag);
    expect(endpoint.rejected).toEqual([]);
  });

  it('replaces an approval answered in the app with a quiet "answered" one, and a stale Approve says so without acting', async () => {
    const sw = serviceWorker();
    const before = endpoint.of('owner-phone').length;
    const fresh = (p: ReceivedPush) => p.name === 'owner-phone' && endpoint.of('owner-phone').indexOf(p) >= before;
    await chat.socket.request('chat.send', { chatId: CHAT, text: 'approve the deploy' });
    const asked = await endpoint.waitFor((p) => fresh(p) && p.payload.kind === 'needs-you', 'the approval push');
    expect(asked.payload).toMatchObject({ buzz: true, action: { decisions: ['allow', 'deny', 'allow-always'] } });
    await sw.push(asked.payload);
    const requestId = asked.payload.action!.requestId;

    // Denied in the app: the notification that asked loses its buttons, quietly, in place.
    await chat.socket.request('chat.approve', { chatId: CHAT, requestId, decision: 'deny' });
    const answered = await endpoint.waitFor((p) => fresh(p) && p.payload.kind === 'answered', 'the answered push');
    expect(answered.payload).toMatchObject({ buzz: false, tag: asked.payload.tag, body: 'Denied: Bash · push-host' });
    expect(answered.payload.action).toBeUndefined();
    await sw.push(answered.payload);
    expect(sw.shown[1]).toMatchObject({
      tag: asked.payload.tag,
      silent: true,
      requireInteraction: false,
      actions: undefined,
      body: 'Denied: Bash · push-host',
    });

    // A browser that missed that push still shows Approve: pressing it says what happened and does nothing.
    await sw.click(sw.shown[0]!, 'allow');
    expect(sw.shown[2]).toMatchObject({
      tag: asked.payload.tag,
      silent: true,
      actions: undefined,
      body: 'This approval was already answered. Tap to open the chat.',
    });
    await endpoint.waitFor((p) => fresh(p) && p.payload.kind === 'turn-ended', 'the denied turn’s end');
    const decisions = chat.frames
      .filter((f) => f.event === 'chat.event' && f.payload.event.item?.requestId === requestId)
      .map((f) => f.payload.event.item.decision);
    expect(decisions).toContain('deny');
    expect(decisions).not.toContain('allow');
    expect(endpoint.of('owner-phone').filter((p) => fresh(p) && p.payload.buzz)).toHaveLength(1);
  });

  it('keeps the notification’s buttons and its token when the host is offline: nothing was answered', async () => {
    const sw = serviceWorker();
    const before = endpoint.of('owner-phone').length;
    await chat.socket.request('chat.send', { chatId: CHAT, text: 'approve it while I am away' });
    const asked = await endpoint.waitFor(
      (p) => p.name === 'owner-phone' && endpoint.of('owner-phone').indexOf(p) >= before && p.payload.kind === 'needs-you',
      'the approval push',
    );
    await sw.push(asked.payload);
    const lobby = await Peer.lobby(host.hostId, OWNER);
    // The host's machine goes away without a goodbye (a crash, a closed lid); the approval still waits.
    await host.stop('SIGKILL');
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'the host offline');
    lobby.close();

    await sw.click(sw.shown[0]!, 'allow');
    expect(sw.shown[1]).toMatchObject({
      tag: asked.payload.tag,
      silent: true,
      requireInteraction: true,
      body: 'The host is offline, so nothing was answered. Try again, or tap to open the chat.',
      actions: [
        { action: 'allow', title: 'Approve' },
        { action: 'deny', title: 'Deny' },
        { action: 'allow-always', title: 'Always allow npm test' },
      ],
    });
    // Nothing was spent: the same token is refused for the same reason, not as used.
    expect(await call(null, 'POST', '/api/push/act', { token: asked.payload.action!.token, decision: 'deny' })).toEqual({
      status: 503,
      body: { code: 'host-offline', message: 'The host is offline, so nothing was answered' },
    });
  });

  it('turning push off unsubscribes the browser and removes the relay’s record', async () => {
    await unsubscribeFromPush(apiOf(OWNER), ownerPhone);
    expect(await ownerPhone.getSubscription()).toBeNull();
    expect((await call(OWNER, 'GET', '/api/push/subscriptions')).body.subscriptions).toEqual([]);
  });
});
