// How the host reads and keeps its files, so that a kill -9 at any moment leaves them readable.
//
// The files a person writes (the config, scripts) are read once and checked against their schema,
// with an error that names the file and what is wrong. The host's own files (records, visuals lists,
// accounts, trust files, the status file, terminal and usage state) are replaced atomically: written
// to `<file>.tmp`, then renamed over the old one, so a reader sees the old or the new, never half.
// What must survive a power loss and grows by one entry at a time (the outbox, the request journal,
// the chats' logs) is in host.db instead (db.ts).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { open, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/** Reads a JSON file a person wrote and checks it against `schema`; `what` names it in the error ("config", "script"). */
export function readJsonFile<T extends z.ZodType>(file: string, schema: T, what: string): z.output<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`Cannot read ${what} ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`${what[0].toUpperCase()}${what.slice(1)} ${file} is not valid:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Replaces `file` with `data` atomically (tmp + rename), synchronously: for writes that must land before anything else happens. */
export function replaceFileSync(file: string, data: string | Buffer): void {
  writeFileSync(`${file}.tmp`, data);
  renameSync(`${file}.tmp`, file);
}

/** Replaces `file` with `data` atomically (tmp + rename). Callers keep one write to a file in flight at a time. */
export async function replaceFile(file: string, data: string | Buffer): Promise<void> {
  await writeFile(`${file}.tmp`, data);
  await rename(`${file}.tmp`, file);
}

/**
 * Replaces `file` with `data` atomically and durably: the tmp file is fsynced before the rename and
 * the folder after it, so once this resolves the new file survives a power loss. For a chat's record,
 * after which the chat's log in host.db is cut back.
 */
export async function replaceFileDurably(file: string, data: string | Buffer): Promise<void> {
  const tmp = await open(`${file}.tmp`, 'w');
  try {
    await tmp.writeFile(data);
    await tmp.sync();
  } finally {
    await tmp.close();
  }
  await rename(`${file}.tmp`, file);
  const dir = await open(path.dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
