// The request journal: a mutating request whose id was seen before is answered with the reply it got
// the first time and never runs twice. The relay resends the `chat.send`s it kept with the same id
// after a reconnect, and after a host restart too, so the journal is in host.db (table `requests`,
// db.ts) and keeps the newest `limit` ids.
//
// Each request is committed twice, synchronously: a row `(key, NULL)` before it runs, its reply once
// it has one and before the reply leaves, so no client or relay ever holds a reply the journal could
// lose. A kill -9 can land after a request changed a chat (its events are already committed) and
// before its reply; the row without a reply then tells the next process that the request may have
// run, and a retry gets INTERRUPTED rather than running a second time: a lost answer is better than
// a message sent twice.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { inTransaction, openHostDb } from '../db.ts';

export interface JournalReply {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
}

/** The answer to a retry of a request the host was serving when it stopped. */
export const INTERRUPTED: JournalReply = {
  ok: false,
  error: { code: 'internal', message: 'The host stopped while it served this request; the chat shows what it did' },
};

export class RequestJournal {
  private readonly db: DatabaseSync;
  private readonly limit: number;
  private readonly replies = new Map<string, JournalReply>();
  /** Requests running now: a retry that arrives meanwhile waits for the same reply. */
  private readonly running = new Map<string, Promise<JournalReply>>();
  private readonly started: StatementSync;
  private readonly answered: StatementSync;
  private readonly forgotten: StatementSync;

  constructor(dataDir: string, limit = 2_000) {
    this.db = openHostDb(dataDir);
    this.limit = limit;
    this.started = this.db.prepare('INSERT OR REPLACE INTO requests (key, reply) VALUES (?, NULL)');
    this.answered = this.db.prepare('UPDATE requests SET reply = ? WHERE key = ?');
    this.forgotten = this.db.prepare('DELETE FROM requests WHERE key = ?');
    for (const row of this.db.prepare('SELECT key, reply FROM requests ORDER BY rowid').iterate()) {
      this.replies.set(row.key as string, row.reply === null ? INTERRUPTED : (JSON.parse(row.reply as string) as JournalReply));
    }
    inTransaction(this.db, () => this.trim());
  }

  /** The journal key: a request id means the same request only for the same verb. */
  static key(type: string, id: string): string {
    return `${type} ${id}`;
  }

  /** Runs `work` once for `key`: a key seen before gets its first reply (or the one still being made). */
  async once(key: string, work: () => Promise<JournalReply>): Promise<JournalReply> {
    const earlier = this.replies.get(key) ?? this.running.get(key);
    if (earlier) return earlier;
    this.started.run(key);
    const pending = work();
    this.running.set(key, pending);
    try {
      const reply = await pending;
      // Committed before the reply is handed back, so before it can reach whoever asked.
      inTransaction(this.db, () => {
        this.answered.run(JSON.stringify(reply), key);
        this.replies.set(key, reply);
        this.trim();
      });
      return reply;
    } finally {
      this.running.delete(key);
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  /** Forgets the oldest replies beyond `limit` (inside the caller's transaction). */
  private trim(): void {
    while (this.replies.size > this.limit) {
      const oldest = this.replies.keys().next().value as string;
      this.replies.delete(oldest);
      this.forgotten.run(oldest);
    }
  }
}
