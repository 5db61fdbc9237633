import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LINK_MAX_FRAME_BYTES } from '../../src/contracts/link.ts';
import { Outbox } from '../../src/host/link/outbox.ts';
import { tempDir } from './harness.ts';

let data: ReturnType<typeof tempDir>;
beforeEach(() => {
  data = tempDir('tether-outbox-');
});
afterEach(() => data.cleanup());

const frame = (i: number) => ({ type: 'event', event: 'chat.event', payload: { chatId: 'c', seq: i } });
/** A second connection to the host's database, as another process would open it. */
const rowsOf = (dir: string) => {
  const db = new DatabaseSync(path.join(dir, 'host.db'), { readOnly: true });
  try {
    return db.prepare('SELECT count(*) AS c FROM outbox').get()!.c as number;
  } finally {
    db.close();
  }
};
const seqsOf = (entries: Array<{ text: string }>) => entries.map((e) => (JSON.parse(e.text) as { payload: { seq: number } }).payload.seq);

describe('the outbox', () => {
  it('numbers frames in order and puts `n` on the frame itself', async () => {
    const box = Outbox.open(data.dir);
    const a = box.push(frame(1));
    const b = box.push(frame(2));
    expect([a.n, b.n]).toEqual([1, 2]);
    expect(JSON.parse(a.text)).toEqual({ ...frame(1), n: 1 });
    expect(box.pendingCount).toBe(2);
    expect(seqsOf(await box.readAfter(0))).toEqual([1, 2]);
    expect(seqsOf(await box.readAfter(1))).toEqual([2]);
  });

  it('keeps unacknowledged frames across a restart, in order', async () => {
    const box = Outbox.open(data.dir);
    for (let i = 1; i <= 5; i += 1) box.push(frame(i));
    box.ack([2, 4]);
    box.close();
    const again = Outbox.open(data.dir);
    expect(again.pendingCount).toBe(3);
    expect(seqsOf(await again.readAfter(0))).toEqual([1, 3, 5]);
    // Positions go on from where they were.
    expect(again.push(frame(6)).n).toBe(6);
    again.close();
  });

  it('takes acks out of order and ignores unknown ones', async () => {
    const box = Outbox.open(data.dir);
    for (let i = 1; i <= 4; i += 1) box.push(frame(i));
    box.ack([3]);
    box.ack([1, 99, 3]);
    expect(box.hasPendingAfter(0)).toBe(true);
    expect(seqsOf(await box.readAfter(0))).toEqual([2, 4]);
    box.ack([4, 2]);
    expect(box.pendingCount).toBe(0);
    expect(box.hasPendingAfter(0)).toBe(false);
    box.close();
    // Everything acknowledged: the file starts again, but `n` never goes back, even after a restart.
    const again = Outbox.open(data.dir);
    expect(again.pendingCount).toBe(0);
    expect(again.push(frame(5)).n).toBe(5);
    again.close();
  });

  it('keeps only what is pending, without losing or reordering it', async () => {
    const box = Outbox.open(data.dir);
    for (let i = 1; i <= 30; i += 1) box.push(frame(i));
    box.ack(Array.from({ length: 20 }, (_, i) => i + 1).filter((n) => n % 5 !== 0));
    for (let i = 31; i <= 33; i += 1) box.push(frame(i));
    const pending = [5, 10, 15, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33];
    expect(seqsOf(await box.readAfter(0))).toEqual(pending);
    expect(rowsOf(data.dir)).toBe(pending.length);
    box.close();
    const again = Outbox.open(data.dir);
    expect(seqsOf(await again.readAfter(0))).toEqual(pending);
    expect(again.push(frame(34)).n).toBe(34);
    again.close();
  });

  it('reads a large backlog in bounded batches', async () => {
    const box = Outbox.open(data.dir);
    for (let i = 1; i <= 100; i += 1) box.push({ ...frame(i), pad: 'x'.repeat(1000) });
    const first = await box.readAfter(0, 10_000);
    expect(first.length).toBeGreaterThan(0);
    expect(first.length).toBeLessThan(100);
    const rest = await box.readAfter(first.at(-1)!.n, 1_000_000);
    expect(seqsOf([...first, ...rest])).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('refuses a frame larger than the link allows', async () => {
    const box = Outbox.open(data.dir);
    expect(() => box.push({ ...frame(1), pad: 'x'.repeat(LINK_MAX_FRAME_BYTES) })).toThrow(expect.objectContaining({ code: 'frame-too-large' }));
    expect(box.pendingCount).toBe(0);
    expect(box.push(frame(1)).n).toBe(1);
    box.close();
  });
});

describe('the outbox under a steady stream', () => {
  it('stays bounded on disk when every frame is acknowledged as it goes', () => {
    const box = Outbox.open(data.dir);
    for (let i = 1; i <= 100; i += 1) box.ack([box.push(frame(i)).n]);
    expect(rowsOf(data.dir)).toBe(0);
    box.close();
    const again = Outbox.open(data.dir);
    expect(again.pendingCount).toBe(0);
    expect(again.push(frame(101)).n).toBe(101);
    again.close();
  });

  it('forgets nothing when an acknowledgement cannot be written', () => {
    const box = Outbox.open(data.dir);
    box.push(frame(1));
    box.push(frame(2));
    box.close();
    // A trigger that fails every delete, as a full disk would fail the write.
    const db = new DatabaseSync(path.join(data.dir, 'host.db'));
    db.exec("CREATE TRIGGER full BEFORE DELETE ON outbox BEGIN SELECT RAISE(ABORT, 'disk full'); END");
    db.close();
    const again = Outbox.open(data.dir);
    expect(() => again.ack([1, 2])).toThrow(/disk full/);
    expect(again.pendingCount).toBe(2);
    again.close();
    const third = Outbox.open(data.dir);
    expect(seqsOf(third.readAfter(0))).toEqual([1, 2]);
    third.close();
  });
});
