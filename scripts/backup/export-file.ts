// What a `wrangler d1 export` file holds, read as SQL statements: the migrations the database had
// recorded, each table's rows (its INSERT statements, kept verbatim) and its AUTOINCREMENT counters.
// The schema statements are read past: a restore takes the schema from the migrations, since a full
// export cannot be loaded as it is (each table's rows follow its own CREATE, so a row can name a table
// that does not exist yet: cloudflare/workers-sdk#5683). Full and data-only (--no-schema) exports both
// read the same way.

/** wrangler's own table of applied migrations: recorded by `d1 migrations apply`, never restored as rows. */
export const MIGRATIONS_TABLE = 'd1_migrations';
const SEQUENCE_TABLE = 'sqlite_sequence';

export interface D1Export {
  /** The migration names the database had recorded, in the order it applied them. */
  migrations: string[];
  /** Each table's INSERT statements in the export's order (d1_migrations and sqlite_sequence left out). */
  rows: Map<string, string[]>;
  /** The AUTOINCREMENT counters of the tables (d1_migrations' left out): table name → the export's INSERT into sqlite_sequence. */
  sequences: Map<string, string>;
}

// A quoted string or identifier (quotes doubled inside), a semicolon, or a run of anything else.
const TOKEN = /'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|;|[^'"`;]+/g;

/** The statements of an SQL text, each with its own semicolon; a semicolon inside quotes ends none. */
export function statementsOf(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let read = 0;
  for (const [token] of sql.matchAll(TOKEN)) {
    read += token.length;
    current += token;
    if (token === ';') {
      statements.push(current.trim());
      current = '';
    }
  }
  if (read !== sql.length) throw new Error('the file ends inside a quoted string: it is cut short, or not SQL');
  if (current.trim()) throw new Error(`the file ends inside a statement: ${current.trim().slice(0, 80)}`);
  return statements;
}

/** An identifier as written: "name", `name` or name. */
const IDENTIFIER = /^(?:"((?:[^"]|"")+)"|`((?:[^`]|``)+)`|([\w$]+))/;
const INSERT_INTO = /^INSERT\s+INTO\s+/i;

/** The identifier at the start of `text`, unquoted, and the text after it; null when none starts it. */
export function unquoteIdentifier(text: string): { name: string; rest: string } | null {
  const match = IDENTIFIER.exec(text);
  if (!match) return null;
  const name = match[1]?.replaceAll('""', '"') ?? match[2]?.replaceAll('``', '`') ?? match[3]!;
  return { name, rest: text.slice(match[0].length) };
}

/** The items of a parenthesised list at its top level: `("a","b")` → ['"a"', '"b"']. */
function listItems(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let item = '';
  for (const [token] of text.matchAll(/'(?:[^']|'')*'|"(?:[^"]|"")*"|[(),]|[^'"(),]+/g)) {
    if (token === '(' && depth++ === 0) continue;
    if (token === ')' && --depth === 0) break;
    if (token === ',' && depth === 1) {
      items.push(item.trim());
      item = '';
      continue;
    }
    item += token;
  }
  items.push(item.trim());
  return items;
}

/**
 * A column's value in an INSERT, as text when it is a plain string literal: found by the statement's
 * column list (wrangler writes one), else at the column's `position` in the table.
 */
function stringValue(statement: string, column: string, position: number): string | null {
  const afterTable = (unquoteIdentifier(statement.replace(INSERT_INTO, ''))?.rest ?? '').trimStart();
  const valuesAt = afterTable.search(/\bVALUES\s*\(/i);
  if (valuesAt < 0) return null;
  const columns = valuesAt > 0 ? listItems(afterTable.slice(0, valuesAt)).map((item) => unquoteIdentifier(item)?.name) : null;
  const values = listItems(afterTable.slice(afterTable.indexOf('(', valuesAt)));
  const value = values[columns ? columns.indexOf(column) : position];
  return value && /^'.*'$/s.test(value) ? value.slice(1, -1).replaceAll("''", "'") : null;
}

/** Reads an export's text. Throws when it is not SQL a D1 export could have written. */
export function readExport(sql: string): D1Export {
  const contents: D1Export = { migrations: [], rows: new Map(), sequences: new Map() };
  for (const statement of statementsOf(sql)) {
    if (!INSERT_INTO.test(statement)) continue;
    const table = unquoteIdentifier(statement.replace(INSERT_INTO, ''))?.name;
    if (!table) throw new Error(`an INSERT whose table cannot be read: ${statement.slice(0, 80)}`);
    if (table === MIGRATIONS_TABLE) {
      const name = stringValue(statement, 'name', 1);
      if (!name) throw new Error(`a d1_migrations row without a name: ${statement.slice(0, 120)}`);
      contents.migrations.push(name);
    } else if (table === SEQUENCE_TABLE) {
      const name = stringValue(statement, 'name', 0);
      if (!name) throw new Error(`a sqlite_sequence row without a name: ${statement.slice(0, 120)}`);
      if (name !== MIGRATIONS_TABLE) contents.sequences.set(name, statement);
    } else {
      const rows = contents.rows.get(table) ?? [];
      rows.push(statement);
      contents.rows.set(table, rows);
    }
  }
  return contents;
}

/** How many rows the export holds, over all its tables. */
export function rowTotal(contents: D1Export): number {
  let total = 0;
  for (const rows of contents.rows.values()) total += rows.length;
  return total;
}

/** "0000_init.sql … 0004_relay_metrics.sql (5)", or "none". */
export function migrationRange(names: string[]): string {
  if (names.length === 0) return 'none';
  if (names.length === 1) return names[0]!;
  return `${names[0]} … ${names[names.length - 1]} (${names.length})`;
}
