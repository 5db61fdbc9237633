// The incremental scan of the CLIs' session files. Each file is read from where the last scan
// stopped (its byte offset, after the last whole line: a line still being written is read next
// time), so a scan of a machine whose transcripts did not change reads nothing but directory
// listings and stats. What was read is kept as entries (per file, model, folder, session and
// 15-minute slot: every time zone's hours and days are whole 15-minute slots of UTC), saved in
// `<data>/usage/scan.json` with each file's offset, so a restart goes on where it was.
//
// A file that shrank or was replaced (another inode) is read again from its start, its earlier
// entries dropped first. A file that disappeared keeps its entries: the usage happened (Claude Code
// deletes old transcripts on its own). Symbolic links are not followed: only what lies under a
// CLI's own folder is read.
import { open, readdir, stat, mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { UsageProvider, UsageRoot } from '../../contracts/index.ts';
import { replaceFile } from '../disk.ts';
import { lineReader } from './records.ts';
import type { LineReader, UsageRecord } from './records.ts';

/** One root to scan: a CLI's session folder. */
export interface ScanRoot {
  provider: UsageProvider;
  path: string;
}

export const SLOT_MS = 15 * 60 * 1000;

/** Totals as a fixed array (calls, input, cacheRead, cacheWrite, cacheWrite1h, output, reasoning): entries are many. */
export type TotalsArray = [number, number, number, number, number, number, number];

export interface Entry {
  file: number;
  model: string;
  folder: string;
  session: string;
  slot: number;
  totals: TotalsArray;
}

interface FileState {
  id: number;
  provider: UsageProvider;
  root: string;
  ino: number;
  size: number;
  mtimeMs: number;
  offset: number;
  reader: unknown;
}

export interface ScanOutcome {
  at: number;
  files: number;
  changedFiles: number;
  durationMs: number;
  failed: boolean;
  /** New records were counted. */
  grew: boolean;
  roots: UsageRoot[];
  bytesRead: number;
}

/** Markers that every line a reader counts contains; a line with none of them is never decoded. */
const MARKERS: Record<UsageProvider, Buffer[]> = {
  claude: [Buffer.from('"usage"')],
  codex: ['"token_usage_record"', '"token_count"', '"turn_context"', '"session_meta"', '"thread_settings_applied"'].map((m) => Buffer.from(m)),
};

const REQUEST_ID = Buffer.from('"requestId":"');
const STATE_VERSION = 1;
const CHUNK = 4 * 1024 * 1024;

export class UsageScanner {
  readonly entries = new Map<string, Entry>();
  readonly files = new Map<string, FileState>();
  readonly filesById = new Map<number, FileState>();
  /** Claude call keys already counted, and the file that counted each. */
  private readonly seen = new Map<string, number>();
  private nextId = 1;
  private readonly stateFile: string | null;
  private saving: Promise<void> = Promise.resolve();
  private buffer = Buffer.allocUnsafe(CHUNK);

  /** `dataDir`: where `usage/scan.json` lives; null keeps nothing on disk (the bench). */
  constructor(dataDir: string | null) {
    this.stateFile = dataDir ? path.join(dataDir, 'usage', 'scan.json') : null;
    if (this.stateFile) this.load(this.stateFile);
  }

  /** Reads what changed under `roots` since the last scan. Never throws: a root that fails says so. */
  async scan(roots: readonly ScanRoot[]): Promise<ScanOutcome> {
    const started = Date.now();
    const outcome: ScanOutcome = { at: started, files: 0, changedFiles: 0, durationMs: 0, failed: false, grew: false, roots: [], bytesRead: 0 };
    for (const root of roots) {
      const status = await this.scanRoot(root, outcome);
      outcome.roots.push({ provider: root.provider, path: root.path, ...status });
      if (status.status === 'failed') outcome.failed = true;
    }
    outcome.durationMs = Date.now() - started;
    if (outcome.changedFiles > 0) await this.save();
    return outcome;
  }

  private async scanRoot(root: ScanRoot, outcome: ScanOutcome): Promise<Pick<UsageRoot, 'status' | 'message'>> {
    try {
      const info = await stat(root.path);
      if (!info.isDirectory()) return { status: 'failed', message: 'Not a folder' };
    } catch (error) {
      if (code(error) === 'ENOENT') return { status: 'missing', message: null };
      return { status: 'failed', message: describe(error) };
    }
    const failures: string[] = [];
    for await (const file of walk(root.path, failures)) {
      outcome.files += 1;
      try {
        const read = await this.scanFile(root, file);
        if (read.changed) outcome.changedFiles += 1;
        if (read.records > 0) outcome.grew = true;
        outcome.bytesRead += read.bytes;
      } catch (error) {
        failures.push(`${path.relative(root.path, file)}: ${describe(error)}`);
      }
    }
    if (failures.length > 0) return { status: 'failed', message: `${failures.length} not readable, first: ${failures[0]}` };
    return { status: 'ok', message: null };
  }

  private async scanFile(root: ScanRoot, file: string): Promise<{ changed: boolean; records: number; bytes: number }> {
    const info = await stat(file);
    let state = this.files.get(file);
    if (state && state.ino === info.ino && state.size === info.size && state.mtimeMs === info.mtimeMs) return { changed: false, records: 0, bytes: 0 };
    if (state && (state.ino !== info.ino || info.size < state.offset)) {
      this.forget(state);
      state = undefined;
    }
    if (!state) {
      state = { id: this.nextId++, provider: root.provider, root: root.path, ino: info.ino, size: 0, mtimeMs: 0, offset: 0, reader: null };
      this.files.set(file, state);
      this.filesById.set(state.id, state);
    }
    const reader = lineReader(root.provider, state.reader);
    const { offset, records } = await this.readFrom(file, state, reader);
    const bytes = offset - state.offset;
    state.offset = offset;
    state.size = info.size;
    state.mtimeMs = info.mtimeMs;
    state.reader = reader.state();
    return { changed: true, records, bytes };
  }

  /** Reads whole lines from `state.offset`; answers the offset after the last whole line. */
  private async readFrom(file: string, state: FileState, reader: LineReader): Promise<{ offset: number; records: number }> {
    const handle = await open(file, 'r');
    const markers = MARKERS[state.provider];
    let records = 0;
    let position = state.offset;
    // One buffer for every file of the scan (one scan runs at a time), grown for a line longer than it.
    let buffer = this.buffer;
    let carried = 0;
    try {
      for (;;) {
        if (carried === buffer.length) {
          // One line longer than the buffer: make room for it.
          const bigger = Buffer.allocUnsafe(buffer.length * 2);
          buffer.copy(bigger, 0, 0, carried);
          buffer = this.buffer = bigger;
        }
        const { bytesRead } = await handle.read(buffer, carried, buffer.length - carried, position + carried);
        if (bytesRead === 0) break;
        const filled = carried + bytesRead;
        const last = buffer.lastIndexOf(10, filled - 1);
        if (last < 0) {
          carried = filled;
          continue;
        }
        records += this.readLines(buffer.subarray(0, last), last, markers, reader, state.id, state.provider === 'claude');
        const consumed = last + 1;
        position += consumed;
        carried = filled - consumed;
        buffer.copy(buffer, 0, consumed, filled);
      }
    } finally {
      await handle.close();
    }
    return { offset: position, records };
  }

  /** Hands the reader each line of `buffer[0..end)` that holds a marker; the rest is never decoded. */
  private readLines(buffer: Buffer, end: number, markers: readonly Buffer[], reader: LineReader, fileId: number, dedupes: boolean): number {
    let records = 0;
    let from = 0;
    const next = markers.map((marker) => buffer.indexOf(marker, 0));
    for (;;) {
      let hit = -1;
      for (const index of next) if (index >= 0 && index < end && (hit < 0 || index < hit)) hit = index;
      if (hit < 0) break;
      const start = hit === 0 ? 0 : buffer.lastIndexOf(10, hit - 1) + 1;
      let stop = buffer.indexOf(10, hit);
      if (stop < 0 || stop > end) stop = end;
      if (start >= from && !(dedupes && this.seenBefore(buffer, start, stop))) {
        const record = reader.read(buffer.toString('utf8', start, stop));
        if (record && this.count(record, fileId)) records += 1;
      }
      from = stop + 1;
      for (let i = 0; i < next.length; i += 1) if (next[i] >= 0 && next[i] < from) next[i] = buffer.indexOf(markers[i], from);
    }
    return records;
  }

  /**
   * Whether the line names a request already counted (Claude Code repeats a call's usage on each of
   * its lines), read from the raw bytes so the repeat is never decoded or parsed. Only a shortcut: a
   * request id written with escapes is not recognised here and is deduplicated after parsing.
   */
  private seenBefore(buffer: Buffer, start: number, stop: number): boolean {
    if (this.seen.size === 0) return false;
    // A view of the line: the search stops at its end.
    const line = buffer.subarray(start, stop);
    const at = line.indexOf(REQUEST_ID);
    if (at < 0) return false;
    const from = at + REQUEST_ID.length;
    const end = line.indexOf(34, from);
    if (end < 0) return false;
    return this.seen.has(line.toString('latin1', from, end));
  }

  private count(record: UsageRecord, fileId: number): boolean {
    if (record.dedupe !== undefined) {
      if (this.seen.has(record.dedupe)) return false;
      this.seen.set(record.dedupe, fileId);
    }
    const slot = Math.floor(record.at / SLOT_MS);
    const key = `${fileId}\t${record.model}\t${record.folder}\t${record.session}\t${slot}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { file: fileId, model: record.model, folder: record.folder, session: record.session, slot, totals: [0, 0, 0, 0, 0, 0, 0] };
      this.entries.set(key, entry);
    }
    const t = entry.totals;
    const r = record.totals;
    t[0] += r.calls;
    t[1] += r.input;
    t[2] += r.cacheRead;
    t[3] += r.cacheWrite;
    t[4] += r.cacheWrite1h;
    t[5] += r.output;
    t[6] += r.reasoning;
    return true;
  }

  /** Drops what a file contributed (it is read again from its start). */
  private forget(state: FileState): void {
    for (const [key, entry] of this.entries) if (entry.file === state.id) this.entries.delete(key);
    for (const [key, file] of this.seen) if (file === state.id) this.seen.delete(key);
    this.filesById.delete(state.id);
    for (const [name, known] of this.files) if (known === state) this.files.delete(name);
  }

  // -------------------------------------------------------------------------------------------
  // Keeping it across restarts

  private load(file: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return; // never scanned, or a file this version cannot read: a fresh scan reads everything again
    }
    const s = raw as { version?: unknown; nextId?: unknown; files?: unknown; entries?: unknown; seen?: unknown };
    if (s.version !== STATE_VERSION || !Array.isArray(s.files) || !Array.isArray(s.entries) || !Array.isArray(s.seen) || typeof s.nextId !== 'number') return;
    try {
      for (const [name, f] of s.files as Array<[string, FileState]>) {
        this.files.set(name, f);
        this.filesById.set(f.id, f);
      }
      for (const e of s.entries as Entry[]) this.entries.set(`${e.file}\t${e.model}\t${e.folder}\t${e.session}\t${e.slot}`, e);
      for (const [key, id] of s.seen as Array<[string, number]>) this.seen.set(key, id);
      this.nextId = s.nextId;
    } catch {
      this.files.clear();
      this.filesById.clear();
      this.entries.clear();
      this.seen.clear();
    }
  }

  private save(): Promise<void> {
    const file = this.stateFile;
    if (!file) return Promise.resolve();
    const text = JSON.stringify({
      version: STATE_VERSION,
      nextId: this.nextId,
      files: [...this.files],
      entries: [...this.entries.values()],
      seen: [...this.seen],
    });
    const next = this.saving.then(async () => {
      await mkdir(path.dirname(file), { recursive: true });
      await replaceFile(file, text);
    });
    this.saving = next.catch(() => undefined);
    return next;
  }
}

/** Every `.jsonl` file under `dir`, depth first; folders it cannot list are noted in `failures`. */
async function* walk(dir: string, failures: string[]): AsyncGenerator<string> {
  let names;
  try {
    names = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    failures.push(`${dir}: ${describe(error)}`);
    return;
  }
  names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of names) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full, failures);
    else if (entry.isFile() && entry.name.endsWith('.jsonl')) yield full;
  }
}

function code(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
