// The folder picker's `folders.list` as an attacker meets it: every path it is asked about is read
// only when its real path (every symlink and `..` resolved) is inside the host's roots, and the
// refusal names the allowed folders; a listing shows only folders that pass the same test, never
// hidden ones or files, marks git repositories, and stays bounded in a huge folder.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FOLDER_LIST_MAX, FoldersListResultSchema, type FoldersListResult } from '../../src/contracts/index.ts';
import type { HostCore, ReplyFrame } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { openCore, TestClient, tempDir } from './harness.ts';

let home: ReturnType<typeof tempDir>;
let outside: ReturnType<typeof tempDir>;
let data: ReturnType<typeof tempDir>;
let code: string;
let notes: string;
let core: HostCore;
let client: TestClient;

beforeEach(async () => {
  home = tempDir('tether-folders-home-');
  outside = tempDir('tether-folders-outside-');
  data = tempDir('tether-folders-data-');
  code = path.join(home.dir, 'code');
  notes = path.join(home.dir, 'notes');
  for (const dir of ['code/app/.git', 'code/app/src', 'code/lib', 'code/.hidden', 'notes', 'private']) mkdirSync(path.join(home.dir, dir), { recursive: true });
  writeFileSync(path.join(code, 'README.md'), 'not a folder');
  mkdirSync(path.join(outside.dir, 'secrets'));
  // Symlinks inside a root: one leads out of every root, one to another root.
  symlinkSync(outside.dir, path.join(code, 'escape'));
  symlinkSync(notes, path.join(code, 'to-notes'));
  core = await openCore(data.dir, { policy: new HostPolicy({ home: home.dir, roots: [code, notes], private: [data.dir] }) });
  client = new TestClient(core);
});

afterEach(async () => {
  await core.close();
  for (const dir of [home, outside, data]) dir.cleanup();
});

async function list(folder?: string): Promise<FoldersListResult> {
  return FoldersListResultSchema.parse(await client.ok('folders.list', folder === undefined ? {} : { folder }));
}

async function refusal(folder: string): Promise<{ code: string; message: string }> {
  const reply: ReplyFrame = await client.request('folders.list', { folder });
  if (reply.ok) throw new Error(`folders.list ${JSON.stringify(folder)} answered ${JSON.stringify(reply.result)}`);
  return reply.error;
}

describe('folders.list keeps every path inside the roots', () => {
  it('refuses .., absolute paths, symlinks out, NUL and newlines, a missing folder and a file, naming the allowed folders', async () => {
    const hostile = [
      path.join(code, '..'), // the home folder above the roots
      `${code}/../private`,
      `${code}/app/../../private`,
      '/etc',
      '/',
      outside.dir,
      path.join(code, 'escape'), // a symlink inside a root, leading out
      path.join(code, 'escape', 'secrets'),
      '~', // home is not a root here
      '~/private',
      '../private', // relative: resolved against home, outside the roots
      path.join(code, 'missing'),
      path.join(code, 'README.md'),
    ];
    for (const folder of hostile) {
      const error = await refusal(folder);
      expect(error.code, folder).toBe('folder-denied');
      expect(error.message, folder).toContain(`allowed folders: ${code}, ${notes}`);
    }
    // Control characters are refused as such, before any path is resolved.
    for (const folder of [`${code}\0/../../etc`, `${code}/app\n`, `${code}/\u2028app`]) {
      expect(await refusal(folder), JSON.stringify(folder)).toEqual({
        code: 'folder-denied',
        message: 'A working folder may not hold control characters (NUL, newline, ...)',
      });
    }
  });

  it('refuses a path longer than the OS allows before it is looked at', async () => {
    const error = await refusal(`${code}/${'a'.repeat(300)}`);
    expect(error).toMatchObject({ code: 'folder-denied' });
    expect(error.message).toContain('longer than 255 bytes');
  });

  it("lists a root's folders by name: not hidden ones, not files, not a symlink leading out; a repository is marked", async () => {
    const page = await list(code);
    expect(page.folder).toBe(code);
    expect(page.parent).toBeNull(); // a root: nothing above it may be listed
    expect(page.repository).toBe(false);
    expect(page.truncated).toBe(false);
    expect(page.folders).toEqual([
      { path: path.join(code, 'app'), name: 'app', repository: true },
      { path: path.join(code, 'lib'), name: 'lib', repository: false },
      // A symlink to another root is listed by where it really leads.
      { path: notes, name: 'to-notes', repository: false, root: true },
    ]);
  });

  it('lists a folder below a root with its parent, and answers its real path for ~ and a symlink inside the roots', async () => {
    const app = await list('~/code/app');
    expect(app).toMatchObject({ folder: path.join(code, 'app'), parent: code, repository: true });
    expect(app.folders.map((f) => f.name)).toEqual(['src']);
    expect((await list(path.join(code, 'to-notes'))).folder).toBe(notes);
    expect((await list(`${code}/app/../lib`)).folder).toBe(path.join(code, 'lib'));
  });

  // More folders than a page lists. (Not thousands: removing 6,000 folders took 8 s here, and a
  // loaded run's afterEach ran out of time on it; the scan's own cap, FOLDER_SCAN_MAX entries, is a
  // cost bound no answer shows.)
  it('stays bounded in a huge folder: at most FOLDER_LIST_MAX folders, and says it cut', async () => {
    const huge = path.join(code, 'huge');
    mkdirSync(huge);
    const folders = FOLDER_LIST_MAX + 50;
    for (let i = 0; i < folders; i++) mkdirSync(path.join(huge, `d${String(i).padStart(4, '0')}`));
    const page = await list(huge);
    expect(page.folders.map((f) => f.name)).toEqual(Array.from({ length: FOLDER_LIST_MAX }, (_, i) => `d${String(i).padStart(4, '0')}`));
    expect(page.truncated).toBe(true);
  });

  it("the top page: the roots, and the folders of this host's chats most recent first, only while still allowed", async () => {
    await client.ok('chat.create', { chatId: 'old', cwd: path.join(code, 'lib') });
    await client.ok('chat.create', { chatId: 'new', cwd: path.join(code, 'app') });
    // A chat from before the roots were narrowed: its folder is no longer offered.
    await core.close();
    core = await openCore(data.dir, { policy: new HostPolicy({ home: home.dir, roots: [path.join(code, 'app'), notes], private: [data.dir] }) });
    client = new TestClient(core);
    const top = await list();
    expect(top).toMatchObject({ folder: null, parent: null, truncated: false });
    expect(top.recent.map((f) => [f.path, f.repository])).toEqual([[path.join(code, 'app'), true]]);
    expect(top.recent[0].usedAt).toBeTypeOf('number');
    expect(top.folders).toEqual([
      { path: path.join(code, 'app'), name: 'app', repository: true, root: true },
      { path: notes, name: 'notes', repository: false, root: true },
    ]);
  });
});
