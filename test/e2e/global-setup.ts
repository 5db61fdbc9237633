// One real relay (`wrangler dev` on workerd, its own fresh state folder) for every end-to-end test.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { buildWeb } from '../../scripts/build-web.ts';
import { CHROMIUM, ensureChromium } from '../../scripts/chromium.ts';
import { bundleWorker, startLocalRelay, type LocalRelay, type LocalRelayOptions } from '../../scripts/local-relay.ts';
import { generateSigningKey } from '../../src/relay/auth/keys.ts';
import { IDP_ACCESS_AUD, IDP_CLIENT_ID, IDP_CLIENT_SECRET, IdentityProvider } from '../support/idp-server.ts';
import { until } from '../support/until.ts';

/** The relay's owner, claimed with the setup secret before any test runs (test/e2e/peers.ts signs in as them). */
const OWNER = { email: 'relay-owner@e2e.test', password: 'e2e-owner-password-0123', name: 'Relay owner' };

declare module 'vitest' {
  export interface ProvidedContext {
    relayUrl: string;
    /** The relay's setup secret (pairs a host under the owner without a person, as the benchmarks do). */
    setupSecret: string;
    ownerEmail: string;
    ownerPassword: string;
    /** The loopback identity provider (test/support/idp-server.ts): Access team domain and OIDC issuer `<idpUrl>/oidc`. */
    idpUrl: string;
    /**
     * `POST <relayControlUrl>/restart` stops the shared relay and starts it again on the same port and
     * state folder (D1 and Durable Object storage survive); answers 200 once it is healthy again.
     */
    relayControlUrl: string;
    /** The one Chromium every browser test connects to (`chromium.connect`; test/e2e/browser.ts). */
    browserWsEndpoint: string;
    /** The web app and the Worker as built for this run, for a test that needs a relay of its own (web-setup: one with no owner yet). */
    webDir: string;
    workerScript: string;
  }
}

let relay: LocalRelay | null = null;
let idp: IdentityProvider | null = null;
let control: Server | null = null;
let browser: BrowserServer | null = null;
let state = '';

export async function setup(project: TestProject): Promise<void> {
  state = mkdtempSync(path.join(tmpdir(), 'tether-e2e-'));
  // The relay serves the web app built from the source under test, into this run's own folder.
  const web = path.join(state, 'web');
  buildWeb({ quiet: true, outDir: web });
  ensureChromium();
  browser = await chromium.launchServer({
    executablePath: CHROMIUM,
    // This machine's network is closed: without the background-networking flags Chromium's own
    // connections fail many at a time.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
    headless: true,
  });
  project.provide('browserWsEndpoint', browser.wsEndpoint());
  // The IdP first: the relay is configured with its URL for Cloudflare Access and OIDC sign-in.
  idp = await new IdentityProvider().start();
  const signInVars = {
    ACCESS_TEAM_DOMAIN: idp.url,
    ACCESS_AUD: IDP_ACCESS_AUD,
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: IDP_CLIENT_ID,
    OIDC_CLIENT_SECRET: IDP_CLIENT_SECRET,
    // wrangler dev gives every request CF-Connecting-IP 127.0.0.1, so all e2e sign-ins, pairings and
    // tickets share one IP's buckets; the limits themselves are tested in test/relay/rate-limits.test.ts.
    RATE_SIGNIN: '1000/60',
    RATE_SIGNIN_ACCOUNT: '1000/60',
    RATE_PAIRING: '1000/60',
    RATE_TICKETS: '1000/60',
  };
  const secrets = {
    TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('e2e')]),
    TETHER_SETUP_SECRET: crypto.randomUUID(),
    // Web Push: its own VAPID key per run; test/support/push-endpoint.ts receives pushes on loopback http.
    TETHER_VAPID_KEYS: JSON.stringify([await generateSigningKey('vapid')]),
    PUSH_ALLOW_LOOPBACK: '1',
  };
  // The Worker bundled once: edits to src/relay during a run (another engineer's) cannot reload it.
  const script = bundleWorker(path.join(state, 'worker'), web);
  const relayOptions: LocalRelayOptions = { persistTo: state, assets: web, script, vars: { ...signInVars, ...secrets, HOST_TIMEOUT_MS: '10000' }, quiet: true };
  relay = await startLocalRelay(relayOptions);
  const claimed = await fetch(`${relay.url}/api/auth/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...OWNER, secret: secrets.TETHER_SETUP_SECRET }),
  });
  if (claimed.status !== 201) throw new Error(`claiming the relay's owner failed: ${claimed.status} ${await claimed.text()}`);
  project.provide('relayUrl', relay.url);
  project.provide('webDir', web);
  project.provide('workerScript', script);
  project.provide('idpUrl', idp.url);
  project.provide('setupSecret', secrets.TETHER_SETUP_SECRET);
  project.provide('ownerEmail', OWNER.email);
  project.provide('ownerPassword', OWNER.password);
  control = await startRelayControl(relayOptions);
  project.provide('relayControlUrl', `http://127.0.0.1:${(control.address() as AddressInfo).port}`);
}

/** The loopback server behind `relayControlUrl`; one restart at a time. */
async function startRelayControl(options: LocalRelayOptions): Promise<Server> {
  let restarting: Promise<void> = Promise.resolve();
  const restart = async () => {
    const port = Number(new URL(relay!.url).port);
    await relay!.stop();
    await untilPortFree(port);
    relay = await startLocalRelay({ ...options, port });
  };
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/restart') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'not-found', message: 'POST /restart only' }));
      return;
    }
    const started = Date.now();
    const done = (restarting = restarting.then(restart));
    restarting = restarting.catch(() => undefined);
    done.then(
      () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, ms: Date.now() - started })),
      (error: unknown) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'internal', message: String(error) })),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Waits until nothing listens on `port` any more (workerd may outlive wrangler's exit by a moment). */
async function untilPortFree(port: number): Promise<void> {
  const free = () =>
    new Promise<boolean>((resolve) => {
      const probe = createTcpServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
  await until(free, `port ${port} free after the relay stopped`, { ms: 10_000, every: 50 });
}

export async function teardown(): Promise<void> {
  await browser?.close();
  await new Promise<void>((resolve) => (control ? control.close(() => resolve()) : resolve()));
  await relay?.stop();
  await idp?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
}
