// What a ChatRoom keeps in its own SQLite storage, and nothing about who is connected.
//
// - `room`: one row, read once and then kept in memory (it is read on every event): host and chat id,
//   the room's own `seq`, the host's last applied `seq`, the log floor (a `since` below it gets a
//   snapshot) and the history epoch (cursors from an older epoch are expired).
// - `meta`: the current ChatInfo.
// - `items`: the materialized thread in order, each row with the room `seq` it was last written at.
//   Item events are written as they come; deltas only mark the item dirty and are written in a
//   flush, so a streamed reply costs one row write per flush, not per delta. After a restart the
//   deltas logged after an item's row are applied again.
// - `log`: the events clients may replay, as the JSON that was sent (never serialized twice).
// - `kept`: `chat.send`s kept while the host was offline, in order, until it takes them.
// - `refused`: kept sends the host refused when it got them, each with the frame that said so and the
//   first room seq after it, so the sender learns it on attaching again even if they were away then.
// - `host_queued`: who sent each message the host queued (by the turn it reserved for it), so that one
//   whose sender lost access before it ran can be taken back.
// - `removed_visuals`: visuals a person removed, kept out of the host's later lists.
// - `blobs`: large values in parts under SQLite's value limit: visual pages, kept payloads, and any
//   item, logged event or info too large for its own row (the row then holds '').
import { Thread, type ChatEvent, type ChatInfo, type ChatItem } from '../../../contracts/index.ts';

// UTF-16 units per part: at most 3 bytes each in UTF-8, well under the 2 MB a SQLite value may hold.
const PART = 500_000;
export const LOG_KEEP = 10_000;
const REFUSED_KEEP_MS = 30 * 24 * 60 * 60 * 1000;
const REFUSED_KEEP_COUNT = 200;
/** Far more than a queue holds: the senders of messages long delivered go as new ones come. */
const HOST_QUEUED_KEEP = 500;
/** Removed visuals remembered at most (the host's list is smaller in practice; see keepRemovalsOf). */
export const REMOVED_VISUALS_MAX = 500;
const INFO_KEY = 'info';
const itemKey = (id: string) => `item:${id}`;
const visualKey = (id: string) => `visual:${id}`;
/** Zero-padded, so that the keys of a range of seqs sort as a range. */
const logKey = (seq: number) => `log:${String(seq).padStart(16, '0')}`;

/** What a queue shows of a kept send; the payload itself (up to 10 MiB of attachments) stays in blobs. */
export interface KeptPreview {
  pos: number;
  requestId: string;
  userId: string;
  at: number;
  text: string;
  mentions?: string[];
  skills?: string[];
  chats?: string[];
}

export interface RoomState {
  hostId: string | null;
  chatId: string | null;
  /** The room's own position: the seq of the last event it logged or sent. */
  seq: number;
  /** The host's seq of the last event applied; -1 before the first attach on the host. */
  hostSeq: number;
  logFloor: number;
  epoch: number;
}

/** The room's tables as they were before versions were kept (storage-migrations.ts): ChatRoom's version 1. */
export const ROOM_TABLES_V1 = `
      CREATE TABLE IF NOT EXISTS room (id INTEGER PRIMARY KEY CHECK (id = 1), host_id TEXT, chat_id TEXT,
        seq INTEGER NOT NULL, host_seq INTEGER NOT NULL, log_floor INTEGER NOT NULL, epoch INTEGER NOT NULL);
      INSERT OR IGNORE INTO room (id, seq, host_seq, log_floor, epoch) VALUES (1, 0, -1, 0, 0);
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS items (pos INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, json TEXT NOT NULL, seq INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, json TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS kept (pos INTEGER PRIMARY KEY AUTOINCREMENT, request_id TEXT NOT NULL, user_id TEXT NOT NULL,
        at INTEGER NOT NULL, preview TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS blobs (key TEXT NOT NULL, part INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (key, part));
      CREATE TABLE IF NOT EXISTS removed_visuals (visual_id TEXT PRIMARY KEY);
      CREATE TABLE IF NOT EXISTS refused (request_id TEXT NOT NULL, user_id TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL,
        frame TEXT NOT NULL, PRIMARY KEY (user_id, request_id));
      CREATE TABLE IF NOT EXISTS host_queued (turn_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, request_id TEXT NOT NULL, at INTEGER NOT NULL);
`;

