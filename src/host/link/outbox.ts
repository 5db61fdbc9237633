// The host's outbox: every event frame the host sends to the relay, kept in host.db (db.ts) until
// the relay acknowledges it, so events produced while the link is down, or before a host restart,
// reach the relay once and in order.
//
// Each frame gets the next position `n` (persistent, strictly increasing) and is committed as a row
// of `outbox`, exactly the text sent on the wire (it carries its `n`), before anyone sends it. An ack
// (`{link:'ack', n:[…]}`, possibly out of order) deletes its rows. Memory holds only the positions
// still pending; the frames themselves are read back from the database when the link resends.
//
// Writes are synchronous on purpose: a frame is committed before it can reach the socket, and a
// chat's own event row is committed before its event reaches the outbox, so after a crash (or a
// power loss: every commit is fsynced) the host never hands out an `n` or a `seq` the relay has
// already seen.
//
// What survives a restart: every unacknowledged frame, in order, and the last `n` handed out.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { LINK_MAX_FRAME_BYTES } from '../../contracts/link.ts';
import { ProtocolError } from '../../contracts/errors.ts';
import { inTransaction, openHostDb } from '../db.ts';

export interface OutboxEntry {
  n: number;
  /** The frame as sent on the wire (already carrying `n`). */
  text: string;
}

export class Outbox {
  private readonly db: DatabaseSync;
  /** Pending positions, in `n` order (pushes only ever add a higher one). */
  private readonly pending = new Set<number>();
  private lastN: number;
  private readonly insert: StatementSync;
  private readonly remove: StatementSync;
  private readonly after: StatementSync;

  private constructor(db: DatabaseSync) {
    this.db = db;
    this.insert = db.prepare('INSERT INTO outbox (n, frame) VALUES (?, ?)');
    this.remove = db.prepare('DELETE FROM outbox WHERE n = ?');
    this.after = db.prepare('SELECT n, frame FROM outbox WHERE n > ? ORDER BY n');
    for (const row of db.prepare('SELECT n FROM outbox ORDER BY n').iterate()) this.pending.add(row.n as number);
    const sequence = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").get();
    this.lastN = (sequence?.seq as number | undefined) ?? 0;
  }

  /** Opens (or creates) the outbox in the host's data folder `dataDir`. */
  static open(dataDir: string): Outbox {
    return new Outbox(openHostDb(dataDir));
  }

  /** Frames not yet acknowledged. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** True when a pending frame has a position after `n`. */
  hasPendingAfter(n: number): boolean {
    for (const key of this.pending) if (key > n) return true;
    return false;
  }

  /**
   * Gives `frame` the next position and commits it; answers the entry to send. A frame larger than
   * LINK_MAX_FRAME_BYTES is refused (`frame-too-large`) and takes no position.
   */
  push(frame: Record<string, unknown>): OutboxEntry {
    const n = this.lastN + 1;
    const text = JSON.stringify({ ...frame, n });
    const bytes = Buffer.byteLength(text);
    if (bytes > LINK_MAX_FRAME_BYTES) {
      throw new ProtocolError('frame-too-large', `An event of ${bytes} bytes is larger than the link allows`);
    }
    this.insert.run(n, text);
    this.lastN = n;
    this.pending.add(n);
    return { n, text };
  }

  /** Forgets acknowledged positions (any order; unknown ones are ignored). Throws if the rows cannot be deleted; then nothing is forgotten. */
  ack(ns: readonly number[]): void {
    const done = [...new Set(ns)].filter((n) => this.pending.has(n));
    if (done.length === 0) return;
    inTransaction(this.db, () => {
      for (const n of done) this.remove.run(n);
    });
    for (const n of done) this.pending.delete(n);
  }

  /** Up to `maxBytes` (at least one frame) of the pending frames after position `after`, in order. */
  readAfter(after: number, maxBytes = 4 * 1024 * 1024): OutboxEntry[] {
    const out: OutboxEntry[] = [];
    let bytes = 0;
    for (const row of this.after.iterate(after)) {
      const text = row.frame as string;
      const size = Buffer.byteLength(text) + 1;
      if (out.length > 0 && bytes + size > maxBytes) break;
      out.push({ n: row.n as number, text });
      bytes += size;
    }
    return out;
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}
