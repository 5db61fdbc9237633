// The dependency rule (scripts/layers.ts, DEVELOPERS.md "Layers"): the repository keeps it, and the
// checker catches each kind of break in a small tree written for the test.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkLayers } from '../../scripts/layers.ts';

const repository = path.resolve(import.meta.dirname, '../..');

/** A tree that keeps the rule: one file per layer and target, each importing what it may. */
const CLEAN: Record<string, string> = {
  'src/contracts/index.ts': "import { z } from 'zod';\nexport const Id = z.string();\n",
  'src/relay/log.ts': "import { AsyncLocalStorage } from 'node:async_hooks';\nexport const log = new AsyncLocalStorage();\n",
  'src/relay/env.ts': "import type { Room } from './objects/room.ts';\nexport interface Env { DB: D1Database; ROOM: Room }\n",
  'src/relay/db/chats.ts':
    "import { Id } from '../../contracts/index.ts';\nimport { log } from '../log.ts';\nexport const chats = (db: D1Database) => [db, Id, log];\n",
  'src/relay/auth/roles.ts':
    "import { chats } from '../db/chats.ts';\nimport type { Env } from '../env.ts';\nimport type { Room } from '../objects/room.ts';\nexport const roles = (env: Env, room?: Room) => chats(env.DB);\n",
  'src/relay/objects/room.ts': "import { roles } from '../auth/roles.ts';\nexport class Room { r = roles; }\n",
  'src/relay/http/chats.ts': "import { Room } from '../objects/room.ts';\nexport const route = Room;\n",
  'src/relay/index.ts': "export { route } from './http/chats.ts';\n",
  'src/host/cli.ts': "import { readFileSync } from 'node:fs';\nimport { Id } from '../contracts/index.ts';\nexport const cli = [readFileSync, Id];\n",
  'src/client/api.ts':
    "import type { route } from '../relay/http/chats.ts';\nimport { Id } from '../contracts/index.ts';\nexport type Api = typeof route;\nexport const api = Id;\n",
  'src/web/main.tsx': "import { api } from '../client/api.ts';\nexport const main = api;\n",
};

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Writes the clean tree with `changes` on top (a file set to null is left out) and checks it. */
function check(changes: Record<string, string | null> = {}) {
  const root = mkdtempSync(path.join(tmpdir(), 'tether-layers-'));
  made.push(root);
  for (const [file, text] of Object.entries({ ...CLEAN, ...changes })) {
    if (text === null) continue;
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return checkLayers(root).map((v) => `${v.file}: ${v.imports}: ${v.rule}`);
}

describe('the layers', () => {
  it('hold in the repository', () => {
    expect(checkLayers(repository)).toEqual([]);
  });

  it('hold in the clean fixture, so each break below is the only one', () => {
    expect(check()).toEqual([]);
  });

  it("a db module that takes the Worker's Env is caught, even as a type", () => {
    expect(check({ 'src/relay/db/chats.ts': "import type { Env } from '../env.ts';\nexport const chats = (env: Env) => env.DB;\n" })).toEqual([
      'src/relay/db/chats.ts: ../env.ts: relay db imports nothing from above it, not even types (env)',
    ]);
  });

  it('a value imported upward is caught, and `import { type X }` counts as a value (it still loads the module)', () => {
    expect(check({ 'src/relay/auth/roles.ts': "import { Room } from '../objects/room.ts';\nexport const roles = Room;\n" })).toContain(
      'src/relay/auth/roles.ts: ../objects/room.ts: relay auth imports values only from the layers below it, not from objects (types only: `import type`)',
    );
    expect(
      check({ 'src/relay/objects/room.ts': "import { type route } from '../http/chats.ts';\nexport type R = typeof route;\nexport class Room {}\n" }),
    ).toContain(
      'src/relay/objects/room.ts: ../http/chats.ts: relay objects imports values only from the layers below it, not from http (types only: `import type`)',
    );
    // Written `import type`, it is erased: allowed upward (as env.ts names the objects' classes).
    expect(
      check({ 'src/relay/objects/room.ts': "import type { route } from '../http/chats.ts';\nexport type R = typeof route;\nexport class Room {}\n" }),
    ).toEqual([]);
  });

  it('a cycle of value imports between layers is named with the imports that make it', () => {
    const found = check({ 'src/relay/db/chats.ts': "import { roles } from '../auth/roles.ts';\nexport const chats = (db: D1Database) => [db, roles];\n" });
    expect(found).toContain(
      'src/relay/auth/roles.ts: relay/auth -> relay/db -> relay/auth: a cycle of value imports between folders: ' +
        'src/relay/auth/roles.ts imports ../db/chats.ts; src/relay/db/chats.ts imports ../auth/roles.ts',
    );
  });

  it('a cycle between targets is caught too, whatever the table allows', () => {
    const found = check({ 'src/contracts/index.ts': "import { api } from '../client/api.ts';\nexport const Id = api;\n" });
    expect(found).toContain(
      'src/client/api.ts: client -> contracts -> client: a cycle of value imports between folders: ' +
        'src/client/api.ts imports ../contracts/index.ts; src/contracts/index.ts imports ../client/api.ts',
    );
  });

  it('contracts imports nothing from another folder, no Node module and no other package', () => {
    expect(
      check({
        'src/contracts/index.ts':
          "import { z } from 'zod';\nimport { log } from '../relay/log.ts';\nimport { readFileSync } from 'node:fs';\nimport { Hono } from 'hono';\nexport const Id = [z, log, readFileSync, Hono];\n",
      }),
    ).toEqual([
      'src/contracts/index.ts: ../relay/log.ts: contracts imports nothing from relay',
      'src/contracts/index.ts: node:fs: contracts imports only zod (it runs in the Worker, the host and the browser alike)',
      'src/contracts/index.ts: hono: contracts imports only zod (it runs in the Worker, the host and the browser alike)',
    ]);
  });

  it('the pairs of targets hold: host and web import no relay code, the client only its types', () => {
    expect(
      check({
        'src/host/cli.ts': "import { log } from '../relay/log.ts';\nexport const cli = log;\n",
        'src/web/main.tsx':
          "import type { Env } from '../relay/env.ts';\nimport { cli } from '../host/cli.ts';\nexport const main = cli;\nexport type E = Env;\n",
        'src/client/api.ts': "import { route } from '../relay/http/chats.ts';\nexport const api = route;\n",
      }),
    ).toEqual([
      'src/client/api.ts: ../relay/http/chats.ts: client imports only types from relay: write it `import type`',
      'src/host/cli.ts: ../relay/log.ts: host imports nothing from relay',
      'src/web/main.tsx: ../relay/env.ts: web imports nothing from relay',
      'src/web/main.tsx: ../host/cli.ts: web imports nothing from host',
    ]);
  });

  it('a new folder or relay file has to be placed before it passes', () => {
    expect(check({ 'src/relay/queue/drain.ts': 'export const drain = 1;\n', 'src/shared/x.ts': 'export const x = 1;\n' })).toEqual([
      'src/relay/queue/drain.ts: : this relay file is in no layer: add it to RELAY_LAYERS in scripts/layers.ts',
      'src/shared/x.ts: : src/shared is no target: add it to TARGET_RULES in scripts/layers.ts',
    ]);
  });
});
