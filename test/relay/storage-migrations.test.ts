// The versions of the objects' own SQLite (storage-migrations.ts): a new object is at the newest, one
// made before versions were kept migrates without losing a row, a second start applies nothing, and
// storage written by newer code is refused rather than read.
import { env, evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { migrateStorage, StorageTooNewError } from '../../src/relay/objects/storage-migrations.ts';
import { roomName } from '../../src/relay/objects/stubs.ts';

const room = (chatId: string) => env.CHAT_ROOM.get(env.CHAT_ROOM.idFromName(roomName('h-migrations', chatId)));
const versionOf = (state: DurableObjectState) => state.storage.sql.exec<{ version: number }>('SELECT version FROM schema_version').one().version;

describe("the objects' storage versions", () => {
  it('a new room, lobby and link start at their newest version', async () => {
    expect(await runInDurableObject(room('fresh'), (_o, state) => versionOf(state))).toBe(1);
    expect(await runInDurableObject(env.LOBBY.get(env.LOBBY.idFromName('h-migrations')), (_o, state) => versionOf(state))).toBe(1);
    expect(await runInDurableObject(env.HOST_LINK.get(env.HOST_LINK.idFromName('h-migrations')), (_o, state) => versionOf(state))).toBe(1);
  });

  it('a room made before versions were kept keeps every row, and starts at version 1 the next time', async () => {
    const stub = room('old');
    await runInDurableObject(stub, (_o, state) => {
      // What the code before versions left: its tables and rows, no version table.
      state.storage.sql.exec("INSERT INTO meta (key, value) VALUES ('info', '{\"kept\":true}')");
      state.storage.sql.exec("INSERT INTO log (seq, json) VALUES (7, '{}')");
      state.storage.sql.exec('UPDATE room SET seq = 7 WHERE id = 1');
      state.storage.sql.exec('DROP TABLE schema_version');
    });
    await evictDurableObject(stub);
    const after = await runInDurableObject(stub, (_o, state) => ({
      version: versionOf(state),
      info: state.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'info'").one().value,
      log: state.storage.sql.exec('SELECT seq FROM log').toArray(),
      seq: state.storage.sql.exec<{ seq: number }>('SELECT seq FROM room WHERE id = 1').one().seq,
    }));
    expect(after).toEqual({ version: 1, info: '{"kept":true}', log: [{ seq: 7 }], seq: 7 });
  });

  it('applies only what is newer, once, and refuses storage newer than the code', async () => {
    const result = await runInDurableObject(room('runner'), (_o, state) => {
      const storage = state.storage;
      const v2 = [
        { version: 1, sql: 'CREATE TABLE IF NOT EXISTS t (n INTEGER)' },
        { version: 2, sql: 'INSERT INTO t (n) VALUES (2)' },
      ];
      storage.sql.exec('DROP TABLE IF EXISTS schema_version');
      const first = migrateStorage(storage, 'Test', v2);
      const again = migrateStorage(storage, 'Test', v2);
      const rows = storage.sql.exec('SELECT n FROM t').toArray();
      let refused: unknown = null;
      try {
        migrateStorage(storage, 'Test', v2.slice(0, 1));
      } catch (error) {
        refused = error;
      }
      // The room's own tables are version 1 of its list: leave it so, for whatever loads it next.
      storage.sql.exec('DROP TABLE t');
      storage.sql.exec('UPDATE schema_version SET version = 1');
      return { first, again, rows, refused: refused instanceof StorageTooNewError ? refused.message : String(refused) };
    });
    expect(result.first).toBe(2);
    expect(result.again).toBe(2);
    expect(result.rows).toEqual([{ n: 2 }]);
    expect(result.refused).toMatch(/Test: its storage is at version 2, newer than this relay's 1/);
  });
});
