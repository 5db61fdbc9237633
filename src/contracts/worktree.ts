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
