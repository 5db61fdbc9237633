// One chat as an app draws it: the items in order, the chat's info, its bookmarks and visuals, the
// approvals and questions still waiting, and the relay `seq` of the last event applied. Pure: it is fed
// attach answers, events and history pages (ChatChannel does the feeding) and tells subscribers what
// changed. Nothing here copies or re-sorts the whole list per event: an item event replaces one slot,
// a delta replaces one item with its text extended (a new object, so a view can memoize by identity),
// and only a snapshot, a reset or an older page rebuilds the index.
import {
  appendDelta,
  type ChatAttachResult,
  type ChatBookmark,
  type ChatEvent,
  type ChatEventEnvelope,
  type ChatHistoryResult,
  type ChatInfo,
  type ChatItem,
  type ChatVisual,
} from '../contracts/index.ts';

/** A waiting approval or question. */
export type RequestItem = Extract<ChatItem, { kind: 'approval' | 'question' }>;

/** What one change touched, for views that redraw only that. */
export type ThreadChange =
  | { kind: 'snapshot' }
  | { kind: 'item'; id: string; index: number; added: boolean }
  | { kind: 'delta'; id: string; index: number }
  | { kind: 'older'; count: number }
  | { kind: 'info' }
  | { kind: 'bookmarks' }
  | { kind: 'visuals' }
  /** Only the waiting list changed (a request in a page not loaded). */
  | { kind: 'pending' };

/** What became of one event: applied, already had (its seq is not past ours), or past a gap (seq missing). */
export type EventOutcome = 'applied' | 'duplicate' | 'gap';

/** Reads an older page of the thread (`chat.history`). */
export type HistorySource = (cursor: string) => Promise<ChatHistoryResult>;

export class ThreadModel {
  readonly chatId: string;
  info: ChatInfo | null = null;
  items: ChatItem[] = [];
  bookmarks: ChatBookmark[] = [];
  visuals: ChatVisual[] = [];
  /** The relay seq of the last event applied: what `chat.attach` `since` says on a reconnect. */
  seq = 0;
  /** Counts changes; a view compares it to know whether to redraw. */
  version = 0;
  /** Whether an attach answer has been applied (the thread is the chat's, not just a preview). */
  attached = false;
  private readonly positions = new Map<string, number>();
  private readonly waiting = new Map<string, RequestItem>();
  private cursor: string | null = null;
  /** Bumped by every snapshot: an older page asked for before it belongs to a thread that is gone. */
  private epoch = 0;
  private olderLoad: Promise<number> | null = null;
  private readonly listeners = new Set<(change: ThreadChange) => void>();
  private history: HistorySource | null;

  constructor(chatId: string, history: HistorySource | null = null) {
    this.chatId = chatId;
    this.history = history;
  }

  // ---- reading ----

  get(id: string): ChatItem | undefined {
    const at = this.positions.get(id);
    return at === undefined ? undefined : this.items[at];
  }

  /** The item with this id, by id. */
  get byId(): { get(id: string): ChatItem | undefined; has(id: string): boolean } {
    return { get: (id) => this.get(id), has: (id) => this.positions.has(id) };
  }

  indexOf(id: string): number | undefined {
    return this.positions.get(id);
  }

