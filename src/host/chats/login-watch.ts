// accounts.watchLogin: while a person signs a CLI in (in a terminal, with the snapshot's
// `loginCommands`), the host asks that CLI every 3 s, for up to 5 minutes, whether the account is
// signed in now, and sends `accounts.changed` (the whole snapshot) each time the answer moves;
// the watch ends once it is signed in. One watch per account: asking again restarts its clock.
import { ProtocolError } from '../../contracts/errors.ts';
import type { AgentKind } from '../../contracts/index.ts';
import type { Provider } from '../providers/provider.ts';
import type { AccountBook } from './accounts.ts';

export interface LoginWatchOptions {
  accounts: AccountBook;
  providers: ReadonlyMap<AgentKind, Provider>;
  changed: () => void;
  warn: (message: string) => void;
  intervalMs?: number;
  limitMs?: number;
}

export class LoginWatch {
  private readonly options: LoginWatchOptions;
  private readonly watches = new Map<string, { until: number; timer: ReturnType<typeof setTimeout> | null }>();
  private closed = false;

  constructor(options: LoginWatchOptions) {
    this.options = options;
  }

  /** Starts (or restarts) watching `id`; `account-unavailable` for an account this host has not, `chat-unsupported` for a CLI it cannot ask. */
  watch(id: string): void {
    const kind = this.options.accounts.kindOf(id);
    if (!kind || !this.options.accounts.has(kind, id)) throw new ProtocolError('account-unavailable', `No account ${id} on this host`);
    const provider = this.options.providers.get(kind);
    if (!provider?.checkSignIn) throw new ProtocolError('chat-unsupported', `This host cannot ask ${kind} whether it is signed in`);
    const until = Date.now() + (this.options.limitMs ?? 5 * 60_000);
    const running = this.watches.get(id);
    if (running) {
      running.until = until;
      return;
    }
    const watch = { until, timer: null as ReturnType<typeof setTimeout> | null };
    this.watches.set(id, watch);
    void this.check(id, kind, provider, watch);
  }

  private async check(id: string, kind: AgentKind, provider: Provider, watch: { until: number; timer: ReturnType<typeof setTimeout> | null }): Promise<void> {
    let signedIn = false;
    try {
      const launch = this.options.accounts.launchSettings(kind, id);
      const state = await provider.checkSignIn!(launch);
      signedIn = state.signedIn;
      if (!this.closed && this.options.accounts.noteSignIn(id, state)) this.options.changed();
    } catch (error) {
      this.options.warn(`account ${id}: sign-in check failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (this.closed || signedIn || Date.now() >= watch.until) {
      this.watches.delete(id);
      return;
    }
    watch.timer = setTimeout(() => void this.check(id, kind, provider, watch), this.options.intervalMs ?? 3_000);
    watch.timer.unref?.();
  }

  /** Whether `id` is still being watched. */
  watching(id: string): boolean {
    return this.watches.has(id);
  }

  close(): void {
    this.closed = true;
    for (const watch of this.watches.values()) if (watch.timer) clearTimeout(watch.timer);
    this.watches.clear();
  }
}
