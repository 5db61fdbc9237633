// Socket tickets: a browser cannot set headers on a WebSocket, and a token in a URL ends up in logs and
// history. So the app trades its access token for a ticket (opaque, single use, 30 seconds, kept only
// hashed) and opens the socket with `?ticket=`. Redeeming deletes the row: a second use finds nothing.
import { ProtocolError } from '../../contracts/index.ts';
import { consumeTicket, insertSocketTicket } from '../db/tickets.ts';
import type { Env } from '../env.ts';
import { hashOpaque, newOpaqueToken } from './opaque.ts';
import { sessionIsLive } from './sessions.ts';

export const SOCKET_TICKET_MS = 30_000;

export async function mintSocketTicket(env: Env, user: { userId: string; sessionId: string }): Promise<{ ticket: string; expiresInMs: number }> {
  const ticket = newOpaqueToken();
  const now = Date.now();
  // Unused tickets die here rather than in a sweep of their own.
  await insertSocketTicket(env.DB, { ticketHash: await hashOpaque(ticket), ...user, now, expiresAt: now + SOCKET_TICKET_MS });
  return { ticket, expiresInMs: SOCKET_TICKET_MS };
}

/** The person a ticket was minted for; the ticket is spent whatever the answer. */
export async function redeemSocketTicket(env: Env, ticket: string): Promise<{ userId: string; sessionId: string }> {
  const row = await consumeTicket(env.DB, await hashOpaque(ticket));
  if (!row) throw new ProtocolError('unauthorized', 'Unknown or already used ticket');
  if (row.expiresAt <= Date.now()) throw new ProtocolError('unauthorized', 'The ticket expired');
  if (!(await sessionIsLive(env.DB, row.userId, row.sessionId))) throw new ProtocolError('unauthorized', 'The session has ended');
  return { userId: row.userId, sessionId: row.sessionId };
}
