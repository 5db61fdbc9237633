// The plan limits each CLI reported, per account: `usage.limits` answers them, `usage.limitsChanged`
// (the whole snapshot) goes to every client when a reading moves. Readings come from the CLIs'
// own events while they run (Claude Code's `rate_limit_event`, Codex's `account/rateLimits/updated`);
// a window a later reading does not name keeps its last reading. Kept in `<data>/usage/limits.json`,
// so a restarted host still knows when a window resets.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { UsageLimitsProviderSchema } from '../../contracts/index.ts';
import type { UsageLimitsProvider, UsageLimitsSnapshot, UsageProvider, UsageWindow } from '../../contracts/index.ts';
import { replaceFile } from '../disk.ts';

/** One reading of a CLI's plan: the windows it named, and its plan's name when it said one. */
export interface LimitsReading {
  plan?: string | null;
  windows: UsageWindow[];
}

const FileSchema = z.object({ version: z.literal(1), providers: z.array(z.object({ key: z.string(), reading: UsageLimitsProviderSchema })) });

export interface LimitsAccount {
  id: string;
  kind: UsageProvider;
  label: string;
  color?: string;
}

export class LimitsBook {
  private readonly file: string;
  private readonly readings = new Map<string, UsageLimitsProvider>();
  private chain: Promise<void> = Promise.resolve();

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'usage', 'limits.json');
    try {
      const parsed = FileSchema.safeParse(JSON.parse(readFileSync(this.file, 'utf8')));
      if (parsed.success) for (const { key, reading } of parsed.data.providers) this.readings.set(key, reading);
    } catch {
      // nothing reported yet
    }
  }

  /** Takes a reading; answers whether anything a client would see changed. */
  record(account: LimitsAccount, reading: LimitsReading, source: 'event' | 'probe', at = Date.now()): boolean {
    const key = `${account.kind}\0${account.id}`;
    const before = this.readings.get(key);
    const windows = new Map((before?.windows ?? []).map((w) => [w.id, w]));
    for (const window of reading.windows) windows.set(window.id, window);
    const next: UsageLimitsProvider = {
      kind: account.kind,
      plan: reading.plan !== undefined ? reading.plan : (before?.plan ?? null),
      checkedAt: Math.floor(at),
      source,
      windows: [...windows.values()].sort((a, b) => a.id.localeCompare(b.id)),
      cost: null,
      unavailable: null,
      account: { id: account.id, label: account.label, ...(account.color ? { color: account.color } : {}) },
    };
    const changed = !before || JSON.stringify({ ...before, checkedAt: 0, source: '' }) !== JSON.stringify({ ...next, checkedAt: 0, source: '' });
    this.readings.set(key, next);
    this.write();
    return changed;
  }

  /** A provider that could not be asked (`unavailable`): replaces nothing it reported before, only says why now. */
  refused(account: LimitsAccount, reason: 'not-installed' | 'no-subscription' | 'failed', message: string | null, at = Date.now()): boolean {
    const key = `${account.kind}\0${account.id}`;
    const before = this.readings.get(key);
    const next: UsageLimitsProvider = {
      kind: account.kind,
      plan: before?.plan ?? null,
      checkedAt: Math.floor(at),
      source: 'probe',
      windows: before?.windows ?? [],
      cost: null,
      unavailable: { reason, message },
      account: { id: account.id, label: account.label, ...(account.color ? { color: account.color } : {}) },
    };
    const changed = JSON.stringify(before?.unavailable ?? null) !== JSON.stringify(next.unavailable);
    this.readings.set(key, next);
    this.write();
    return changed;
  }

  /** The readings of `accounts` (this host's, in order: each provider's default account first). */
  snapshot(accounts: readonly LimitsAccount[]): UsageLimitsSnapshot {
    const ordered = [...accounts].sort((a, b) => Number(b.id === b.kind) - Number(a.id === a.kind));
    const providers: UsageLimitsProvider[] = [];
    for (const account of ordered) {
      const reading = this.readings.get(`${account.kind}\0${account.id}`);
      if (reading) providers.push({ ...reading, account: { id: account.id, label: account.label, ...(account.color ? { color: account.color } : {}) } });
    }
    return { providers };
  }

  private write(): void {
    const text = JSON.stringify({ version: 1, providers: [...this.readings].map(([key, reading]) => ({ key, reading })) });
    this.chain = this.chain
      .then(async () => {
        await mkdir(path.dirname(this.file), { recursive: true });
        await replaceFile(this.file, text);
      })
      .catch(() => undefined);
  }

  settled(): Promise<void> {
    return this.chain;
  }
}

const HOUR = 60 * 60 * 1000;

/** A window's kind and label from its length: five hours is a session, seven days a week. */
export function windowOf(id: string, minutes: number | null, used: number, resetsAt: number | null, label?: string): UsageWindow {
  const durationMs = minutes !== null ? Math.round(minutes * 60_000) : null;
  const kind: UsageWindow['kind'] =
    durationMs === null
      ? 'other'
      : durationMs <= 24 * HOUR
        ? 'session'
        : durationMs <= 8 * 24 * HOUR
          ? 'weekly'
          : durationMs <= 32 * 24 * HOUR
            ? 'monthly'
            : 'other';
  const named =
    label ??
    (durationMs === null
      ? 'Limit'
      : durationMs < 24 * HOUR
        ? `${Math.round(durationMs / HOUR)}-hour limit`
        : durationMs <= 8 * 24 * HOUR
          ? 'Weekly limit'
          : `${Math.round(durationMs / (24 * HOUR))}-day limit`);
  return { id, kind, label: named, used: Math.min(1, Math.max(0, used)), resetsAt: resetsAt !== null ? Math.round(resetsAt) : null, durationMs };
}
