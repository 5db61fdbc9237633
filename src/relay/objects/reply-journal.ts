// "A retried request id is answered once and never executed twice": each object that acts on a
// client's request keeps the replies it gave, per person and request id, for a while. A retry gets
// the same reply; a retry that arrives while the first is still running waits for it.
// Replies that say "try again" (the host was away or slow, a rate limit) are not kept.
import { requestsWhere, type RequestType } from '../../contracts/index.ts';

/** Requests that change something: answered once per person and request id, however often retried (the registry's `answeredOnce`). */
export const ANSWERED_ONCE: ReadonlySet<RequestType> = requestsWhere((rule) => rule.answeredOnce);

const RETRYABLE = new Set(['host-offline', 'host-timeout', 'rate-limited', 'internal']);
const KEEP_MS = 60 * 60 * 1000;
/** Old replies are dropped every so many writes, so the journal keeps itself small. */
const PRUNE_EVERY = 128;
/** A reply too large for one row is not kept; a retry then reaches the host, whose own journal answers it once. */
const KEEP_MAX = 500_000;

/** The journal's table as it was before versions were kept (storage-migrations.ts): part of version 1 of each object that keeps one. */
export const REPLY_TABLES_V1 = `CREATE TABLE IF NOT EXISTS replies (
      principal TEXT NOT NULL, id TEXT NOT NULL, reply TEXT NOT NULL, at INTEGER NOT NULL,
      PRIMARY KEY (principal, id));`;

export class ReplyJournal {
  private readonly sql: SqlStorage;
  private readonly inflight = new Map<string, Promise<string>>();
  private written = 0;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  async once(principal: string, id: string, run: () => Promise<string>): Promise<string> {
    const key = `${principal}\n${id}`;
    const running = this.inflight.get(key);
    if (running) return running;
    const [stored] = this.sql.exec<{ reply: string }>('SELECT reply FROM replies WHERE principal = ? AND id = ?', principal, id).toArray();
    if (stored) return stored.reply;
    const pending = run()
      .then((reply) => {
        if (reply.length <= KEEP_MAX && !isRetryable(reply)) {
          this.sql.exec('INSERT OR REPLACE INTO replies (principal, id, reply, at) VALUES (?, ?, ?, ?)', principal, id, reply, Date.now());
          if (++this.written % PRUNE_EVERY === 0) this.prune();
        }
        return reply;
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, pending);
    return pending;
  }

  prune(now = Date.now()): void {
    this.sql.exec('DELETE FROM replies WHERE at < ?', now - KEEP_MS);
  }
}

function isRetryable(reply: string): boolean {
  // Replies are built by us as `{"id":…,"ok":false,"error":{"code":"…"` – a substring test avoids a parse.
  const at = reply.indexOf('"ok":false');
  if (at < 0) return false;
  const match = /"code":"([^"]+)"/.exec(reply.slice(at));
  return match !== null && RETRYABLE.has(match[1]!);
}