export class RoomStore {
  private readonly sql: SqlStorage;
  readonly state: RoomState;
  /**
   * Each item's JSON as it was stored or last serialized, by the item object (items are never changed
   * in place: an event replaces the object), so an attach joins the thread's JSON rather than
   * serializing thousands of items again.
   */
  private readonly itemJson = new WeakMap<ChatItem, string>();

  constructor(sql: SqlStorage) {
    this.sql = sql;
    this.state = this.readState();
  }

  private readState(): RoomState {
    const [row] = this.sql
      .exec<{ host_id: string | null; chat_id: string | null; seq: number; host_seq: number; log_floor: number; epoch: number }>(
        'SELECT host_id, chat_id, seq, host_seq, log_floor, epoch FROM room WHERE id = 1',
      )
      .toArray();
    return { hostId: row!.host_id, chatId: row!.chat_id, seq: row!.seq, hostSeq: row!.host_seq, logFloor: row!.log_floor, epoch: row!.epoch };
  }

  /** Reads everything kept in memory again, after a storage step was rolled back. */
  reload(): void {
    Object.assign(this.state, this.readState());
    this.previews = null;
  }

  // ---- the room row ----
  name(hostId: string, chatId: string): void {
    if (this.state.hostId !== null) return;
    this.sql.exec('UPDATE room SET host_id = ?, chat_id = ? WHERE id = 1', hostId, chatId);
    Object.assign(this.state, { hostId, chatId });
  }

  /** Moves the room (and, for host events, the host position) forward in one write. */
  advance(seq: number, hostSeq = this.state.hostSeq): void {
    this.sql.exec('UPDATE room SET seq = ?, host_seq = ? WHERE id = 1', seq, hostSeq);
    this.state.seq = seq;
    this.state.hostSeq = hostSeq;
  }

  /** A new start for replay and paging: `since` below `floor` gets a snapshot, older cursors expire. */
  restart(floor: number, hostSeq: number): void {
    this.dropLogThrough(floor);
    this.sql.exec('UPDATE room SET log_floor = ?, epoch = epoch + 1, host_seq = ? WHERE id = 1', floor, hostSeq);
    this.state.logFloor = floor;
    this.state.epoch += 1;
    this.state.hostSeq = hostSeq;
  }

  /** Forgets log entries older than `floor` (kept bounded); a `since` below it gets a snapshot. */
  trimLog(floor: number): void {
    this.dropLogThrough(floor);
    this.sql.exec('UPDATE room SET log_floor = ? WHERE id = 1', floor);
    this.state.logFloor = floor;
  }

  // ---- the thread ----
  /** The thread as stored, with the deltas logged after each item's row applied again. */
  loadThread(): Thread | null {
    const [meta] = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'info'").toArray();
    if (!meta) return null;
    const rows = this.sql.exec<{ id: string; json: string; seq: number }>('SELECT id, json, seq FROM items ORDER BY pos').toArray();
    const writtenAt = new Map<string, number>();
    let oldest = Number.POSITIVE_INFINITY;
    const items = rows.map((row) => {
      writtenAt.set(row.id, row.seq);
      if (row.seq < oldest) oldest = row.seq;
      const json = this.unspill(row.json, itemKey(row.id));
      const item = JSON.parse(json) as ChatItem;
      this.itemJson.set(item, json);
      return item;
    });
    const thread = new Thread(JSON.parse(this.unspill(meta.value, INFO_KEY)) as ChatInfo, items);
    if (oldest === Number.POSITIVE_INFINITY) return thread;
    // The log holds only events this room validated and wrote itself: parsed, not checked again.
    for (const row of this.sql.exec<{ seq: number; json: string }>('SELECT seq, json FROM log WHERE seq > ? ORDER BY seq', oldest)) {
      const event = JSON.parse(this.unspill(row.json, logKey(row.seq))) as ChatEvent;
      if (event.type !== 'delta') continue;
      const at = writtenAt.get(event.itemId);
      if (at !== undefined && row.seq > at) thread.apply(event);
    }
    return thread;
  }

