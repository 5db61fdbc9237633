/**
 * The one poll of the tests, for every runtime (Node and the relay's workerd pool): waits until
 * `check` answers something truthy and answers it. A check may throw meanwhile (`x!.live` before x
 * exists): that counts as "not yet", and the last thing it threw is in the failure. After `ms` it
 * fails naming `what`, with `detail()` (a host's log, a screen) when given, so a timeout says what
 * never happened. It never gives up silently: the only way out without a value is that failure.
 *
 * A test waits for something to happen with this, never with a fixed sleep; see DEVELOPERS.md, Tests.
 */

/** What a check answers while the awaited thing has not happened yet. */
export type NotYet = false | null | undefined | 0 | '';

export type UntilOptions = {
  /** How long to wait before failing (default 5 s). */
  ms?: number;
  /** How often to ask (default 10 ms); a costly check (a tmux screen, an HTTP call) asks less often. */
  every?: number;
  /** Said after the failure, to help find why. */
  detail?: () => string;
};

// Taken at load, before any test fakes timers (vi.useFakeTimers): the poll keeps real time, so a test
// that turns a fake clock by hand can still wait for what real I/O brings.
const realSetTimeout = globalThis.setTimeout.bind(globalThis);
const realNow = Date.now.bind(Date);

export async function until<T>(check: () => T | NotYet | Promise<T | NotYet>, what: string, limit: number | UntilOptions = {}): Promise<T> {
  const { ms = 5_000, every = 10, detail } = typeof limit === 'number' ? { ms: limit } : limit;
  const end = realNow() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (realNow() > end) {
      const threw = last === undefined ? '' : `; the check last threw: ${last instanceof Error ? last.message : String(last)}`;
      throw new Error(`timed out after ${ms} ms waiting for ${what}${threw}${detail ? `\n${detail()}` : ''}`);
    }
    await new Promise((resolve) => realSetTimeout(resolve, every));
  }
}
