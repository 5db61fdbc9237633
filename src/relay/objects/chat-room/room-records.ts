// What a ChatRoom keeps of its own about a chat, beside the host's thread: bookmarks and visual
// records in D1, visual pages in the room's storage. These are answered whether the host is online or
// not, kept in memory once read (they go into every attach answer), and sent whole to every attached
// client after each change, as `chat.bookmarks` and `chat.visuals`.
import { AGENT_EVENT_SCHEMAS, type ChatBookmark, type ChatItem, type ChatVisual } from '../../../contracts/index.ts';
import { BookmarkBook, type ChatKey } from '../../db/bookmarks.ts';
import { VisualShelf } from '../../db/visuals.ts';
import { eventFrame } from '../client-sockets.ts';
import type { RoomStore } from './room-store.ts';

export interface RecordsRoom {
  key(): ChatKey;
  fanOut(text: string): void;
}

export class RoomRecords {
  private readonly db: D1Database;
  private readonly store: RoomStore;
  private readonly room: RecordsRoom;
  private bookmarkCache: ChatBookmark[] | null = null;
  private visualCache: ChatVisual[] | null = null;

  constructor(db: D1Database, store: RoomStore, room: RecordsRoom) {
    this.db = db;
    this.store = store;
    this.room = room;
  }

  private book() {
    return new BookmarkBook(this.db, this.room.key());
  }
  private shelf() {
    return new VisualShelf(this.db, this.room.key());
  }

  async bookmarks(): Promise<ChatBookmark[]> {
    this.bookmarkCache ??= await this.book().list();
    return this.bookmarkCache;
  }

  async visuals(): Promise<ChatVisual[]> {
    this.visualCache ??= await this.shelf().list();
    return this.visualCache;
  }

  // ---- bookmark requests ----

  async addBookmark(item: ChatItem | undefined, itemId: string, name: string | undefined): Promise<ChatBookmark[]> {
    await this.book().add(item, itemId, name);
    return this.bookmarksChanged();
  }

  async renameBookmark(itemId: string, name: string): Promise<ChatBookmark[]> {
    await this.book().rename(itemId, name);
    return this.bookmarksChanged();
  }

  async removeBookmark(itemId: string): Promise<ChatBookmark[]> {
    await this.book().remove(itemId);
    return this.bookmarksChanged();
  }

  // ---- visuals ----

  /** `chat.removeVisual`: the record and its page go, and a later list from the host does not bring it back. */
  async removeVisual(visualId: string): Promise<ChatVisual[]> {
    this.store.removeVisual(visualId);
    await this.shelf().remove(visualId);
    return this.visualsChanged();
  }

  /** The host's whole list after a change, less what people removed here. */
  async hostVisuals(raw: unknown): Promise<void> {
    const parsed = AGENT_EVENT_SCHEMAS['chat.visuals'].safeParse(raw);
    if (!parsed.success) return;
    const removed = this.store.removedVisuals();
    const visuals = parsed.data.visuals.filter((visual) => !removed.has(visual.id));
    this.store.keepRemovalsOf(parsed.data.visuals.map((visual) => visual.id));
    await this.shelf().replace(visuals);
    this.visualCache = visuals;
    this.room.fanOut(eventFrame('chat.visuals', { chatId: this.room.key().chatId, visuals }));
  }

  /** A page the host sends before the list that names it. */
  hostVisualPage(raw: unknown): void {
    const page = raw as { visualId?: unknown; html?: unknown };
    if (typeof page.visualId !== 'string' || typeof page.html !== 'string') return;
    this.store.putVisualPage(page.visualId, page.html);
  }

  page(visualId: string): string | null {
    return this.store.visualPage(visualId);
  }

  /** After a clear or a kill: none of them stays. */
  async forget(): Promise<void> {
    await this.book().clear();
    await this.shelf().replace([]);
    this.store.forgetVisuals();
    this.bookmarkCache = [];
    this.visualCache = [];
    const { chatId } = this.room.key();
    this.room.fanOut(eventFrame('chat.bookmarks', { chatId, bookmarks: [] }));
    this.room.fanOut(eventFrame('chat.visuals', { chatId, visuals: [] }));
  }

  private async bookmarksChanged(): Promise<ChatBookmark[]> {
    this.bookmarkCache = await this.book().list();
    this.room.fanOut(eventFrame('chat.bookmarks', { chatId: this.room.key().chatId, bookmarks: this.bookmarkCache }));
    return this.bookmarkCache;
  }

  private async visualsChanged(): Promise<ChatVisual[]> {
    this.visualCache = await this.shelf().list();
    this.room.fanOut(eventFrame('chat.visuals', { chatId: this.room.key().chatId, visuals: this.visualCache }));
    return this.visualCache;
  }
}
