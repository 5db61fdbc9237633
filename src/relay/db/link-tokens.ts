// Host link tokens already used (by jti), kept until they expire: a token opens the link once. The
// insert is the check: of two connections with the same token only one inserts the row.
import { lt } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { linkTokens } from './schema.ts';

/**
 * Spends a link token; false when it was spent already. Expired rows are swept in the same batch:
 * a host connects a few times a day, so this is never a hot path, and the table holds only tokens
 * that could still be presented (five minutes each at most).
 */
export async function spendLinkToken(d1: D1Database, hostId: string, jti: string, expiresAt: number, now: number): Promise<boolean> {
  const db = drizzle(d1);
  const [, spent] = await db.batch([
    db.delete(linkTokens).where(lt(linkTokens.expiresAt, now)),
    db.insert(linkTokens).values({ hostId, jti, expiresAt }).onConflictDoNothing().returning({ jti: linkTokens.jti }),
  ]);
  return spent.length === 1;
}
