// The service worker's handlers (src/web/sw/push.ts) on a terminal session's push, driven with a
// stand-in for the browser's scope: the buttons are the approval's own choices, a press posts the
// choice with this device's signature of `session.approve` (which verifies over exactly that
// payload), and the relay's `request-not-found` (the terminal answered first) replaces the notification
// with what happened, without buttons. The chat path is covered by test/e2e/push.e2e.test.ts.
import { describe, expect, it } from 'vitest';
import { digestOf, importDevicePublicKey, settledRequestDigest, verifyStatement, type PushPayload, type RequestSignature } from '../../src/contracts/index.ts';
import { deviceKeyOf, newDeviceKeyPair } from '../../src/client/device-key.ts';
import { installPushHandlers, type NotificationShape, type PushScope } from '../../src/web/sw/push.ts';

const ORIGIN = 'https://app.tether.test';
const CHOICES = [
  { id: 'allow', kind: 'allow' as const, label: 'Allow once' },
  { id: 'remember', kind: 'remember' as const, label: 'Allow and remember' },
  { id: 'deny', kind: 'deny' as const, label: 'Deny' },
];

const asked: PushPayload = {
  v: 1,
  kind: 'needs-you',
  title: 'In your terminal',
  body: 'Approval needed: Bash · laptop',
  hostId: 'h1',
  chatId: '',
  sessionId: 's1',
  tag: 'tag-1',
  buzz: true,
  url: '/hosts/h1/sessions/s1',
  at: 1,
  action: {
    requestId: 'tu-1',
    choices: CHOICES,
    token: 'action-token',
    expiresAt: Date.now() + 60_000,
    shown: { toolName: 'Bash', summary: 'Bash: rm -rf build' },
  },
};

/** The worker installed on a stand-in scope whose `/api/push/act` answers `reply`; what it showed and posted. */
async function worker(reply: { status: number; body: unknown }) {
  const listeners = new Map<string, (event: any) => void>();
  const shown: (NotificationShape & { title: string })[] = [];
  const posted: any[] = [];
  const opened: string[] = [];
  const pair = await newDeviceKeyPair(false);
  const key = await deviceKeyOf(pair, Date.now());
  const scope: PushScope = {
    addEventListener: (type: string, listener: (event: any) => void) => listeners.set(type, listener),
    registration: {
      showNotification: async (title, shape) => {
        shown.push({ title, ...shape });
      },
    },
    clients: {
      matchAll: async () => [],
      openWindow: async (url) => {
        opened.push(url);
      },
    },
    location: { origin: ORIGIN },
    fetch: async (input, init) => {
      posted.push({ url: String(input), body: JSON.parse(String(init?.body)) });
      return new Response(JSON.stringify(reply.body), { status: reply.status, headers: { 'Content-Type': 'application/json' } });
    },
  };
  installPushHandlers(scope, { deviceKey: async () => key });
  const dispatch = async (type: string, event: object) => {
    const work: Promise<unknown>[] = [];
    listeners.get(type)!({ ...event, waitUntil: (p: Promise<unknown>) => work.push(p) });
    await Promise.all(work);
  };
  return {
    key,
    shown,
    posted,
    opened,
    push: (payload: PushPayload) => dispatch('push', { data: { json: () => payload } }),
    click: (data: unknown, action: string) => dispatch('notificationclick', { action, notification: { data, close() {} } }),
  };
}

describe("a terminal session's notification", () => {
  it("offers the approval's own choices, and a press posts the choice signed as session.approve", async () => {
    const sw = await worker({ status: 200, body: { ok: true, requestId: 'tu-1', choiceId: 'remember' } });
    await sw.push(asked);
    expect(sw.shown[0]).toMatchObject({
      title: 'In your terminal',
      body: 'Approval needed: Bash · laptop',
      tag: 'tag-1',
      silent: false,
      requireInteraction: true,
      actions: [
        { action: 'allow', title: 'Allow once' },
        { action: 'remember', title: 'Allow and remember' },
        { action: 'deny', title: 'Deny' },
      ],
    });

    await sw.click(sw.shown[0]!.data, 'remember');
    expect(sw.posted).toHaveLength(1);
    const { url, body } = sw.posted[0];
    expect(url).toBe(`${ORIGIN}/api/push/act`);
    expect(body).toMatchObject({ token: 'action-token', choiceId: 'remember' });
    expect(body.decision).toBeUndefined();
    const signature = body.signature as RequestSignature;
    expect(signature.statement).toMatchObject({
      kind: 'tether.request/1',
      hostId: 'h1',
      chatId: null,
      type: 'session.approve',
      id: expect.stringMatching(/^push-/),
      device: sw.key.id,
    });
    expect(signature.statement.payload).toBe(await digestOf({ sessionId: 's1', requestId: 'tu-1', choiceId: 'remember' }));
    // It names the approval as the push showed it, whatever order the buttons came in; another command or other words would not match.
    const host = { kind: 'terminal-approval' as const, sessionId: 's1', requestId: 'tu-1', toolName: 'Bash', summary: 'Bash: rm -rf build' };
    expect(signature.statement.settles).toBe(await settledRequestDigest({ ...host, choices: [...CHOICES].reverse() }));
    expect(signature.statement.settles).not.toBe(await settledRequestDigest({ ...host, summary: 'Bash: ls', choices: CHOICES }));
    expect(signature.statement.settles).not.toBe(
      await settledRequestDigest({ ...host, choices: CHOICES.map((c) => (c.id === 'allow' ? { ...c, label: 'Deny' } : c)) }),
    );
    expect(await verifyStatement(await importDevicePublicKey(sw.key.publicKey), signature)).toBe(true);
    expect(sw.shown[1]).toMatchObject({ tag: 'tag-1', body: 'Approved and remembered', silent: true, requireInteraction: false, actions: undefined });
  });

  it('says so when the terminal answered first (request-not-found), and a tap opens the session', async () => {
    const sw = await worker({
      status: 404,
      body: { code: 'request-not-found', message: 'This approval was already answered in the terminal (or elsewhere), or it expired, so nothing was answered' },
    });
    await sw.push(asked);
    await sw.click(sw.shown[0]!.data, 'deny');
    expect(sw.shown[1]).toMatchObject({
      tag: 'tag-1',
      silent: true,
      actions: undefined,
      body: 'This approval was already answered in the terminal (or elsewhere), or it expired, so nothing was answered. Tap to open the session.',
    });
    await sw.click(sw.shown[1]!.data, '');
    expect(sw.opened).toEqual([`${ORIGIN}/hosts/h1/sessions/s1`]);
  });

  it('keeps the buttons when the host was offline, and shows the quiet replacement of a settled approval without any', async () => {
    const sw = await worker({ status: 503, body: { code: 'host-offline', message: 'The host is offline, so nothing was answered' } });
    await sw.push(asked);
    await sw.click(sw.shown[0]!.data, 'allow');
    expect(sw.shown[1]).toMatchObject({
      body: 'The host is offline, so nothing was answered. Try again, or tap to open the session.',
      actions: CHOICES.map((c) => ({ action: c.id, title: c.label })),
    });
    const { action: _, ...rest } = asked;
    await sw.push({ ...rest, kind: 'answered', body: 'No longer waiting: Bash · laptop', buzz: false });
    expect(sw.shown[2]).toMatchObject({ tag: 'tag-1', body: 'No longer waiting: Bash · laptop', silent: true, requireInteraction: false, actions: undefined });
    // A button the notification never offered opens the session rather than answering anything.
    await sw.click(sw.shown[0]!.data, 'always');
    expect(sw.posted).toHaveLength(1);
  });
});
