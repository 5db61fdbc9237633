// The JSONL files of hosts from before host.db, read once into it by its first migration (db.ts), in
// that migration's transaction; afterwards they are renamed to `<file>.migrated`, so nothing reads
// them again (the schema version alone already keeps a second start from importing twice).
//
// Today's layout, as those hosts wrote it (every line appended, a crash could tear the last one):
//   outbox/outbox.jsonl    `{"base":N}` as an optional first line, then the frames as sent (each with its `n`)
//   outbox/outbox.acks     the acknowledged positions, one number a line
//   requests.jsonl         `{key}` when a request started, `{key, reply}` once it had its reply
//   chats/<id>.log         `{seq, at, event}`, one event a line
// Their rule is kept: a file is trusted line by line, in order, up to the first line that is torn (no
// newline), not JSON, or breaks the file's own order; nothing after it is taken.
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { chatIdOfFile, LogLineSchema } from './chats/store.ts';

/** Reads the lines of `file` that its old rule trusted, handing each to `take` until it answers false. A missing file reads as empty. */
function trustedLines(file: string, take: (value: unknown, index: number, text: string) => boolean): void {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return;
  }
  let end = 0;
  for (let index = 0; ; index += 1) {
    const newline = data.indexOf(0x0a, end);
    if (newline < 0) return; // an unterminated tail is a torn write
    const text = data.subarray(end, newline).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    if (!take(value, index, text)) return;
    end = newline + 1;
  }
}

/** Imports every old file under `dataDir` into `db` (inside the caller's transaction); answers the files to rename aside once it has committed. */
export function importLegacyFiles(db: DatabaseSync, dataDir: string): string[] {
  return [...importOutbox(db, path.join(dataDir, 'outbox')), ...importJournal(db, dataDir), ...importChatLogs(db, path.join(dataDir, 'chats'))];
}

/** Renames the imported files to `<file>.migrated`; one already gone is fine. */
export function setAside(files: readonly string[]): void {
  for (const file of files) {
    try {
      renameSync(file, `${file}.migrated`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

function importOutbox(db: DatabaseSync, dir: string): string[] {
  const file = path.join(dir, 'outbox.jsonl');
  const ackFile = path.join(dir, 'outbox.acks');
  const acked = new Set<number>();
  trustedLines(ackFile, (n) => {
    if (Number.isInteger(n) && (n as number) > 0) acked.add(n as number);
    return true;
  });
  const insert = db.prepare('INSERT INTO outbox (n, frame) VALUES (?, ?)');
  let lastN = 0;
  let lastLine = 0;
  let found = false;
  const frames: Array<[number, string]> = [];
  trustedLines(file, (value, index, text) => {
    found = true;
    const parsed = value as { n?: unknown; base?: unknown } | null;
    if (index === 0 && typeof parsed?.base === 'number') {
      lastN = Math.max(lastN, parsed.base);
      return true;
    }
    const n = parsed?.n;
    if (typeof n !== 'number' || !Number.isInteger(n) || n <= lastLine) return false;
    lastLine = n;
    lastN = Math.max(lastN, n);
    // The frame's text exactly as it went on the wire.
    if (!acked.has(n)) frames.push([n, text]);
    return true;
  });
  for (const [n, text] of frames) insert.run(n, text);
  // The last position handed out, acknowledged or not, so `n` goes on from there.
  if (lastN > 0) {
    db.prepare("DELETE FROM sqlite_sequence WHERE name = 'outbox'").run();
    db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)").run(lastN);
  }
  return found || acked.size > 0 ? [file, ackFile] : [];
}

function importJournal(db: DatabaseSync, dataDir: string): string[] {
  const file = path.join(dataDir, 'requests.jsonl');
  // The newest line of a key wins, and keys keep the order of their newest line (the journal trims the oldest).
  const replies = new Map<string, string | null>();
  let found = false;
  trustedLines(file, (value) => {
    found = true;
    const entry = value as { key?: unknown; reply?: { ok?: unknown } } | null;
    if (typeof entry?.key !== 'string') return false;
    // A lone `{key}` (the host stopped while it served the request) stays a row without a reply.
    const reply = entry.reply && typeof entry.reply.ok === 'boolean' ? JSON.stringify(entry.reply) : null;
    replies.delete(entry.key);
    replies.set(entry.key, reply);
    return true;
  });
  const insert = db.prepare('INSERT INTO requests (key, reply) VALUES (?, ?)');
  for (const [key, reply] of replies) insert.run(key, reply);
  return found ? [file] : [];
}

function importChatLogs(db: DatabaseSync, chatsDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(chatsDir);
  } catch {
    return [];
  }
  const insert = db.prepare('INSERT INTO chat_events (chat_id, seq, at, event) VALUES (?, ?, ?, ?)');
  const files: string[] = [];
  for (const name of names) {
    const chatId = chatIdOfFile(name, '.log');
    if (chatId === null) continue;
    const file = path.join(chatsDir, name);
    let last = 0;
    trustedLines(file, (value) => {
      const entry = LogLineSchema.safeParse(value);
      if (!entry.success || (last > 0 && entry.data.seq !== last + 1)) return false;
      last = entry.data.seq;
      insert.run(chatId, entry.data.seq, entry.data.at, JSON.stringify(entry.data.event));
      return true;
    });
    files.push(file);
  }
  return files;
}
