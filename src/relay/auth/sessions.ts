// Sessions: one per signed-in device. A session holds a family of refresh tokens: each is used once and
// replaced (rotation, one atomic step); presenting a used one means two parties hold it, so the whole
// session ends (`refresh-reused`), unless it is the prompt retry of a rotation whose answer was lost. Every access token names its session, and every door asks `sessionIsLive`, so
// ending a session ends its access at once, not when the 10-minute token runs out.
import { ProtocolError, type SessionTokens } from '../../contracts/index.ts';
import { findLiveSession, insertSession, refreshTokenState, refreshTokenUnused, rotateRefreshToken } from '../db/sessions.ts';
import type { Env } from '../env.ts';
import { hashOpaque, newId, newOpaqueToken } from './opaque.ts';
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
    id: sessionId,
    userId,
    method,
    now,
    expiresAt: now + SESSION_IDLE_MS,
    ip: meta.ip ?? null,
    userAgent: meta.userAgent?.slice(0, 300) ?? null,
    refreshTokenHash: await hashOpaque(refreshToken),
  });
  return tokensFor(env, userId, sessionId, refreshToken);
}

/** Whether a session may still act: not revoked, not expired, and its user not disabled. */
export async function sessionIsLive(db: D1Database, userId: string, sessionId: string): Promise<boolean> {
  return findLiveSession(db, userId, sessionId, Date.now());
}

/**
 * How long after a rotation its token, presented again from the same session and device, is taken for
 * the retry of an answer that never arrived (a relay restart, a tunnel, a phone in a lift) rather than
 * for reuse. Short: the retry comes within seconds (the client retries at once, then backs off).
 */
export const REFRESH_RETRY_MS = 60_000;

/**
 * The successor of a refresh token: an HMAC of the salt keyed by the token itself, so the same token
 * and salt give the same successor (a retry is answered with it), and only a holder of the token can
 * derive it (the table keeps hashes and salts, never a token).
 */
async function successorOf(refreshToken: string, salt: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(refreshToken), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`tether refresh successor\0${salt}`)));
  return btoa(String.fromCharCode(...mac))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** Ends sessions and closes their sockets: objects/revocations.ts's revokeSessions. */
export type RevokeSessions = (env: Env, where: { sessionId?: string; userId?: string }, why: string) => Promise<string[]>;

const REUSED = 'This refresh token was already used; the session is revoked';

/**
 * Trades a refresh token for a new pair. The rotation is one atomic step (rotateRefreshToken): only
 * one use of a token wins, and it is never spent without its successor. A token presented again is
 * reuse, which revokes the whole session so a stolen token dies with the legitimate one — except the
 * retry of the rotation just made, whose answer may have been lost: within REFRESH_RETRY_MS, from the
 * session's own user agent, and while its successor is still unused, it is answered with that same
 * successor. Replayed later, or once the successor was used, it revokes as before.
 *
 * `revoke` is objects/revocations.ts's revokeSessions, handed in by the route: ending a session also
 * rechecks the sockets the Durable Objects hold, and auth sits below the objects (DEVELOPERS.md, Layers).
 */
export async function refreshSession(env: Env, refreshToken: string, meta: SessionMeta, revoke: RevokeSessions): Promise<SessionTokens> {
  const tokenHash = await hashOpaque(refreshToken);
  const now = Date.now();
  const salt = newOpaqueToken(16);
  const next = await successorOf(refreshToken, salt);
  const userAgent = meta.userAgent?.slice(0, 300) ?? null;
  const won = await rotateRefreshToken(env.DB, {
    tokenHash,
    successorSalt: salt,
    nextHash: await hashOpaque(next),
    now,
    expiresAt: now + SESSION_IDLE_MS,
    ip: meta.ip ?? null,
    userAgent,
  });
  const row = await refreshTokenState(env.DB, tokenHash, now);
  if (!row) throw new ProtocolError('unauthorized', 'Unknown refresh token');
  if (won) return tokensFor(env, row.userId, row.sessionId, next);
  if (!row.live) throw new ProtocolError('unauthorized', 'The session has ended');
  if (row.usedAt !== null && row.successorSalt !== null && now - row.usedAt <= REFRESH_RETRY_MS && userAgent === row.userAgent) {
    const successor = await successorOf(refreshToken, row.successorSalt);
    if (await refreshTokenUnused(env.DB, await hashOpaque(successor))) return tokensFor(env, row.userId, row.sessionId, successor);
  }
  await revoke(env, { sessionId: row.sessionId }, 'refresh-reused');
  throw new ProtocolError('unauthorized', REUSED);
}