  /** `json` is the info serialized, when the caller already has it. */
  writeInfo(info: ChatInfo, json = JSON.stringify(info)): void {
    this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('info', ?)", this.spill(json, INFO_KEY));
  }

  /** `json` is the item serialized, when the caller already has it. */
  writeItem(thread: Thread, item: ChatItem, seq: number, json = this.jsonOf(item)): void {
    this.itemJson.set(item, json);
    this.sql.exec(
      'INSERT INTO items (pos, id, json, seq) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET json = excluded.json, seq = excluded.seq',
      thread.positionOf(item.id),
      item.id,
      this.spill(json, itemKey(item.id)),
      seq,
    );
  }

  replaceThread(thread: Thread, seq: number): void {
    this.dropThreadRows();
    thread.items.forEach((item, pos) => {
      this.sql.exec('INSERT INTO items (pos, id, json, seq) VALUES (?, ?, ?, ?)', pos, item.id, this.spill(this.jsonOf(item), itemKey(item.id)), seq);
    });
    this.writeInfo(thread.info);
  }

  /** An item's JSON: as stored, or serialized now (and kept for the next attach). */
  jsonOf(item: ChatItem): string {
    let json = this.itemJson.get(item);
    if (json === undefined) this.itemJson.set(item, (json = JSON.stringify(item)));
    return json;
  }

  /** Forgets the thread and its log; the room's own seq goes on, so no client mistakes old for new. */
  forgetThread(): void {
    this.dropThreadRows();
    this.sql.exec("DELETE FROM meta WHERE key = 'info'");
    this.forgetVisuals();
    this.restart(this.state.seq, -1);
  }

  private dropThreadRows(): void {
    this.sql.exec("DELETE FROM items; DELETE FROM blobs WHERE key >= 'item:' AND key < 'item;'");
  }

  // ---- the log ----
  appendLog(seq: number, json: string): void {
    this.sql.exec('INSERT INTO log (seq, json) VALUES (?, ?)', seq, this.spill(json, logKey(seq)));
  }

  /** Logged event JSON after `since`, in order. */
  logAfter(since: number): string[] {
    return this.sql
      .exec<{ seq: number; json: string }>('SELECT seq, json FROM log WHERE seq > ? ORDER BY seq', since)
      .toArray()
      .map((row) => this.unspill(row.json, logKey(row.seq)));
  }

  private dropLogThrough(floor: number): void {
    this.sql.exec('DELETE FROM log WHERE seq <= ?', floor);
    this.sql.exec("DELETE FROM blobs WHERE key >= 'log:' AND key <= ?", logKey(floor));
  }

  // ---- sends kept for an offline host ----
  /** The bytes the kept sends' payloads take (read only when one is about to be kept). */
  keptBytes(): number {
    const [row] = this.sql.exec<{ n: number | null }>("SELECT sum(length(data)) AS n FROM blobs WHERE key >= 'kept:' AND key < 'kept;'").toArray();
    return row?.n ?? 0;
  }

