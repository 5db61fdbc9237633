// The relay's tables as drizzle's schema (src/relay/db/schema.ts) declares them, and as a D1 built by
// the migrations holds them, in one comparable form: columns (name, type, NOT NULL), primary key,
// the indexes made by CREATE INDEX (drizzle's `index`, `uniqueIndex` and column `.unique()`), and
// foreign keys. The code queries through drizzle, so a column the migrations forgot (or left
// nullable) is a failure at run time that no type check sees.
import { is } from 'drizzle-orm';
import { SQLiteTable, getTableConfig, type SQLiteColumn } from 'drizzle-orm/sqlite-core';
import * as schema from '../../src/relay/db/schema.ts';
import type { TableShape } from './local-d1.ts';

export interface Shape {
  columns: { name: string; type: string; notNull: boolean }[];
  primaryKey: string[];
  indexes: { name: string; unique: boolean; columns: string[] }[];
  foreignKeys: { from: string; table: string; to: string }[];
}

const byName = <T extends { name: string }>(list: T[]) => list.sort((a, b) => a.name.localeCompare(b.name));

/** What drizzle's schema expects of each table, by name. */
export function drizzleShape(): Record<string, Shape> {
  const tables = Object.values(schema as Record<string, unknown>).filter((value): value is SQLiteTable => is(value, SQLiteTable));
  return Object.fromEntries(
    tables.map((table) => {
      const config = getTableConfig(table);
      const columnName = (column: unknown) => (column as SQLiteColumn).name;
      const ownPrimary = config.columns.filter((c) => c.primary).map((c) => c.name);
      return [
        config.name,
        {
          columns: byName(config.columns.map((c) => ({ name: c.name, type: c.getSQLType().toLowerCase(), notNull: c.notNull }))),
          primaryKey: ownPrimary.length > 0 ? ownPrimary : (config.primaryKeys[0]?.columns.map((c) => c.name) ?? []),
          indexes: byName([
            ...config.indexes.map((i) => ({ name: i.config.name, unique: i.config.unique, columns: i.config.columns.map(columnName) })),
            ...config.columns.filter((c) => c.isUnique).map((c) => ({ name: c.uniqueName!, unique: true, columns: [c.name] })),
          ]),
          foreignKeys: config.foreignKeys
            .flatMap((fk) => {
              const ref = fk.reference();
              const target = getTableConfig(ref.foreignTable).name;
              return ref.columns.map((column, i) => ({ from: column.name, table: target, to: ref.foreignColumns[i]!.name }));
            })
            .sort((a, b) => a.from.localeCompare(b.from)),
        } satisfies Shape,
      ];
    }),
  );
}

/** The same form, read from a D1's PRAGMAs (`schemaOf`); SQLite's own autoindexes are left out. */
export function databaseShape(tables: Record<string, TableShape>): Record<string, Shape> {
  return Object.fromEntries(
    Object.entries(tables).map(([name, table]) => [
      name,
      {
        columns: byName(table.columns.map((c) => ({ name: String(c.name), type: String(c.type).toLowerCase(), notNull: Number(c.notnull) === 1 }))),
        primaryKey: table.columns
          .filter((c) => Number(c.pk) > 0)
          .sort((a, b) => Number(a.pk) - Number(b.pk))
          .map((c) => String(c.name)),
        indexes: byName(table.indexes.filter((i) => i.origin === 'c').map((i) => ({ name: i.name, unique: i.unique === 1, columns: i.columns }))),
        foreignKeys: table.foreignKeys
          .map((fk) => ({ from: String(fk.from), table: String(fk.table), to: String(fk.to) }))
          .sort((a, b) => a.from.localeCompare(b.from)),
      } satisfies Shape,
    ]),
  );
}
