// One real relay (`wrangler dev` on workerd, its own fresh state folder) for every end-to-end test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalRelay, type LocalRelay } from '../../scripts/local-relay.ts';

export const E2E_SECRET = 'e2e-secret-0123456789abcdef0123456789abcdef';

declare module 'vitest' {
  export interface ProvidedContext {
    relayUrl: string;
    tokenSecret: string;
  }
}

let relay: LocalRelay | null = null;
let state = '';

export async function setup(project: TestProject): Promise<void> {
  state = mkdtempSync(path.join(tmpdir(), 'tether-e2e-'));
  relay = await startLocalRelay({ persistTo: state, vars: { TETHER_TOKEN_SECRET: E2E_SECRET, HOST_TIMEOUT_MS: '10000' }, quiet: true });
  project.provide('relayUrl', relay.url);
  project.provide('tokenSecret', E2E_SECRET);
}

export async function teardown(): Promise<void> {
  await relay?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
}