  /**
   * Keeps a send: `payload` (parsed) gives the queue its preview; a signed send is kept as the client
   * sent it (`signed`: its own payload, whose digest was signed, and the signature beside it).
   */
  keep(
    requestId: string,
    userId: string,
    payload: { text?: string; mentions?: string[]; skills?: string[]; chats?: string[] },
    signed?: { payload: unknown; signature: unknown },
  ): void {
    const { text = '', mentions, skills, chats } = payload;
    const preview = JSON.stringify({ text, mentions, skills, chats });
    // A preview too large for a row is read back from the payload, which holds the same fields.
    this.sql.exec(
      'INSERT INTO kept (request_id, user_id, at, preview) VALUES (?, ?, ?, ?)',
      requestId,
      userId,
      Date.now(),
      preview.length > PART ? '' : preview,
    );
    const [row] = this.sql.exec<{ pos: number }>('SELECT last_insert_rowid() AS pos').toArray();
    this.putBlob(`kept:${row!.pos}`, JSON.stringify(signed ? signed.payload : payload));
    if (signed) this.putBlob(`kept:${row!.pos}:signature`, JSON.stringify(signed.signature));
    this.previews = null;
  }

  private previews: KeptPreview[] | null = null;

  /** The kept sends in order, without their payloads; read on every info event, so kept in memory. */
  kept(): KeptPreview[] {
    this.previews ??= this.sql
      .exec<{ pos: number; request_id: string; user_id: string; at: number; preview: string }>(
        'SELECT pos, request_id, user_id, at, preview FROM kept ORDER BY pos',
      )
      .toArray()
      .map((row) => {
        const {
          text = '',
          mentions,
          skills,
          chats,
        } = (row.preview ? JSON.parse(row.preview) : this.keptPayload(row.pos)) as Omit<KeptPreview, 'pos' | 'requestId' | 'userId' | 'at'>;
        return { pos: row.pos, requestId: row.request_id, userId: row.user_id, at: row.at, text, mentions, skills, chats };
      });
    return this.previews;
  }

  keptPayload(pos: number): unknown {
    return JSON.parse(this.getBlob(`kept:${pos}`) ?? 'null');
  }

  /** The signature a kept send came with, or undefined for an unsigned one. */
  keptSignature(pos: number): unknown {
    const stored = this.getBlob(`kept:${pos}:signature`);
    return stored === null ? undefined : JSON.parse(stored);
  }

  unkeep(pos: number): void {
    this.sql.exec('DELETE FROM kept WHERE pos = ?', pos);
    this.dropBlob(`kept:${pos}`);
    this.dropBlob(`kept:${pos}:signature`);
    this.previews = null;
  }

  /**
   * Remembers that the host refused a kept send: `frame` is the `chat.sendRefused` event as sent, `seq`
   * the first room seq after the refusal. Refusals older than REFUSED_KEEP_MS go, and at most
   * REFUSED_KEEP_COUNT are kept: a device away longer than that finds its send gone from the queue.
   */
  refuse(requestId: string, userId: string, seq: number, frame: string, now = Date.now()): void {
    this.sql.exec('INSERT OR REPLACE INTO refused (request_id, user_id, seq, at, frame) VALUES (?, ?, ?, ?, ?)', requestId, userId, seq, now, frame);
    this.sql.exec(
      'DELETE FROM refused WHERE at < ? OR rowid NOT IN (SELECT rowid FROM refused ORDER BY at DESC LIMIT ?)',
      now - REFUSED_KEEP_MS,
      REFUSED_KEEP_COUNT,
    );
  }

  /** The refusal frames of one person's kept sends, those a client that applied the events up to `since` may have missed; oldest first. */
  refusals(userId: string, since = 0): string[] {
    return this.sql
      .exec<{ frame: string }>('SELECT frame FROM refused WHERE user_id = ? AND seq > ? ORDER BY seq, at', userId, since)
      .toArray()
      .map((row) => row.frame);
  }

  // ---- who sent what the host queued ----

  /** The host queued a person's send under this turn. At most HOST_QUEUED_KEEP are remembered, the newest. */
  hostQueued(turnId: string, userId: string, requestId: string, now = Date.now()): void {
    this.sql.exec('INSERT OR REPLACE INTO host_queued (turn_id, user_id, request_id, at) VALUES (?, ?, ?, ?)', turnId, userId, requestId, now);
    this.sql.exec('DELETE FROM host_queued WHERE rowid NOT IN (SELECT rowid FROM host_queued ORDER BY at DESC LIMIT ?)', HOST_QUEUED_KEEP);
  }

