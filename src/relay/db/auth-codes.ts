// One-time codes (OIDC state, login codes), kept hashed. Taking a code deletes it in the statement
// that reads it, so of two takers only one gets it.
import { and, eq, lt } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { authCodes } from './schema.ts';

export async function keepCode(d1: D1Database, code: typeof authCodes.$inferInsert): Promise<void> {
  await drizzle(d1).insert(authCodes).values(code);
}

/** Takes a code of this kind, whatever its expiry (the caller judges that); null when unknown or taken. */
export async function consumeCode(d1: D1Database, codeHash: string, kind: string): Promise<{ data: string; expiresAt: number } | null> {
  const [row] = await drizzle(d1)
    .delete(authCodes)
    .where(and(eq(authCodes.codeHash, codeHash), eq(authCodes.kind, kind)))
    .returning({ data: authCodes.data, expiresAt: authCodes.expiresAt });
  return row ?? null;
}

export async function deleteExpiredCodes(d1: D1Database, before: number): Promise<void> {
  await drizzle(d1).delete(authCodes).where(lt(authCodes.expiresAt, before));
}
