// The setup secret (`TETHER_SETUP_SECRET`) stands in for the relay's owner before anyone has signed in:
// it claims the owner account and pairs a host without a person's approval (the benchmarks'). Compared in constant time.
import { createOwner, ownerId } from '../db/users.ts';

/** Whether `given` is the configured setup secret; false whenever none is configured. */
export async function setupSecretMatches(env: { TETHER_SETUP_SECRET?: string }, given: string): Promise<boolean> {
  const expected = env.TETHER_SETUP_SECRET;
  if (!expected) return false;
  // Digests first: equal lengths, and the secret's length stays private too. Every byte is compared.
  const digest = async (text: string) => new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  const [a, b] = await Promise.all([digest(expected), digest(given)]);
  let differ = 0;
  for (let i = 0; i < a.length; i++) differ |= a[i]! ^ b[i]!;
  return differ === 0;
}

/**
 * The relay owner's user id, creating the owner (with no password yet: the setup link sets it) when
 * there is none. One statement, so two first starts at once still make one owner.
 */
export async function relayOwnerId(db: D1Database): Promise<string> {
  const id = `u_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await createOwner(db, { id, email: null, name: 'Owner', passwordHash: null, createdAt: Date.now() });
  return (await ownerId(db))!;
}
