// Bookmarks are the relay's own: answered from D1 whether the host is online or not, with the
// documented rules (which items may be marked, names trimmed and clipped, excerpts, the per-chat cap).
import { and, asc, count, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { CHAT_BOOKMARK_LIMITS, ProtocolError, clipText, type ChatBookmark, type ChatItem } from '../../contracts/index.ts';
import { bookmarks } from './schema.ts';

export interface ChatKey {
  hostId: string;
  chatId: string;
}

/** Only a person's messages and the chat's own replies can be marked; a subagent's text cannot. */
export function excerptOf(item: ChatItem | undefined): string {
  if (item?.kind === 'user') {
    const text = item.text.replace(/\s+/g, ' ').trim();
    const shown = text || (item.attachments ?? []).map((a) => a.name).join(', ');
    return clipText(shown, CHAT_BOOKMARK_LIMITS.excerpt);
  }
  if (item?.kind === 'assistant' && !item.parentToolUseId) {
    return clipText(item.text.replace(/\s+/g, ' ').trim(), CHAT_BOOKMARK_LIMITS.excerpt);
  }
  throw new ProtocolError('item-not-found', 'That item cannot be bookmarked');
}

function cleanName(name: string | undefined): string | null {
  if (name === undefined) return null;
  const trimmed = clipText(name.trim(), CHAT_BOOKMARK_LIMITS.name);
  return trimmed.length > 0 ? trimmed : null;
}

export class BookmarkBook {
  private readonly db;
  private readonly key: ChatKey;
  constructor(d1: D1Database, key: ChatKey) {
    this.db = drizzle(d1);
    this.key = key;
  }

  private where(itemId?: string) {
    const chat = and(eq(bookmarks.hostId, this.key.hostId), eq(bookmarks.chatId, this.key.chatId));
    return itemId === undefined ? chat : and(chat, eq(bookmarks.itemId, itemId));
  }

  async list(): Promise<ChatBookmark[]> {
    const rows = await this.db.select().from(bookmarks).where(this.where()).orderBy(asc(bookmarks.createdAt), asc(bookmarks.itemId));
    return rows.map((row) => ({
      itemId: row.itemId,
      excerpt: row.excerpt,
      createdAt: row.createdAt,
      ...(row.name !== null ? { name: row.name } : {}),
    }));
  }

  async add(item: ChatItem | undefined, itemId: string, name: string | undefined): Promise<void> {
    if (!item) throw new ProtocolError('item-not-found', `No item ${itemId} in this chat`);
    const excerpt = excerptOf(item);
    const named = cleanName(name);
    const [existing] = await this.db.select({ itemId: bookmarks.itemId }).from(bookmarks).where(this.where(itemId)).limit(1);
    if (existing) {
      if (named !== null) await this.db.update(bookmarks).set({ name: named }).where(this.where(itemId));
      return;
    }
    const [{ n }] = (await this.db.select({ n: count() }).from(bookmarks).where(this.where())) as [{ n: number }];
    if (n >= CHAT_BOOKMARK_LIMITS.perChat) {
      throw new ProtocolError('too-many-bookmarks', `A chat holds at most ${CHAT_BOOKMARK_LIMITS.perChat} bookmarks`);
    }
    await this.db
      .insert(bookmarks)
      .values({ ...this.key, itemId, name: named, excerpt, createdAt: Date.now() })
      .onConflictDoNothing();
  }

  async rename(itemId: string, name: string): Promise<void> {
    const done = await this.db
      .update(bookmarks)
      .set({ name: cleanName(name) })
      .where(this.where(itemId))
      .returning({ itemId: bookmarks.itemId });
    if (done.length === 0) throw new ProtocolError('bookmark-not-found', `No bookmark on item ${itemId}`);
  }

  async remove(itemId: string): Promise<void> {
    await this.db.delete(bookmarks).where(this.where(itemId));
  }

  async clear(): Promise<void> {
    await this.db.delete(bookmarks).where(this.where());
  }
}
