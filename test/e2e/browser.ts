// The browser side of the end-to-end tests: every file connects to the ONE Chromium that
// global-setup launched, and each person gets a context of their own (own storage, own cookies),
// at a phone or a desktop size. Screenshots are test output (test-output/screenshots), not in git.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { HostConnection, RelayApi, type SessionTokens } from '../../src/client/index.ts';
import { NOTIFICATION_NOTICE, type NotificationNotice } from '../../src/web/sw/push.ts';
import { until as poll, type NotYet, type UntilOptions } from '../support/until.ts';
import { HostProcess, personCredentials, personSession, relayUrl } from './peers.ts';

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
  /**
   * Uncaught errors of the page's scripts, and anything the app's Content-Security-Policy refused (a
   * visual's own sandbox refusing its page is the visual's business), so a test can assert there were none.
   */
  errors: string[];
  close(): Promise<void>;
}

/** A fresh browser context (a person on their own device) with one page, opened at the relay (the shared one unless `relayUrl`). */
export async function newPersonPage(
  size: Size,
  options: { path?: string; session?: SessionTokens; beforeLoad?: (page: Page) => void; relayUrl?: string } = {},
): Promise<PersonPage> {
  const browser = await sharedBrowser();
  const context = await browser.newContext({ ...SIZES[size], baseURL: options.relayUrl ?? inject('relayUrl') });
  // Seeded once per context: a reload must not put back a refresh token the app has since rotated.
  if (options.session) await context.addInitScript(seedSession, { key: SESSION_KEY, session: options.session });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text()) && !message.location().url.includes('/v1/visuals/')) {
      errors.push(`CSP: ${message.text()}`);
    }
  });
  options.beforeLoad?.(page);
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

/** Where the app keeps its session (src/client/tokens.ts LocalStorageTokenStore's default key). */
const SESSION_KEY = 'tether.session';

function seedSession({ key, session }: { key: string; session: SessionTokens }): void {
  // Init scripts run in every frame; a sandboxed visual's must not (and cannot) touch storage.
  if (window !== window.top) return;
  if (localStorage.getItem(`${key}.e2e-seeded`)) return;
  localStorage.setItem(`${key}.e2e-seeded`, '1');
  localStorage.setItem(key, JSON.stringify(session));
}

export interface SignedInPerson extends PersonPage {
  label: string;
  email: string;
}

/**
 * A person already signed in when the app loads: their session (through the API, a session of its
 * own) is put into the page's storage before any script runs. The sign-in UI is tested apart.
 */
export async function signedInPerson(size: Size, label: string, options: { path?: string; beforeLoad?: (page: Page) => void } = {}): Promise<SignedInPerson> {
  const session = await personSession(label);
  const person = await newPersonPage(size, { ...options, session });
  return { ...person, label, email: personCredentials(label).email };
}

/**
 * A real host process with the script provider (the default config: Claude Code answered by
 * src/host/providers/script.default.json), paired to `label`'s account and started. Stop it after.
 */
export async function pairedHost(label: string, name = `web-${label}-${crypto.randomUUID().slice(0, 6)}`): Promise<HostProcess> {
  return new HostProcess(name, label).start();
}

/**
 * `label`'s SDK session and lobby of the started `host`, as another device of theirs would hold them,
 * once the lobby says the host is online. Close the lobby after.
 */
export async function signedInLobby(label: string, host: HostProcess): Promise<{ api: RelayApi; lobby: HostConnection }> {
  const api = new RelayApi(relayUrl());
  const { email, password } = personCredentials(label);
  await api.signIn(email, password);
  const lobby = new HostConnection(api, host.hostId);
  await until(() => lobby.online, 'the host online', { detail: () => host.output.slice(-1500) });
  return { api, lobby };
}

/**
 * Starts `host` requiring signatures from its first start, paired by `page`'s person approving its
 * code in the app: their browser's device key signs the approval, so the host pins that browser as
 * its owner's device.
 */
export async function startSigningHost(host: HostProcess, page: Page): Promise<void> {
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({ signatures: { require: true } }));
  host.approveWith = async (userCode) => {
    await page.goto(`/pair?code=${encodeURIComponent(userCode)}`);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Host paired' }).waitFor();
  };
  await host.start();
}

/** axe-core's rules for names, labels and ARIA validity: every control reachable by name. */
export const A11Y_RULES = [
  'button-name',
  'link-name',
  'label',
  'select-name',
  'input-button-name',
  'image-alt',
  'aria-valid-attr',
  'aria-valid-attr-value',
  'aria-allowed-attr',
  'aria-required-attr',
  'aria-roles',
  'aria-command-name',
  'aria-input-field-name',
  'aria-toggle-field-name',
  'aria-hidden-focus',
  'nested-interactive',
];

