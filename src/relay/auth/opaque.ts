// Opaque secrets the relay hands out once and keeps only hashed (refresh tokens, socket tickets,
// codes): 32 random bytes as base64url, stored as SHA-256 hex, so a leaked table opens nothing.

export function newOpaqueToken(bytes = 32): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

export async function hashOpaque(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A short random id with a prefix naming what it is (`s_` a session …). */
export function newId(prefix: string): string {
  return `${prefix}${newOpaqueToken(12)}`;
}
