// Password hashes: PBKDF2-SHA256 through WebCrypto (a slow KDF with no native dependency, in workerd and
// Node alike). 100,000 iterations is the most workerd allows; the count is kept in each hash so a later
// relay may raise it and still check the old ones.
import { z } from 'zod';

const ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;
const PREFIX = 'pbkdf2-sha256';

/** What a new password must be; long enough that the KDF is not the only defence. */
export const PasswordSchema = z.string().min(10, 'must be at least 10 characters').max(1024, 'must be at most 1024 characters');

const b64url = {
  encode: (bytes: Uint8Array) =>
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, ''),
  decode: (text: string) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)),
};

async function derive(password: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, material, HASH_BITS);
  return new Uint8Array(bits);
}

/** `pbkdf2-sha256$<iterations>$<salt>$<hash>` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, ITERATIONS);
  return `${PREFIX}$${ITERATIONS}$${b64url.encode(salt)}$${b64url.encode(hash)}`;
}

/** Whether the password matches a stored hash; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [prefix, rounds, salt, hash] = stored.split('$');
  const iterations = Number(rounds);
  if (prefix !== PREFIX || !salt || !hash || !Number.isInteger(iterations) || iterations < 1 || iterations > ITERATIONS) return false;
  let expected: Uint8Array;
  try {
    expected = b64url.decode(hash);
  } catch {
    return false;
  }
  return sameBytes(await derive(password, b64url.decode(salt), iterations), expected);
}

/** Compares in time that depends only on the length, never on where the bytes first differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * A hash of a password nobody has, checked when the email is unknown, so a sign-in takes as long
 * whether or not the account exists.
 */
export const DECOY_HASH = `${PREFIX}$${ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