let axeSource: string | null = null;

/**
 * The page's violations of A11Y_RULES as `rule: target (summary)` lines, so a failing assertion says
 * what and where. `exclude`: selectors of parts another test owns.
 */
export async function accessibilityViolations(page: Page, options: { exclude?: string[] } = {}): Promise<string[]> {
  axeSource ??= readFileSync(path.resolve(import.meta.dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  // Evaluated by the browser's debugger, not as an inline <script>, which the app's CSP refuses.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(
    async ({ rules, exclude }) => {
      const axe = (
        window as unknown as {
          axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; nodes: { target: string[]; failureSummary?: string }[] }[] }> };
        }
      ).axe;
      const context = exclude.length > 0 ? { include: [['body']], exclude: exclude.map((s) => [s]) } : document;
      const result = await axe.run(context, { runOnly: { type: 'rule', values: rules } });
      return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')} (${(n.failureSummary ?? '').replace(/\s+/g, ' ').trim()})`));
    },
    { rules: A11Y_RULES, exclude: options.exclude ?? [] },
  );
  return violations;
}

/**
 * Records the scripts a page loads from its own origin (the service worker's own script aside: the
 * browser fetches it apart from the page), to sum what a first load ships. Call before the page loads.
 */
export function recordScripts(page: Page): { sizes(): Promise<Map<string, { raw: number; gzip: number }>> } {
  const bodies = new Map<string, Promise<Buffer | null>>();
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.origin !== new URL(inject('relayUrl')).origin || !url.pathname.endsWith('.js') || url.pathname === '/sw.js') return;
    if (!bodies.has(url.pathname))
      bodies.set(
        url.pathname,
        response.body().catch(() => null),
      );
  });
  return {
    async sizes() {
      const out = new Map<string, { raw: number; gzip: number }>();
      for (const [name, body] of bodies) {
        const bytes = await body;
        if (bytes) out.set(name, { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length });
      }
      return out;
    },
  };
}

/** The tests' one poll, with the web tests' patience (20 s, asked every 25 ms) unless `options` say otherwise. */
export const until = <T>(check: () => T | NotYet | Promise<T | NotYet>, what: string, options: UntilOptions = {}): Promise<T> =>
  poll(check, what, { ms: 20_000, every: 25, ...options });

/**
 * Starts keeping, in the page's current document, what the app's service worker tells its windows
 * after each notification (NotificationNotice, src/web/sw/push.ts). Call it again after a navigation.
 */
export async function keepNotificationNotices(page: Page): Promise<void> {
  await page.evaluate((type) => {
    const held = window as unknown as { tetherNotices?: unknown[] };
    if (held.tetherNotices) return;
    held.tetherNotices = [];
    navigator.serviceWorker.addEventListener('message', (event: MessageEvent) => {
      if ((event.data as { type?: unknown } | null)?.type === type) held.tetherNotices!.push(event.data);
    });
  }, NOTIFICATION_NOTICE);
}

/**
 * The next kept notice for `tag` (with `body`, if given), taken off the list. Only after it is a read
 * of getNotifications() safe: one that races the notification being shown makes Chromium drop it (see
 * NotificationNotice). A notice saying the browser refused to show it fails here with the reason.
 */
export async function notificationNotice(
  page: Page,
  tag: string,
  options: { body?: string; ms?: number; detail?: () => string } = {},
): Promise<NotificationNotice> {
  const found = await page
    .waitForFunction(
      ({ tag, body }) => {
        const held = (window as unknown as { tetherNotices?: Array<{ tag: string; body: string }> }).tetherNotices ?? [];
        const at = held.findIndex((n) => n.tag === tag && (body === undefined || n.body === body));
        return at < 0 ? null : held.splice(at, 1)[0];
      },
      { tag, body: options.body },
      { timeout: options.ms ?? 30_000, polling: 50 },
    )
    .catch((error: unknown) => {
      throw new Error(
        `no notification notice for ${tag}${options.body ? ` (${options.body})` : ''}: ${String(error)}${options.detail ? `\n${options.detail()}` : ''}`,
      );
    });
  const notice = (await found.jsonValue()) as NotificationNotice;
  if (!notice.shown) throw new Error(`the browser did not show the notification ${tag}: ${notice.error}`);
  return notice;
}
