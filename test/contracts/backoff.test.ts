import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/contracts/backoff.ts';

describe('Backoff', () => {
  it('doubles up to its cap, each delay between half and all of its ceiling', () => {
    const low = new Backoff({ baseMs: 100, maxMs: 1_000, random: () => 0 });
    const high = new Backoff({ baseMs: 100, maxMs: 1_000, random: () => 0.999_999 });
    const lows = Array.from({ length: 7 }, () => low.next());
    const highs = Array.from({ length: 7 }, () => high.next());
    expect(lows).toEqual([50, 100, 200, 400, 500, 500, 500]);
    expect(highs).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('spreads clients that failed together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => new Backoff({ baseMs: 1_000 }).next()));
    expect(delays.size).toBeGreaterThan(10);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(500);
  });

  it('starts over after a connection that worked', () => {
    const backoff = new Backoff({ baseMs: 100, maxMs: 10_000, random: () => 0 });
    backoff.next();
    backoff.next();
    backoff.next();
    expect(backoff.attempts).toBe(3);
    backoff.reset();
    expect(backoff.next()).toBe(50);
  });

  it('keeps every delay between half and all of its ceiling, whatever the random half gives', () => {
    let i = 0;
    const randoms = [0, 0.25, 0.5, 0.75, 0.999_999];
    const backoff = new Backoff({ baseMs: 500, maxMs: 10_000, random: () => randoms[i++ % randoms.length]! });
    for (let attempt = 0; attempt < 40; attempt++) {
      const ceiling = Math.min(10_000, 500 * 2 ** attempt);
      const delay = backoff.next();
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });

  it('gives the ranges each user had: the SDK 125–250 ms first and 7.5–15 s at most, the host link 250–500 ms and 5–10 s', () => {
    const ranges = (options: { baseMs?: number; maxMs?: number }) =>
      [0, 0.999_999].map((r) => {
        const backoff = new Backoff({ ...options, random: () => r });
        const delays = Array.from({ length: 12 }, () => backoff.next());
        return [delays[0], delays.at(-1)];
      });
    expect(ranges({})).toEqual([
      [125, 7_500],
      [250, 15_000],
    ]);
    expect(ranges({ baseMs: 500, maxMs: 10_000 })).toEqual([
      [250, 5_000],
      [500, 10_000],
    ]);
  });

  it('never overflows after very many failures', () => {
    const backoff = new Backoff({ baseMs: 250, maxMs: 15_000, random: () => 0.5 });
    let last = 0;
    for (let i = 0; i < 5_000; i++) last = backoff.next();
    expect(last).toBe(11_250);
  });
});
