// People on this relay: their accounts, the owner flag, and being disabled. Email addresses compare
// case-insensitively everywhere.
import { and, asc, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { users } from './schema.ts';

function byEmail(email: string) {
  return sql`lower(${users.email}) = lower(${email})`;
}

/** The account holding an address, verified or not (an invitation for a taken address must sign in first). */
export async function userIdByEmail(d1: D1Database, email: string): Promise<string | null> {
  const [row] = await drizzle(d1).select({ id: users.id }).from(users).where(byEmail(email)).limit(1);
  return row?.id ?? null;
}

/** The account whose address someone proved (see users.emailVerifiedAt); null when none has. Grants by email use only this. */
export async function verifiedUserIdByEmail(d1: D1Database, email: string): Promise<string | null> {
  const [row] = await drizzle(d1)
    .select({ id: users.id })
    .from(users)
    .where(and(byEmail(email), isNotNull(users.emailVerifiedAt)))
    .limit(1);
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
  const [row] = await drizzle(d1)
    .select({
      id: users.id,
      email: users.email,
      name: users.name,
      isOwner: users.isOwner,
      createdAt: users.createdAt,
      emailVerified: sql<number>`${users.emailVerifiedAt} IS NOT NULL`.mapWith((v: number) => v === 1),
    })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  return row ?? null;
}

export async function isRelayOwner(d1: D1Database, userId: string): Promise<boolean> {
  const [row] = await drizzle(d1).select({ isOwner: users.isOwner }).from(users).where(eq(users.id, userId)).limit(1);
  return row?.isOwner === true;
}

/** Every user for the owner's list (capped), oldest first. */
export async function listUsers(d1: D1Database) {
  return drizzle(d1)
    .select({
      id: users.id,
      email: users.email,
      name: users.name,
      isOwner: users.isOwner,
      createdAt: users.createdAt,
      disabledAt: users.disabledAt,
      emailVerified: sql<number>`${users.emailVerifiedAt} IS NOT NULL`.mapWith((v: number) => v === 1),
      hasPassword: sql<number>`${users.passwordHash} IS NOT NULL`.mapWith((v: number) => v === 1),
    })
    .from(users)
    .orderBy(asc(users.createdAt))
    .limit(1000);
}

/** Disables an enabled user; false when there is no such user or they were disabled already. */
export async function disableUser(d1: D1Database, userId: string, at: number): Promise<boolean> {
  const done = await drizzle(d1)
    .update(users)
    .set({ disabledAt: at })
    .where(and(eq(users.id, userId), isNull(users.disabledAt)))
    .returning({ id: users.id });
  return done.length > 0;
}

/** Enables a user; false when there is no such user. */
export async function enableUser(d1: D1Database, userId: string): Promise<boolean> {
  const done = await drizzle(d1).update(users).set({ disabledAt: null }).where(eq(users.id, userId)).returning({ id: users.id });
  return done.length > 0;
}

/** The account an email signs in to (emails are stored lower-cased), with what a password check needs. */
export async function accountByEmail(
  d1: D1Database,
  email: string,
): Promise<{ id: string; passwordHash: string | null; disabledAt: number | null; emailVerifiedAt: number | null } | null> {
  const [row] = await drizzle(d1)
    .select({ id: users.id, passwordHash: users.passwordHash, disabledAt: users.disabledAt, emailVerifiedAt: users.emailVerifiedAt })
    .from(users)
    .where(eq(users.email, email))
    .limit(1);
  return row ?? null;
}

/** Whether the user exists and is disabled: null when there is no such user. */
export async function disabledAtOf(d1: D1Database, userId: string): Promise<{ disabledAt: number | null } | null> {
  const [row] = await drizzle(d1).select({ disabledAt: users.disabledAt }).from(users).where(eq(users.id, userId)).limit(1);
  return row ?? null;
}

/** Makes an account for an address (proven by Access or OIDC, so verified now) unless one has it already. */
export async function insertUserUnlessEmailTaken(d1: D1Database, user: { id: string; email: string; name: string; createdAt: number }): Promise<void> {
  await drizzle(d1)
    .insert(users)
    .values({ ...user, emailVerifiedAt: user.createdAt })
    .onConflictDoNothing({ target: users.email });
}

/**
 * Takes an address away from the account that only typed it (never verified), so the person who just
 * proved it gets it: that account can no longer sign in with it, nor be reached by it. One conditional
 * statement: a verified holder is never touched. True when this call released it.
 */
export async function releaseUnverifiedEmail(d1: D1Database, userId: string, email: string): Promise<boolean> {
  const done = await drizzle(d1)
    .update(users)
    .set({ email: null })
    .where(and(eq(users.id, userId), eq(users.email, email), isNull(users.emailVerifiedAt)))
    .returning({ id: users.id });
  return done.length > 0;
}

// ---- the relay's owner ----
// Each write below is one conditional statement, so of two setups (or two first starts) at once only
// one makes or claims the owner.

/** Gives the password-less owner row (made for `npm start`) its account fields; null when there is none, or an owner has a password already. */
export async function claimOwnerRow(d1: D1Database, fields: { email: string; name: string; passwordHash: string }): Promise<string | null> {
  // The setup secret is the owner's proof: whoever holds it chose this address for themselves.
  const [row] = await drizzle(d1)
    .update(users)
    .set({ ...fields, emailVerifiedAt: Date.now() })
    .where(
      and(
        sql`${users.id} = (SELECT id FROM users WHERE is_owner = 1 AND password_hash IS NULL AND disabled_at IS NULL ORDER BY created_at LIMIT 1)`,
        sql`NOT EXISTS (SELECT 1 FROM users WHERE is_owner = 1 AND password_hash IS NOT NULL)`,
      ),
    )
    .returning({ id: users.id });
  return row?.id ?? null;
}

/** Makes the owner with these fields; null when the relay has an owner already. */
export async function createOwner(
  d1: D1Database,
  owner: { id: string; email: string | null; name: string; passwordHash: string | null; createdAt: number },
): Promise<string | null> {
  // A SELECT without FROM guarded by NOT EXISTS: drizzle's insert-from-select needs a table to select from.
  const verifiedAt = owner.email === null ? null : owner.createdAt;
  const row = await drizzle(d1).get<{ id: string } | undefined>(sql`INSERT INTO users (id, email, name, created_at, password_hash, is_owner, email_verified_at)
    SELECT ${owner.id}, ${owner.email}, ${owner.name}, ${owner.createdAt}, ${owner.passwordHash}, 1, ${verifiedAt}
    WHERE NOT EXISTS (SELECT 1 FROM users WHERE is_owner = 1) RETURNING id`);
  return row?.id ?? null;
}

/** The first owner's id, if any. */
export async function ownerId(d1: D1Database): Promise<string | null> {
  const [row] = await drizzle(d1).select({ id: users.id }).from(users).where(eq(users.isOwner, true)).orderBy(asc(users.createdAt)).limit(1);
  return row?.id ?? null;
}

/** Whether an owner has set a password. */
export async function ownerHasPassword(d1: D1Database): Promise<boolean> {
  const [row] = await drizzle(d1)
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.isOwner, true), isNotNull(users.passwordHash)))
    .limit(1);
  return row !== undefined;
}
