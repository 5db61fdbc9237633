// The sessions people run in their own terminal, as a client holds them: folded from the lobby's
// `session.status`, `session.items` and `session.approvals` events (and `session.list` /
// `session.history` answers) into one state a view draws: each session's status, its items by id
// in the order they happened (a transcript line can come late), and the approvals it waits on (always the host's whole list for a session).
import {
  SessionApprovalsEventSchema,
  SessionItemsEventSchema,
  TerminalSessionSchema,
  TimeOrderedItems,
  type ApprovalRequest,
  type ChatItem,
  type SessionListResult,
  type TerminalSession,
} from '../contracts/index.ts';
import type { EventFrame } from './live-socket.ts';

export class TerminalSessionsView {
  readonly sessions = new Map<string, TerminalSession>();
  private readonly approvals = new Map<string, ApprovalRequest[]>();
  private readonly items = new Map<string, TimeOrderedItems>();

  /** Takes one lobby event; answers the session it changed, or null for an event that is not about terminal sessions (or does not parse). */
  take(frame: EventFrame): string | null {
    switch (frame.event) {
      case 'session.status': {
        const parsed = TerminalSessionSchema.safeParse(frame.payload);
        if (!parsed.success) return null;
        this.sessions.set(parsed.data.sessionId, parsed.data);
        return parsed.data.sessionId;
      }
      case 'session.items': {
        const parsed = SessionItemsEventSchema.safeParse(frame.payload);
        if (!parsed.success) return null;
        this.upsert(parsed.data.sessionId, parsed.data.items);
        return parsed.data.sessionId;
      }
      case 'session.approvals': {
        const parsed = SessionApprovalsEventSchema.safeParse(frame.payload);
        if (!parsed.success) return null;
        this.approvals.set(parsed.data.sessionId, parsed.data.approvals);
        return parsed.data.sessionId;
      }
      default:
        return null;
    }
  }

  /** A `session.list` answer: the whole state of every session (their items stay as they are). */
  load(list: SessionListResult): void {
    this.sessions.clear();
    for (const session of list.sessions) this.sessions.set(session.sessionId, session);
    this.approvals.clear();
    for (const approval of list.approvals) this.approvals.set(approval.sessionId, [...(this.approvals.get(approval.sessionId) ?? []), approval]);
  }

  /** Items of a session as `session.history` answered them, or as events brought them. */
  upsert(sessionId: string, items: readonly ChatItem[]): void {
    let held = this.items.get(sessionId);
    if (!held) this.items.set(sessionId, (held = new TimeOrderedItems()));
    for (const item of items) held.set(item);
  }

  itemsOf(sessionId: string): ChatItem[] {
    return [...(this.items.get(sessionId)?.values() ?? [])];
  }

  approvalsOf(sessionId: string): ApprovalRequest[] {
    return this.approvals.get(sessionId) ?? [];
  }
}
