// RoomPages: how a ChatRoom's answers to `chat.attach` and `chat.history` are cut and written. A
// client's frame holds LINK_MAX_FRAME_BYTES at most, so an answer that would be larger is cut to the
// newest items that fit and the rest is left to history pages, each page cut the same way. The items go
// in as the JSON RoomStore keeps for each (`jsonOf`), joined into the reply's text rather than
// serialized again: a 5,000-item attach costs string joins, not a JSON.stringify of the thread.
//
// A history cursor names the room's epoch (bumped by a clear) and where the page ends: a cursor from
// before a clear, or past the thread's end, expires.
//
// Pure over what it is handed (the items, the store's JSON of each and its epoch): no socket, no
// storage write, no await; ChatRoom decides when to ask and where the answer goes.
import { LINK_MAX_FRAME_BYTES, ProtocolError, overFrameLimit, utf8Bytes, type ChatAttachResult, type ChatItem } from '../../../contracts/index.ts';
import { isPending, isRequestItem } from '../../db/requests.ts';

/** What of RoomStore the pages read: each item's JSON as stored, and the epoch (bumped by every clear). */
export interface PagedItems {
  jsonOf(item: ChatItem): string;
  readonly state: { readonly epoch: number };
}

/** Room kept in a history reply's frame for its id and wrapping. */
const HISTORY_REPLY_ROOM = 4 * 1024;

export class RoomPages {
  private readonly store: PagedItems;

  constructor(store: PagedItems) {
    this.store = store;
  }

  /**
   * The replay answer to an attach with `since`: `result` (info, seq, records; no items) and the
   * logged events as they were sent. Null when it would not fit one frame: a snapshot is answered then.
   */
  replay(id: string, result: Omit<ChatAttachResult, 'items'>, events: readonly string[]): string | null {
    const head = JSON.stringify({ id, ok: true, result: { ...result, items: [] } });
    const text = `${head.slice(0, -2)},"events":[${events.join(',')}]}}`;
    return overFrameLimit(text, LINK_MAX_FRAME_BYTES) ? null : text;
  }

  /**
   * The snapshot answer to an attach: the whole thread, or its newest `historyLimit` items with a
   * cursor to the rest and every request still waiting; cut further to the newest items that fit one
   * frame when that is still too large.
   */
  snapshot(id: string, result: Omit<ChatAttachResult, 'items'>, all: readonly ChatItem[], historyLimit: number | undefined): string {
    const answer: Omit<ChatAttachResult, 'items'> = { ...result };
    let items = all;
    if (historyLimit !== undefined && all.length > historyLimit) {
      const start = all.length - historyLimit;
      items = all.slice(start);
      answer.history = { start, cursor: this.cursor(start) };
      answer.pending = waiting(all);
    }
    const text = this.replyWithItems(id, answer, items);
    if (!overFrameLimit(text, LINK_MAX_FRAME_BYTES)) return text;
    // A chat of large items would answer one frame no client accepts: the newest items that fit, the
    // rest left to chat.history, as historyLimit cuts it.
    answer.pending = waiting(all);
    answer.history = { start: all.length, cursor: this.cursor(all.length) };
    const room = LINK_MAX_FRAME_BYTES - utf8Bytes(this.replyWithItems(id, answer, []));
    const start = this.newestThatFit(all, all.length - items.length, all.length, room);
    answer.history = { start, cursor: this.cursor(start) };
    return this.replyWithItems(id, answer, all.slice(start));
  }

  /** The answer to `chat.history`: the page of `all` that ends where `cursor` says, at most `limit` items and what fits one frame. */
  history(id: string, cursor: string, all: readonly ChatItem[] | null, limit = 50): string {
    const match = /^h1\.(\d+)\.(\d+)$/.exec(cursor);
    if (!all || !match || Number(match[1]) !== this.store.state.epoch || Number(match[2]) > all.length) {
      throw new ProtocolError('history-expired', 'That history cursor is no longer valid; attach again');
    }
    const end = Number(match[2]);
    // A page of large items is cut to what a client's frame holds (in bytes); the next goes on from there.
    const start = this.newestThatFit(all, Math.max(0, end - limit), end, LINK_MAX_FRAME_BYTES - HISTORY_REPLY_ROOM);
    return this.replyWithItems(id, { history: { start, cursor: start > 0 ? this.cursor(start) : null } }, all.slice(start, end));
  }

  private cursor(start: number): string {
    return `h1.${this.store.state.epoch}.${start}`;
  }

  /**
   * Where the newest items of `[floor, end)` that fit `room` bytes (their stored JSON, comma-joined)
   * begin; at least one, so paging always moves on. A length settles most pages (a unit is at most
   * three bytes); only a page that may not fit has its characters counted.
   */
  private newestThatFit(items: readonly ChatItem[], floor: number, end: number, room: number): number {
    let units = 0;
    for (let i = floor; i < end; i++) units += this.store.jsonOf(items[i]!).length + 1;
    if (units * 3 <= room) return floor;
    let start = end;
    while (start > floor) {
      const cost = utf8Bytes(this.store.jsonOf(items[start - 1]!), room) + 1;
      if (cost > room && start < end) break;
      room -= cost;
      start -= 1;
    }
    return start;
  }

  /** A reply whose result ends with `items`, each item's JSON joined as stored rather than serialized again. */
  private replyWithItems(id: string, result: object, items: readonly ChatItem[]): string {
    const head = JSON.stringify({ id, ok: true, result: { ...result, items: [] } });
    return `${head.slice(0, -4)}[${items.map((item) => this.store.jsonOf(item)).join(',')}]}}`;
  }
}

/** Every request item still waiting for an answer: an attach cut short still shows them. */
function waiting(items: readonly ChatItem[]): ChatItem[] {
  return items.filter((item) => isRequestItem(item) && isPending(item));
}
