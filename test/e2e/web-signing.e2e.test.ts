// The web app and its service worker sign, end to end: the real relay (the shared wrangler dev), a
// real `tether host` whose config requires signatures, and the app in the shared Chromium. The app
// pairs the host with an approval its own device key signed (non-extractable, in IndexedDB), so the
// host pins that browser as its owner's device; then everything the app asks the machine to do
// (make a chat, send, approve) is signed by that key and carried out. An approval answered from a
// notification's button is signed by the app's real service worker with the same key and carried out
// too. Unsigned requests (a client without a key, a notification answer without a signature) reach
// the host through the relay and are refused there; the host's own audit says who did what.
//
// What stands in: the push service (test/support/push-endpoint.ts on loopback, which decrypts each
// push as a browser would: headless Chromium here reaches no real push service) and the press of the
// notification's button: DevTools delivers the decrypted push to the real service worker
// (ServiceWorker.deliverPushMessage), which shows a real notification, and the press is a
// `notificationclick` event dispatched inside that worker with that real notification and the
// button's action, since neither DevTools nor Playwright can press a notification's button. The
// worker's own handler (src/web/sw/push.ts) then reads the key from IndexedDB, signs and answers.
import type { Page, Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError, importDevicePublicKey, recoveryCodeOf, shortFingerprint, verifyStatement, type PushPayload } from '../../src/contracts/index.ts';
import { RelaySocket, relayPaths } from '../../src/client/index.ts';
import { readAudit } from '../../src/host/trust/audit.ts';
import { readPinnedOwner } from '../../src/host/trust/pinned.ts';
import { PushEndpoint } from '../support/push-endpoint.ts';
import { keepNotificationNotices, notificationNotice, screenshot, signedInPerson, startSigningHost, until, type SignedInPerson } from './browser.ts';
import { HostProcess, personId, relayUrl, userToken } from './peers.ts';

const PERSON = 'websign-owner';
const TEAMMATE = 'websign-teammate';
const host = new HostProcess(`e2e-websign-${crypto.randomUUID().slice(0, 6)}`, PERSON);
const endpoint = new PushEndpoint();
let person: SignedInPerson;
let chatId = '';
let deviceId = '';
const consoleLines: string[] = [];

async function call(method: string, route: string, body?: unknown, token?: string | null): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token ?? (await userToken(PERSON))}`;
  const res = await fetch(`${relayUrl()}${route}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

const detail = () => host.output.slice(-2000);
const auditOf = (type: string) => readAudit(host.dataDir).entries.filter((e) => e.type === type);
const card = (page: Page) => page.locator('.approval-card').last();

