// Socket tickets, kept only hashed. Taking one deletes it in the same statement that reads it, so a
// ticket opens at most one socket however many times it is presented.
import { eq, lte } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { socketTickets } from './schema.ts';

/** Records a socket ticket, dropping the expired ones in the same batch. */
export async function insertSocketTicket(
  d1: D1Database,
  t: { ticketHash: string; userId: string; sessionId: string; now: number; expiresAt: number },
): Promise<void> {
  const db = drizzle(d1);
  await db.batch([
    db.delete(socketTickets).where(lte(socketTickets.expiresAt, t.now)),
    db.insert(socketTickets).values({ ticketHash: t.ticketHash, userId: t.userId, sessionId: t.sessionId, expiresAt: t.expiresAt }),
  ]);
}

/** Takes a socket ticket (deleting it, so it works once), answering what it was; null when unknown or used. */
export async function consumeTicket(d1: D1Database, ticketHash: string): Promise<{ userId: string; sessionId: string; expiresAt: number } | null> {
  const [row] = await drizzle(d1)
    .delete(socketTickets)
    .where(eq(socketTickets.ticketHash, ticketHash))
    .returning({ userId: socketTickets.userId, sessionId: socketTickets.sessionId, expiresAt: socketTickets.expiresAt });
  return row ?? null;
}
