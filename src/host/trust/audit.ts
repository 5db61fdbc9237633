// The host's own audit: one line per request that acts on this machine, carried out or refused, in
// `<data>/audit.jsonl` (0600), appended and never rewritten. Who asked (the verified person and
// device when the request was signed; otherwise only the relay's claim, marked unverified), what
// (type, request id, chat), when, and how it ended. Never the request's text.
//
// Each line carries the SHA-256 of the line before it (`prev`), so an edit, a removed line or a
// reordering anywhere shows when the file is read (`tether host audit` says where the chain breaks).
// That makes tampering visible, not impossible: whoever can write the file can rewrite all of it.
// The relay never can: it holds no path to this file.
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

export const AuditEntrySchema = z.object({
  /** When the host decided, ms since the epoch. */
  at: z.int(),
  type: z.string(),
  id: z.string(),
  chatId: z.string().nullable(),
  /** `done`: carried out; `failed`: carried out and answered an error; `refused`: nothing ran. */
  outcome: z.enum(['done', 'failed', 'refused']),
  /** The error code when it failed or was refused. */
  code: z.string().optional(),
  /** Why, in words, when the host itself decided (a trust statement refused, a queued send it took back). */
  message: z.string().optional(),
  /** The verified sender, or null for an unsigned request. */
  userId: z.string().nullable(),
  device: z.string().nullable(),
  /** The signature's time, for a signed request. */
  signedAt: z.int().nullable(),
  /** The id the device signed, for a signed request (the frame's id on the link puts the person's id before it). */
  signedId: z.string().nullable().optional(),
  /** The signed payload's digest (what the verifier's replay memory is seeded with after a restart). */
  payload: z.string().nullable(),
  /** A signed request the host had already taken, resent under its id: the journal answered it, nothing ran again. */
  retry: z.boolean().optional(),
  /** Who the relay said it acted for: a claim, recorded for comparison, never trusted. */
  relaySays: z.string().nullable(),
  /**
   * For a refused request that carried a signature: what that signature claimed (its device, the
   * person this host knows that device as, when it says it was signed, the id it names), unverified.
   * It says who a forgery tried to pass for, or whose genuine request was moved or replayed.
   */
  claimed: z
    .object({
      device: z.string(),
      person: z.string().nullable(),
      at: z.number(),
      id: z.string(),
    })
    .nullable()
    .optional(),
  /** SHA-256 (hex) of the previous line's bytes; the first line's is 64 zeros. */
  prev: z.string(),
});
export type AuditEntry = z.output<typeof AuditEntrySchema>;
export type AuditRecord = Omit<AuditEntry, 'prev'>;

const GENESIS = '0'.repeat(64);
const hashOf = (line: string): string => createHash('sha256').update(line).digest('hex');

export function auditFile(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'audit.jsonl');
}

export interface AuditReading {
  entries: AuditEntry[];
  /** The first line (1-based) where the chain or the shape breaks, with why; null when whole. */
  broken: { line: number; why: string } | null;
}

/** Reads the audit and checks its chain. A missing file is an empty audit. */
export function readAudit(dataDir: string): AuditReading {
  const file = auditFile(dataDir);
  if (!existsSync(file)) return { entries: [], broken: null };
  const lines = readFileSync(file, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const entries: AuditEntry[] = [];
  let prev = GENESIS;
  for (const [i, line] of lines.entries()) {
    let entry: AuditEntry;
    try {
      entry = AuditEntrySchema.parse(JSON.parse(line));
    } catch {
      return { entries, broken: { line: i + 1, why: 'not an audit entry' } };
    }
    if (entry.prev !== prev) return { entries, broken: { line: i + 1, why: 'the line before it was changed, removed or reordered' } };
    entries.push(entry);
    prev = hashOf(line);
  }
  return { entries, broken: null };
}

/** The hash of the last line of the file open as `fd` (of `size` bytes), or GENESIS for an empty one. */
function lastLineHash(fd: number, size: number): string {
  for (let window = 64 * 1024; ; window *= 4) {
    const start = Math.max(0, size - window);
    const buffer = Buffer.alloc(size - start);
    readSync(fd, buffer, 0, buffer.length, start);
    const lines = buffer
      .toString('utf8')
      .split('\n')
      .filter((line: string) => line !== '');
    // Whole when the window reached the start, or when a line break lies before the last line.
    if (lines.length > 1 || start === 0) return lines.length > 0 ? hashOf(lines.at(-1)!) : GENESIS;
  }
}

/**
 * The append side, held open by the running host. One synchronous write per audited request. The
 * host's own commands (`tether host trust`) append to the same file while the host runs: a line
 * chains on from whatever line is last in the file, so when the file grew since this side last
 * wrote (one fstat per line), its last line is read again first.
 */
export class HostAudit {
  private readonly fd: number;
  private prev: string;
  private size: number;

  private constructor(fd: number, prev: string) {
    this.fd = fd;
    this.prev = prev;
    this.size = fstatSync(fd).size;
  }

  /**
   * Opens the audit for appending. A broken chain is not repaired or hidden: new lines chain on from
   * the file's last line as it is, and the break stays where `tether host audit` finds it.
   */
  static open(dataDir: string): HostAudit {
    const file = auditFile(dataDir);
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    let prev = GENESIS;
    if (existsSync(file)) {
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line !== '');
      if (lines.length > 0) prev = hashOf(lines.at(-1)!);
    }
    const fd = openSync(file, 'a+', 0o600);
    chmodSync(file, 0o600);
    return new HostAudit(fd, prev);
  }

  record(entry: AuditRecord): void {
    const size = fstatSync(this.fd).size;
    if (size !== this.size) this.prev = lastLineHash(this.fd, size);
    const line = JSON.stringify({ ...entry, prev: this.prev });
    const bytes = Buffer.from(`${line}\n`);
    writeSync(this.fd, bytes);
    this.prev = hashOf(line);
    this.size = size + bytes.length;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * A value from a request as a terminal may print it: ids, types and names come from clients and the
 * relay, and a control character (an ANSI escape) would let them rewrite what the person sees.
 */
function shown(value: string, max = 80): string {
  const plain = value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, '?');
  return plain.length > max ? `${plain.slice(0, max - 1)}…` : plain;
}

/** The audit as a person reads it: one line per entry, oldest first. */
export function formatAudit(reading: AuditReading): string {
  const rows = reading.entries.map((e) => {
    const claim = e.claimed ? `, signature claims device ${shown(e.claimed.device, 16)}${e.claimed.person ? ` of ${shown(e.claimed.person)}` : ''}` : '';
    const who = e.userId
      ? `${shown(e.userId)} (device ${shown(e.device ?? '', 16)})`
      : `unverified${e.relaySays ? `, relay says ${shown(e.relaySays)}` : ''}${claim}`;
    const how = e.outcome === 'done' ? (e.retry ? 'done (resent, answered once)' : 'done') : `${e.outcome} ${shown(e.code ?? '', 40)}`.trim();
    const why = e.message ? `  (${shown(e.message, 160)})` : '';
    return `${new Date(e.at).toISOString()}  ${shown(e.type, 40).padEnd(20)} ${how.padEnd(28)} ${who}${e.chatId ? `  chat ${shown(e.chatId)}` : ''}  id ${shown(e.id)}${why}`;
  });
  if (rows.length === 0) rows.push('No request has acted on this machine yet.');
  if (reading.broken) rows.push(`WARNING: the audit breaks at line ${reading.broken.line}: ${reading.broken.why}. Lines from there on are not shown.`);
  return `${rows.join('\n')}\n`;
}
