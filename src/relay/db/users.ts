// People on this relay: their accounts, the owner flag, and being disabled. Email addresses compare
// case-insensitively everywhere.
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { users } from './schema.ts';

function byEmail(email: string) {
  return sql`lower(${users.email}) = lower(${email})`;
}

export async function userIdByEmail(d1: D1Database, email: string): Promise<string | null> {
  const [row] = await drizzle(d1).select({ id: users.id }).from(users).where(byEmail(email)).limit(1);
  return row?.id ?? null;
}

export async function userExists(d1: D1Database, userId: string): Promise<boolean> {
  const [row] = await drizzle(d1).select({ id: users.id }).from(users).where(eq(users.id, userId)).limit(1);
  return row !== undefined;
}

export async function emailOf(d1: D1Database, userId: string): Promise<string | null> {
  const [row] = await drizzle(d1).select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
  return row?.email ?? null;
}

/** What a person sees of their own account. */
export async function findUser(d1: D1Database, userId: string) {
  const [row] = await drizzle(d1).select({ id: users.id, email: users.email, name: users.name, isOwner: users.isOwner, createdAt: users.createdAt })
    .from(users).where(eq(users.id, userId)).limit(1);
  return row ?? null;
}

export async function isRelayOwner(d1: D1Database, userId: string): Promise<boolean> {
  const [row] = await drizzle(d1).select({ isOwner: users.isOwner }).from(users).where(eq(users.id, userId)).limit(1);
  return row?.isOwner === true;
}

/** Every user for the owner's list (capped), oldest first. */
export async function listUsers(d1: D1Database) {
  return drizzle(d1).select({
    id: users.id, email: users.email, name: users.name, isOwner: users.isOwner, createdAt: users.createdAt,
    disabledAt: users.disabledAt, hasPassword: sql<number>`${users.passwordHash} IS NOT NULL`.mapWith((v: number) => v === 1),
  }).from(users).orderBy(asc(users.createdAt)).limit(1000);
}

/** Disables an enabled user; false when there is no such user or they were disabled already. */
export async function disableUser(d1: D1Database, userId: string, at: number): Promise<boolean> {
  const done = await drizzle(d1).update(users).set({ disabledAt: at }).where(and(eq(users.id, userId), isNull(users.disabledAt))).returning({ id: users.id });
  return done.length > 0;
}

/** Enables a user; false when there is no such user. */
export async function enableUser(d1: D1Database, userId: string): Promise<boolean> {
  const done = await drizzle(d1).update(users).set({ disabledAt: null }).where(eq(users.id, userId)).returning({ id: users.id });
  return done.length > 0;
}