  /** Approvals and questions still waiting, oldest first, wherever they sit (loaded pages or not). */
  get pending(): RequestItem[] {
    return [...this.waiting.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  get hasOlder(): boolean {
    return this.cursor !== null;
  }

  subscribe(listener: (change: ThreadChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- feeding ----

  /** Where older pages come from (ChatChannel sets it to its own `chat.history`). */
  setHistorySource(history: HistorySource | null): void {
    this.history = history;
  }

  /**
   * Applies a `chat.attach` answer. With the events after `since` (the relay kept them) they are
   * applied in order, as if they had come live; otherwise the answer is a snapshot and REPLACES the
   * thread (never appended: a snapshot is the whole chat as of its seq).
   */
  applyAttach(result: ChatAttachResult, since?: number): 'replay' | 'snapshot' {
    const replay = result.events !== undefined && since !== undefined && this.attached && result.items.length === 0;
    if (replay) {
      let seq = since;
      for (const event of result.events!) this.applyEnvelope({ chatId: this.chatId, event, seq: ++seq });
      if (result.seq !== undefined && result.seq > this.seq) this.seq = result.seq;
      this.info = result.info;
      this.emit({ kind: 'info' });
    } else {
      this.epoch += 1;
      this.info = result.info;
      this.items = result.items;
      this.reindex(result.pending ?? []);
      this.cursor = result.history?.cursor ?? null;
      this.seq = result.seq ?? 0;
      this.emit({ kind: 'snapshot' });
    }
    this.attached = true;
    if (result.bookmarks) this.applyBookmarks(result.bookmarks);
    if (result.visuals) this.applyVisuals(result.visuals);
    return replay ? 'replay' : 'snapshot';
  }

  /** Applies one `chat.event`. Events without a seq (UI previews) are never logged and always applied. */
  applyEnvelope(envelope: ChatEventEnvelope): EventOutcome {
    const { seq } = envelope;
    if (seq !== undefined) {
      if (seq <= this.seq) return 'duplicate';
      if (this.attached && seq > this.seq + 1) return 'gap';
    }
    this.applyEvent(envelope.event);
    if (seq !== undefined) this.seq = seq;
    return 'applied';
  }

  applyBookmarks(bookmarks: ChatBookmark[]): void {
    this.bookmarks = bookmarks;
    this.emit({ kind: 'bookmarks' });
  }

  applyVisuals(visuals: ChatVisual[]): void {
    this.visuals = visuals;
    this.emit({ kind: 'visuals' });
  }

  /**
   * A `chat.status` from the lobby. Only for a thread not attached: an attached chat hears its info
   * from its own room, which also shows the sends the relay keeps for an offline host.
   */
  applyStatus(info: ChatInfo): void {
    if (this.attached || info.chatId !== this.chatId) return;
    this.info = info;
    this.emit({ kind: 'info' });
  }

  /** Loads the page before the oldest loaded item and prepends it; answers how many items came. */
  loadOlder(): Promise<number> {
    if (!this.cursor || !this.history) return Promise.resolve(0);
    this.olderLoad ??= this.readOlder(this.cursor, this.history).finally(() => {
      this.olderLoad = null;
    });
    return this.olderLoad;
  }

  /** Loads every older page (before an export of the whole chat, say); answers how many items came. */
  async loadAll(): Promise<number> {
    let total = 0;
    while (this.hasOlder && this.history) total += await this.loadOlder();
    return total;
  }

  /** Prepends an older page (what loadOlder does with the page it read). */
  prependHistory(page: ChatHistoryResult): number {
    const older = page.items.filter((item) => !this.positions.has(item.id));
    this.items = older.concat(this.items);
    this.cursor = page.history.cursor;
    this.reindex(null);
    for (const item of older) this.track(item);
    this.emit({ kind: 'older', count: older.length });
    return older.length;
  }

  private async readOlder(cursor: string, history: HistorySource): Promise<number> {
    const epoch = this.epoch;
    const page = await history(cursor);
    if (epoch !== this.epoch) return 0; // a snapshot replaced the thread meanwhile; its own cursor applies
    return this.prependHistory(page);
  }

  private applyEvent(event: ChatEvent): void {
    switch (event.type) {
      case 'item':
        return this.upsert(event.item);
      case 'delta':
        return this.delta(event);
      case 'info':
        this.info = event.info;
        return this.emit({ kind: 'info' });
      case 'reset':
        this.epoch += 1;
        this.info = event.info;
        this.items = event.items.slice();
        this.cursor = null;
        this.reindex([]);
        return this.emit({ kind: 'snapshot' });
    }
  }

  private upsert(item: ChatItem): void {
    this.track(item);
    const at = this.positions.get(item.id);
    if (at !== undefined) {
      this.items[at] = item;
      return this.emit({ kind: 'item', id: item.id, index: at, added: false });
    }
    // An item that is not loaded but older than what is (its page was never read) is left for that
    // page: appending it would put an old approval's update after the newest reply.
    if (this.cursor !== null && this.items.length > 0 && item.createdAt < this.items[0]!.createdAt) {
      if (isRequest(item)) this.emit({ kind: 'pending' });
      return;
    }
    this.positions.set(item.id, this.items.length);
    this.items.push(item);
    this.emit({ kind: 'item', id: item.id, index: this.items.length - 1, added: true });
  }

  private delta(event: Extract<ChatEvent, { type: 'delta' }>): void {
    const at = this.positions.get(event.itemId);
    if (at === undefined) return;
    const item = this.items[at]!;
    let next = event.text.length > 0 ? appendDelta(item, event.text) : item;
    // A UI streaming preview: the blocks as parsed so far, never logged, replaced by the item later.
    if (next.kind === 'assistant' && (event.ui !== undefined || event.uiQueries !== undefined)) {
      next = { ...next, ...(event.ui !== undefined ? { ui: event.ui } : {}), ...(event.uiQueries !== undefined ? { uiQueries: event.uiQueries } : {}) };
    }
    if (next === item) return;
    this.items[at] = next;
    this.emit({ kind: 'delta', id: item.id, index: at });
  }

  /** Keeps `pending` current: a request item joins while it waits and leaves once settled. */
  private track(item: ChatItem): void {
    if (!isRequest(item)) return;
    if (isWaiting(item)) this.waiting.set(item.id, item);
    else this.waiting.delete(item.id);
  }

  /**
   * Rebuilds the positions. `pending`: start the waiting list over from these (plus the items), as a
   * snapshot does; null keeps it (an older page adds to it).
   */
  private reindex(pending: ChatItem[] | null | undefined): void {
    this.positions.clear();
    const track = pending !== null;
    if (track) this.waiting.clear();
    for (const item of pending ?? []) this.track(item);
    this.items.forEach((item, i) => {
      this.positions.set(item.id, i);
      if (track) this.track(item);
    });
  }

  private emit(change: ThreadChange): void {
    this.version += 1;
    for (const listener of this.listeners) listener(change);
  }
}

function isRequest(item: ChatItem): item is RequestItem {
  return item.kind === 'approval' || item.kind === 'question';
}

function isWaiting(item: RequestItem): boolean {
  return item.kind === 'approval' ? item.decision === 'pending' : item.state === 'pending';
}
