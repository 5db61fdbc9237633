// What the relay stops keeping, swept once a day by the cron trigger (index.ts `scheduled`), never on
// a request's path. Each rule bounds a table that anyone can make grow:
//   - failed sign-ins in the audit log (anyone can fail): kept FAILED_SIGNIN_KEEP_MS, and at most
//     FAILED_SIGNIN_KEEP_COUNT of them, newest first;
//   - refresh tokens: those of a session that has ended are worth nothing (the session refuses every
//     one of them); a used one of a live session is kept USED_REFRESH_KEEP_MS to catch its reuse, and
//     presented later it is simply unknown (refused, without revoking the session).
// The rest bounds itself where it is written: link tokens and one-time codes are swept when spent,
// push turns and deliveries when written, a chat's kept sends and removed visuals in its ChatRoom.
import { and, inArray, isNotNull, lt, or, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { audit, refreshTokens, sessions } from './schema.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
export const FAILED_SIGNIN_KEEP_MS = 30 * DAY_MS;
export const FAILED_SIGNIN_KEEP_COUNT = 10_000;
export const USED_REFRESH_KEEP_MS = 7 * DAY_MS;

export interface Swept {
  failedSignIns: number;
  refreshTokens: number;
}

/** Applies every rule above once; one batch, so a sweep is whole or not at all. */
export async function sweep(d1: D1Database, now: number): Promise<Swept> {
  const db = drizzle(d1);
  const failed = sql`${audit.action} = 'signin-failed'`;
  const ended = db
    .select({ id: sessions.id })
    .from(sessions)
    .where(or(isNotNull(sessions.revokedAt), lt(sessions.expiresAt, now)));
  const [signIns, tokens] = await db.batch([
    db
      .delete(audit)
      .where(
        and(
          failed,
          or(
            lt(audit.at, now - FAILED_SIGNIN_KEEP_MS),
            sql`${audit.id} < coalesce((SELECT id FROM audit WHERE action = 'signin-failed' ORDER BY id DESC LIMIT 1 OFFSET ${FAILED_SIGNIN_KEEP_COUNT - 1}), 0)`,
          ),
        ),
      ),
    db
      .delete(refreshTokens)
      .where(or(inArray(refreshTokens.sessionId, ended), and(isNotNull(refreshTokens.usedAt), lt(refreshTokens.usedAt, now - USED_REFRESH_KEEP_MS)))),
  ]);
  return { failedSignIns: signIns.meta.changes, refreshTokens: tokens.meta.changes };
}
