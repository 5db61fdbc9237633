// One real relay (`wrangler dev` on workerd, its own fresh state folder) for every end-to-end test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalRelay, type LocalRelay } from '../../scripts/local-relay.ts';
import { IDP_ACCESS_AUD, IDP_CLIENT_ID, IDP_CLIENT_SECRET, IdentityProvider } from '../support/idp-server.ts';

export const E2E_SECRET = 'e2e-secret-0123456789abcdef0123456789abcdef';

declare module 'vitest' {
  export interface ProvidedContext {
    relayUrl: string;
    tokenSecret: string;
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
  relay = await startLocalRelay({ persistTo: state, vars: { ...signInVars, TETHER_TOKEN_SECRET: E2E_SECRET, HOST_TIMEOUT_MS: '10000' }, quiet: true });
  project.provide('relayUrl', relay.url);
  project.provide('idpUrl', idp.url);
  project.provide('tokenSecret', E2E_SECRET);
}

export async function teardown(): Promise<void> {
  await relay?.stop();
  await idp?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
}
