import path from 'node:path';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

export const TEST_TOKEN_SECRET = 'test-secret-0123456789abcdef0123456789abcdef';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'contracts', include: ['test/contracts/**/*.test.ts'], environment: 'node' } },
      { test: { name: 'host', include: ['test/host/**/*.test.ts'], environment: 'node', testTimeout: 20_000 } },
      {
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                TETHER_TOKEN_SECRET: TEST_TOKEN_SECRET,
                HOST_TIMEOUT_MS: '3000',
                TEST_MIGRATIONS: await readD1Migrations(path.join(import.meta.dirname, 'migrations')),
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
