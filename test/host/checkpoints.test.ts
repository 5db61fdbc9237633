// Turn checkpoints with real git in temp repositories: what a turn changed, and nothing of the
// user's (index, branches, status, HEAD) touched.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChatCheckpointDiffSchema, ChatTurnItemSchema } from '../../src/contracts/index.ts';
import { Checkpoints, CHECKPOINT_DIFF_LIMITS } from '../../src/host/chats/checkpoints.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ScriptFileSchema, ScriptProvider } from '../../src/host/providers/script.ts';
import { idle, openCore, TestClient, tempDir, until } from './harness.ts';

let data: ReturnType<typeof tempDir>;
let repo: string;

const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });

/** Everything of the user's a checkpoint must leave alone. */
function userState() {
  return {
    status: git('status', '--porcelain=v1', '-uall'),
    index: readFileSync(path.join(repo, '.git', 'index')).toString('base64'),
    branches: git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags'),
    head: git('rev-parse', 'HEAD'),
    symbolic: git('symbolic-ref', 'HEAD'),
    stash: git('stash', 'list'),
  };
}

beforeEach(() => {
  data = tempDir('tether-checkpoints-');
  repo = path.join(data.dir, 'repo');
  mkdirSync(repo);
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'me@example.com');
  git('config', 'user.name', 'Me');
  writeFileSync(path.join(repo, 'keep.txt'), 'one\ntwo\nthree\n');
  writeFileSync(path.join(repo, 'gone.txt'), 'bye\n');
  writeFileSync(path.join(repo, 'moved.txt'), 'a file long enough that git sees a rename\n'.repeat(20));
  writeFileSync(path.join(repo, 'image.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
  writeFileSync(path.join(repo, '.gitignore'), 'ignored/\n');
  git('add', '.');
  git('commit', '-q', '-m', 'start');
  // The user has work in progress: something staged, something not, something untracked.
  writeFileSync(path.join(repo, 'staged.txt'), 'staged\n');
  git('add', 'staged.txt');
  writeFileSync(path.join(repo, 'keep.txt'), 'one\ntwo\nthree\nfour (unstaged)\n');
  writeFileSync(path.join(repo, 'untracked.txt'), 'mine\n');
});

afterEach(() => data.cleanup());

/** The host's private repositories (one per work tree snapshotted). */
function privateRepos(): string[] {
  const dir = path.join(data.dir, 'host', 'checkpoints');
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith('.git'))
        .map((name) => path.join(dir, name))
    : [];
}

