// Where a chat lives on disk, under the host's data folder (`<id>` is the chat id as a file name, see
// `chatFileName`):
//
//   chats/<id>.json                              the record {version, info, items, seq, epoch}: a
//                                                checkpoint, written atomically (tmp + rename)
//   host.db, table chat_events                   the log: a row {chat_id, seq, at, event} committed as
//                                                each event happens (db.ts); every event after the
//                                                checkpoint is replayed from here on load. When to
//                                                checkpoint and how far the log may be cut back is
//                                                ChatLog's to decide.
//   chats/<id>.visuals.json                      {version: 1, visuals}
//   attachments/<id>/                            uploaded files and visual pages
//
// A record this version cannot read is reported as unreadable and never written over.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ChatEventSchema, ChatInfoSchema, ChatItemSchema, ChatVisualSchema } from '../../contracts/index.ts';
import type { ChatVisual } from '../../contracts/index.ts';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { inTransaction, openHostDb } from '../db.ts';
import { markRunningRequest, START_ROW_SQL } from './journal.ts';
import { replaceFile, replaceFileDurably } from '../disk.ts';

export const RECORD_VERSION = 1;

const ChatRecordSchema = z.object({
  version: z.literal(RECORD_VERSION),
  info: ChatInfoSchema,
  items: z.array(ChatItemSchema),
  seq: z.int().nonnegative(),
  /** Bumped by every clear; history cursors of an older epoch are expired. */
  epoch: z.int().nonnegative().default(0),
});
export type ChatRecord = z.output<typeof ChatRecordSchema>;

export const LogLineSchema = z.object({ seq: z.int().positive(), at: z.number(), event: ChatEventSchema });
export type LogEntry = z.output<typeof LogLineSchema>;

const VisualsFileSchema = z.object({ version: z.literal(1), visuals: z.array(ChatVisualSchema) });

export type LoadedChat = { ok: true; record: ChatRecord; log: LogEntry[] } | { ok: false; chatId: string; reason: string };

export class ChatStore {
  readonly dataDir: string;
  readonly chatsDir: string;
  readonly attachmentsDir: string;
  /** One write chain per chat file, so writes land in the order they were asked for. */
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly db: DatabaseSync;
  private readonly appended: StatementSync;
  private readonly logged: StatementSync;
  private readonly cut: StatementSync;
  private readonly cutAfter: StatementSync;
  private readonly requestStarted: StatementSync;

  constructor(dataDir: string) {
    this.dataDir = dataDir;
    this.chatsDir = path.join(dataDir, 'chats');
    this.attachmentsDir = path.join(dataDir, 'attachments');
    mkdirSync(this.chatsDir, { recursive: true });
    mkdirSync(this.attachmentsDir, { recursive: true });
    this.db = openHostDb(dataDir);
    this.appended = this.db.prepare('INSERT INTO chat_events (chat_id, seq, at, event) VALUES (?, ?, ?, ?)');
    this.requestStarted = this.db.prepare(START_ROW_SQL);
    this.logged = this.db.prepare('SELECT seq, at, event FROM chat_events WHERE chat_id = ? ORDER BY seq');
    this.cut = this.db.prepare('DELETE FROM chat_events WHERE chat_id = ? AND seq <= ?');
    this.cutAfter = this.db.prepare('DELETE FROM chat_events WHERE chat_id = ? AND seq > ?');
  }

  recordPath(chatId: string): string {
    return path.join(this.chatsDir, `${chatFileName(chatId)}.json`);
  }

  visualsPath(chatId: string): string {
    return path.join(this.chatsDir, `${chatFileName(chatId)}.visuals.json`);
  }

  attachmentDir(chatId: string): string {
    return path.join(this.attachmentsDir, chatFileName(chatId));
  }

  /** Every chat on disk, readable or not. */
  loadAll(): LoadedChat[] {
    const out: LoadedChat[] = [];
    for (const name of readdirSync(this.chatsDir)) {
      const chatId = recordChatId(name);
      if (chatId !== null) out.push(this.load(chatId));
    }
    return out;
  }

