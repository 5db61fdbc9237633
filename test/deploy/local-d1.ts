// A local D1 (the SQLite file miniflare keeps under `<persistTo>/v3/d1`) read straight from disk with
// node:sqlite once wrangler has exited: exact values and the full schema, without a wrangler call
// per query.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLOutputValue } from 'node:sqlite';
import { APP_TABLES, quoted } from '../../scripts/backup/d1-target.ts';

export type Row = Record<string, SQLOutputValue>;

export interface TableShape {
  columns: Row[];
  indexes: { name: string; unique: number; origin: string; partial: number; columns: string[] }[];
  foreignKeys: Row[];
  /** sqlite_master's CREATE statement with its whitespace collapsed. */
  sql: string;
}

/** The D1 database file of a local state folder (`wrangler ... --persist-to <persistTo>`). */
export function localD1File(persistTo: string): string {
  const dir = path.join(persistTo, 'v3', 'd1', 'miniflare-D1DatabaseObject');
  const files = readdirSync(dir).filter((name) => name.endsWith('.sqlite') && name !== 'metadata.sqlite');
  if (files.length !== 1) throw new Error(`expected one D1 database in ${dir}, found ${files.length}`);
  return path.join(dir, files[0]!);
}

function withDb<T>(persistTo: string, read: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(localD1File(persistTo), { readOnly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const collapse = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** The app's tables (SQLite's own and D1's `_cf_*` left out; `d1_migrations` kept). */
export function tableNames(persistTo: string): string[] {
  return withDb(persistTo, tableNamesIn);
}

/** Every table's columns, indexes, foreign keys and CREATE statement, by table name. */
export function schemaOf(persistTo: string): Record<string, TableShape> {
  return withDb(persistTo, (db) =>
    Object.fromEntries(
      tableNamesIn(db).map((table) => {
        const indexes = db
          .prepare(`PRAGMA index_list(${quoted(table)})`)
          .all()
          .map((index) => ({
            name: String(index.name),
            unique: Number(index.unique),
            origin: String(index.origin),
            partial: Number(index.partial),
            columns: db
              .prepare(`PRAGMA index_info(${quoted(String(index.name))})`)
              .all()
              .sort((a, b) => Number(a.seqno) - Number(b.seqno))
              .map((c) => String(c.name)),
          }))
          .sort((a, b) => a.name.localeCompare(b.name));
        const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)!.sql;
        return [
          table,
          {
            columns: db.prepare(`PRAGMA table_xinfo(${quoted(table)})`).all(),
            indexes,
            foreignKeys: db.prepare(`PRAGMA foreign_key_list(${quoted(table)})`).all(),
            sql: collapse(String(sql)),
          } satisfies TableShape,
        ];
      }),
    ),
  );
}

function tableNamesIn(db: DatabaseSync): string[] {
  return db
    .prepare(APP_TABLES)
    .all()
    .map((row) => String(row.name));
}

/**
 * Every row of each table, only the columns named (a later migration may add some), sorted by all of
 * them: row order and rowids may change when a migration rebuilds a table, the values may not.
 */
export function rowsOf(persistTo: string, columnsByTable: Record<string, string[]>): Record<string, Row[]> {
  return withDb(persistTo, (db) =>
    Object.fromEntries(
      Object.entries(columnsByTable).map(([table, columns]) => {
        const list = columns.map(quoted).join(', ');
        return [table, db.prepare(`SELECT ${list} FROM ${quoted(table)} ORDER BY ${list}`).all()];
      }),
    ),
  );
}

/** The names wrangler recorded as applied, in order. */
export function appliedMigrations(persistTo: string): string[] {
  return withDb(persistTo, (db) =>
    db
      .prepare('SELECT name FROM d1_migrations ORDER BY id')
      .all()
      .map((row) => String(row.name)),
  );
}

/** How many rows each app table holds. */
export function rowCounts(persistTo: string): Record<string, number> {
  return withDb(persistTo, (db) =>
    Object.fromEntries(tableNamesIn(db).map((table) => [table, Number(db.prepare(`SELECT count(*) AS n FROM ${quoted(table)}`).get()!.n)])),
  );
}
