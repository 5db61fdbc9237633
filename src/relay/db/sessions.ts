// Sessions and their refresh tokens. A refresh token is used once: the conditional update in
// `rotateRefreshToken` lets exactly one use win, in the same transaction that issues its successor.
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
      id: s.id,
      userId: s.userId,
      method: s.method,
      createdAt: s.now,
      lastUsedAt: s.now,
      expiresAt: s.expiresAt,
      ip: s.ip,
      userAgent: s.userAgent,
    }),
    db.insert(refreshTokens).values({ tokenHash: s.refreshTokenHash, sessionId: s.id, createdAt: s.now }),
  ]);
}

/** Whether the session is the user's, not revoked, not expired at `now`, and its user not disabled. */
export async function findLiveSession(d1: D1Database, userId: string, sessionId: string, now: number): Promise<boolean> {
  const [row] = await drizzle(d1)
    .select({ id: sessions.id })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now), isNull(users.disabledAt)))
    .limit(1);
  return row !== undefined;
}

/** A user's live sessions, most recently used first (capped). */
export async function liveSessionsOf(d1: D1Database, userId: string, now: number) {
  return drizzle(d1)
    .select({
      id: sessions.id,
      method: sessions.method,
      createdAt: sessions.createdAt,
      lastUsedAt: sessions.lastUsedAt,
      expiresAt: sessions.expiresAt,
      ip: sessions.ip,
      userAgent: sessions.userAgent,
    })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.lastUsedAt))
    .limit(200);
}

/** A refresh token as stored, with its session: whose it is, whether it was used, and what became of it. */
export interface RefreshTokenState {
  sessionId: string;
  userId: string;
  usedAt: number | null;
  successorSalt: string | null;
  /** The session may still act (not revoked, not expired, its user not disabled). */
  live: boolean;
  /** The session's user agent as last recorded (at sign-in or its latest rotation). */
  userAgent: string | null;
}

/** The stored state of a refresh token, used or not; null when it was never issued. */
export async function refreshTokenState(d1: D1Database, tokenHash: string, now: number): Promise<RefreshTokenState | null> {
  const [row] = await drizzle(d1)
    .select({
      sessionId: refreshTokens.sessionId,
      userId: sessions.userId,
      usedAt: refreshTokens.usedAt,
      successorSalt: refreshTokens.successorSalt,
      live: sql<number>`${sessions.revokedAt} IS NULL AND ${sessions.expiresAt} > ${now} AND ${users.disabledAt} IS NULL`,
      userAgent: sessions.userAgent,
    })
    .from(refreshTokens)
    .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(refreshTokens.tokenHash, tokenHash))
    .limit(1);
  return row ? { ...row, live: Boolean(row.live) } : null;
}

/** Whether a token (by hash) was issued and is still unused. */
export async function refreshTokenUnused(d1: D1Database, tokenHash: string): Promise<boolean> {
  const [row] = await drizzle(d1).select({ usedAt: refreshTokens.usedAt }).from(refreshTokens).where(eq(refreshTokens.tokenHash, tokenHash)).limit(1);
  return row !== undefined && row.usedAt === null;
}

export interface Rotation {
  tokenHash: string;
  /** Random, new for every attempt: marks the winning attempt's own rows. */
  successorSalt: string;
  nextHash: string;
  now: number;
  expiresAt: number;
  ip: string | null;
  userAgent: string | null;
}

/**
 * Rotates a refresh token in one D1 batch (one transaction): marks it used with its successor's salt,
 * but only while it is unused and its session live; inserts the successor and extends the session
 * only where that mark is this attempt's. Either all of it happens or none: a relay stopping in
 * between can no longer leave a token spent with no successor. Answers whether this attempt won.
 */
export async function rotateRefreshToken(d1: D1Database, r: Rotation): Promise<boolean> {
  const db = drizzle(d1);
  const liveSessions = db
    .select({ id: sessions.id })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(isNull(sessions.revokedAt), gt(sessions.expiresAt, r.now), isNull(users.disabledAt)));
  const marked = and(eq(refreshTokens.tokenHash, r.tokenHash), eq(refreshTokens.successorSalt, r.successorSalt));
  const [won] = await db.batch([
    db
      .update(refreshTokens)
      .set({ usedAt: r.now, successorSalt: r.successorSalt })
      .where(and(eq(refreshTokens.tokenHash, r.tokenHash), isNull(refreshTokens.usedAt), inArray(refreshTokens.sessionId, liveSessions))),
    db.insert(refreshTokens).select(
      db
        .select({
          tokenHash: sql<string>`${r.nextHash}`.as('token_hash'),
          sessionId: refreshTokens.sessionId,
          createdAt: sql<number>`${r.now}`.as('created_at'),
          usedAt: sql<null>`NULL`.as('used_at'),
          successorSalt: sql<null>`NULL`.as('successor_salt'),
        })
        .from(refreshTokens)
        .where(marked),
    ),
    db
      .update(sessions)
      .set({
        lastUsedAt: r.now,
        expiresAt: r.expiresAt,
        ip: sql`COALESCE(${r.ip}, ${sessions.ip})`,
        userAgent: sql`COALESCE(${r.userAgent}, ${sessions.userAgent})`,
      })
      .where(inArray(sessions.id, db.select({ id: refreshTokens.sessionId }).from(refreshTokens).where(marked))),
  ]);
  return won.meta.changes === 1;
}

/**
 * Ends the unrevoked sessions matching `where` (one, all of a user's, or one of a user's) and drops
 * their unused socket tickets; answers the sessions it ended.
 */
export async function endSessions(
  d1: D1Database,
  where: { sessionId?: string; userId?: string },
  why: string,
  now: number,
): Promise<{ id: string; userId: string }[]> {
  const db = drizzle(d1);
  const ended = await db
    .update(sessions)
    .set({ revokedAt: now, revokedWhy: why })
    .where(
      and(
        isNull(sessions.revokedAt),
        where.sessionId !== undefined ? eq(sessions.id, where.sessionId) : undefined,
        where.userId !== undefined ? eq(sessions.userId, where.userId) : undefined,
      ),
    )
    .returning({ id: sessions.id, userId: sessions.userId });
  if (ended.length > 0)
    await db.delete(socketTickets).where(
      inArray(
        socketTickets.sessionId,
        ended.map((s) => s.id),
      ),
    );
  return ended;
}
