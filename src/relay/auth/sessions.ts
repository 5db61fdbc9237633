// Sessions: one per signed-in device. A session holds a family of refresh tokens: each is used once and
// replaced (rotation); presenting a used one means two parties hold it, so the whole session ends
// (`refresh-reused`). Every access token names its session, and every door asks `sessionIsLive`, so
// ending a session ends its access at once, not when the 10-minute token runs out.
import { ProtocolError, type SessionTokens } from '../../contracts/index.ts';
import { endSessions, findLiveSession, insertSession, refreshTokenOwner, rotateRefreshToken, useRefreshToken } from '../db/sessions.ts';
import type { Env } from '../env.ts';
import { hashOpaque, newId, newOpaqueToken } from './opaque.ts';
import { hostsReachableBy, recheckHosts } from './revocations.ts';
import { ACCESS_TOKEN_SECONDS, mintAccessToken } from './tokens.ts';

/** A session ends this long after it was last refreshed. */
export const SESSION_IDLE_MS = 30 * 24 * 60 * 60 * 1000;

export type { SessionTokens };

export interface SessionMeta {
  ip?: string | null;
  userAgent?: string | null;
}

async function tokensFor(env: Env, userId: string, sessionId: string, refreshToken: string): Promise<SessionTokens> {
  const accessToken = await mintAccessToken(env, userId, sessionId);
  return { sessionId, refreshToken, accessToken, expiresAt: Date.now() + ACCESS_TOKEN_SECONDS * 1000 };
}

/** Starts a session for a user who just proved who they are (`method`: password, setup, invitation, access, oidc…). */
export async function createSession(env: Env, userId: string, method: string, meta: SessionMeta): Promise<SessionTokens> {
  const sessionId = newId('s_');
  const refreshToken = newOpaqueToken();
  const now = Date.now();
  await insertSession(env.DB, {
    id: sessionId, userId, method, now, expiresAt: now + SESSION_IDLE_MS, ip: meta.ip ?? null,
    userAgent: meta.userAgent?.slice(0, 300) ?? null, refreshTokenHash: await hashOpaque(refreshToken),
  });
  return tokensFor(env, userId, sessionId, refreshToken);
}

/** Whether a session may still act: not revoked, not expired, and its user not disabled. */
export async function sessionIsLive(db: D1Database, userId: string, sessionId: string): Promise<boolean> {
  return findLiveSession(db, userId, sessionId, Date.now());
}

/**
 * Trades a refresh token for a new pair. Only one use of a token can win (a conditional update); any
 * other use, now or later, revokes the session, so a stolen token dies with the legitimate one.
 */
export async function refreshSession(env: Env, refreshToken: string, meta: SessionMeta): Promise<SessionTokens> {
  const tokenHash = await hashOpaque(refreshToken);
  const now = Date.now();
  const row = await refreshTokenOwner(env.DB, tokenHash);
  if (!row) throw new ProtocolError('unauthorized', 'Unknown refresh token');
  if (!await useRefreshToken(env.DB, tokenHash, now)) {
    await revokeSessions(env, { sessionId: row.sessionId }, 'refresh-reused');
    throw new ProtocolError('unauthorized', 'This refresh token was already used; the session is revoked');
  }
  if (!(await sessionIsLive(env.DB, row.userId, row.sessionId))) throw new ProtocolError('unauthorized', 'The session has ended');
  const next = newOpaqueToken();
  await rotateRefreshToken(env.DB, {
    sessionId: row.sessionId, nextHash: await hashOpaque(next), now, expiresAt: now + SESSION_IDLE_MS,
    ip: meta.ip ?? null, userAgent: meta.userAgent?.slice(0, 300) ?? null,
  });
  return tokensFor(env, row.userId, row.sessionId, next);
}

/**
 * Ends sessions (one, or all of a user's, or one of a user's when both are given) and their unused
 * socket tickets, then has every host their people reach re-check its open sockets, so the ended
 * sessions' sockets close now (4401). Answers the ids it ended; sessions already ended stay as they were.
 */
export async function revokeSessions(env: Env, where: { sessionId?: string; userId?: string }, why: string): Promise<string[]> {
  if (where.sessionId === undefined && where.userId === undefined) throw new Error('revokeSessions needs a session or a user');
  const ended = await endSessions(env.DB, where, why, Date.now());
  const ids = ended.map((r) => r.id);
  if (ids.length === 0) return ids;
  const people = [...new Set(ended.map((r) => r.userId))];
  const reached = await Promise.all(people.map((userId) => hostsReachableBy(env.DB, userId)));
  await recheckHosts(env, reached.flat());
  return ids;
}
