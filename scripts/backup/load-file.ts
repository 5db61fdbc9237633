// The SQL that loads an export's rows into a database the migrations have just made: every table's
// rows after the rows of the tables its foreign keys reference, then the AUTOINCREMENT counters as
// the source had them. D1 enforces foreign keys; the export's own order (table creation order) puts
// `chats` rows before `hosts` rows, which only loads because its `PRAGMA defer_foreign_keys` holds the
// check to the end of the transaction. The load keeps that PRAGMA (it covers a cycle, were there
// ever one) but does not lean on it.
import { unquoteIdentifier, type D1Export } from './export-file.ts';

export interface TableSchema {
  name: string;
  /** Its CREATE TABLE statement, as sqlite_master keeps it. */
  sql: string;
}

/** The tables a CREATE TABLE statement's foreign keys reference (itself left out). */
function referencedTables(table: TableSchema): string[] {
  const names = [...table.sql.matchAll(/\bREFERENCES\s+/gi)]
    .map((match) => unquoteIdentifier(table.sql.slice(match.index + match[0].length))?.name)
    .filter((name): name is string => name !== undefined);
  return [...new Set(names)].filter((name) => name !== table.name);
}

/** The tables in an order where each follows every table it references; otherwise in the order given. */
export function parentsFirst(tables: TableSchema[]): string[] {
  const known = new Set(tables.map((table) => table.name));
  const parents = new Map(tables.map((table) => [table.name, referencedTables(table).filter((name) => known.has(name))]));
  const order: string[] = [];
  const placed = new Set<string>();
  while (order.length < tables.length) {
    const next =
      tables.find((table) => !placed.has(table.name) && parents.get(table.name)!.every((parent) => placed.has(parent))) ??
      // A cycle: take the first table left; the deferred check settles it at the end.
      tables.find((table) => !placed.has(table.name))!;
    order.push(next.name);
    placed.add(next.name);
  }
  return order;
}

/** The load file: the backup's rows in `order` (every table the backup has rows for must be in it), then its counters. */
export function loadSql(backup: D1Export, order: string[]): string {
  const lines = ['PRAGMA defer_foreign_keys=TRUE;'];
  for (const table of order) lines.push(...(backup.rows.get(table) ?? []));
  // Inserting rows with their ids already moved each counter up to the largest id; the source's
  // counter may be higher (rows deleted since), and ids must not be handed out twice.
  for (const [table, statement] of backup.sequences) {
    lines.push(`DELETE FROM sqlite_sequence WHERE name = '${table.replaceAll("'", "''")}';`, statement);
  }
  return `${lines.join('\n')}\n`;
}
