// Addresses that carry a relay ticket (a visual's page, an attachment), kept by what they open while
// they have some life left: a virtualized row mounts again and again as it scrolls in and out, and
// each mount must not mint a ticket of its own (the same address also lets the browser reuse what it
// already loaded).
import type { VisualTicket } from '../../client/index.ts';

/** A kept address is handed out only with at least this much life left, so it still opens when used. */
const MARGIN_MS = 10_000;

const kept = new Map<string, VisualTicket>();

/** The address for `key`: a kept one, or one `mint` makes (and `fresh` forces a new one, e.g. after a refusal). */
export async function ticketedUrl(key: string, mint: () => Promise<VisualTicket>, fresh = false): Promise<string> {
  const ticket = kept.get(key);
  if (!fresh && ticket && ticket.expiresAt - Date.now() > MARGIN_MS) return ticket.url;
  const made = await mint();
  kept.set(key, made);
  return made.url;
}

/** Whether the address kept for `key` may still be used without asking for a new one. */
export function ticketStillGood(key: string): boolean {
  const ticket = kept.get(key);
  return ticket !== undefined && ticket.expiresAt - Date.now() > MARGIN_MS;
}
