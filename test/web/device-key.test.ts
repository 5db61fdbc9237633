// The web app's device key in IndexedDB (fake-indexeddb here, which clones values with Node's own
// structuredClone, as a browser does; the real browser store is exercised in Chromium by the e2e).
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { importDevicePublicKey, verifyStatement } from '../../src/contracts/index.ts';
import { signRequest } from '../../src/client/device-key.ts';
import { browserDeviceKey, forgetBrowserDeviceKey } from '../../src/web/app/device-key.ts';

let dbs = 0;

describe('the browser\'s device key', () => {
  it('is made once with a non-extractable private key and kept across openings', async () => {
    const db = `device-test-${++dbs}`;
    const first = await browserDeviceKey(db, 10);
    expect(first.privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('jwk', first.privateKey)).rejects.toThrow();
    const again = await browserDeviceKey(db, 20);
    expect(again).toMatchObject({ id: first.id, created: 10 });
    const signed = await signRequest(again, { id: 'r', type: 'chat.approve', payload: { chatId: 'c', requestId: 'q', decision: 'allow' } }, { hostId: 'h' });
    expect(await verifyStatement(await importDevicePublicKey(first.publicKey), signed)).toBe(true);
  });

  it('the page and the service worker asking at once get the same key', async () => {
    const db = `device-test-${++dbs}`;
    const keys = await Promise.all([browserDeviceKey(db), browserDeviceKey(db), browserDeviceKey(db)]);
    expect(new Set(keys.map((k) => k.id)).size).toBe(1);
  });

  it('once forgotten, a new key is made', async () => {
    const db = `device-test-${++dbs}`;
    const first = await browserDeviceKey(db);
    await forgetBrowserDeviceKey(db);
    expect((await browserDeviceKey(db)).id).not.toBe(first.id);
  });
});
