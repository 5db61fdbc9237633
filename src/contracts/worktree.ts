import { z } from 'zod';

export const WorktreeWorkSchema = z.object({
  changed: z.int().nonnegative(),
  untracked: z.int().nonnegative(),
  ahead: z.int().nonnegative(),
  // A rebase, merge, … stopped halfway.
  operation: z.string().optional(),
  // Commits to catch up on; not work of this tree, so optional and apart.
  behind: z.int().nonnegative().optional(),
});
export type WorktreeWork = z.output<typeof WorktreeWorkSchema>;

export const WorktreeOriginSchema = z.object({
  // Absent when HEAD was detached.
  branch: z.string().optional(),
  commit: z.string(),
});
export type WorktreeOrigin = z.output<typeof WorktreeOriginSchema>;

export const WorktreeSchema = z.object({
  path: z.string(),
  branch: z.string(),
  from: WorktreeOriginSchema.optional(),
  projectId: z.string().optional(),
  nodeId: z.string().optional(),
  madeAt: z.number().optional(),
  missing: z.boolean().optional(),
  locked: z.boolean().optional(),
  // Only when the worktree was inspected.
  work: WorktreeWorkSchema.optional(),
});
export type Worktree = z.output<typeof WorktreeSchema>;

// Tether addition: the branch names a Tether host makes a worktree on (its own rule, stricter than
// git's, so no name can be read as an option or climb out of the worktrees folder it names).
const WORKTREE_BRANCH = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,119}$/;

/** Why a branch name is not one a Tether host makes, or null. */
export function worktreeBranchProblem(name: string): string | null {
  if (!WORKTREE_BRANCH.test(name)) return 'A branch name is 1 to 120 letters, digits, ".", "_", "/" or "-", starting with a letter or digit';
  if (name.includes('..') || name.includes('//') || name.endsWith('/') || name.endsWith('.') || name.endsWith('.lock') || name.includes('/.')) {
    return 'A branch name may not hold "..", "//" or "/.", nor end in "/", "." or ".lock"';
  }
  return null;
}
