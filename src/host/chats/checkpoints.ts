// Turn checkpoints: when a chat's folder is inside a git work tree, the whole tree is snapshotted
// before and after each turn, and a turn's diff is the difference of its two snapshots.
//
// The user's repository is read, never changed where they look, and never trusted: its
// `.git/config` is the agent's to write (it may edit files in its folder), and git runs programs
// that config names (core.fsmonitor on every index refresh, filter drivers on `add`, hooks such as
// reference-transaction on `update-ref`, diff.external and textconv on diffs). So a snapshot runs
// in a private bare repository of the host's (`<data>/checkpoints/<hash>.git`: GIT_DIR, with the
// user's folder as GIT_WORK_TREE), whose config the host writes again before each use, which reads
// the user's objects through `objects/info/alternates` and writes only its own; with no system or
// global config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null) and `-c core.fsmonitor=false -c
// core.hooksPath=/dev/null` on every call. The work tree's .gitattributes still apply, but a
// `filter=` there names a driver no config this git reads defines, so none runs. What is read from
// the user's repository itself (its top, its index to seed from, its branches) is done by commands
// that run no program whatever its config says (rev-parse, for-each-ref), with the same overrides.
//
// The snapshot goes through a private index file (`GIT_INDEX_FILE`, seeded once from a copy of the
// user's index so unchanged files are not hashed again), `git add -A` into it, `git write-tree`. The
// trees are kept from garbage collection by a private ref per chat in the private repository,
// `refs/tether/checkpoints/<hash>`, a chain of commits nobody checks out. (A blob only the user's
// index held, pruned later by their gc, makes that old diff answer null.)
//
// Snapshots of one folder run in the order they were asked for (a turn's "after" before the next
// turn's "before"), and one private index is used by one git at a time.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import type { ChatCheckpointDiff, ChatCheckpointFile } from '../../contracts/index.ts';

/** Where a diff is cut, so a reply stays far below a link frame. */
export const CHECKPOINT_DIFF_LIMITS = {
  /** Files listed; past it `truncated` is set. */
  files: 300,
  /** Changed lines of one file past which its diff is omitted as too large. */
  fileLines: 5_000,
  /** Characters of one file's diff past which it is omitted as too large. */
  fileChars: 256 * 1024,
  /** Characters of all diffs together; files past it are listed with their diff omitted. */
  totalChars: 4 * 1024 * 1024,
} as const;

const GIT_TIMEOUT_MS = 60_000;
const PATCH_BUFFER = 64 * 1024 * 1024;

export class Checkpoints {
  private readonly dir: string;
  private readonly dataDir: string;
  private readonly chains = new Map<string, Promise<unknown>>();
  /** The last snapshot each ref points at: an unchanged tree adds no commit. */
  private readonly heads = new Map<string, { tree: string; commit: string }>();

  constructor(dataDir: string) {
    this.dataDir = path.resolve(dataDir);
    this.dir = path.join(this.dataDir, 'checkpoints');
  }

  /**
   * The tree of the work tree `cwd` is in, as it is now, kept alive under the chat's private ref;
   * null when `cwd` is in no git work tree or git fails. Never rejects.
   */
  take(chatId: string, cwd: string): Promise<string | null> {
    return this.serial(`cwd:${cwd}`, async () => {
      const top = await workTreeOf(cwd);
      // A home folder kept in git (dotfiles) is no project: `add -A` there would hash everything.
      if (!top || top === path.resolve(homedir())) return null;
      return this.serial(`top:${top}`, () => this.snapshot(chatId, top));
    }).catch(() => null);
  }

  /** The difference between two snapshots of `cwd`'s work tree; null when git cannot tell. Never rejects. */
  async diff(cwd: string, before: string, after: string): Promise<ChatCheckpointDiff | null> {
    try {
      const top = await workTreeOf(cwd);
      if (!top) return null;
      const repo = await this.privateRepo(top);
      return await treeDiff((args) => git(top, args, repo.env), before, after);
    } catch {
      return null;
    }
  }

  /** The local branches of the repository `cwd` is in; null outside git. Never rejects. */
  async branches(cwd: string): Promise<string[] | null> {
    try {
      const top = await workTreeOf(cwd);
      if (!top) return null;
      return (await git(top, ['for-each-ref', '--format=%(refname:short)', 'refs/heads'])).split('\n').filter(Boolean);
    } catch {
      return null;
    }
  }

