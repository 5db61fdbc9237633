// Visual records as the host published them. The host sends the whole list after every change; the
// relay keeps it so a phone sees a chat's visuals while the machine sleeps.
import { and, asc, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import type { ChatVisual } from '../../contracts/index.ts';
import type { ChatKey } from './bookmarks.ts';
import { visuals } from './schema.ts';

export class VisualShelf {
  private readonly db;
  private readonly key: ChatKey;
  constructor(d1: D1Database, key: ChatKey) {
    this.db = drizzle(d1);
    this.key = key;
  }

  private where(visualId?: string) {
    const chat = and(eq(visuals.hostId, this.key.hostId), eq(visuals.chatId, this.key.chatId));
    return visualId === undefined ? chat : and(chat, eq(visuals.visualId, visualId));
  }

  async list(): Promise<ChatVisual[]> {
    const rows = await this.db.select().from(visuals).where(this.where()).orderBy(asc(visuals.at), asc(visuals.visualId));
    return rows.map((row) => ({
      id: row.visualId,
      title: row.title,
      at: row.at,
      maxHeight: row.maxHeight,
      size: row.size,
      ...(row.heights !== null ? { heights: JSON.parse(row.heights) as ChatVisual['heights'] } : {}),
      ...(row.turnId !== null ? { turnId: row.turnId } : {}),
      ...(row.layout !== null ? { layout: row.layout as NonNullable<ChatVisual['layout']> } : {}),
    }));
  }

  /**
   * Makes the stored list the host's list, in one transaction: every row written again rather than a
   * statement naming every id, which D1 limits to 100 bound values.
   */
  async replace(list: ChatVisual[]): Promise<void> {
    const rows = list.map((v) =>
      this.db
        .insert(visuals)
        .values({
          ...this.key,
          visualId: v.id,
          title: v.title,
          at: Math.round(v.at),
          maxHeight: Math.round(v.maxHeight),
          size: v.size,
          heights: v.heights ? JSON.stringify(v.heights) : null,
          turnId: v.turnId ?? null,
          layout: v.layout ?? null,
        })
        .onConflictDoNothing(),
    );
    await this.db.batch([this.db.delete(visuals).where(this.where()), ...rows]);
  }

  async remove(visualId: string): Promise<void> {
    await this.db.delete(visuals).where(this.where(visualId));
  }
}
