import { z } from 'zod';

// Tasks between chats. Not in the event table: a host that runs tasks composes
// TaskChangedEventSchema into its own protocol.

export const TaskStatusSchema = z.enum(['open', 'done', 'failed', 'cancelled']);
export type TaskStatus = z.output<typeof TaskStatusSchema>;

export const TaskResultSchema = z.object({
  text: z.string(),
  source: z.enum(['done', 'turn', 'exit']),
  at: z.number(),
});
export type TaskResult = z.output<typeof TaskResultSchema>;

export const TaskBackgroundSchema = z.object({
  turnId: z.string(),
  itemIds: z.array(z.string()),
  commands: z.array(z.string()),
});
export type TaskBackground = z.output<typeof TaskBackgroundSchema>;

export const TaskPausedSchema = z.object({
  kind: z.enum(['usage', 'overload']),
  until: z.number().optional(),
});
export type TaskPaused = z.output<typeof TaskPausedSchema>;

export const TaskSchema = z.object({
  id: z.string().min(1),
  projectId: z.string().min(1),
  parentId: z.string().min(1),
  childId: z.string().min(1),
  title: z.string(),
  prompt: z.string(),
  status: TaskStatusSchema,
  result: TaskResultSchema.nullable(),
  createdAt: z.number(),
  settledAt: z.number().nullable(),
  // Whether the parent still has to be woken with the result.
  wake: z.enum(['pending', 'sent', 'none']),
  batchId: z.string().min(1).optional(),
  requiresTaskTurn: z.boolean().optional(),
  background: TaskBackgroundSchema.optional(),
  paused: TaskPausedSchema.optional(),
});
export type Task = z.output<typeof TaskSchema>;

export const TaskChangedEventSchema = z.object({
  task: TaskSchema,
});
export type TaskChangedEvent = z.output<typeof TaskChangedEventSchema>;
