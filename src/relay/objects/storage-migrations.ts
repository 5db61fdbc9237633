// The versions of a Durable Object's own SQLite: each object lists its schema as numbered migrations,
// and its constructor brings its storage up to the newest before anything reads it. The version
// applied is kept in a table of its own (the objects' SQLite refuses `PRAGMA user_version`). Version 1
// of every object is the schema its tables had before versions were kept, written `IF NOT EXISTS`, so
// an object made then migrates to it as a no-op. A released version is never edited: a change of
// schema is a new version.
export interface StorageMigration {
  version: number;
  /** The statements, run in one transaction with the version's record. */
  sql: string;
}

/** Thrown when an object's storage was written by newer code than this (a rollback): nothing is read or changed. */
export class StorageTooNewError extends Error {}

/**
 * Applies the migrations of `migrations` newer than `storage`'s version, in order, each with its record
 * in one transaction; answers the version the storage is at. `object` names it in the error.
 */
export function migrateStorage(storage: DurableObjectStorage, object: string, migrations: readonly StorageMigration[]): number {
  const newest = migrations.at(-1)?.version ?? 0;
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`${object}: migration ${i} is numbered ${m.version}, not ${i + 1}`);
  });
  storage.sql.exec('CREATE TABLE IF NOT EXISTS schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)');
  const [row] = storage.sql.exec<{ version: number }>('SELECT version FROM schema_version WHERE id = 1').toArray();
  const at = row?.version ?? 0;
  if (at > newest) {
    throw new StorageTooNewError(
      `${object}: its storage is at version ${at}, newer than this relay's ${newest}; run the newer relay (a rollback cannot read it)`,
    );
  }
  for (const migration of migrations.slice(at)) {
    storage.transactionSync(() => {
      storage.sql.exec(migration.sql);
      storage.sql.exec('INSERT INTO schema_version (id, version) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET version = excluded.version', migration.version);
    });
  }
  return Math.max(at, newest);
}
