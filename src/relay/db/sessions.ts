// Sessions and their refresh tokens. A refresh token is used once: the conditional update in
// `useRefreshToken` lets exactly one use win, so a second presenter is caught as reuse.
import { and, desc, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { refreshTokens, sessions, socketTickets, users } from './schema.ts';

export interface SessionStart {
  id: string;
  userId: string;
  method: string;
  now: number;
  expiresAt: number;
  ip: string | null;
  userAgent: string | null;
  refreshTokenHash: string;
}

/** Records a new session with its first refresh token, in one batch. */
export async function insertSession(d1: D1Database, s: SessionStart): Promise<void> {
  const db = drizzle(d1);
  await db.batch([
    db.insert(sessions).values({
      id: s.id, userId: s.userId, method: s.method, createdAt: s.now, lastUsedAt: s.now, expiresAt: s.expiresAt, ip: s.ip, userAgent: s.userAgent,
    }),
    db.insert(refreshTokens).values({ tokenHash: s.refreshTokenHash, sessionId: s.id, createdAt: s.now }),
  ]);
}

/** Whether the session is the user's, not revoked, not expired at `now`, and its user not disabled. */
export async function findLiveSession(d1: D1Database, userId: string, sessionId: string, now: number): Promise<boolean> {
  const [row] = await drizzle(d1).select({ id: sessions.id }).from(sessions).innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now), isNull(users.disabledAt)))
    .limit(1);
  return row !== undefined;
}

/** A user's live sessions, most recently used first (capped). */
export async function liveSessionsOf(d1: D1Database, userId: string, now: number) {
  return drizzle(d1).select({
    id: sessions.id, method: sessions.method, createdAt: sessions.createdAt, lastUsedAt: sessions.lastUsedAt,
    expiresAt: sessions.expiresAt, ip: sessions.ip, userAgent: sessions.userAgent,
  }).from(sessions).where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.lastUsedAt)).limit(200);
}

/** The session (and its user) a refresh token belongs to, used or not. */
export async function refreshTokenOwner(d1: D1Database, tokenHash: string): Promise<{ sessionId: string; userId: string } | null> {
  const [row] = await drizzle(d1).select({ sessionId: refreshTokens.sessionId, userId: sessions.userId })
    .from(refreshTokens).innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
    .where(eq(refreshTokens.tokenHash, tokenHash)).limit(1);
  return row ?? null;
}

/** Marks a refresh token used; false when it was used already (only one use of a token can win). */
export async function useRefreshToken(d1: D1Database, tokenHash: string, now: number): Promise<boolean> {
  const won = await drizzle(d1).update(refreshTokens).set({ usedAt: now })
    .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.usedAt))).run();
  return won.meta.changes === 1;
}

/** Gives the session its next refresh token and extends it, keeping its last address and agent when none is known. */
export async function rotateRefreshToken(
  d1: D1Database, r: { sessionId: string; nextHash: string; now: number; expiresAt: number; ip: string | null; userAgent: string | null },
): Promise<void> {
  const db = drizzle(d1);
  await db.batch([
    db.insert(refreshTokens).values({ tokenHash: r.nextHash, sessionId: r.sessionId, createdAt: r.now }),
    db.update(sessions).set({
      lastUsedAt: r.now, expiresAt: r.expiresAt,
      ip: sql`COALESCE(${r.ip}, ${sessions.ip})`, userAgent: sql`COALESCE(${r.userAgent}, ${sessions.userAgent})`,
    }).where(eq(sessions.id, r.sessionId)),
  ]);
}

/**
 * Ends the unrevoked sessions matching `where` (one, all of a user's, or one of a user's) and drops
 * their unused socket tickets; answers the sessions it ended.
 */
export async function endSessions(
  d1: D1Database, where: { sessionId?: string; userId?: string }, why: string, now: number,
): Promise<{ id: string; userId: string }[]> {
  const db = drizzle(d1);
  const ended = await db.update(sessions).set({ revokedAt: now, revokedWhy: why }).where(and(
    isNull(sessions.revokedAt),
    where.sessionId !== undefined ? eq(sessions.id, where.sessionId) : undefined,
    where.userId !== undefined ? eq(sessions.userId, where.userId) : undefined,
  )).returning({ id: sessions.id, userId: sessions.userId });
  if (ended.length > 0) await db.delete(socketTickets).where(inArray(socketTickets.sessionId, ended.map((s) => s.id)));
  return ended;
}
