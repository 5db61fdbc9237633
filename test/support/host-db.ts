// Reading a host's host.db from a test, through a second connection, as another process (or the
// host's next start) sees the file: WAL lets it read while the host writes.
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { ChatEvent } from '../../src/contracts/index.ts';

/** Runs `work` on a second connection to `<dataDir>/host.db`. */
export function onHostDb<T>(dataDir: string, work: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path.join(dataDir, 'host.db'));
  try {
    return work(db);
  } finally {
    db.close();
  }
}

/** A chat's log as the host has committed it, in order. */
export function hostLog(dataDir: string, chatId: string): Array<{ seq: number; at: number; event: ChatEvent }> {
  return onHostDb(dataDir, (db) =>
    db
      .prepare('SELECT seq, at, event FROM chat_events WHERE chat_id = ? ORDER BY seq')
      .all(chatId)
      .map((row) => ({ seq: row.seq as number, at: row.at as number, event: JSON.parse(row.event as string) as ChatEvent })),
  );
}