  load(chatId: string): LoadedChat {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.recordPath(chatId), 'utf8'));
    } catch (error) {
      return { ok: false, chatId, reason: `cannot read the record: ${describe(error)}` };
    }
    const parsed = ChatRecordSchema.safeParse(raw);
    if (!parsed.success || parsed.data.info.chatId !== chatId) {
      return { ok: false, chatId, reason: parsed.success ? 'the record names another chat' : z.prettifyError(parsed.error) };
    }
    const log = this.readLog(chatId);
    return { ok: true, record: parsed.data, log };
  }

  /**
   * The log's events in order, up to the first row that is unreadable or out of sequence; the rows
   * after it are deleted, as a torn file was cut, so the next append's `seq` is free.
   */
  readLog(chatId: string): LogEntry[] {
    const entries: LogEntry[] = [];
    for (const row of this.logged.iterate(chatId)) {
      let entry: ReturnType<typeof LogLineSchema.safeParse>;
      try {
        entry = LogLineSchema.safeParse({ seq: row.seq, at: row.at, event: JSON.parse(row.event as string) });
      } catch {
        break;
      }
      const last = entries.at(-1);
      if (!entry.success || (last && entry.data.seq !== last.seq + 1)) break;
      entries.push(entry.data);
    }
    const trusted = entries.at(-1)?.seq;
    if (trusted === undefined) this.cut.run(chatId, Number.MAX_SAFE_INTEGER);
    else this.cutAfter.run(chatId, trusted);
    return entries;
  }

  /** Writes the record atomically and durably: ChatLog cuts the log back once it has landed. */
  writeRecord(record: ChatRecord): Promise<void> {
    const file = this.recordPath(record.info.chatId);
    const text = JSON.stringify(record);
    return this.serial(file, () => replaceFileDurably(file, text));
  }

  /**
   * Commits one event to the chat's log, synchronously: the row is durable before the event reaches
   * any client or the outbox, so after a crash the host never numbers an event with a `seq` the relay
   * has already seen.
   */
  appendLog(chatId: string, entry: LogEntry): void {
    const text = JSON.stringify(entry.event);
    let marked = false;
    // The first change a journaled request makes carries its journal row in the same commit (journal.ts).
    markRunningRequest((key) => {
      inTransaction(this.db, () => {
        this.requestStarted.run(key);
        this.appended.run(chatId, entry.seq, entry.at, text);
      });
      marked = true;
    });
    if (!marked) this.appended.run(chatId, entry.seq, entry.at, text);
  }

  /** Cuts the log back: forgets its events up to and including `seq` (all of them: Number.MAX_SAFE_INTEGER). */
  cutLog(chatId: string, seq: number): void {
    this.cut.run(chatId, seq);
  }

  readVisuals(chatId: string): ChatVisual[] {
    try {
      const parsed = VisualsFileSchema.safeParse(JSON.parse(readFileSync(this.visualsPath(chatId), 'utf8')));
      return parsed.success ? parsed.data.visuals : [];
    } catch {
      return [];
    }
  }

  writeVisuals(chatId: string, visuals: ChatVisual[]): Promise<void> {
    const file = this.visualsPath(chatId);
    const text = JSON.stringify({ version: 1, visuals });
    return this.serial(file, () => replaceFile(file, text));
  }

  /** Stores bytes under the chat's attachment folder; answers the absolute path. */
  async writeAttachment(chatId: string, fileName: string, data: Buffer | string): Promise<string> {
    const dir = this.attachmentDir(chatId);
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, fileName);
    await writeFile(file, data);
    return file;
  }

  async removeAttachment(file: string): Promise<void> {
    await rm(file, { force: true });
  }

  /** Removes attachments and visuals (clear). */
  async removeFiles(chatId: string): Promise<void> {
    await this.serial(this.visualsPath(chatId), () => rm(this.visualsPath(chatId), { force: true }));
    // A send storing attachments may add a file while the folder is emptied (ENOTEMPTY): rm retries.
    await rm(this.attachmentDir(chatId), { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
  }

  /** Removes everything of a chat (kill). */
  async remove(chatId: string): Promise<void> {
    this.cutLog(chatId, Number.MAX_SAFE_INTEGER);
    await Promise.all([this.serial(this.recordPath(chatId), () => rm(this.recordPath(chatId), { force: true })), this.removeFiles(chatId)]);
  }

  /** Closes the database connection (shutdown, after `settled`). */
  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  /** Resolves once every write asked for so far has landed. */
  async settled(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  private serial(file: string, op: () => Promise<unknown>): Promise<void> {
    const previous = this.chains.get(file) ?? Promise.resolve();
    const next = previous.then(op, op);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(file, tail);
    void tail.then(() => {
      if (this.chains.get(file) === tail) this.chains.delete(file);
    });
    return next.then(() => undefined);
  }
}

/** The longest chat id (as a file name) this store can keep: the longest name it makes, `<id>.visuals.json.tmp`, must fit 255 bytes. */
const MAX_FILE_NAME = 255 - '.visuals.json.tmp'.length;

/**
 * A chat id as a file name: `encodeURIComponent`, and dots too, so that no id is a path step (`.`,
 * `..` would name the attachments folder or the data folder itself, which clear and kill remove) and
 * no id ends in a suffix this store uses (`x.visuals` would read as chat x's visuals).
 */
export function chatFileName(chatId: string): string {
  return encodeURIComponent(chatId).replaceAll('.', '%2E');
}

/** Whether this store can keep a chat with this id (file names have a length limit). */
export function storableChatId(chatId: string): boolean {
  return Buffer.byteLength(chatFileName(chatId)) <= MAX_FILE_NAME;
}

/** The chat whose record a file in `chats/` is, or null for any other file (visuals, temporaries, old logs, foreign names). */
export function recordChatId(fileName: string): string | null {
  return chatIdOfFile(fileName, '.json');
}

/** The chat whose `<chatFileName(id)><suffix>` a file in `chats/` is, or null for any other file. */
export function chatIdOfFile(fileName: string, suffix: string): string | null {
  if (!fileName.endsWith(suffix)) return null;
  const base = fileName.slice(0, -suffix.length);
  if (base.includes('.')) return null;
  try {
    return decodeURIComponent(base);
  } catch {
    return null;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
