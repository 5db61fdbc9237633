// The host's database: one SQLite file per data folder (`<data>/host.db`, through `node:sqlite`) that
// holds what the host must never lose or repeat: the outbox (events until the relay acks them), the
// request journal (requests answered once) and the chats' event logs.
//
// Why SQLite and these settings: `journal_mode=WAL` lets a write commit with one append to the WAL,
// and `synchronous=FULL` makes every commit fsync it, so a row the host has written survives a power
// loss, not only a kill -9. Every write is synchronous and is its own transaction (or one of a few
// statements): it is committed before the call returns, so the host sends no acknowledgement (an
// ack to the relay, a reply to a client, an event numbered `n` or `seq`) for a row that could still
// be lost.
//
// The schema is a list of numbered migrations, each run once in one transaction, the version kept
// in `schema_version`; a file written by a newer host is refused, never read. Never edit a released
// version: add the next one at the end. Version 1 also imports the JSONL files of hosts from before
// this file (see legacy-import.ts), in the same transaction.
//
// Each owner (Outbox, RequestJournal, ChatStore) opens its own connection and closes it; they never
// hold a transaction across an await, so they never wait on one another.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { importLegacyFiles, setAside } from './legacy-import.ts';

export const HOST_DB_FILE = 'host.db';

interface Migration {
  version: number;
  /** Runs inside the migration's transaction; answers old files to rename aside once it has committed. */
  up(db: DatabaseSync, dataDir: string): string[];
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    up(db, dataDir) {
      db.exec(`
        -- Event frames not yet acknowledged by the relay, exactly the text sent (it carries its n).
        -- AUTOINCREMENT keeps the highest n ever used in sqlite_sequence, so n never goes back even
        -- once every row is acknowledged and deleted.
        CREATE TABLE outbox (n INTEGER PRIMARY KEY AUTOINCREMENT, frame TEXT NOT NULL);
        -- The request journal: a row when a request starts (reply NULL), its reply once it has one.
        CREATE TABLE requests (key TEXT PRIMARY KEY, reply TEXT);
        -- Each chat's events after (and a little before) its checkpoint, chats/<id>.json.
        CREATE TABLE chat_events (
          chat_id TEXT NOT NULL,
          seq INTEGER NOT NULL,
          at INTEGER NOT NULL,
          event TEXT NOT NULL,
          PRIMARY KEY (chat_id, seq)
        ) WITHOUT ROWID;
      `);
      return importLegacyFiles(db, dataDir);
    },
  },
];

export class HostDbTooNewError extends Error {
  constructor(file: string, version: number) {
    super(`${file} is at schema version ${version}, newer than this host knows (${MIGRATIONS.at(-1)!.version}); upgrade the host`);
  }
}

/** Opens `<dataDir>/host.db` (creating it), with WAL and fsync on every commit, migrated to the newest version. */
export function openHostDb(dataDir: string): DatabaseSync {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, HOST_DB_FILE);
  const db = new DatabaseSync(file);
  try {
    // Another process on the same folder (a second `tether host`, a status command) waits a moment for a lock.
    db.exec('PRAGMA busy_timeout = 5000');
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
    migrate(db, file, dataDir);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

function migrate(db: DatabaseSync, file: string, dataDir: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const current = () => (db.prepare('SELECT max(version) AS v FROM schema_version').get()?.v as number | null) ?? 0;
  const newest = MIGRATIONS.at(-1)!.version;
  if (current() > newest) throw new HostDbTooNewError(file, current());
  for (const migration of MIGRATIONS) {
    // IMMEDIATE takes the write lock first, so two processes starting together migrate once.
    db.exec('BEGIN IMMEDIATE');
    let imported: string[] = [];
    try {
      if (current() < migration.version) {
        imported = migration.up(db, dataDir);
        db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(migration.version);
      }
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
    // Only after the commit: a crash before it leaves the old files where the next start imports them.
    setAside(imported);
  }
}

/** Runs `work` in one transaction: every write in it lands, or none. */
export function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
