// Terminal sessions: the sessions a person runs in their own terminal, which the host learns of
// through the CLI's hooks and reads from the CLI's own transcript. The agent-contracts shapes
// (AgentInfo, SessionStatusEvent, ApprovalRequest, ...) are in agent.ts; this file composes them into
// the requests and events Tether carries (`session.*`), with the conversation as chat items so
// clients draw a terminal session with the same views as a chat.
import { z } from 'zod';
import { AgentKindSchema, ApprovalRequestSchema, SessionIdSchema, SessionStatusEventSchema } from './agent.ts';
import { ChatItemSchema, type ChatItem } from './chat.ts';

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

/**
 * A terminal session's items by id, in the order they happened. A known id keeps its place when it
 * changes; a new one goes after every item not newer than it. Why not the order lines come in: a
 * CLI's transcript is a chain by parent id, not a log in order, and Claude Code under load appends
 * the prompt's line after the reply's (seen in CI, 2.1.197). The host reads transcripts into one and
 * a client folds `session.items` into one, so both draw the prompt before its answer.
 */
export class TimeOrderedItems {
  private byId = new Map<string, ChatItem>();
  private newest = -Infinity;

  get size(): number {
    return this.byId.size;
  }

  get(id: string): ChatItem | undefined {
    return this.byId.get(id);
  }

  values(): IterableIterator<ChatItem> {
    return this.byId.values();
  }

  set(item: ChatItem): void {
    if (this.byId.has(item.id) || item.createdAt >= this.newest) {
      this.byId.set(item.id, item);
      this.newest = Math.max(this.newest, item.createdAt);
      return;
    }
    // Rare (a line written late), so a rebuild is fine: it goes after the last one not newer.
    const all = [...this.byId.values()];
    all.splice(all.findLastIndex((held) => held.createdAt <= item.createdAt) + 1, 0, item);
    this.byId = new Map(all.map((held) => [held.id, held]));
  }
}

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
