// The host link's event routing alone (src/relay/objects/link-routes.ts): the call to the target and
// the ack sending are the test's own, so no socket and no object is involved. The same behaviour
// through real sockets and rooms: link-anomalies.test.ts (a frame that cannot cross) and link.test.ts.
import { describe, expect, it } from 'vitest';
import type { LinkEventFrame } from '../../src/contracts/index.ts';
import { RELAY_COUNTERS } from '../../src/contracts/index.ts';
import { LinkRoutes, type RouteTarget } from '../../src/relay/objects/link-routes.ts';

interface Call {
  target: RouteTarget;
  ns: Array<number | undefined>;
  /** Answers the call: how many it stored (all by default), or a throw. */
  answer(result?: { stored: number; error?: string } | Error): void;
}

/** A LinkRoutes whose ingest calls wait until the test answers them, and what it asked of its link. */
function routes() {
  const calls: Call[] = [];
  const acks: number[][] = [];
  const drops: string[] = [];
  const counted: string[] = [];
  const link = new LinkRoutes({
    ingest: (_hostId, target, frames) =>
      new Promise((resolve, reject) => {
        calls.push({
          target,
          ns: frames.map((f) => f.n),
          answer: (result = { stored: frames.length }) => (result instanceof Error ? reject(result) : resolve(result)),
        });
      }),
    ack: (n) => acks.push(n),
    drop: (why) => drops.push(why),
    count: (counter) => counted.push(counter),
  });
  return { link, calls, acks, drops, counted, acked: () => acks.flat() };
}

const chat = (chatId: string, n: number | undefined, extra: Record<string, unknown> = {}): LinkEventFrame =>
  ({ type: 'event', event: 'chat.event', payload: { chatId, ...extra }, n }) as LinkEventFrame;
const hostWide = (n: number): LinkEventFrame => ({ type: 'event', event: 'chat.status', payload: { chatId: 'x' }, n }) as LinkEventFrame;

/** Lets the routing's promises and its ack microtask run. */
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the host link routing events to their objects', () => {
  it("keeps each target's order: what queues while a batch is out goes next, in one call", async () => {
    const { link, calls, acked } = routes();
    link.event('h', chat('a', 1), 10);
    link.event('h', chat('a', 2), 10);
    link.event('h', chat('a', 3), 10);
    await turn();
    expect(calls.map((c) => c.ns)).toEqual([[1]]);
    calls[0]!.answer();
    await turn();
    expect(calls.map((c) => c.ns)).toEqual([[1], [2, 3]]);
    calls[1]!.answer();
    await turn();
    expect(acked()).toEqual([1, 2, 3]);
  });

  it('sends chat events to their chat and host-wide ones to the lobby, and no target waits on another', async () => {
    const { link, calls, acked } = routes();
    link.event('h', chat('a', 1), 10);
    link.event('h', chat('b', 2), 10);
    link.event('h', hostWide(3), 10);
    await turn();
    expect(calls.map((c) => [c.target, c.ns])).toEqual([
      ['chat:a', [1]],
      ['chat:b', [2]],
      ['lobby', [3]],
    ]);
    calls[2]!.answer();
    calls[1]!.answer();
    await turn();
    expect(acked()).toEqual([3, 2]); // chat a is still out: its frame is not acknowledged
  });

  it('acknowledges only what the target stored, and counts the failure', async () => {
    const { link, calls, acks, counted } = routes();
    link.event('h', chat('a', 1), 10);
    await turn();
    expect(acks).toEqual([]); // out, not stored yet
    calls[0]!.answer();
    link.event('h', chat('a', 2), 10);
    link.event('h', chat('a', 3), 10);
    await turn();
    calls[1]!.answer({ stored: 1, error: 'disk full' });
    await turn();
    expect(acks.flat()).toEqual([1, 2]);
    expect(counted.filter((c) => c === RELAY_COUNTERS.ingestFailed)).toHaveLength(1);
  });

  it('acknowledges nothing of a call that failed, when its frame could have crossed', async () => {
    const { link, calls, acks, drops, counted } = routes();
    link.event('h', chat('a', 1), 10);
    await turn();
    calls[0]!.answer(new Error('object restarted'));
    await turn();
    expect(acks).toEqual([]);
    expect(drops).toEqual([]);
    expect(counted).toContain(RELAY_COUNTERS.ingestFailed);
  });

  it('one frame that cannot cross fails its batch; the batch goes again alone, and only that frame is dropped (and acked)', async () => {
    const { link, calls, acked, drops } = routes();
    link.event('h', chat('a', 1), 10);
    link.event('h', chat('a', 2), 10);
    link.event('h', chat('a', 3, { cannotCopy: () => 'a function' }), 10);
    link.event('h', chat('a', 4), 10);
    await turn();
    calls[0]!.answer();
    await turn();
    expect(calls[1]!.ns).toEqual([2, 3, 4]);
    calls[1]!.answer(new Error('could not be cloned'));
    await turn();
    expect(calls[2]!.ns).toEqual([2]); // again, one at a time
    calls[2]!.answer();
    await turn();
    calls[3]!.answer(new Error('could not be cloned'));
    await turn();
    expect(drops).toEqual(['cannot cross to its object']);
    expect(calls[4]!.ns).toEqual([4]); // the frame behind it is not held back
    calls[4]!.answer();
    await turn();
    expect(acked()).toEqual([1, 2, 3, 4]);
  });

  it('drops a chat event that names no chat (counted, acked) and never acks an outbox position that is not one', async () => {
    const { link, calls, acked, counted } = routes();
    link.event('h', { type: 'event', event: 'chat.event', payload: {}, n: 1 } as LinkEventFrame, 10);
    link.event('h', chat('a', -5), 10);
    link.event('h', chat('a', 2), 10);
    await turn();
    expect(counted.filter((c) => c === RELAY_COUNTERS.hostFramesDropped)).toHaveLength(1);
    expect(counted.filter((c) => c === RELAY_COUNTERS.eventsIn)).toHaveLength(3);
    calls[0]!.answer();
    await turn();
    calls[1]!.answer();
    await turn();
    expect(acked()).toEqual([1, 2]);
  });

  it('gathers the acks of one turn into one frame', async () => {
    const { link, calls, acks } = routes();
    link.event('h', chat('a', 1), 10);
    link.event('h', chat('b', 2), 10);
    await turn();
    calls[0]!.answer();
    calls[1]!.answer();
    await turn();
    expect(acks).toEqual([[1, 2]]);
  });
});
