import type { D1Migration } from '@cloudflare/vitest-pool-workers';
import type { Env as RelayEnv } from '../../src/relay/env.ts';

declare global {
  namespace Cloudflare {
    interface Env extends RelayEnv {
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}
