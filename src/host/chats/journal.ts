// The request journal: a mutating request whose id was seen before is answered with the reply it got
// the first time and never runs twice. The relay resends the `chat.send`s it kept with the same id
// after a reconnect, and after a host restart too, so the journal is in host.db (table `requests`,
// db.ts) and keeps the newest `limit` ids.
//
// Each request is committed twice, synchronously: a row `(key, NULL)` when it starts, its reply once
// it has one and before the reply leaves, so no client or relay ever holds a reply the journal could
// lose. A kill -9 can land after a request changed a chat (its events are already committed) and
// before its reply; the row without a reply then tells the next process that the request may have
// run, and a retry gets INTERRUPTED rather than running a second time: a lost answer is better than
// a message sent twice.
//
// "When it starts" is, for a request whose every effect is a chat event (the registry's
// `changesOnlyItsChat`: `chat.send`, its user item or its place in the queue), the commit of its
// first event: the chat log writes the row in that same transaction (`markRunningRequest`). So a row without a reply always means "it changed the chat",
// and no row means "it changed nothing, run it again". Marked before it ran instead, a kill between
// that commit and the user item's (an fsync or two; tens of ms under load) turned the relay's resend
// of a send it had already answered `ok` into INTERRUPTED: a kept message lost.
import { AsyncLocalStorage } from 'node:async_hooks';
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

/** A request marked by its first chat change, in the async context of its work (and of what it started). */
interface UnmarkedRequest {
  key: string;
  /** Its row is written (or its reply is, or it ended): later commits in this context leave it alone. */
  settled: boolean;
}

const unmarked = new AsyncLocalStorage<UnmarkedRequest>();

/**
 * For whoever commits a chat change: the key of the request whose work made it and has no row yet,
 * or null. `write(key)` must insert the row `(key, NULL)` in the same transaction as the change.
 */
export function markRunningRequest(write: (key: string) => void): void {
  const request = unmarked.getStore();
  if (!request || request.settled) return;
  write(request.key);
  request.settled = true;
}

/** The row of a request marked by its first chat change, for the chat log's own connection. */
export const START_ROW_SQL = 'INSERT OR REPLACE INTO requests (key, reply) VALUES (?, NULL)';

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
    this.started = this.db.prepare(START_ROW_SQL);
    // An upsert: a request marked by its first chat change that made none has no row yet.
    this.answered = this.db.prepare('INSERT INTO requests (key, reply) VALUES (?2, ?1) ON CONFLICT (key) DO UPDATE SET reply = excluded.reply');
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

  /**
   * Runs `work` once for `key`: a key seen before gets its first reply (or the one still being made).
   * `markedBy: 'first-change'` is for a request whose every effect is a chat event (see the top).
   */
  async once(key: string, work: () => Promise<JournalReply>, markedBy: 'start' | 'first-change' = 'start'): Promise<JournalReply> {
    const earlier = this.replies.get(key) ?? this.running.get(key);
    if (earlier) return earlier;
    let request: UnmarkedRequest | null = null;
    let pending: Promise<JournalReply>;
    if (markedBy === 'start') {
      this.started.run(key);
      pending = work();
    } else {
      request = { key, settled: false };
      pending = unmarked.run(request, work);
    }
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
      // What the work started (a CLI's output) goes on in its context: its events must not write a row again.
      if (request) request.settled = true;
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
