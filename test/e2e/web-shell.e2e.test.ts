// The web app is served by the Worker from the relay's own origin, installable (manifest and a
// service worker), at phone and desktop sizes.
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { newPersonPage, screenshot, type PersonPage } from './browser.ts';

describe('the web app', () => {
  const opened: PersonPage[] = [];
  afterAll(async () => { await Promise.all(opened.map((p) => p.close())); });

  it('is served by the Worker as static assets with a manifest and a service worker', async () => {
    const relay = inject('relayUrl');
    const manifest = await fetch(`${relay}/manifest.webmanifest`);
    expect(manifest.status).toBe(200);
    const body = await manifest.json() as { name: string; start_url: string; display: string };
    expect(body).toMatchObject({ name: 'Tether', start_url: '/', display: 'standalone' });
    const sw = await fetch(`${relay}/sw.js`);
    expect(sw.status).toBe(200);
    expect(sw.headers.get('content-type')).toMatch(/javascript/);
    // A deep link the app routes itself falls back to the app, while the API still answers as the API.
    const deep = await fetch(`${relay}/chats/some-host/some-chat`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="app">');
    const api = await fetch(`${relay}/api/nothing-here`);
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: 'not-found' });
  });

  it.each(['phone', 'desktop'] as const)('loads at %s size and registers its service worker', async (size) => {
    const person = await newPersonPage(size);
    opened.push(person);
    const { page } = person;
    await expect.poll(() => page.evaluate(async () => Boolean(await navigator.serviceWorker.getRegistration('/')))).toBe(true);
    expect(await page.title()).toBe('Tether');
    await screenshot(page, `shell-${size}`);
    expect(person.errors).toEqual([]);
  });
});
