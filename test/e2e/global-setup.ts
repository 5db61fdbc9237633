// One real relay (`wrangler dev` on workerd, its own fresh state folder) for every end-to-end test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalRelay, type LocalRelay } from '../../scripts/local-relay.ts';
import { generateSigningKey } from '../../src/relay/auth/keys.ts';
import { IDP_ACCESS_AUD, IDP_CLIENT_ID, IDP_CLIENT_SECRET, IdentityProvider } from '../support/idp-server.ts';

/** The relay's owner, claimed with the setup secret before any test runs (test/e2e/peers.ts signs in as them). */
const OWNER = { email: 'relay-owner@e2e.test', password: 'e2e-owner-password-0123', name: 'Relay owner' };

declare module 'vitest' {
  export interface ProvidedContext {
    relayUrl: string;
    /** The relay's setup secret (pairs a host under the owner without a person, like `npm start`). */
    setupSecret: string;
    ownerEmail: string;
    ownerPassword: string;
    /** The loopback identity provider (test/support/idp-server.ts): Access team domain and OIDC issuer `<idpUrl>/oidc`. */
    idpUrl: string;
  }
}

let relay: LocalRelay | null = null;
let idp: IdentityProvider | null = null;
let state = '';

export async function setup(project: TestProject): Promise<void> {
  state = mkdtempSync(path.join(tmpdir(), 'tether-e2e-'));
  // The IdP first: the relay is configured with its URL for Cloudflare Access and OIDC sign-in.
  idp = await new IdentityProvider().start();
  const signInVars = {
    ACCESS_TEAM_DOMAIN: idp.url, ACCESS_AUD: IDP_ACCESS_AUD,
    OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: IDP_CLIENT_ID, OIDC_CLIENT_SECRET: IDP_CLIENT_SECRET,
    // wrangler dev gives every request CF-Connecting-IP 127.0.0.1, so all e2e sign-ins, pairings and
    // tickets share one IP's buckets; the limits themselves are tested in test/relay/rate-limits.test.ts.
    RATE_SIGNIN: '1000/60', RATE_PAIRING: '1000/60', RATE_TICKETS: '1000/60',
  };
  const secrets = {
    TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('e2e')]),
    TETHER_SETUP_SECRET: crypto.randomUUID(),
  };
  relay = await startLocalRelay({ persistTo: state, vars: { ...signInVars, ...secrets, HOST_TIMEOUT_MS: '10000' }, quiet: true });
  const claimed = await fetch(`${relay.url}/api/auth/setup`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...OWNER, secret: secrets.TETHER_SETUP_SECRET }),
  });
  if (claimed.status !== 201) throw new Error(`claiming the relay's owner failed: ${claimed.status} ${await claimed.text()}`);
  project.provide('relayUrl', relay.url);
  project.provide('idpUrl', idp.url);
  project.provide('setupSecret', secrets.TETHER_SETUP_SECRET);
  project.provide('ownerEmail', OWNER.email);
  project.provide('ownerPassword', OWNER.password);
}

export async function teardown(): Promise<void> {
  await relay?.stop();
  await idp?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
}
