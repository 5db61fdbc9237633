// The trust statements this machine accepted, kept in its data folder so that a restart believes
// exactly what it believed before (`<data>/trust-statements.jsonl`, 0600, in a folder made 0700):
// one line per accepted statement, in the order the book took them, and one per device the owner
// trusted on the machine itself (`tether host trust`). Appended and synced before the change counts;
// never rewritten. Replaying the lines through a fresh book (open.ts) rebuilds the same state,
// cascades and all, since the book derives what counts from what it holds.
//
// The file is the host's own: the relay has no path to it. Whoever can write it can make the host
// trust anything, as with trust.json, which pins the owner.
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DeviceIdSchema, DevicePublicKeySchema, SignedTrustStatementSchema, type SignedTrustStatement } from '../../contracts/index.ts';
import type { RecoveredDevice } from './book.ts';

export const RecoveredDeviceSchema = z.object({
  userId: z.string().min(1),
  name: z.string(),
  device: z.object({ id: DeviceIdSchema, publicKey: DevicePublicKeySchema }),
  at: z.int().nonnegative(),
});

const LineSchema = z.union([z.object({ statement: SignedTrustStatementSchema }), z.object({ recovered: RecoveredDeviceSchema })]);

export type StoredTrust = { statement: SignedTrustStatement } | { recovered: RecoveredDevice };

export function trustStatementsFile(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'trust-statements.jsonl');
}

/** Appends one line and syncs it to disk before answering. */
export function appendTrust(dataDir: string, entry: StoredTrust): void {
  const file = trustStatementsFile(dataDir);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = openSync(file, 'a', 0o600);
  try {
    chmodSync(file, 0o600);
    writeSync(fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The complete lines after byte `offset` (a line still being written is left for the next read), and
 * the offset after them. A line that is not a stored statement is reported, not taken.
 */
export function readTrustFrom(dataDir: string, offset = 0): { entries: StoredTrust[]; bad: number; offset: number } {
  const file = trustStatementsFile(dataDir);
  if (!existsSync(file)) return { entries: [], bad: 0, offset: 0 };
  const fd = openSync(file, 'r');
  let text: string;
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return { entries: [], bad: 0, offset };
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    text = buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
  const end = text.lastIndexOf('\n') + 1;
  const entries: StoredTrust[] = [];
  let bad = 0;
  for (const line of text.slice(0, end).split('\n')) {
    if (line === '') continue;
    try {
      entries.push(LineSchema.parse(JSON.parse(line)) as StoredTrust);
    } catch {
      bad += 1;
    }
  }
  return { entries, bad, offset: offset + Buffer.byteLength(text.slice(0, end)) };
}
