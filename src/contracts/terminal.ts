// Terminal sessions: the sessions a person runs in their own terminal, which the host learns of
// through the CLI's hooks and reads from the CLI's own transcript. The agent-contracts shapes
// (AgentInfo, SessionStatusEvent, ApprovalRequest, ...) are in agent.ts; this file composes them into
// the requests and events Tether carries (`session.*`), with the conversation as chat items so
// clients draw a terminal session with the same views as a chat.
import { z } from 'zod';
import { AgentKindSchema, ApprovalRequestSchema, SessionIdSchema, SessionStatusEventSchema } from './agent.ts';
import { ChatItemSchema } from './chat.ts';

/**
 * One terminal session as the host publishes it: its status event (`agent` null once the host
 * forgot the CLI's session) and the folder the CLI runs in, as the CLI reported it.
 */
export const TerminalSessionSchema = SessionStatusEventSchema.extend({
  cwd: z.string(),
});
export type TerminalSession = z.output<typeof TerminalSessionSchema>;

/** `session.list`: every session the host knows, and every approval one of them waits on. */
export const SessionListResultSchema = z.object({
  sessions: z.array(TerminalSessionSchema),
  approvals: z.array(ApprovalRequestSchema),
});
export type SessionListResult = z.output<typeof SessionListResultSchema>;

/** `session.history`: the conversation read from the CLI's transcript, its newest `limit` items. */
export const SessionHistoryPayloadSchema = z.object({
  sessionId: SessionIdSchema,
  limit: z.int().min(1).max(1000).optional(),
});
export type SessionHistoryPayload = z.output<typeof SessionHistoryPayloadSchema>;

export const SessionHistoryResultSchema = z.object({
  items: z.array(ChatItemSchema),
});
export type SessionHistoryResult = z.output<typeof SessionHistoryResultSchema>;

/** `session.items`: items the transcript added or changed since, upserted by id like a chat's `item` events. */
export const SessionItemsEventSchema = z.object({
  sessionId: SessionIdSchema,
  items: z.array(ChatItemSchema),
});
export type SessionItemsEvent = z.output<typeof SessionItemsEventSchema>;

/** Where a CLI's hooks stand in one config folder (`hooks.status`, `tether host hooks status`). */
export const HooksStateSchema = z.object({
  kind: AgentKindSchema,
  /** The config folder the hooks live in (`settings.json` inside it). */
  configDir: z.string(),
  installed: z.boolean(),
  /** The CLI reads hooks at all; false: its sessions show with their status only, if at all. */
  supported: z.boolean(),
  /** Codex: it runs the host's hooks (it runs a hook only once trusted, by its hash); absent for CLIs without such a step. */
  trusted: z.boolean().optional(),
});
export type HooksState = z.output<typeof HooksStateSchema>;

export const HooksStatusResultSchema = z.object({
  hooks: z.array(HooksStateSchema),
});
export type HooksStatusResult = z.output<typeof HooksStatusResultSchema>;

/** `hooks.set`: install (the person's consent, from the app) or remove the host's hooks for one CLI. */
export const HooksSetPayloadSchema = z.object({
  kind: AgentKindSchema,
  installed: z.boolean(),
});
export type HooksSetPayload = z.output<typeof HooksSetPayloadSchema>;