/** Sends from the app's composer (a signed chat.send) and waits for the approval the script asks. */
async function askForApproval(page: Page, text: string): Promise<void> {
  const before = await page.locator('.approval-card.pending').count();
  const box = page.getByRole('combobox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
  await until(async () => (await page.locator('.approval-card.pending').count()) > before, `the approval for "${text}"`, {
    detail: () => `${detail()}\naudit: ${JSON.stringify(readAudit(host.dataDir).entries.map((e) => [e.type, e.outcome, e.code]))}`,
  }).catch(async (error: Error) => {
    throw new Error(
      `${error.message}\npage: ${(await page.locator('main').textContent())?.slice(-1500)}\nconsole: ${consoleLines.join('\n')}\nerrors: ${person.errors.join('\n')}`,
    );
  });
}

beforeAll(async () => {
  await endpoint.start();
  endpoint.vapidKey = (await call('GET', '/api/push/key', undefined, null)).body.publicKey;
  person = await signedInPerson('desktop', PERSON, {
    path: '/hosts',
    beforeLoad: (page) => page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`)),
  });
  await person.page.getByRole('heading', { name: 'Hosts' }).waitFor();
  // The host requires signatures from its first start; pair keeps the setting.
  await startSigningHost(host, person.page);
});

afterAll(async () => {
  await person?.close();
  await host.stop();
  await endpoint.stop();
});

describe('the web app signs with its device key, and a host that requires signatures carries it out', () => {
  it('pairs with a signed approval (the host pins this browser), then makes a chat, sends and approves in the app: each signed by that browser and carried out', async () => {
    const { page } = person;
    const devices = (await call('GET', '/api/devices')).body.devices as Array<{ id: string; name: string; revoked: number | null }>;
    expect(devices).toHaveLength(1);
    deviceId = devices[0]!.id;
    expect(readPinnedOwner(host.dataDir)?.owner.device.id).toBe(deviceId);

    // A chat made in the app: chat.create acts on the machine, so the lobby socket signs it.
    await page.goto(`/chats/new?host=${encodeURIComponent(host.hostId)}`);
    await page.getByRole('button', { name: 'Create chat' }).click();
    await page.waitForURL(/\/hosts\/[^/]+\/chats\/[^/?]+$/);
    chatId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
    await page.locator('.composer').waitFor();

    await askForApproval(page, 'please approve the build');
    await card(page).getByRole('button', { name: 'Allow', exact: true }).click();
    await until(() => page.locator('.thread-row[data-kind="assistant"]', { hasText: 'All 42 tests passed.' }).count(), 'the approved turn’s reply', { detail });
    await screenshot(page, 'websign-approved-in-app-desktop');

    // The host's own audit: each carried out, verified as this person and this browser's device.
    const me = (await call('GET', '/api/me')).body;
    for (const type of ['chat.create', 'chat.send', 'chat.approve']) {
      expect(
        auditOf(type).map((e) => [e.outcome, e.userId, e.device]),
        type,
      ).toEqual([['done', me.id, deviceId]]);
    }
    expect(person.errors).toEqual([]);
  });

  it("approves from a notification's button: the real service worker signs with the same key, over the approval the push carried, and the host carries it out", async () => {
    const { page, context } = person;
    const origin = relayUrl();
    // This browser's subscription, at the loopback push service (see the header).
    const subscription = endpoint.subscribe('websign-browser');
    expect((await call('POST', '/api/push/subscriptions', subscription)).status).toBe(201);
    await context.grantPermissions(['notifications'], { origin });
    await page.goto('/settings'); // elsewhere than the chat, so the notification is not the quiet kind
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
    const cdp = await context.newCDPSession(page);
    const registrationId = new Promise<string>((resolve) =>
      cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
        const active = versions.find((v) => v.status === 'activated' && v.scriptURL === `${origin}/sw.js`);
        if (active) resolve(active.registrationId);
      }),
    );
    await cdp.send('ServiceWorker.enable');
    const worker = await until(() => context.serviceWorkers().find((w) => w.url() === `${origin}/sw.js`), 'the service worker');

    // A second approval, asked from the app (its send signed too).
    await page.goto(`/hosts/${encodeURIComponent(host.hostId)}/chats/${encodeURIComponent(chatId)}`);
    await page.locator('.composer').waitFor();
    const before = endpoint.of('websign-browser').length;
    await askForApproval(page, 'approve it once more');
    const asked = await endpoint.waitFor(
      (p) => p.name === 'websign-browser' && endpoint.of('websign-browser').indexOf(p) >= before && p.payload.kind === 'needs-you',
      'the approval push',
    );
    const payload = asked.payload as PushPayload;
    // The push carries the approval as the host presented it, so the worker signs over exactly that.
    expect(payload.action && 'shown' in payload.action ? payload.action.shown : undefined).toEqual({
      toolName: 'Bash',
      input: { command: 'npm test', description: 'Run the test suite' },
    });
    await page.goto('/settings');
    await keepNotificationNotices(page);

    await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: await registrationId, data: JSON.stringify(payload) });
    // The notifications are read only once the worker says each is on screen: a read that races one
    // being shown makes Chromium drop it (src/web/sw/push.ts, NotificationNotice).
    await notificationNotice(page, payload.tag, { body: payload.body, detail });
    expect(await notifications(worker)).toContainEqual({ tag: payload.tag, body: payload.body, actions: expect.arrayContaining(['allow', 'deny']) });
    await pressNotificationButton(worker, payload.tag, 'allow');
    await notificationNotice(page, payload.tag, { body: 'Approved', detail });
    expect(await notifications(worker)).toContainEqual({ tag: payload.tag, body: 'Approved', actions: [] });

    const approvals = auditOf('chat.approve');
    expect(approvals).toHaveLength(2);
    const me = (await call('GET', '/api/me')).body;
    expect(approvals[1]).toMatchObject({ outcome: 'done', userId: me.id, device: deviceId });
    expect(approvals[1]!.signedId).toMatch(/^push-/);
    expect(person.errors).toEqual([]);
  });

  it('refuses what is not signed, though the relay carries it: a send from a client without a key, and a notification answer without a signature', async () => {
    const plain = new RelaySocket(relayPaths.chat(relayUrl(), host.hostId, chatId), await userToken(PERSON));
    try {
      const unsigned = await plain.request('chat.send', { chatId, text: 'approve without a key' }).catch((error: unknown) => error);
      expect(unsigned).toBeInstanceOf(ProtocolError);
      expect((unsigned as ProtocolError).code).toBe('signature-required');
    } finally {
      plain.close();
    }

    // An approval waiting (asked from the app, signed), answered by its push's token with no signature.
    const before = endpoint.of('websign-browser').length;
    await person.page.goto(`/hosts/${encodeURIComponent(host.hostId)}/chats/${encodeURIComponent(chatId)}`);
    await person.page.locator('.composer').waitFor();
    await askForApproval(person.page, 'approve a third time');
    const asked = await endpoint.waitFor(
      (p) => p.name === 'websign-browser' && endpoint.of('websign-browser').indexOf(p) >= before && p.payload.kind === 'needs-you',
      'the third approval push',
    );
    const refused = await call('POST', '/api/push/act', { token: asked.payload.action!.token, decision: 'allow' }, null);
    expect(refused).toMatchObject({ body: { code: 'signature-required' } });
    // Nothing was carried out: the approval still waits, in the app too.
    expect(await person.page.locator('.approval-card.pending').count()).toBe(1);
    const lines = readAudit(host.dataDir).entries.filter((e) => e.outcome === 'refused');
    expect(lines.map((e) => [e.type, e.code, e.userId])).toEqual([
      ['chat.send', 'signature-required', null],
      ['chat.approve', 'signature-required', null],
    ]);
  });

  it('Settings: this device marked with its recovery code; a second browser of the same person waits until this one vouches for it; rename and a signed revoke', async () => {
    const { page } = person;
    const second = await signedInPerson('phone', PERSON, { path: '/settings' });
    try {
      // The new browser made and registered its own key on load, and waits for a vouch.
      await second.page.getByTestId('device-waiting').waitFor();
      const all = (await call('GET', '/api/devices')).body.devices as Array<{
        id: string;
        name: string;
        vouchedBy: string | null;
        vouch: any;
        revoked: number | null;
        publicKey: any;
      }>;
      expect(all).toHaveLength(2);
      const added = all.find((d) => d.id !== deviceId)!;
      expect(added).toMatchObject({ vouchedBy: null, revoked: null });

      await page.goto('/settings');
      const mine = page.locator(`li[data-device="${deviceId}"]`);
      await mine.waitFor();
      expect(await mine.getAttribute('data-standing')).toBe('first');
      expect(await mine.locator('.badge', { hasText: 'this device' }).count()).toBe(1);
      // The code `tether host trust` takes binds this device's key (its id's short fingerprint).
      expect(await page.locator('.recovery-code').textContent()).toBe(`tether host trust ${recoveryCodeOf(deviceId)}`);

      const row = page.locator(`li[data-device="${added.id}"]`);
      expect(await row.getAttribute('data-standing')).toBe('waiting');
      expect(await row.locator('code').first().textContent()).toBe(shortFingerprint(added.id));
      await row.getByRole('button', { name: `Vouch for the device ${added.name}` }).click();
      await expect.poll(() => row.getAttribute('data-standing'), { timeout: 10_000 }).toBe('vouched');
      const vouched = ((await call('GET', '/api/devices')).body.devices as typeof all).find((d) => d.id === added.id)!;
      expect(vouched.vouchedBy).toBe(deviceId);
      // Signed by the first browser's key, over the new device's key and name as listed.
      const firstKey = all.find((d) => d.id === deviceId)!.publicKey;
      expect(vouched.vouch.statement).toMatchObject({
        kind: 'tether.device/1',
        by: deviceId,
        device: { id: added.id, publicKey: added.publicKey, name: added.name },
      });
      expect(await verifyStatement(await importDevicePublicKey(firstKey), vouched.vouch)).toBe(true);
      await second.page.reload();
      await second.page.locator(`li[data-device="${added.id}"][data-standing="vouched"]`).waitFor();
      expect(await second.page.getByTestId('device-waiting').count()).toBe(0);

      // The host follows the vouch the relay carried to it: what the second browser signs is carried out.
      await second.page.goto(`/hosts/${encodeURIComponent(host.hostId)}/chats/${encodeURIComponent(chatId)}`);
      await sendFromPhone(second.page, 'hello from the vouched phone');
      await until(() => auditOf('chat.send').find((e) => e.device === added.id && e.outcome === 'done'), 'the vouched device’s send carried out', { detail });

      await row.getByLabel('Name', { exact: true }).fill('The phone');
      await row.getByRole('button', { name: 'Save name' }).click();
      await expect.poll(async () => ((await call('GET', '/api/devices')).body.devices as typeof all).find((d) => d.id === added.id)!.name).toBe('The phone');

      // Revoked from the first browser with a revocation it signs (hosts follow it, not the relay's word).
      await row.getByRole('button', { name: 'Revoke the device The phone' }).click();
      await expect.poll(() => row.getAttribute('data-standing'), { timeout: 10_000 }).toBe('revoked');
      const revocations = (await call('GET', '/api/devices')).body.devices.find((d: any) => d.id === added.id);
      expect(revocations.revoked).toBeTypeOf('number');
      // The host heard the signed revocation: the revoked browser's next send is refused there.
      const refusedBefore = auditOf('chat.send').filter((e) => e.outcome === 'refused').length;
      await sendFromPhone(second.page, 'hello after the revoke');
      const refused = await until(
        () =>
          auditOf('chat.send')
            .filter((e) => e.outcome === 'refused')
            .slice(refusedBefore)[0],
        'the revoked device’s send refused',
        { detail },
      );
      expect(refused).toMatchObject({ code: 'signature-invalid', userId: null });
      expect(auditOf('chat.send').filter((e) => e.device === added.id && e.outcome === 'done')).toHaveLength(1);
      expect(person.errors).toEqual([]);
      expect(second.errors).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it("sharing the host from the app signs the grant with this browser's key", async () => {
    const { page } = person;
    const mate = await signedInPerson('desktop', TEAMMATE, { path: '/settings' });
    try {
      // The teammate's browser registers its key, which the owner's grant names.
      await mate.page.locator('li[data-device] .badge', { hasText: 'this device' }).waitFor();
      const mateId = await personId(TEAMMATE);
      // A grant the relay made (by id, through the API), then changed in the app: signed there.
      expect((await call('POST', `/api/hosts/${host.hostId}/grants`, { subject: { type: 'user', id: mateId }, role: 'viewer' })).status).toBe(201);
      await page.goto(`/hosts/${encodeURIComponent(host.hostId)}`);
      const role = page.getByRole('combobox', { name: /^Role of / });
      await role.waitFor();
      await role.selectOption('operator');
      await page.locator('.notice.ok', { hasText: 'is now operator' }).waitFor();
      const changed = (await call('GET', `/api/hosts/${host.hostId}/audit`)).body.entries.filter((e: any) => e.action === 'grant.changed');
      expect(changed[0]?.detail).toMatchObject({ subjectId: mateId, role: 'operator', was: 'viewer', signed: true });
      expect(person.errors).toEqual([]);
    } finally {
      await mate.close();
    }
  });
});

/** Sends from the composer as a phone does (its Send button). */
async function sendFromPhone(page: Page, text: string): Promise<void> {
  await page.locator('.composer').waitFor();
  await page.getByRole('combobox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: /^(Send|Queue|Steer)$/ }).click();
}

/** The worker's notifications: tag, body and the buttons offered. */
async function notifications(worker: Worker): Promise<Array<{ tag: string; body: string; actions: string[] }>> {
  return worker.evaluate(async () => {
    const scope = self as unknown as {
      registration: { getNotifications(): Promise<Array<{ tag: string; body: string; actions: Array<{ action: string }> }>> };
    };
    return (await scope.registration.getNotifications()).map((n) => ({ tag: n.tag, body: n.body, actions: n.actions.map((a) => a.action) }));
  });
}

/**
 * A press of the notification's button, as the browser reports it to the worker (see the header: the
 * only stand-in of this path). The event is built inside the worker around the real notification.
 */
async function pressNotificationButton(worker: Worker, tag: string, action: string): Promise<void> {
  await worker.evaluate(
    async ({ tag, action }) => {
      const scope = self as unknown as EventTarget & { registration: { getNotifications(): Promise<Array<{ tag: string }>> } };
      const notification = (await scope.registration.getNotifications()).find((n) => n.tag === tag);
      if (!notification) throw new Error(`no notification tagged ${tag}`);
      const NotificationEventCtor = (self as unknown as { NotificationEvent: new (type: string, init: object) => Event }).NotificationEvent;
      // An event the script made is not one the browser can be kept alive for: waitUntil throws on it,
      // after the handler has started its work, which is what this waits for through the notification.
      scope.dispatchEvent(new NotificationEventCtor('notificationclick', { notification, action }));
    },
    { tag, action },
  );
}
