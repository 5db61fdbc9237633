// The audit log: what happened, by whom, on which host and chat, and when. Everyone writes through
// `record` (sign-ins, pairings, grant and team changes, requests that act on a machine); a host's
// owner reads it a page at a time, newest first. Never message text, tokens or passwords: `detail`
// holds only ids and names.
import { and, desc, eq, lt } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { requestsWhere, type RequestType } from '../../contracts/index.ts';
import { log } from '../log.ts';
import { audit } from './schema.ts';
import { failureText } from './failures.ts';

export interface AuditEntry {
  /** A user id, `host:<id>`, or null when nobody is signed in (a failed sign-in). */
  actor: string | null;
  /** `signin`, `grant.created`, `chat.send`, … */
  action: string;
  sessionId?: string | null;
  ip?: string | null;
  hostId?: string | null;
  chatId?: string | null;
  /** Ids and names that explain the entry; serialized to JSON. */
  detail?: Record<string, unknown> | null;
}

export interface AuditRecord {
  id: number;
  at: number;
  actor: string | null;
  sessionId: string | null;
  ip: string | null;
  action: string;
  hostId: string | null;
  chatId: string | null;
  detail: Record<string, unknown> | null;
}

export const AUDIT_PAGE_MAX = 100;

/**
 * The requests recorded with who, which host and chat (never their text): every one that acts on the
 * machine, and the reads of the owner's accounts (the registry's `audited`).
 */
export const AUDITED: ReadonlySet<RequestType> = requestsWhere((rule) => rule.audited);

/**
 * Writes one entry. Never throws: losing an audit line must not fail the action it describes, so a
 * failure is logged instead (objects call this inside ctx.waitUntil, off the frame's path).
 */
export async function record(db: D1Database, entry: AuditEntry): Promise<void> {
  try {
    await drizzle(db)
      .insert(audit)
      .values({
        at: Date.now(),
        actor: entry.actor,
        sessionId: entry.sessionId ?? null,
        ip: entry.ip ?? null,
        action: entry.action,
        hostId: entry.hostId ?? null,
        chatId: entry.chatId ?? null,
        detail: entry.detail ? JSON.stringify(entry.detail) : null,
      });
  } catch (error) {
    log.error('audit not written', { action: entry.action, hostId: entry.hostId ?? null, error: failureText(error) });
  }
}

/** One page of a host's log, newest first; `next` is the `before` of the following page, or null at the end. */
export async function hostAuditPage(
  db: D1Database,
  hostId: string,
  page: { before?: number; limit?: number } = {},
): Promise<{ entries: AuditRecord[]; next: number | null }> {
  const limit = Math.min(Math.max(page.limit ?? 50, 1), AUDIT_PAGE_MAX);
  const rows = await drizzle(db)
    .select()
    .from(audit)
    .where(page.before === undefined ? eq(audit.hostId, hostId) : and(eq(audit.hostId, hostId), lt(audit.id, page.before)))
    .orderBy(desc(audit.id))
    .limit(limit + 1);
  const entries = rows.slice(0, limit).map((row) => ({ ...row, detail: row.detail ? (JSON.parse(row.detail) as Record<string, unknown>) : null }));
  return { entries, next: rows.length > limit ? entries.at(-1)!.id : null };
}
