// Where a chat lives on disk, under the host's data folder (`<id>` is the chat id as a file name, see
// `chatFileName`):
//
//   chats/<id>.json                              the record {version, info, items, seq, epoch}: a
//                                                checkpoint, written atomically (tmp + rename)
//   chats/<id>.log                               JSON lines {seq, at, event}, appended as each event
//                                                happens; every event after the checkpoint is replayed
//                                                from here on load. When to checkpoint and how far the
//                                                log may be cut back is ChatLog's to decide.
//   chats/<id>.visuals.json                      {version: 1, visuals}
//   attachments/<id>/                            uploaded files and visual pages
//
// A record this version cannot read is reported as unreadable and never written over.
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ChatEventSchema, ChatInfoSchema, ChatItemSchema, ChatVisualSchema } from '../../contracts/index.ts';
import type { ChatVisual } from '../../contracts/index.ts';
import { loadLines, replaceFile, replaceFileSync } from '../disk.ts';

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

const LogLineSchema = z.object({ seq: z.int().positive(), at: z.number(), event: ChatEventSchema });
export type LogEntry = z.output<typeof LogLineSchema>;

const VisualsFileSchema = z.object({ version: z.literal(1), visuals: z.array(ChatVisualSchema) });

export type LoadedChat =
  | { ok: true; record: ChatRecord; log: LogEntry[] }
  | { ok: false; chatId: string; reason: string };

export class ChatStore {
  readonly dataDir: string;
  readonly chatsDir: string;
  readonly attachmentsDir: string;
  /** One write chain per chat file, so writes land in the order they were asked for. */
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(dataDir: string) {
    this.dataDir = dataDir;
    this.chatsDir = path.join(dataDir, 'chats');
    this.attachmentsDir = path.join(dataDir, 'attachments');
    mkdirSync(this.chatsDir, { recursive: true });
    mkdirSync(this.attachmentsDir, { recursive: true });
  }

  recordPath(chatId: string): string {
    return path.join(this.chatsDir, `${chatFileName(chatId)}.json`);
  }

  logPath(chatId: string): string {
    return path.join(this.chatsDir, `${chatFileName(chatId)}.log`);
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

  /** The log's events in order, up to the first line that is torn, unreadable or out of sequence (the file is cut there). */
  private readLog(chatId: string): LogEntry[] {
    const entries: LogEntry[] = [];
    loadLines(this.logPath(chatId), (value) => {
      const entry = LogLineSchema.safeParse(value);
      if (!entry.success) return false;
      const last = entries.at(-1);
      if (last && entry.data.seq !== last.seq + 1) return false;
      entries.push(entry.data);
      return true;
    });
    return entries;
  }

  /** Writes the record atomically. */
  writeRecord(record: ChatRecord): Promise<void> {
    const file = this.recordPath(record.info.chatId);
    const text = JSON.stringify(record);
    return this.serial(file, () => replaceFile(file, text));
  }

  /**
   * Appends one event to the chat's log, synchronously: the line is written before the event reaches
   * any client or the outbox, so after a crash the host never numbers an event with a `seq` the relay
   * has already seen.
   */
  appendLog(chatId: string, entry: LogEntry): void {
    appendFileSync(this.logPath(chatId), `${JSON.stringify(entry)}\n`);
  }

  /** Replaces the log with `entries` (a cut-back), atomically and synchronously, between two appends. */
  replaceLog(chatId: string, entries: readonly LogEntry[]): void {
    replaceFileSync(this.logPath(chatId), entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
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
    await Promise.all([
      this.serial(this.recordPath(chatId), () => rm(this.recordPath(chatId), { force: true })),
      rm(this.logPath(chatId), { force: true }),
      this.removeFiles(chatId),
    ]);
  }

  /** Resolves once every write asked for so far has landed. */
  async settled(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  private serial(file: string, op: () => Promise<unknown>): Promise<void> {
    const previous = this.chains.get(file) ?? Promise.resolve();
    const next = previous.then(op, op);
    const tail = next.then(() => undefined, () => undefined);
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

/** The chat whose record a file in `chats/` is, or null for any other file (logs, visuals, temporaries, foreign names). */
export function recordChatId(fileName: string): string | null {
  if (!fileName.endsWith('.json')) return null;
  const base = fileName.slice(0, -'.json'.length);
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
