// The browser side of the end-to-end tests: every file connects to the ONE Chromium that
// global-setup launched, and each person gets a context of their own (own storage, own cookies),
// at a phone or a desktop size. Screenshots are test output (test-output/screenshots), not in git.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';

export const SIZES = {
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
  desktop: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
} as const;
export type Size = keyof typeof SIZES;

const SHOTS = path.resolve(import.meta.dirname, '..', '..', 'test-output', 'screenshots');

let connected: Promise<Browser> | null = null;

/** The shared Chromium (connected once per test file). */
export function sharedBrowser(): Promise<Browser> {
  connected ??= chromium.connect(inject('browserWsEndpoint'));
  return connected;
}

export interface PersonPage {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page's scripts, so a test can assert there were none. */
  errors: string[];
  close(): Promise<void>;
}

/** A fresh browser context (a person on their own device) with one page, opened at the relay. */
export async function newPersonPage(size: Size, options: { path?: string } = {}): Promise<PersonPage> {
  const browser = await sharedBrowser();
  const context = await browser.newContext({ ...SIZES[size], baseURL: inject('relayUrl') });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(options.path ?? '/');
  return { context, page, errors, close: () => context.close() };
}

/** Saves a full-page screenshot as test output: test-output/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, `${name.replace(/[^a-z0-9._-]+/gi, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
