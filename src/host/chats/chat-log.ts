// ChatLog: a chat's events, numbered and made durable. Every change to a chat's thread goes through
// `append`: the event is applied to the thread, gets the next `seq`, and is committed to the chat's
// log (host.db) before anyone sees it, so after a crash the host never hands out a `seq` twice.
//
// The log is what makes an event durable; the record (the whole thread) is a checkpoint that
// bounds how much of the log a load replays. A checkpoint is written once the chat has been quiet for
// `writeDelayMs`, or every `logLimit` events during a long stream (serializing a large thread every
// second while it streams would cost more than the stream), and when asked (create, shutdown). The
// log is cut back to the newest `logLimit` events only after a checkpoint has landed, and never past
// it: whatever the record on disk lacks is still in the log.
//
// A `reset` event (a clear) starts a new epoch, whether it is appended now or replayed at load:
// history cursors name their epoch, so a cursor from before a clear expires.
import { Thread } from '../../contracts/thread.ts';
import type { ChatEvent } from '../../contracts/index.ts';
import type { ChatRecord, ChatStore, LogEntry } from './store.ts';
import { RECORD_VERSION } from './store.ts';

export interface ChatLogOptions {
  store: ChatStore;
  /** Events kept for `since`; the log holds between this and twice this many (more while a checkpoint lags). */
  logLimit: number;
  /** How long the chat must be quiet before a checkpoint. */
  writeDelayMs: number;
  warn(message: string): void;
}

export class ChatLog {
  readonly thread: Thread;
  private current: number;
  private era: number;
  private entries: LogEntry[];
  private readonly options: ChatLogOptions;
  private writeTimer: NodeJS.Timeout | null = null;
  private lastEventAt = 0;
  /** The seq of the newest record asked for, and of the newest one known to be on disk. */
  private checkpointSeq: number;
  private durableSeq: number;
  private stopped = false;

  /** Takes up a chat from its record and the log lines read after it. */
  constructor(record: Pick<ChatRecord, 'info' | 'items' | 'seq' | 'epoch'>, entries: LogEntry[], options: ChatLogOptions) {
    this.options = options;
    this.thread = new Thread(record.info, record.items);
    this.current = record.seq;
    this.era = record.epoch;
    this.checkpointSeq = record.seq;
    this.durableSeq = record.seq;
    // The log is never cut past the record, so it goes on from the record's seq; one that does not
    // (a lost log) is dropped rather than applied with a hole in it.
    const first = entries.findIndex((entry) => entry.seq > record.seq);
    if (first >= 0 && entries[first].seq !== record.seq + 1) {
      options.warn(`chat ${record.info.chatId}: the log does not go on from the record (seq ${record.seq}); events after it are lost`);
      entries = [];
      // Its rows go too, so the seqs after the record are free for the events to come.
      options.store.cutLog(record.info.chatId, Number.MAX_SAFE_INTEGER);
    }
    this.entries = entries;
    for (const entry of first >= 0 ? entries.slice(first) : []) {
      this.fold(entry.event);
      this.current = entry.seq;
    }
  }

  /** The seq of the last event. */
  get seq(): number {
    return this.current;
  }

  /** Bumped by every reset (clear). */
  get epoch(): number {
    return this.era;
  }

  /** Applies `event`, numbers it and writes it to the log; answers its seq. */
  append(event: ChatEvent): number {
    this.fold(event);
    this.current += 1;
    const entry: LogEntry = { seq: this.current, at: Date.now(), event };
    this.entries.push(entry);
    try {
      this.options.store.appendLog(this.thread.info.chatId, entry);
    } catch (error) {
      this.options.warn(`chat ${this.thread.info.chatId}: log write failed: ${describe(error)}`);
    }
    this.scheduleCheckpoint();
    return this.current;
  }

  /** Events after `since`, when the log still holds every one of them; else null (the client needs a snapshot). */
  since(since: number): ChatEvent[] | null {
    if (since > this.current) return null;
    if (since === this.current) return [];
    const entries = this.entries;
    if (entries.length === 0 || entries[0].seq > since + 1 || entries.at(-1)!.seq !== this.current) return null;
    return entries.filter((entry) => entry.seq > since).map((entry) => entry.event);
  }

  /** Writes the record (the checkpoint) now. Once it has landed the log may be cut back. */
  async write(): Promise<void> {
    if (this.writeTimer) {
      clearTimeout(this.writeTimer);
      this.writeTimer = null;
    }
    const seq = this.current;
    this.checkpointSeq = seq;
    const { info, items } = this.thread;
    await this.options.store.writeRecord({ version: RECORD_VERSION, info, items, seq, epoch: this.era });
    this.durableSeq = Math.max(this.durableSeq, seq);
    this.cutBack();
  }

  /** No more checkpoints on a timer and no more cut-backs (shutdown, kill); `write` still works. */
  stop(): void {
    this.stopped = true;
    if (this.writeTimer) clearTimeout(this.writeTimer);
    this.writeTimer = null;
  }

  private fold(event: ChatEvent): void {
    this.thread.apply(event);
    if (event.type === 'reset') this.era += 1;
  }

  /** After each event: a checkpoint once the chat is quiet, or at once when the log has grown by `logLimit` since the last. */
  private scheduleCheckpoint(): void {
    if (this.stopped) return;
    this.lastEventAt = Date.now();
    if (this.current - this.checkpointSeq >= this.options.logLimit) {
      this.checkpoint();
      return;
    }
    this.writeTimer ??= setTimeout(() => this.checkpointWhenQuiet(), this.options.writeDelayMs);
  }

  private checkpointWhenQuiet(): void {
    this.writeTimer = null;
    const quietFor = Date.now() - this.lastEventAt;
    if (quietFor < this.options.writeDelayMs) {
      this.writeTimer = setTimeout(() => this.checkpointWhenQuiet(), this.options.writeDelayMs - quietFor);
      return;
    }
    this.checkpoint();
  }

  private checkpoint(): void {
    void this.write().catch((error: unknown) => this.options.warn(`chat ${this.thread.info.chatId}: write failed: ${describe(error)}`));
  }

  /** Keeps the newest `logLimit` events (for `since`) and every event the record on disk lacks; cuts only once the log holds twice that. */
  private cutBack(): void {
    if (this.stopped || this.entries.length < this.options.logLimit * 2) return;
    const keepAfter = Math.min(this.durableSeq, this.current - this.options.logLimit);
    const kept = this.entries.filter((entry) => entry.seq > keepAfter);
    if (kept.length === this.entries.length) return;
    try {
      this.options.store.cutLog(this.thread.info.chatId, keepAfter);
      this.entries = kept;
    } catch (error) {
      this.options.warn(`chat ${this.thread.info.chatId}: log cut-back failed: ${describe(error)}`);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
