// The streamed-text joiner of a chat (delta-coalescer.ts), on a clock the test turns by hand.
import { describe, expect, it } from 'vitest';
import { DeltaCoalescer, type Timers } from '../../src/host/chats/delta-coalescer.ts';

function handClock() {
  let next: { run: () => void; ms: number } | null = null;
  let sets = 0;
  const timers: Timers = {
    set: (run, ms) => {
      sets += 1;
      next = { run, ms };
      return next;
    },
    clear: (handle) => {
      if (handle === next) next = null;
    },
  };
  return {
    timers,
    fire: () => {
      const due = next;
      next = null;
      due?.run();
    },
    pending: () => next,
    sets: () => sets,
  };
}

/** A coalescer with a window of `windowMs` on a hand-turned clock, and what it sent as `item:text`. */
function coalescer(windowMs: number) {
  const clock = handClock();
  const sent: string[] = [];
  return { clock, sent, deltas: new DeltaCoalescer(windowMs, (id, text) => sent.push(`${id}:${text}`), clock.timers) };
}

describe('joining streamed text', () => {
  it("joins an item's deltas within one window into one, items in the order they first came, one timer per window", () => {
    const { clock, sent, deltas } = coalescer(30);
    deltas.add('a', 'Hel');
    deltas.add('b', 'think');
    deltas.add('a', 'lo');
    deltas.add('a', '');
    expect(sent).toEqual([]);
    expect(clock.pending()?.ms).toBe(30);
    expect(clock.sets()).toBe(1);
    clock.fire();
    expect(sent).toEqual(['a:Hello', 'b:think']);
    deltas.add('a', ' world');
    expect(clock.sets()).toBe(2);
    clock.fire();
    expect(sent).toEqual(['a:Hello', 'b:think', 'a: world']);
  });

  it('flush sends what waits at once and stops its timer; discard drops it unsent', () => {
    const { clock, sent, deltas } = coalescer(30);
    deltas.add('a', 'x');
    deltas.flush();
    expect(sent).toEqual(['a:x']);
    expect(clock.pending()).toBeNull();
    deltas.flush();
    expect(sent).toEqual(['a:x']);
    deltas.add('a', 'lost');
    deltas.discard();
    clock.fire();
    expect(sent).toEqual(['a:x']);
  });

  it('a window of 0 sends every delta as it comes, with no timer', () => {
    const { clock, sent, deltas } = coalescer(0);
    deltas.add('a', '1');
    deltas.add('a', '2');
    expect(sent).toEqual(['a:1', 'a:2']);
    expect(clock.sets()).toBe(0);
  });
});