describe('Checkpoints', () => {
  it('diffs what changed between two snapshots: update, add, delete, rename, binary, too large', async () => {
    const checkpoints = new Checkpoints(path.join(data.dir, 'host'));
    const before = userState();
    const start = await checkpoints.take('c1', repo);
    expect(start).toMatch(/^[0-9a-f]{40}$/);
    expect(userState()).toEqual(before);

    // The "turn": edits of every kind.
    writeFileSync(path.join(repo, 'keep.txt'), 'one\nTWO\nthree\nfour (unstaged)\nfive\n');
    writeFileSync(path.join(repo, 'new.txt'), 'fresh\nlines\n');
    rmSync(path.join(repo, 'gone.txt'));
    renameSync(path.join(repo, 'moved.txt'), path.join(repo, 'renamed.txt'));
    writeFileSync(path.join(repo, 'image.bin'), Buffer.from([0, 9, 9, 9, 0, 255, 7]));
    writeFileSync(path.join(repo, 'big.txt'), 'line\n'.repeat(CHECKPOINT_DIFF_LIMITS.fileLines + 1));
    mkdirSync(path.join(repo, 'ignored'));
    writeFileSync(path.join(repo, 'ignored', 'cache.txt'), 'never listed\n');
    mkdirSync(path.join(repo, 'sub dir'));
    writeFileSync(path.join(repo, 'sub dir', 'ünïcode name.txt'), 'x\n');
    const middle = userState();

    const end = await checkpoints.take('c1', repo);
    expect(end).not.toBe(start);
    expect(userState()).toEqual(middle);

    const diff = ChatCheckpointDiffSchema.parse(await checkpoints.diff(repo, start!, end!));
    expect(diff.truncated).toBe(false);
    const byPath = new Map(diff.files.map((f) => [f.path, f]));
    expect([...byPath.keys()].sort()).toEqual(['big.txt', 'gone.txt', 'image.bin', 'keep.txt', 'new.txt', 'renamed.txt', 'sub dir/ünïcode name.txt']);
    expect(byPath.get('keep.txt')).toMatchObject({ kind: 'update', added: 2, deleted: 1 });
    expect(byPath.get('keep.txt')!.diff).toContain('-two\n+TWO\n');
    expect(byPath.get('keep.txt')!.diff).toMatch(/^diff --git a\/keep.txt b\/keep.txt\n/);
    expect(byPath.get('new.txt')).toMatchObject({ kind: 'add', added: 2, deleted: 0 });
    expect(byPath.get('new.txt')!.diff).toContain('+fresh\n+lines\n');
    expect(byPath.get('gone.txt')).toMatchObject({ kind: 'delete', added: 0, deleted: 1 });
    expect(byPath.get('gone.txt')!.diff).toContain('-bye');
    expect(byPath.get('renamed.txt')).toMatchObject({ kind: 'update', added: 0, deleted: 0 });
    expect(byPath.get('renamed.txt')!.diff).toContain('rename from moved.txt\nrename to renamed.txt');
    expect(byPath.get('image.bin')).toEqual({ path: 'image.bin', kind: 'update', added: 0, deleted: 0, diff: '', omitted: 'binary' });
    expect(byPath.get('big.txt')).toEqual({
      path: 'big.txt',
      kind: 'add',
      added: CHECKPOINT_DIFF_LIMITS.fileLines + 1,
      deleted: 0,
      diff: '',
      omitted: 'too-large',
    });
    expect(byPath.get('sub dir/ünïcode name.txt')!.diff).toContain('+x');

    // The trees are kept by a private ref in the host's own repository; the user's refs are as they were.
    const refs = git('for-each-ref', '--format=%(refname)');
    expect(refs.split('\n').filter((r) => r.startsWith('refs/tether/'))).toEqual([]);
    expect(refs.split('\n').filter((r) => r.startsWith('refs/heads/'))).toEqual(['refs/heads/main']);
    const own = privateRepos();
    expect(own).toHaveLength(1);
    const ownGit = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', env: { ...process.env, GIT_DIR: own[0], GIT_CONFIG_NOSYSTEM: '1' } });
    expect(
      ownGit('for-each-ref', '--format=%(refname)')
        .split('\n')
        .filter((r) => r.startsWith('refs/tether/checkpoints/')),
    ).toHaveLength(1);
    // The user's gc keeps what the snapshots borrow (their index and history); the diff is still there.
    git('gc', '-q', '--prune=now');
    ownGit('gc', '-q', '--prune=now');
    expect(ownGit('cat-file', '-t', start!).trim()).toBe('tree');
    expect(ownGit('cat-file', '-t', end!).trim()).toBe('tree');
    expect((await checkpoints.diff(repo, start!, end!))?.files.map((f) => f.path).sort()).toEqual([...byPath.keys()].sort());
    expect(userState()).toEqual(middle);
  });

  it("runs no program the work tree's git config names (fsmonitor, filters, hooks, external diff, textconv, a global config), and diffs stay right", async () => {
    const marker = path.join(data.dir, 'ran');
    const trap = path.join(data.dir, 'trap.sh');
    // Every program git could be told to run writes the marker (and, as a filter, passes its input through).
    writeFileSync(trap, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`, { mode: 0o755 });
    const hooks = path.join(data.dir, 'hooks');
    mkdirSync(hooks);
    for (const hook of ['reference-transaction', 'post-index-change', 'pre-commit', 'post-commit']) {
      writeFileSync(path.join(hooks, hook), `#!/bin/sh\necho ${hook} >> '${marker}'\n`, { mode: 0o755 });
      writeFileSync(path.join(repo, '.git', 'hooks', hook), `#!/bin/sh\necho ${hook} >> '${marker}'\n`, { mode: 0o755 });
    }
    git('config', 'core.fsmonitor', trap);
    git('config', 'core.hooksPath', hooks);
    git('config', 'filter.evil.clean', trap);
    git('config', 'filter.evil.smudge', trap);
    git('config', 'filter.evil.required', 'true');
    git('config', 'filter.proc.process', trap);
    git('config', 'diff.external', trap);
    git('config', 'diff.evil.textconv', trap);
    git('config', 'diff.evil.command', trap);
    git('config', 'core.pager', trap);
    writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=evil diff=evil\n*.md filter=proc\n');
    // The host's own environment names a global config with the same traps: it is not read either.
    const globalConfig = path.join(data.dir, 'global.gitconfig');
    writeFileSync(globalConfig, `[core]\n\tfsmonitor = ${trap}\n[filter "evil"]\n\tclean = ${trap}\n`);
    const saved = process.env.GIT_CONFIG_GLOBAL;
    process.env.GIT_CONFIG_GLOBAL = globalConfig;
    try {
      // The traps are armed: plain git in this repository runs them.
      execFileSync('git', ['add', '-A', '--dry-run'], { cwd: repo, env: { ...process.env, GIT_INDEX_FILE: path.join(data.dir, 'probe.index') } });
      expect(readFileSync(marker, 'utf8')).not.toBe('');
      rmSync(marker);

      const checkpoints = new Checkpoints(path.join(data.dir, 'host'));
      const start = await checkpoints.take('c1', repo);
      writeFileSync(path.join(repo, 'keep.txt'), 'one\ntwo\nthree\nfour\n');
      writeFileSync(path.join(repo, 'notes.md'), '# notes\n');
      const end = await checkpoints.take('c1', repo);
      const diff = await checkpoints.diff(repo, start!, end!);
      expect(await checkpoints.branches(repo)).toEqual(['main']);
      expect(existsSync(marker)).toBe(false);
      // Right, and of the files as they are (no filter rewrote them).
      const byPath = new Map(diff!.files.map((f) => [f.path, f]));
      expect(byPath.get('keep.txt')).toMatchObject({ kind: 'update', added: 1, deleted: 1, diff: expect.stringContaining('+four\n') });
      expect(byPath.get('notes.md')).toMatchObject({ kind: 'add', added: 1, diff: expect.stringContaining('+# notes') });
      expect([...byPath.keys()].sort()).toEqual(['keep.txt', 'notes.md']);
    } finally {
      if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = saved;
    }
  });

  it('refuses a work tree its config moves elsewhere (core.worktree), so no other folder is hashed', async () => {
    const sub = path.join(repo, 'sub');
    mkdirSync(sub);
    git('config', 'core.worktree', '/');
    const checkpoints = new Checkpoints(path.join(data.dir, 'host'));
    expect(await checkpoints.take('c1', sub)).toBeNull();
    expect(privateRepos()).toEqual([]);
  });

  it('answers null outside a git work tree and for trees git does not know', async () => {
    const checkpoints = new Checkpoints(path.join(data.dir, 'host'));
    const plain = path.join(data.dir, 'plain');
    mkdirSync(plain);
    expect(await checkpoints.take('c1', plain)).toBeNull();
    expect(await checkpoints.take('c1', path.join(data.dir, 'missing'))).toBeNull();
    expect(await checkpoints.diff(plain, 'a'.repeat(40), 'b'.repeat(40))).toBeNull();
    expect(await checkpoints.diff(repo, 'a'.repeat(40), 'b'.repeat(40))).toBeNull();
  });

  it('lists at most the file limit and says it truncated', async () => {
    const checkpoints = new Checkpoints(path.join(data.dir, 'host'));
    const start = await checkpoints.take('c1', repo);
    mkdirSync(path.join(repo, 'many'));
    for (let i = 0; i <= CHECKPOINT_DIFF_LIMITS.files; i += 1) writeFileSync(path.join(repo, 'many', `f${i}.txt`), `${i}\n`);
    const end = await checkpoints.take('c1', repo);
    const diff = await checkpoints.diff(repo, start!, end!);
    expect(diff!.files).toHaveLength(CHECKPOINT_DIFF_LIMITS.files);
    expect(diff!.truncated).toBe(true);
  });
});

