// The web app's device key in IndexedDB (fake-indexeddb here, which clones values with Node's own
// structuredClone, as a browser does; the real browser store is exercised in Chromium by the e2e).
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { importDevicePublicKey, verifyStatement } from '../../src/contracts/index.ts';
import { signRequest } from '../../src/client/device-key.ts';
import { browserDeviceKey, currentDeviceKey, forgetBrowserDeviceKey, setCurrentUser } from '../../src/web/app/device-key.ts';

let dbs = 0;

describe("the browser's device key", () => {
  it('is made once with a non-extractable private key and kept across openings', async () => {
    const db = `device-test-${++dbs}`;
    const first = await browserDeviceKey('ada', { dbName: db, now: 10 });
    expect(first.privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('jwk', first.privateKey)).rejects.toThrow();
    const again = await browserDeviceKey('ada', { dbName: db, now: 20 });
    expect(again).toMatchObject({ id: first.id, created: 10 });
    const signed = await signRequest(again, { id: 'r', type: 'chat.approve', payload: { chatId: 'c', requestId: 'q', decision: 'allow' } }, { hostId: 'h' });
    expect(await verifyStatement(await importDevicePublicKey(first.publicKey), signed)).toBe(true);
  });

  it('the page and the service worker asking at once get the same key', async () => {
    const db = `device-test-${++dbs}`;
    const keys = await Promise.all([browserDeviceKey('ada', { dbName: db }), browserDeviceKey('ada', { dbName: db }), browserDeviceKey('ada', { dbName: db })]);
    expect(new Set(keys.map((k) => k.id)).size).toBe(1);
  });

  it('once forgotten, a new key is made', async () => {
    const db = `device-test-${++dbs}`;
    const first = await browserDeviceKey('ada', { dbName: db });
    await forgetBrowserDeviceKey('ada', db);
    expect((await browserDeviceKey('ada', { dbName: db })).id).not.toBe(first.id);
  });

  it("is one per person on a shared browser, and the service worker finds the signed-in person's key (never making one)", async () => {
    const db = `device-test-${++dbs}`;
    const ada = await browserDeviceKey('ada', { dbName: db });
    const bob = await browserDeviceKey('bob', { dbName: db });
    expect(bob.id).not.toBe(ada.id);
    expect(await currentDeviceKey(db)).toBeNull();
    await setCurrentUser('bob', db);
    expect((await currentDeviceKey(db))?.id).toBe(bob.id);
    await setCurrentUser('cleo', db);
    expect(await currentDeviceKey(db)).toBeNull();
    await setCurrentUser(null, db);
    expect(await currentDeviceKey(db)).toBeNull();
    expect((await browserDeviceKey('ada', { dbName: db })).id).toBe(ada.id);
  });
});
