import path from 'node:path';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

/**
 * The relay tests' signing keys (ES256, private JWKs; for tests only): the first signs, both verify,
 * as after a rotation that kept the previous key.
 */
export const TEST_SIGNING_KEYS = JSON.stringify([
  {
    kty: 'EC',
    crv: 'P-256',
    kid: 'test-current',
    alg: 'ES256',
    x: 'YEEh8rp1Za5Dx0kj04vBpxA0uNRwyA2Opo6kEtHrmr0',
    y: 'qO5ua5jDcWLt8moVCbTfSrmgkYHD4VDD8oEaG8I3VnA',
    d: 'Zeeybzb2O8akp_sBV9VUTG2T46Aq0akTMiKH30GYIEE',
  },
  {
    kty: 'EC',
    crv: 'P-256',
    kid: 'test-previous',
    alg: 'ES256',
    x: '75oUNY-THcOcASPiVg6TUrAgZIJ3IemjRfSiBojN0Io',
    y: '498Kchgrm_QStQqNC_SKLd1Zfw4ZcOhNKGuRDcpzZK0',
    d: 'kxeazflNF2g9MLIQ5A14eYBqUm3faOJmFP7zh-ANA1M',
  },
]);
export const TEST_SETUP_SECRET = 'test-setup-secret-0123456789';
export const TEST_APP_ORIGIN = 'https://app.tether.test';

export default defineConfig({
  test: {
    // JSON info lines are not shown; warnings and errors still are. The relay's own info lines are
    // dropped earlier, inside workerd (test/relay/setup.ts says why: a late one would fail teardown).
    onConsoleLog: (text) => !text.startsWith('{"level":"info"'),
    projects: [
      { test: { name: 'contracts', include: ['test/contracts/**/*.test.ts'], environment: 'node' } },
      { test: { name: 'host', include: ['test/host/**/*.test.ts'], environment: 'node', testTimeout: 20_000 } },
      // The self-hosting path without a Cloudflare account: the deploy bundle, migrations on fresh and
      // upgraded D1s, and `npm run deploy` against a stand-in wrangler (wrangler's cloud commands need an account).
      {
        test: {
          name: 'deploy',
          include: ['test/deploy/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
      { test: { name: 'client', include: ['test/client/**/*.test.ts', 'test/web/**/*.test.ts'], environment: 'node' } },
      {
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: './wrangler.toml', environment: 'local' },
            miniflare: {
              bindings: {
                TETHER_SIGNING_KEYS: TEST_SIGNING_KEYS,
                TETHER_SETUP_SECRET: TEST_SETUP_SECRET,
                APP_ORIGINS: TEST_APP_ORIGIN,
                HOST_TIMEOUT_MS: '3000',
                TEST_MIGRATIONS: await readD1Migrations(path.join(import.meta.dirname, 'migrations')),
                // The fuzz suite's length and seed: short in `npm test`, set by `npm run fuzz` (scripts/fuzz.ts).
                FUZZ_FRAMES: process.env.TETHER_FUZZ_FRAMES ?? '',
                FUZZ_SEED: process.env.TETHER_FUZZ_SEED ?? '',
              },
            },
          })),
        ],
        test: {
          name: 'relay',
          include: ['test/relay/**/*.test.ts'],
          setupFiles: ['test/relay/setup.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/e2e/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
