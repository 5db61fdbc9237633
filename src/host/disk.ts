// How the host reads and keeps its files, so that a kill -9 at any moment leaves them readable.
//
// The files a person writes (the config, scripts) are read once and checked against their schema,
// with an error that names the file and what is wrong. The host's own files are of two kinds:
// - Whole files (records, visuals lists, accounts, the status file) are replaced atomically: written
//   to `<file>.tmp`, then renamed over the old one, so a reader sees the old or the new, never half.
// - Line files (chat logs, the request journal, the outbox) grow by appending one JSON line at a
//   time. A crash mid-append leaves a torn last line; if it stayed, the next append would glue onto it
//   and make a line that reads as garbage, hiding everything written after it. So whoever loads a line
//   file reads the lines it trusts, in order, and cuts the file right after the last one.
import { closeSync, ftruncateSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
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

/** One complete line of a line file: its text (without the newline) and where it sits. */
export interface Line {
  text: string;
  /** Byte offset of the line in the file. */
  pos: number;
  /** Byte length including the newline. */
  len: number;
}

/**
 * Reads `file` line by line and hands each parsed line to `take` until it answers false (or a line is
 * not JSON, or not complete); the file is then cut after the last line taken. A missing file reads as
 * empty. Answers the size the file has afterwards.
 */
export function loadLines(file: string, take: (value: unknown, line: Line) => boolean): number {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return 0;
  }
  let end = 0;
  for (;;) {
    const newline = data.indexOf(0x0a, end);
    if (newline < 0) break; // an unterminated tail is a torn write
    const line: Line = { text: data.subarray(end, newline).toString('utf8'), pos: end, len: newline + 1 - end };
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch {
      break;
    }
    if (!take(value, line)) break;
    end = newline + 1;
  }
  if (end < data.length) {
    const fd = openSync(file, 'r+');
    try {
      ftruncateSync(fd, end);
    } finally {
      closeSync(fd);
    }
  }
  return end;
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
