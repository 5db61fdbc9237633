// New chats and forks in a new git worktree on a new branch, and how a hostile repository or
// client meets it: the tree is made beside the repository only inside the roots, the branch name is
// the host's own check (no option, no `..`), and a repository whose config names a smudge filter,
// hooks, an fsmonitor or a `core.worktree` elsewhere gets no program run and no file written outside
// the new tree. The person's own checkout stays on its branch, untouched.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChatForkResultSchema, ChatInfoSchema } from '../../src/contracts/index.ts';
import type { HostCore, ReplyFrame } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { branchProblem } from '../../src/host/chats/worktrees.ts';
import { idle, openCore, TestClient, tempDir } from './harness.ts';
import { RecordingProvider } from './recording-provider.ts';

let home: ReturnType<typeof tempDir>;
let data: ReturnType<typeof tempDir>;
let code: string;
let repo: string;
let core: HostCore;
let client: TestClient;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

beforeEach(async () => {
  home = tempDir('tether-worktrees-home-');
  data = tempDir('tether-worktrees-data-');
  code = path.join(home.dir, 'code');
  repo = path.join(code, 'app');
  mkdirSync(path.join(repo, 'src'), { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(repo, 'src', 'index.js'), 'console.log("hi");\n');
  git(repo, 'add', '.');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@e.test', 'commit', '-q', '-m', 'first');
  core = await openCore(data.dir, { providers: [new RecordingProvider()], policy: new HostPolicy({ home: home.dir, roots: [code], private: [data.dir] }) });
  client = new TestClient(core);
});

afterEach(async () => {
  await core.close();
  home.cleanup();
  data.cleanup();
});

async function refusal(type: string, payload: unknown): Promise<{ code: string; message: string }> {
  const reply: ReplyFrame = await client.request(type, payload);
  if (reply.ok) throw new Error(`${type} answered ${JSON.stringify(reply.result)}`);
  return reply.error;
}

describe('chat.create with a worktree', () => {
  it('starts the chat in a new worktree on a new branch beside the repository, in the same subfolder; the checkout stays on main', async () => {
    const info = ChatInfoSchema.parse(await client.ok('chat.create', { chatId: 'w', cwd: path.join(repo, 'src'), worktree: { branch: 'fix/login' } }));
    const tree = path.join(code, 'app-worktrees', 'fix', 'login');
    expect(info.cwd).toBe(path.join(tree, 'src'));
    expect(readFileSync(path.join(tree, 'src', 'index.js'), 'utf8')).toBe('console.log("hi");\n');
    expect(git(tree, 'symbolic-ref', '--short', 'HEAD')).toBe('fix/login');
    expect(git(tree, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(git(repo, 'rev-parse', 'fix/login')).toBe(git(repo, 'rev-parse', 'main'));
    // Without a name, the host picks one of its own.
    const named = ChatInfoSchema.parse(await client.ok('chat.create', { chatId: 'd', cwd: repo, worktree: {} }));
    expect(named.cwd).toMatch(new RegExp(`^${code}/app-worktrees/tether/chat-[0-9a-f]{4}$`));
  });

  it('refuses branch names that are options, climb, or are taken, and makes nothing', async () => {
    for (const branch of ['--upload-pack=touch /tmp/x', '-b', '../../../etc', 'a..b', 'x.lock', 'a b', 'a//b', 'a/.b', 'trailing/', 'é']) {
      expect(branchProblem(branch), branch).not.toBeNull();
      expect((await refusal('chat.create', { chatId: `b-${branch.length}`, cwd: repo, worktree: { branch } })).code, branch).toBe('bad-request');
    }
    expect(await refusal('chat.create', { chatId: 'taken', cwd: repo, worktree: { branch: 'main' } })).toMatchObject({
      code: 'bad-request',
      message: expect.stringContaining('already exists'),
    });
    expect(existsSync(path.join(code, 'app-worktrees'))).toBe(false);
    expect(git(repo, 'branch', '--format=%(refname:short)')).toBe('main');
  });

  it('refuses a tree that would be outside the roots (the root is the repository itself), naming the allowed folders', async () => {
    await core.close();
    core = await openCore(data.dir, { providers: [new RecordingProvider()], policy: new HostPolicy({ home: home.dir, roots: [repo], private: [data.dir] }) });
    client = new TestClient(core);
    const error = await refusal('chat.create', { chatId: 'out', cwd: repo, worktree: { branch: 'elsewhere' } });
    expect(error.code).toBe('folder-denied');
    expect(error.message).toContain(`goes beside it, in ${path.join(code, 'app-worktrees', 'elsewhere')}`);
    expect(error.message).toContain(`allowed folders: ${repo}`);
    expect(git(repo, 'branch', '--format=%(refname:short)')).toBe('main');
  });

  it("says the policy's own reason when the tree's folder could not be named (a name over 255 bytes), and makes nothing", async () => {
    // A repository named 250 bytes long is a folder the system takes; "<name>-worktrees" beside it is not.
    const long = path.join(code, 'r'.repeat(250));
    mkdirSync(long);
    git(long, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(long, 'a.txt'), 'a\n');
    git(long, 'add', '.');
    git(long, '-c', 'user.name=t', '-c', 'user.email=t@e.test', 'commit', '-q', '-m', 'first');
    const error = await refusal('chat.create', { chatId: 'long', cwd: long, worktree: { branch: 'x' } });
    expect(error.code).toBe('folder-denied');
    expect(error.message).toContain('goes beside it');
    expect(error.message).toMatch(/255 bytes/);
    expect(git(long, 'branch', '--format=%(refname:short)')).toBe('main');
  });

  it('refuses outside a repository, and a resumed session', async () => {
    mkdirSync(path.join(code, 'plain'));
    expect((await refusal('chat.create', { chatId: 'p', cwd: path.join(code, 'plain'), worktree: {} })).code).toBe('chat-unsupported');
    expect((await refusal('chat.create', { chatId: 'r', cwd: repo, resume: '7f0c6e56-3a8a-4a53-9d55-0d8f3f3d8c11', worktree: {} })).code).toBe('bad-request');
  });

  it('runs no program a hostile repository config names (smudge filter, hooks, fsmonitor) and writes nowhere its core.worktree points', async () => {
    const marks = path.join(home.dir, 'marks');
    const elsewhere = path.join(home.dir, 'elsewhere');
    mkdirSync(marks);
    mkdirSync(elsewhere);
    const script = (name: string) => {
      const file = path.join(home.dir, `${name}.sh`);
      writeFileSync(file, `#!/bin/sh\ntouch ${path.join(marks, name)}\ncat\n`);
      chmodSync(file, 0o755);
      return file;
    };
    const hooks = path.join(home.dir, 'hooks');
    mkdirSync(hooks);
    for (const hook of ['post-checkout', 'reference-transaction', 'post-index-change']) {
      writeFileSync(path.join(hooks, hook), `#!/bin/sh\ntouch ${path.join(marks, hook)}\n`);
      chmodSync(path.join(hooks, hook), 0o755);
    }
    // What an agent with edits allowed could write into the repository it works in.
    writeFileSync(path.join(repo, '.gitattributes'), '* filter=evil\n');
    git(repo, 'add', '.gitattributes');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@e.test', 'commit', '-q', '-m', 'attributes');
    git(repo, 'config', 'filter.evil.smudge', script('smudge'));
    git(repo, 'config', 'filter.evil.required', 'true');
    git(repo, 'config', 'filter.other.process', script('process'));
    git(repo, 'config', 'core.hooksPath', hooks);
    git(repo, 'config', 'core.fsmonitor', script('fsmonitor'));
    const info = ChatInfoSchema.parse(await client.ok('chat.create', { chatId: 'h', cwd: repo, worktree: { branch: 'safe' } }));
    expect(readFileSync(path.join(info.cwd, 'src', 'index.js'), 'utf8')).toBe('console.log("hi");\n');
    expect(readdirSync(marks)).toEqual([]);
    // core.worktree pointing elsewhere makes the folder no work tree of its own (as checkpoints judge
    // it): refused, and nothing is written there (the checkout also pins GIT_WORK_TREE to the new tree).
    git(repo, 'config', 'core.worktree', elsewhere);
    expect((await refusal('chat.create', { chatId: 'h2', cwd: repo, worktree: { branch: 'safe-2' } })).code).toBe('chat-unsupported');
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readdirSync(marks)).toEqual([]);
  });
});

describe('chat.fork with a worktree', () => {
  it('forks into a new worktree (refused before), carrying the conversation as text', async () => {
    await client.ok('chat.create', { chatId: 'c', cwd: repo });
    const sent = await client.ok('chat.send', { chatId: 'c', text: 'first idea' });
    await idle(core, 'c');
    const { branch } = await client.ok('chat.forkInfo', { chatId: 'c', turnId: sent.turnId });
    const result = ChatForkResultSchema.parse(await client.ok('chat.fork', { chatId: 'c', turnId: sent.turnId, worktree: { branch } }));
    const tree = path.join(code, 'app-worktrees', ...branch.split('/'));
    expect(result.worktree).toMatchObject({ path: tree, branch, from: { branch: 'main', commit: git(repo, 'rev-parse', 'main') } });
    expect(result.info.cwd).toBe(tree);
    // No CLI fork of a session kept under the other folder: the fork starts fresh with the transcript.
    expect(result.info.agentSessionId).toBeNull();
    expect(git(tree, 'symbolic-ref', '--short', 'HEAD')).toBe(branch);
  });
});
