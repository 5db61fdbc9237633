// The host link's reply correlation alone (src/relay/objects/link-replies.ts): no socket, no object.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Reply, WireError } from '../../src/contracts/index.ts';
import { LinkReplies } from '../../src/relay/objects/link-replies.ts';

/** A LinkReplies and the relay's own answers it counted. */
function replies() {
  const counted: WireError[] = [];
  return { replies: new LinkReplies((error) => counted.push(error)), counted };
}

/** What a promise has settled to by now (undefined while it waits). */
async function settledTo(promise: Promise<Reply>): Promise<Reply | undefined> {
  let value: Reply | undefined;
  void promise.then((reply) => {
    value = reply;
  });
  await Promise.resolve();
  await Promise.resolve();
  return value;
}

describe('a host link waiting on replies', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('settles each request by the Reply with its id, whatever their order', async () => {
    const { replies: r, counted } = replies();
    const a = r.wait('a', 1000);
    const b = r.wait('b', 1000);
    r.settle({ id: 'b', ok: true, result: 'B' });
    r.settle({ id: 'a', ok: true, result: 'A' });
    expect(await a).toEqual({ id: 'a', ok: true, result: 'A' });
    expect(await b).toEqual({ id: 'b', ok: true, result: 'B' });
    expect(counted).toEqual([]);
  });

  it('answers host-timeout, counted, when the host is silent past the timeout', async () => {
    const { replies: r, counted } = replies();
    const a = r.wait('a', 1000);
    vi.advanceTimersByTime(999);
    expect(await settledTo(a)).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(await a).toEqual({ id: 'a', ok: false, error: { code: 'host-timeout', message: 'The host did not answer within 1000 ms' } });
    expect(counted.map((e) => e.code)).toEqual(['host-timeout']);
    expect(r.pending('a')).toBeUndefined();
  });

  it('drops a Reply that comes after its timeout, or that nobody waits for', async () => {
    const { replies: r, counted } = replies();
    const a = r.wait('a', 1000);
    vi.advanceTimersByTime(1000);
    r.settle({ id: 'a', ok: true, result: 'late' });
    r.settle({ id: 'unknown', ok: true, result: 'x' });
    r.settle({ id: null, ok: false, error: { code: 'bad-frame', message: 'unreadable' } });
    expect((await a).ok).toBe(false);
    expect(counted.map((e) => e.code)).toEqual(['host-timeout']);
  });

  it('gives the same id asked again the answer already awaited', async () => {
    const { replies: r } = replies();
    const a = r.wait('a', 1000);
    expect(r.pending('a')).toBe(a);
    expect(r.pending('b')).toBeUndefined();
  });

  it('failAll answers every waiter host-offline once, and a Reply after it is dropped', async () => {
    const { replies: r, counted } = replies();
    const a = r.wait('a', 1000);
    const b = r.wait('b', 1000);
    r.failAll('The host went offline before it answered');
    const offline = (id: string) => ({ id, ok: false, error: { code: 'host-offline', message: 'The host went offline before it answered' } });
    expect(await a).toEqual(offline('a'));
    expect(await b).toEqual(offline('b'));
    r.settle({ id: 'a', ok: true, result: 'late' });
    r.failAll('again');
    vi.advanceTimersByTime(1000); // their timeouts were cleared: no second answer, nothing more counted
    expect(counted.map((e) => e.code)).toEqual(['host-offline', 'host-offline']);
  });

  it('cancel stops waiting without answering: the request never went out', async () => {
    const { replies: r, counted } = replies();
    const a = r.wait('a', 1000);
    r.cancel('a');
    vi.advanceTimersByTime(1000);
    r.settle({ id: 'a', ok: true, result: 'x' });
    expect(await settledTo(a)).toBeUndefined();
    expect(r.pending('a')).toBeUndefined();
    expect(counted).toEqual([]);
  });

  it('fail builds and counts an answer the relay gives for the host', () => {
    const { replies: r, counted } = replies();
    const error = { code: 'frame-too-large', message: 'too big' };
    expect(r.fail('a', error)).toEqual({ id: 'a', ok: false, error });
    expect(counted).toEqual([error]);
  });
});
