// The relay's first owner made in the app (/setup#secret=…, the link npm start and npm run deploy
// print), in Chromium against a relay of its own that has no owner yet (the shared one is claimed
// before any test runs): a wrong or missing secret is said plainly, the secret leaves the address
// bar, making the account ends signed in (and, with a host's code in the link, on approving it), and
// the link does nothing more once the relay has its owner.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startLocalRelay, type LocalRelay } from '../../scripts/local-relay.ts';
import { generateSigningKey } from '../../src/relay/auth/keys.ts';
import { accessibilityViolations, newPersonPage, screenshot, type PersonPage } from './browser.ts';

const SECRET = `setup-${crypto.randomUUID()}`;
const state = mkdtempSync(path.join(tmpdir(), 'tether-web-setup-'));
let relay: LocalRelay;
const pages: PersonPage[] = [];

beforeAll(async () => {
  relay = await startLocalRelay({
    persistTo: state,
    assets: inject('webDir'),
    script: inject('workerScript'),
    quiet: true,
    vars: { TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('setup-e2e')]), TETHER_SETUP_SECRET: SECRET },
  });
}, 90_000);

afterAll(async () => {
  for (const one of pages) await one.close();
  await relay?.stop();
  rmSync(state, { recursive: true, force: true });
});

async function open(at: string): Promise<PersonPage> {
  const made = await newPersonPage('phone', { path: at, relayUrl: relay.url });
  pages.push(made);
  return made;
}

const form = (page: PersonPage['page']) => ({
  name: page.getByLabel('Your name'),
  email: page.getByLabel('Email'),
  password: page.getByLabel('Password (at least 10 characters)'),
});

describe('the setup page of a relay with no owner yet', () => {
  it('says a link without its secret is not the one printed, and refuses a wrong secret with nothing made', async () => {
    const bare = await open('/setup');
    await bare.page.getByRole('alert').filter({ hasText: 'This link has no setup secret' }).waitFor();
    expect(await bare.page.getByRole('button', { name: /Create/ }).count()).toBe(0);

    const wrong = await open('/setup#secret=not-the-secret');
    const fields = form(wrong.page);
    await fields.name.fill('Olive Owner');
    await fields.email.fill('olive@example.com');
    await fields.password.fill('a long enough password');
    await wrong.page.getByRole('button', { name: 'Create and sign in' }).click();
    await wrong.page.getByRole('alert').filter({ hasText: 'Wrong setup secret' }).waitFor();
    expect(await (await fetch(`${relay.url}/api/auth/setup`)).json()).toEqual({ claimed: false });
    expect(bare.errors.concat(wrong.errors)).toEqual([]);
  });

  it('takes the secret out of the address, makes the owner and ends signed in on approving the host the link names', async () => {
    const { page, errors } = await open(`/setup#secret=${encodeURIComponent(SECRET)}&pair=ABCD-EFGH`);
    const fields = form(page);
    await fields.name.waitFor();
    expect(new URL(page.url()).hash, 'the secret left the address bar').toBe('');
    expect(await page.getByText('next you approve the host waiting with code ABCD-EFGH').count()).toBe(1);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'setup-form-phone');
    await fields.name.fill('Olive Owner');
    await fields.email.fill('olive@example.com');
    await fields.password.fill('a long enough password');
    await page.getByRole('button', { name: 'Create and approve the host' }).click();
    await page
      .waitForURL((url) => url.pathname === '/pair' && url.searchParams.get('code') === 'ABCD-EFGH')
      .catch(async (error: unknown) => {
        throw new Error(`${String(error)}\n--- page at ${page.url()}\n${await page.locator('body').innerText()}\n--- errors\n${errors.join('\n')}`);
      });
    // Signed in: the app's own navigation, and the session the app keeps is the owner's.
    await page.getByRole('navigation').getByRole('link', { name: 'Chats' }).waitFor();
    const me = await page.evaluate(async () => {
      const session = JSON.parse(localStorage.getItem('tether.session') ?? 'null') as { accessToken: string } | null;
      const res = await fetch('/api/me', { headers: { authorization: `Bearer ${session?.accessToken}` } });
      return res.json() as Promise<{ email: string; name: string }>;
    });
    expect(me).toMatchObject({ email: 'olive@example.com', name: 'Olive Owner' });
    expect(errors).toEqual([]);
  });

  it('once the relay has its owner, the link makes nothing more and says so', async () => {
    const { page, errors } = await open(`/setup#secret=${encodeURIComponent(SECRET)}`);
    await page.getByText('This relay has its owner already').waitFor();
    expect(await page.getByRole('button', { name: /Create/ }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Sign in' }).getAttribute('href')).toBe('/');
    expect(errors).toEqual([]);
  });
});
