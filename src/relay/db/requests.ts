// The state of every approval and question. The first answer wins: settling is one conditional
// UPDATE from `pending`, which D1 runs atomically, so of two simultaneous answers exactly one changes
// a row and only that one is forwarded to the host.
import { and, eq, inArray, ne } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import type { ChatApprovalItem, ChatItem, ChatQuestionItem } from '../../contracts/index.ts';
import type { ChatKey } from './bookmarks.ts';
import { requests } from './schema.ts';

export type RequestItem = ChatApprovalItem | ChatQuestionItem;

export function isRequestItem(item: ChatItem): item is RequestItem {
  return item.kind === 'approval' || item.kind === 'question';
}

export function isPending(item: RequestItem): boolean {
  return item.kind === 'approval' ? item.decision === 'pending' : item.state === 'pending';
}

export class RequestLedger {
  private readonly db;
  private readonly key: ChatKey;
  constructor(d1: D1Database, key: ChatKey) {
    this.db = drizzle(d1);
    this.key = key;
  }

  private where(requestId: string) {
    return and(eq(requests.hostId, this.key.hostId), eq(requests.chatId, this.key.chatId), eq(requests.requestId, requestId));
  }

  /** Records what the host's thread says: new requests as pending, and requests the host settled. */
  async observe(items: RequestItem[]): Promise<void> {
    const now = Date.now();
    const statements = items.flatMap((item) => {
      const insert = this.db
        .insert(requests)
        .values({
          ...this.key,
          requestId: item.requestId,
          itemId: item.id,
          kind: item.kind,
          state: 'pending',
          createdAt: item.createdAt,
        })
        .onConflictDoNothing();
      if (isPending(item)) return [insert];
      const outcome = item.kind === 'approval' ? item.decision : item.state;
      return [
        insert,
        this.db
          .update(requests)
          .set({ state: 'settled', settledBy: 'host', settledWith: JSON.stringify({ outcome }), settledAt: now })
          .where(and(this.where(item.requestId), eq(requests.state, 'pending'))),
      ];
    });
    // One round trip however many requests a whole thread carries, in slices D1 takes comfortably.
    for (let at = 0; at < statements.length; at += 100) {
      const slice = statements.slice(at, at + 100);
      await this.db.batch(slice as [(typeof slice)[number], ...typeof slice]);
    }
  }

  /**
   * Settles a pending request for a person; false when it was already settled (or never existed).
   * The answer's own request id is kept with it: the same answer sent again (a retry after the relay
   * lost its reply) is still the winner and may be forwarded again, which the host answers once.
   */
  async settle(requestId: string, userId: string, type: string, payload: unknown, answerId: string): Promise<boolean> {
    const settledWith = JSON.stringify({ type, payload, answerId });
    const changed = await this.db
      .update(requests)
      .set({ state: 'settled', settledBy: userId, settledWith, settledAt: Date.now() })
      .where(and(this.where(requestId), eq(requests.state, 'pending')))
      .returning({ requestId: requests.requestId });
    if (changed.length === 1) return true;
    const row = await this.get(requestId);
    return row?.settledBy === userId && row.settledWith === settledWith;
  }

  /** Puts a request back to pending when the host never received the answer (it was offline or silent). */
  async reopen(requestId: string, userId: string): Promise<void> {
    await this.db
      .update(requests)
      .set({ state: 'pending', settledBy: null, settledWith: null, settledAt: null })
      .where(and(this.where(requestId), eq(requests.settledBy, userId)));
  }

  /**
   * Puts back to pending every request the host still waits on but a person's answer settled here:
   * after a restart no answer of this room is in flight, so such an answer never reached the host.
   */
  async reopenUndelivered(waiting: string[]): Promise<void> {
    if (waiting.length === 0) return;
    await this.db
      .update(requests)
      .set({ state: 'pending', settledBy: null, settledWith: null, settledAt: null })
      .where(
        and(
          eq(requests.hostId, this.key.hostId),
          eq(requests.chatId, this.key.chatId),
          inArray(requests.requestId, waiting),
          eq(requests.state, 'settled'),
          ne(requests.settledBy, 'host'),
        ),
      );
  }

  async byItem(itemId: string): Promise<string | null> {
    const [row] = await this.db
      .select({ requestId: requests.requestId })
      .from(requests)
      .where(and(eq(requests.hostId, this.key.hostId), eq(requests.chatId, this.key.chatId), eq(requests.itemId, itemId)))
      .limit(1);
    return row?.requestId ?? null;
  }

  async get(requestId: string) {
    const [row] = await this.db.select().from(requests).where(this.where(requestId)).limit(1);
    return row ?? null;
  }
}
