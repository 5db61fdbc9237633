// New git worktrees for chats: `chat.create` and `chat.fork` with `worktree: {branch?}` start the
// chat in a new worktree of the folder's repository, on a new branch made from its HEAD, so the
// agent's work stays apart from the person's own checkout.
//
// Where: beside the repository, `<parent>/<name>-worktrees/<branch>`, and only when that is inside
// the policy's roots (checked before anything is made, symlinks resolved); otherwise `folder-denied`
// naming the allowed folders. The chat works in the same subfolder of the new tree as it asked for.
//
// The repository is never trusted (its `.git/config` is the agent's to write, see checkpoints.ts):
// git runs with no system or global config, no hooks and no fsmonitor, and the checkout that fills
// the new tree runs with every filter driver its config defines (read in the new worktree itself, so
// a branch-conditional include is seen) blanked out, so no smudge or process filter starts. Files a
// filter would have changed (git-lfs pointers, say) are checked out as stored. Submodules are not
// checked out. The branch name is the host's own check, not git's: letters, digits and `._/-`
// (contracts/worktree.ts).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ProtocolError } from '../../contracts/errors.ts';
import { worktreeBranchProblem, type Worktree } from '../../contracts/index.ts';
import type { HostPolicy } from '../policy.ts';
import { git, workTreeOf } from './checkpoints.ts';

/** Why a branch name is not one this host makes, or null (the rule is shared with clients). */
export const branchProblem = worktreeBranchProblem;

/** A free-looking default branch name: `tether/<words of the title>-<4 hex>`. */
export function defaultBranch(title: string | undefined): string {
  const words = (title ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `tether/${words || 'chat'}-${randomBytes(2).toString('hex')}`;
}

export interface MadeWorktree {
  worktree: Worktree;
  /** Where the chat works: the asked folder's place in the new tree. */
  cwd: string;
}

/**
 * Makes a worktree on a new branch for a chat that asked to work in `cwd` (already admitted by the
 * policy): `chat-unsupported` outside a repository, `folder-denied` when the new tree would be
 * outside the roots, `bad-request` for a branch name this host does not make or one taken.
 */
export async function makeWorktree(policy: HostPolicy, cwd: string, asked: string | undefined, title?: string): Promise<MadeWorktree> {
  const branch = asked?.trim() || defaultBranch(title);
  const problem = branchProblem(branch);
  if (problem) throw new ProtocolError('bad-request', problem);
  const top = await workTreeOf(cwd);
  if (!top) throw new ProtocolError('chat-unsupported', `${cwd} is in no git repository, so no worktree can be made from it`);
  const sub = path.relative(top, path.resolve(cwd));
  const target = path.join(path.dirname(top), `${path.basename(top)}-worktrees`, ...branch.split('/'));
  // Inside the roots before anything is made (a planted symlink on the way is resolved and judged).
  try {
    policy.admitFolder(target);
  } catch (error) {
    // Where the tree would go, then the policy's own reason (outside the roots, a name too long, ...).
    const reason = error instanceof ProtocolError ? error.message : String(error);
    throw new ProtocolError('folder-denied', `A worktree of ${top} goes beside it, in ${target}: ${reason}`);
  }
  if (existsSync(target)) throw new ProtocolError('bad-request', `${target} already exists; name another branch`);
  const branches = (await git(top, ['for-each-ref', '--format=%(refname:short)', 'refs/heads'])).split('\n');
  if (branches.includes(branch)) throw new ProtocolError('bad-request', `The branch ${branch} already exists in ${top}; name another`);
  const head = await git(top, ['rev-parse', '--verify', '-q', 'HEAD^{commit}']).then(
    (out) => out.trim(),
    () => '',
  );
  if (!head) throw new ProtocolError('chat-unsupported', `${top} has no commit yet, so no worktree can be made from it`);
  const from = await git(top, ['symbolic-ref', '-q', '--short', 'HEAD']).then(
    (out) => out.trim(),
    () => '',
  );
  try {
    // No checkout here: the files are filled in below, with the filters the new tree's config names turned off.
    await git(top, ['worktree', 'add', '--no-checkout', '-b', branch, target, head]);
    const blanked = await blankFilters(target);
    // GIT_WORK_TREE: a `core.worktree` in the shared config must not send these files anywhere else.
    await git(target, [...blanked, '-c', 'submodule.recurse=false', 'read-tree', '--reset', '-u', 'HEAD'], { GIT_WORK_TREE: target });
  } catch (error) {
    throw new ProtocolError('internal', `git could not make the worktree ${target}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const worktree: Worktree = { path: target, branch, from: { ...(from ? { branch: from } : {}), commit: head }, madeAt: Date.now() };
  return { worktree, cwd: sub ? path.join(target, sub) : target };
}

/** `-c filter.<driver>.{smudge,clean,process}=` for every filter driver the config of `dir` defines. */
async function blankFilters(dir: string): Promise<string[]> {
  // Reading config runs nothing; its exit is 1 when no filter is defined.
  const out = await git(dir, ['config', '--null', '--name-only', '--get-regexp', '^filter\\.'], { GIT_WORK_TREE: dir }).catch(() => '');
  const drivers = new Set<string>();
  for (const name of out.split('\0')) {
    const match = /^filter\.(.+)\.[^.]+$/s.exec(name);
    if (match) drivers.add(match[1]);
  }
  return [...drivers].flatMap((driver) =>
    ['smudge', 'clean', 'process'].flatMap((key) => ['-c', `filter.${driver}.${key}=`]).concat(['-c', `filter.${driver}.required=false`]),
  );
}
