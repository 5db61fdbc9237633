import { applyD1Migrations, env } from 'cloudflare:test';
import { afterAll } from 'vitest';
import { countImports, settleObjects } from './quiet-objects.ts';

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// The relay's info lines are dropped here, inside the isolate, not by vitest's onConsoleLog on the
// Node side. Why: a console call from a Durable Object (another I/O context) cannot go straight onto
// the pool's socket; vitest-pool-workers queues it and sends it with the runner's next message. A DO
// that logs after a file's last test (webSocketClose's "socket closed" once a test's sockets close)
// leaves that send pending at teardown, and the run fails with "Closing rpc while onUserConsoleLog
// was pending" (vitest #11153) though every test passed. Warnings and errors still cross: a late one
// of those is worth seeing. logs.test spies on console itself and still sees every line.
const marked = console as Console & { tetherQuiet?: true };
if (!marked.tetherQuiet) {
  const info = console.info.bind(console);
  console.info = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('{"level":"info"')) return;
    info(...args);
  };
  marked.tetherQuiet = true;
}

// A file ends only once what its last test set off in the Durable Objects has loaded (quiet-objects.ts says why).
countImports();
afterAll(settleObjects);