describe('checkpoints in the turn lifecycle', () => {
  let core: HostCore;
  afterEach(async () => {
    await core.close();
  });

  it('records the trees around each turn and answers chat.turnDiff with what the turn changed', async () => {
    // A "turn" that writes into the repository while it runs: the test edits during the wait step.
    const script = ScriptFileSchema.parse({
      replies: [
        {
          match: 'edit',
          steps: [
            { type: 'text', text: 'editing' },
            { type: 'wait', ms: 60_000 },
          ],
        },
        { steps: [{ type: 'text', text: 'ok' }] },
      ],
    });
    core = await openCore(path.join(data.dir, 'host'), {
      providers: [new ScriptProvider({ kind: 'claude', script })],
      policy: new HostPolicy({ roots: [data.dir] }),
    });
    const client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c1', cwd: repo });
    const before = userState();
    const sent = await client.ok('chat.send', { chatId: 'c1', text: 'edit please' });
    await until(() => core.session('c1').thread.items.some((i) => i.kind === 'assistant'), 'the turn to run');
    const turnAtStart = core.session('c1').thread.get(sent.turnId);
    expect(turnAtStart).toMatchObject({ kind: 'turn', state: 'running', checkpoint: expect.stringMatching(/^[0-9a-f]{40}$/) });

    writeFileSync(path.join(repo, 'agent.txt'), 'written by the agent\n');
    // While it runs, the diff is what changed so far.
    const live = await client.ok('chat.turnDiff', { chatId: 'c1', turnId: sent.turnId });
    expect(live.diff.files.map((f: { path: string }) => f.path)).toEqual(['agent.txt']);

    await client.ok('chat.cancel', { chatId: 'c1' });
    await until(() => {
      const turn = core.session('c1').thread.get(sent.turnId);
      return turn?.kind === 'turn' && turn.checkpointAfter !== undefined;
    }, 'the after-turn checkpoint');
    const turn = ChatTurnItemSchema.parse(core.session('c1').thread.get(sent.turnId));
    expect(turn.state).toBe('aborted');

    // Written after the turn settled: not the turn's.
    writeFileSync(path.join(repo, 'later.txt'), 'after\n');
    const { diff } = await client.ok('chat.turnDiff', { chatId: 'c1', turnId: sent.turnId });
    expect(ChatCheckpointDiffSchema.parse(diff)).toEqual({
      files: [{ path: 'agent.txt', kind: 'add', added: 1, deleted: 0, diff: expect.stringContaining('+written by the agent') }],
      truncated: false,
    });

    // The next turn starts from where this one ended plus the user's edit.
    const next = await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    await until(() => {
      const item = core.session('c1').thread.get(next.turnId);
      return item?.kind === 'turn' && item.checkpointAfter !== undefined;
    }, "the second turn's checkpoints");
    expect(await client.ok('chat.turnDiff', { chatId: 'c1', turnId: next.turnId })).toEqual({ diff: { files: [], truncated: false } });

    // The user's index, branches and HEAD are as they were; status only shows the files written here.
    const after = userState();
    expect({ ...after, status: undefined }).toEqual({ ...before, status: undefined });
    const lines = (status: string) => status.split('\n').filter(Boolean).sort();
    expect(lines(after.status)).toEqual([...lines(before.status), '?? agent.txt', '?? later.txt'].sort());
  });

  it('gives no checkpoints and a null diff for a folder outside git', async () => {
    core = await openCore(path.join(data.dir, 'host'));
    const client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'c1' });
    const sent = await client.ok('chat.send', { chatId: 'c1', text: 'hi' });
    await idle(core, 'c1');
    expect(core.session('c1').thread.get(sent.turnId)).not.toHaveProperty('checkpoint');
    expect(await client.ok('chat.turnDiff', { chatId: 'c1', turnId: sent.turnId })).toEqual({ diff: null });
  });
});
