// Every Durable Object event (a socket's close, an alarm, a call from another object) goes through
// vitest-pool-workers' wrapper, which imports the Worker's main module through vitest's module runner
// on each event: an RPC ("resolve") to the Node side. One still pending when vitest closes that
// channel after a file's last test is "Closing rpc while "resolve" was pending", an uncaught exception
// inside workerd, which at worst fails the run though every test passed. Sockets a test closed as its
// last act (their webSocketClose, then the presence it sends the Lobby) and HostLink's liveness alarm
// (every 2 s) make such events: a test that closes 20 sockets as its last act (teardown.test.ts) made
// it in 3 of 4 runs, and in 0 of 10 with settleObjects after it. So the imports the wrapper starts are
// counted, and a file ends (setup.ts) only once every object's alarm is dropped and no import has been
// pending for a few turns of the event loop (a close handler's own call to another object starts its
// import a turn after the first one ends).
import { env, listDurableObjectIds, runInDurableObject } from 'cloudflare:test';
import { until } from '../support/until.ts';

interface Counted {
  pending: number;
  started: number;
}
type Runner = { import: (id: string) => Promise<unknown>; tetherImports?: Counted };

/** The module runner the wrapper imports through (vitest's global mocker holds it); null if vitest no longer has one there. */
function moduleRunner(): Runner | null {
  return (globalThis as { __vitest_mocker__?: { moduleRunner?: Runner } }).__vitest_mocker__?.moduleRunner ?? null;
}

/** Counts the imports of the file's module runner (once per runner). */
export function countImports(): Counted {
  const runner = moduleRunner();
  if (!runner)
    throw new Error(
      "vitest-pool-workers no longer imports through __vitest_mocker__.moduleRunner: the relay tests' teardown guard (quiet-objects.ts) needs another hook",
    );
  if (runner.tetherImports) return runner.tetherImports;
  const counted: Counted = { pending: 0, started: 0 };
  const original = runner.import.bind(runner);
  runner.import = (id: string) => {
    counted.pending++;
    counted.started++;
    return original(id).finally(() => {
      counted.pending--;
    });
  };
  runner.tetherImports = counted;
  return counted;
}

/** Drops every object's alarm, then waits until no Durable Object event has been loading for five turns (10 s at most). */
export async function settleObjects(): Promise<void> {
  const counted = countImports();
  await dropAlarms(env.HOST_LINK);
  await dropAlarms(env.CHAT_ROOM);
  await dropAlarms(env.LOBBY);
  await dropAlarms(env.RATE_GATE);
  let idle = 0;
  await until(() => (idle = counted.pending === 0 ? idle + 1 : 0) >= 5, 'relay test teardown: no Durable Object event loading', {
    ms: 10_000,
    every: 5,
    detail: () => `${counted.pending} still loading`,
  });
}

async function dropAlarms<T extends Rpc.DurableObjectBranded | undefined>(namespace: DurableObjectNamespace<T>): Promise<void> {
  for (const id of await listDurableObjectIds(namespace)) {
    await runInDurableObject(namespace.get(id), (_object: unknown, state: DurableObjectState) => state.storage.deleteAlarm());
  }
}