  /**
   * The host's own bare repository for the work tree `top`: made once, its config and excludes
   * written again on every use (the folder may be where an agent can write), its objects borrowed
   * from the user's repository. Answers the environment that points git at it.
   */
  private async privateRepo(top: string): Promise<{ env: Record<string, string> }> {
    const key = hash(top);
    const gitDir = path.join(this.dir, `${key}.git`);
    await mkdir(path.join(gitDir, 'objects', 'info'), { recursive: true });
    await mkdir(path.join(gitDir, 'refs'), { recursive: true });
    await mkdir(path.join(gitDir, 'info'), { recursive: true });
    const common = (await git(top, ['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim();
    const userExclude = await readFile(path.join(common, 'info', 'exclude'), 'utf8').catch(() => '');
    // What a fresh `git init --bare` writes, and nothing a program could hide in.
    await writeFile(path.join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = false\n\thooksPath = /dev/null\n');
    await writeFile(path.join(gitDir, 'HEAD'), 'ref: refs/heads/tether-none\n');
    await writeFile(path.join(gitDir, 'objects', 'info', 'alternates'), `${path.join(common, 'objects')}\n`);
    // The user's own ignore rules of this repository still hold (.gitignore files are read from the tree).
    await writeFile(path.join(gitDir, 'info', 'exclude'), userExclude);
    await rm(path.join(gitDir, 'info', 'attributes'), { force: true });
    return { env: { GIT_DIR: gitDir, GIT_WORK_TREE: top } };
  }

  private async snapshot(chatId: string, top: string): Promise<string> {
    const key = hash(top);
    const index = path.join(this.dir, `${key}.index`);
    await mkdir(this.dir, { recursive: true });
    const repo = await this.privateRepo(top);
    const env = { ...repo.env, GIT_INDEX_FILE: index };
    // The host's own files never go into a snapshot of a repository they happen to sit in.
    const inside = path.relative(top, this.dataDir);
    const exclude = inside && !inside.startsWith('..') && !path.isAbsolute(inside) ? [`:(exclude,literal)${inside}`] : [];
    if (!existsSync(index)) await this.seed(top, index);
    try {
      await git(top, ['add', '-A', '--', '.', ...exclude], env);
    } catch {
      // A seeded index git cannot use (split or sparse index, another version): start from nothing.
      await rm(index, { force: true });
      await git(top, ['add', '-A', '--', '.', ...exclude], env);
    }
    const tree = (await git(top, ['write-tree'], env)).trim();
    await this.keep(top, chatId, tree, repo.env);
    return tree;
  }

  /** Copies the user's index (read only) so the first `git add -A` reuses its file stats. */
  private async seed(top: string, index: string): Promise<void> {
    try {
      const own = path.resolve(top, (await git(top, ['rev-parse', '--git-path', 'index'])).trim());
      await copyFile(own, index);
    } catch {
      // no index yet (a fresh repository): git builds ours from nothing
    }
  }

  /** Chains `tree` onto the chat's private ref so git's garbage collection keeps it. */
  private async keep(top: string, chatId: string, tree: string, env: Record<string, string>): Promise<void> {
    const ref = `refs/tether/checkpoints/${hash(chatId)}`;
    const key = `${top}\0${ref}`;
    let head = this.heads.get(key);
    if (head?.tree === tree) return;
    if (!head) {
      const commit = (await git(top, ['rev-parse', '-q', '--verify', `${ref}^{commit}`], env).catch(() => '')).trim();
      const known = commit ? (await git(top, ['rev-parse', `${commit}^{tree}`], env)).trim() : '';
      head = commit ? { tree: known, commit } : undefined;
      if (head?.tree === tree) {
        this.heads.set(key, head);
        return;
      }
    }
    const commit = (
      await git(top, ['commit-tree', '--no-gpg-sign', tree, ...(head ? ['-p', head.commit] : []), '-m', 'tether checkpoint'], { ...env, ...IDENTITY })
    ).trim();
    await git(top, ['update-ref', '-m', 'tether checkpoint', ref, commit], env);
    this.heads.set(key, { tree, commit });
  }

  private serial<T>(key: string, run: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.then(run, run);
    const tail = next.catch(() => undefined);
    this.chains.set(key, tail);
    void tail.then(() => {
      if (this.chains.get(key) === tail) this.chains.delete(key);
    });
    return next;
  }
}

const IDENTITY = {
  GIT_AUTHOR_NAME: 'Tether',
  GIT_AUTHOR_EMAIL: 'tether@localhost',
  GIT_COMMITTER_NAME: 'Tether',
  GIT_COMMITTER_EMAIL: 'tether@localhost',
};

/**
 * Whether `cwd` may be in a git work tree: a `.git` in it or in a folder above. Cheap and without
 * running git, so a chat outside any repository starts its turns at once.
 */
export function mayBeInWorkTree(cwd: string): boolean {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.git'))) return true;
    if (path.dirname(dir) === dir) return false;
  }
}

/**
 * The top of the work tree `cwd` is in, or null (not a repository, a bare one, or no git). It must
 * be the folder holding the nearest `.git` above `cwd`: a `core.worktree` in the repository's config
 * that points elsewhere (`/`, say, to have the whole disk hashed) is refused.
 */
export async function workTreeOf(cwd: string): Promise<string | null> {
  try {
    const out = (await git(cwd, ['rev-parse', '--show-toplevel'])).trim();
    if (!out) return null;
    const top = path.resolve(out);
    let holder = realpathSync.native(path.resolve(cwd));
    while (!existsSync(path.join(holder, '.git'))) {
      if (path.dirname(holder) === holder) return null;
      holder = path.dirname(holder);
    }
    return realpathSync.native(top) === holder ? top : null;
  } catch {
    return null;
  }
}

interface Change {
  kind: ChatCheckpointFile['kind'];
  path: string;
  /** The path before, for a rename (the patch needs both sides). */
  from?: string;
  added: number;
  deleted: number;
  binary: boolean;
}

async function treeDiff(run: (args: string[]) => Promise<string>, before: string, after: string): Promise<ChatCheckpointDiff> {
  const base = ['diff-tree', '-r', '-z', '-M', '--no-ext-diff', '--no-textconv'];
  const [status, numstat] = await Promise.all([run([...base, '--name-status', before, after]), run([...base, '--numstat', before, after])]);
  const changes = readChanges(status, numstat);
  const listed = changes.slice(0, CHECKPOINT_DIFF_LIMITS.files);
  const wanted = listed.filter((c) => !c.binary && c.added + c.deleted <= CHECKPOINT_DIFF_LIMITS.fileLines);
  const patches = new Map<Change, string>();
  if (wanted.length > 0) {
    const spec = wanted.flatMap((c) => (c.from ? [c.from, c.path] : [c.path])).map((p) => `:(literal)${p}`);
    const patch = await run([
      'diff-tree',
      '-r',
      '-p',
      '-M',
      '--no-ext-diff',
      '--no-textconv',
      '--no-color',
      '--src-prefix=a/',
      '--dst-prefix=b/',
      before,
      after,
      '--',
      ...spec,
    ]);
    // One `diff --git` section per changed file, in the same order as the lists above.
    const sections = splitPatch(patch);
    if (sections.length === wanted.length) wanted.forEach((change, i) => patches.set(change, sections[i]));
  }
  let total = 0;
  const files = listed.map((change): ChatCheckpointFile => {
    const file: ChatCheckpointFile = { path: change.path, kind: change.kind, added: change.added, deleted: change.deleted, diff: '' };
    if (change.binary) return { ...file, omitted: 'binary' };
    const diff = patches.get(change);
    if (diff === undefined || diff.length > CHECKPOINT_DIFF_LIMITS.fileChars || total + diff.length > CHECKPOINT_DIFF_LIMITS.totalChars) {
      return { ...file, omitted: 'too-large' };
    }
    total += diff.length;
    return { ...file, diff };
  });
  return { files, truncated: changes.length > listed.length };
}

/** Joins `--name-status -z` and `--numstat -z` (same order) into one list. */
function readChanges(status: string, numstat: string): Change[] {
  const s = status.split('\0');
  const n = numstat.split('\0');
  const out: Change[] = [];
  let i = 0;
  let j = 0;
  while (i < s.length && s[i] !== '') {
    const code = s[i++];
    const renamed = code.startsWith('R') || code.startsWith('C');
    const from = renamed ? s[i++] : undefined;
    const to = s[i++];
    // numstat: "added\tdeleted\tpath" or, for a rename, "added\tdeleted\t" then old and new paths.
    const [added = '0', deleted = '0'] = (n[j++] ?? '').split('\t');
    if (renamed) j += 2;
    const binary = added === '-' || deleted === '-';
    const kind: ChatCheckpointFile['kind'] = code === 'A' ? 'add' : code === 'D' ? 'delete' : 'update';
    out.push({ kind, path: to, ...(from !== undefined ? { from } : {}), added: binary ? 0 : Number(added), deleted: binary ? 0 : Number(deleted), binary });
  }
  return out;
}

function splitPatch(patch: string): string[] {
  if (patch === '') return [];
  const sections: string[] = [];
  let start = 0;
  for (;;) {
    const next = patch.indexOf('\ndiff --git ', start);
    if (next === -1) {
      sections.push(patch.slice(start));
      return sections;
    }
    sections.push(patch.slice(start, next + 1));
    start = next + 1;
  }
}

/**
 * Runs git so that no config can make it start a program: command-line settings win over every
 * config file, and the only config files read are the repository's (the host's private one for
 * anything that hashes, writes or diffs).
 */
const SAFE_SETTINGS = ['-c', 'core.quotepath=off', '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'core.untrackedCache=false'];

export function git(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...SAFE_SETTINGS, ...args],
      {
        cwd,
        env: { ...gitEnv(), ...env },
        encoding: 'utf8',
        maxBuffer: PATCH_BUFFER,
        timeout: GIT_TIMEOUT_MS,
        windowsHide: true,
      },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

/** The host's environment without the GIT_* variables that would point git elsewhere. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('GIT_')) env[name] = value;
  // Reading never takes the user's index lock, nor refreshes their index.
  env.GIT_OPTIONAL_LOCKS = '0';
  env.GIT_TERMINAL_PROMPT = '0';
  // No system or global config (the home folder may be a chat's folder, so ~/.gitconfig the agent's to write).
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_CONFIG_GLOBAL = '/dev/null';
  env.GIT_ATTR_NOSYSTEM = '1';
  env.GIT_NO_REPLACE_OBJECTS = '1';
  env.GIT_PAGER = 'cat';
  return env;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}