  hostQueuedSenders(): { turnId: string; userId: string; requestId: string; at: number }[] {
    return this.sql
      .exec<{ turn_id: string; user_id: string; request_id: string; at: number }>('SELECT turn_id, user_id, request_id, at FROM host_queued')
      .toArray()
      .map((row) => ({ turnId: row.turn_id, userId: row.user_id, requestId: row.request_id, at: row.at }));
  }

  forgetHostQueued(turnId: string): void {
    this.sql.exec('DELETE FROM host_queued WHERE turn_id = ?', turnId);
  }

  // ---- visual pages ----
  putVisualPage(visualId: string, html: string): void {
    if (this.removedVisuals().has(visualId)) return; // sent again after a reconnect, but removed here since
    this.putBlob(visualKey(visualId), html);
  }

  visualPage(visualId: string): string | null {
    return this.getBlob(visualKey(visualId));
  }

  /**
   * A person removed a visual: its page goes, and its id is remembered, since the host keeps no
   * removals and names it again in every whole list it sends later.
   */
  removeVisual(visualId: string): void {
    this.sql.exec('INSERT OR IGNORE INTO removed_visuals (visual_id) VALUES (?)', visualId);
    // Bounded however many are removed between two lists: the oldest removals go first.
    this.sql.exec('DELETE FROM removed_visuals WHERE rowid NOT IN (SELECT rowid FROM removed_visuals ORDER BY rowid DESC LIMIT ?)', REMOVED_VISUALS_MAX);
    this.dropBlob(visualKey(visualId));
  }

  /**
   * The host's whole list names only these now: a removal it no longer names has nothing left to
   * hide (the host dropped that visual itself), so it is forgotten. This keeps the set no larger
   * than the host's own list.
   */
  keepRemovalsOf(listed: readonly string[]): void {
    const removed = this.removedVisuals();
    if (removed.size === 0) return;
    const named = new Set(listed);
    for (const visualId of removed) if (!named.has(visualId)) this.sql.exec('DELETE FROM removed_visuals WHERE visual_id = ?', visualId);
  }

  removedVisuals(): Set<string> {
    return new Set(
      this.sql
        .exec<{ visual_id: string }>('SELECT visual_id FROM removed_visuals')
        .toArray()
        .map((row) => row.visual_id),
    );
  }

  /** A clear or a kill empties the host's list too: pages and removals go. */
  forgetVisuals(): void {
    this.sql.exec("DELETE FROM blobs WHERE key >= 'visual:' AND key < 'visual;'; DELETE FROM removed_visuals");
  }

  // ---- values too large for one row ----
  /**
   * What to store in a row for `text`: the text itself, or '' (never valid JSON) with the text kept in
   * parts under `key`. A host may send an item or event of up to a link frame (16 MiB); a row holds 2 MB.
   */
  private spill(text: string, key: string): string {
    if (text.length <= PART) return text;
    this.putBlob(key, text);
    return '';
  }

  private unspill(stored: string, key: string): string {
    return stored === '' ? (this.getBlob(key) ?? 'null') : stored;
  }

  // ---- blobs ----
  private putBlob(key: string, value: string): void {
    this.dropBlob(key);
    for (let part = 0, at = 0; at < value.length || part === 0; part++, at += PART) {
      this.sql.exec('INSERT INTO blobs (key, part, data) VALUES (?, ?, ?)', key, part, value.slice(at, at + PART));
    }
  }
  private getBlob(key: string): string | null {
    const parts = this.sql.exec<{ data: string }>('SELECT data FROM blobs WHERE key = ? ORDER BY part', key).toArray();
    return parts.length === 0 ? null : parts.map((p) => p.data).join('');
  }
  private dropBlob(key: string): void {
    this.sql.exec('DELETE FROM blobs WHERE key = ?', key);
  }
}
