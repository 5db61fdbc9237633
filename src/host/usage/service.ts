// The host's usage: which folders to scan (every enabled Claude Code and Codex account of this host,
// as the CLI would find its session files), scans on demand (`usage.summary` reads what changed
// first) and on a clock while a client follows (`usage.subscribe`), and `usage.changed` to every
// client when a scan counted something new.
import type { AgentKind, UsageAccount, UsageLimitsSnapshot, UsageProvider, UsageRoot, UsageSummaryPayload, UsageSummaryResult } from '../../contracts/index.ts';
import { USAGE_PROVIDERS } from '../../contracts/index.ts';
import { ProtocolError } from '../../contracts/errors.ts';
import type { AccountBook } from '../chats/accounts.ts';
import type { Provider } from '../providers/provider.ts';
import { LimitsBook } from './limits.ts';
import type { LimitsReading } from './limits.ts';
import { UsageScanner } from './scanner.ts';
import type { ScanOutcome, ScanRoot } from './scanner.ts';
import { summarize } from './summary.ts';
import type { RootOwner } from './summary.ts';

export interface UsageServiceOptions {
  dataDir: string;
  providers: ReadonlyMap<AgentKind, Provider>;
  accounts: AccountBook;
  broadcast: (event: string, payload: unknown) => void;
  warn: (message: string) => void;
  /** How often a followed host scans again (ms). Default 30 000. */
  followIntervalMs?: number;
}

const LABELS: Record<UsageProvider, string> = { claude: 'Claude Code', codex: 'Codex' };

interface Plan {
  roots: ScanRoot[];
  owners: Map<string, RootOwner>;
  accounts: UsageAccount[];
  /** Accounts whose folder the policy refuses: reported, never read. */
  refused: UsageRoot[];
}

export class UsageService {
  private readonly options: UsageServiceOptions;
  private readonly scanner: UsageScanner;
  private readonly limitsBook: LimitsBook;
  private running: Promise<ScanOutcome> | null = null;
  /** Clients following, with how many follows each holds (the relay link carries many people's). */
  private readonly followers = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private closed = false;

  constructor(options: UsageServiceOptions) {
    this.options = options;
    this.scanner = new UsageScanner(options.dataDir);
    this.limitsBook = new LimitsBook(options.dataDir);
  }

  // -------------------------------------------------------------------------------------------
  // Plan limits

  /** A CLI's report for one of this host's accounts; every client hears the new snapshot when it moved. */
  recordLimits(kind: AgentKind, accountId: string, reading: LimitsReading): void {
    const account = this.plan().accounts.find((a) => a.id === accountId && a.kind === kind);
    if (!account || this.closed) return;
    if (this.limitsBook.record(account, reading, 'event')) this.options.broadcast('usage.limitsChanged', this.limits());
  }

  limits(): UsageLimitsSnapshot {
    return this.limitsBook.snapshot(this.plan().accounts);
  }

  /**
   * Asks again where a CLI can be asked without a turn (Codex: `account/rateLimits/read` through
   * each account's provider); Claude Code has no such question in its stream-json, so its windows
   * are the last its events reported.
   */
  async refreshLimits(): Promise<UsageLimitsSnapshot> {
    let changed = false;
    for (const account of this.plan().accounts) {
      const provider = this.options.providers.get(account.kind);
      if (!provider?.readLimits) continue;
      let launch;
      try {
        launch = this.options.accounts.launchSettings(account.kind, account.id);
      } catch (error) {
        changed = this.limitsBook.refused(account, 'failed', error instanceof Error ? error.message : String(error)) || changed;
        continue;
      }
      const answer = await provider.readLimits(launch);
      changed =
        (answer.ok ? this.limitsBook.record(account, answer.reading, 'probe') : this.limitsBook.refused(account, answer.reason, answer.message)) || changed;
    }
    const snapshot = this.limits();
    if (changed && !this.closed) this.options.broadcast('usage.limitsChanged', snapshot);
    return snapshot;
  }

  /** The folders to read, per account: each account's CLI folder, checked by the policy as a launch would be. */
  private plan(): Plan {
    const plan: Plan = { roots: [], owners: new Map(), accounts: [], refused: [] };
    const { accounts } = this.options.accounts.snapshot();
    for (const [id, account] of Object.entries(accounts)) {
      const kind = account.kind as AgentKind;
      if (!(USAGE_PROVIDERS as readonly string[]).includes(kind) || account.enabled === false) continue;
      const provider = this.options.providers.get(kind);
      if (!provider?.usageRoots || !this.options.accounts.has(kind, id)) continue;
      const usageKind = kind as UsageProvider;
      plan.accounts.push({ id, kind: usageKind, label: account.label ?? LABELS[usageKind], ...(account.color ? { color: account.color } : {}) });
      let folders: string[];
      try {
        folders = provider.usageRoots(this.options.accounts.launchSettings(kind, id));
      } catch (error) {
        plan.refused.push({ provider: usageKind, path: account.home ?? '', status: 'failed', message: error instanceof Error ? error.message : String(error) });
        continue;
      }
      for (const folder of folders) {
        // Two accounts sharing a folder: its files count once, for the first.
        if (plan.owners.has(folder)) continue;
        plan.owners.set(folder, { account: id, provider: usageKind });
        plan.roots.push({ provider: usageKind, path: folder });
      }
    }
    return plan;
  }

  /** One scan at a time; a caller during a scan gets that scan. */
  scan(): Promise<ScanOutcome> {
    if (this.running) return this.running;
    const plan = this.plan();
    const run = this.scanner.scan(plan.roots).then((outcome) => {
      outcome.roots.push(...plan.refused);
      if (plan.refused.length > 0) outcome.failed = true;
      if (outcome.grew && !this.closed) this.options.broadcast('usage.changed', { scannedAt: outcome.at });
      return outcome;
    });
    this.running = run.finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async summary(payload: UsageSummaryPayload): Promise<UsageSummaryResult> {
    const plan = this.plan();
    if (payload.accounts) {
      const known = new Set(plan.accounts.map((a) => a.id));
      const missing = payload.accounts.find((id) => !known.has(id));
      if (missing !== undefined) throw new ProtocolError('account-unavailable', `No Claude Code or Codex account ${missing} on this host`);
    }
    const scan = await this.scan();
    const files = this.scanner.filesById;
    return summarize({
      payload,
      entries: this.scanner.entries.values(),
      rootOf: (id) => files.get(id)?.root,
      owners: plan.owners,
      accounts: plan.accounts,
      scan: { ...scan, running: this.running !== null },
    });
  }

  follow(clientId: string): void {
    this.followers.set(clientId, (this.followers.get(clientId) ?? 0) + 1);
    this.clock();
  }

  unfollow(clientId: string): void {
    const held = (this.followers.get(clientId) ?? 0) - 1;
    if (held > 0) this.followers.set(clientId, held);
    else this.followers.delete(clientId);
    this.clock();
  }

  /** A client went away: its follows with it. */
  release(clientId: string): void {
    this.followers.delete(clientId);
    this.clock();
  }

  /** Stops the clock; resolves once the last limits reading is on disk. */
  close(): Promise<void> {
    this.closed = true;
    this.followers.clear();
    this.clock();
    return this.limitsBook.settled();
  }

  private clock(): void {
    const want = this.followers.size > 0 && !this.closed;
    if (want && !this.timer) {
      this.timer = setInterval(() => {
        this.scan().catch((error: unknown) => this.options.warn(`usage scan failed: ${error instanceof Error ? error.message : String(error)}`));
      }, this.options.followIntervalMs ?? 30_000);
      this.timer.unref?.();
    } else if (!want && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
