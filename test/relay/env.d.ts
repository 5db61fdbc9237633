import type { D1Migration } from '@cloudflare/vitest-pool-workers';
import type { Env as RelayEnv } from '../../src/relay/env.ts';

declare global {
  namespace Cloudflare {
    interface Env extends RelayEnv {
      TEST_MIGRATIONS: D1Migration[];
      /** The fuzz suite's frames per socket kind and its seed (test/relay/fuzz.test.ts; `npm run fuzz` sets them). */
      FUZZ_FRAMES: string;
      FUZZ_SEED: string;
    }
  }
}
