// The tests' one poll (test/support/until.ts): every other test's waits lean on it, so it is proven here
// to answer what it waited for, to fail naming it, and never to give up without failing.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { until } from '../support/until.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe("until, the tests' one poll", () => {
  it('answers the first truthy value the check gives, asking again while it gives nothing', async () => {
    const answers = [undefined, false, 0, '', null, { seq: 3 }];
    let asked = 0;
    expect(await until(() => answers[asked++], 'the seq', { every: 1 })).toEqual({ seq: 3 });
    expect(asked).toBe(6);
  });

  it('takes a throw as "not yet", and waits for async checks', async () => {
    let asked = 0;
    const value = await until(
      async () => {
        asked += 1;
        if (asked < 3) throw new Error('not there yet');
        return 'there';
      },
      'the thing',
      { every: 1 },
    );
    expect(value).toBe('there');
  });

  it('fails after its limit naming what it waited for, the last error the check threw and the detail', async () => {
    let asked = 0;
    const waiting = until(
      () => {
        asked += 1;
        if (asked === 2) throw new Error('x is undefined');
        return false;
      },
      'the host online',
      { ms: 30, every: 5, detail: () => 'host said: bye' },
    );
    await expect(waiting).rejects.toThrow(/^timed out after 30 ms waiting for the host online; the check last threw: x is undefined\nhost said: bye$/);
  });

  it('with only a number, takes it as the limit', async () => {
    const started = Date.now();
    await expect(until(() => false, 'never', 40)).rejects.toThrow('timed out after 40 ms waiting for never');
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });

  it('keeps real time when a test fakes the timers, so it still ends', async () => {
    vi.useFakeTimers();
    let done = false;
    void Promise.resolve().then(() => {
      done = true;
    });
    expect(await until(() => done, 'the microtask', { ms: 1_000 })).toBe(true);
    await expect(until(() => false, 'never', 20)).rejects.toThrow('waiting for never');
  });
});
