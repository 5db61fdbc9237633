// Accounts with a password: the fields a person types (one schema each, for setup, sign-in and
// invitations alike), the password check, and claiming the relay's owner account with the setup secret.
import { z } from 'zod';
import { ProtocolError } from '../../contracts/index.ts';
import { isUniqueViolation } from '../db/failures.ts';
import { accountByEmail, claimOwnerRow, createOwner, ownerHasPassword } from '../db/users.ts';
import { newId } from './opaque.ts';
import { DECOY_HASH, PasswordSchema, hashPassword, verifyPassword } from './passwords.ts';

/** Emails compare case-insensitively: kept trimmed and lower-cased. */
export const EmailSchema = z.string().trim().toLowerCase().pipe(z.email('must be an email address').max(320));
export const NameSchema = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

export const SignInSchema = z.object({ email: EmailSchema, password: z.string().min(1, 'must not be empty').max(1024) });
export const SetupSchema = z.object({ secret: z.string().min(1), email: EmailSchema, password: PasswordSchema, name: NameSchema });

const WRONG = 'Wrong email or password';

/**
 * The user these credentials prove, or `unauthorized` with one message whatever was wrong (unknown
 * email, no password set, wrong password), after the same work either way. A disabled account with
 * the right password is `forbidden`.
 */
export async function checkPassword(db: D1Database, email: string, password: string): Promise<string> {
  const user = await accountByEmail(db, email);
  const matches = await verifyPassword(password, user?.passwordHash ?? DECOY_HASH);
  if (!user?.passwordHash || !matches) throw new ProtocolError('unauthorized', WRONG);
  if (user.disabledAt !== null) throw new ProtocolError('forbidden', 'This account is disabled');
  return user.id;
}

/** The user id behind a failed sign-in's email, when there is one (for the audit log). */
export async function userIdOfEmail(db: D1Database, email: string): Promise<string | null> {
  return (await accountByEmail(db, email))?.id ?? null;
}

/**
 * Makes the relay's owner account, once: it gives a password to the owner row pairing made for
 * `npm start` (none yet), or creates the owner. Each statement is conditional, so of two setups at
 * once only one wins; once an owner has a password, setup is closed for good.
 */
export async function claimOwner(db: D1Database, fields: { email: string; password: string; name: string }): Promise<string> {
  const passwordHash = await hashPassword(fields.password);
  try {
    const claimed = await claimOwnerRow(db, { email: fields.email, name: fields.name, passwordHash });
    if (claimed) return claimed;
    const created = await createOwner(db, { id: newId('u_'), email: fields.email, name: fields.name, passwordHash, createdAt: Date.now() });
    if (created) return created;
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProtocolError('bad-request', 'email: already used by another account');
    throw error;
  }
  throw new ProtocolError('forbidden', 'This relay already has an owner; sign in instead');
}

/** Whether the relay's owner has set a password yet (else `npm start` shows the setup link). */
export async function ownerClaimed(db: D1Database): Promise<boolean> {
  return ownerHasPassword(db);
}
