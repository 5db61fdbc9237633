// Streamed text joined before it becomes events: the deltas of one item that arrive within `windowMs`
// of the first pending one go out as one delta, so clients get fewer, fuller events (a person never sees
// the difference). Items keep their own order of first arrival; `flush` sends whatever waits at once,
// which the session does before any other event so the thread's order holds. A window of 0 joins nothing.
export interface Timers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: Timers = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class DeltaCoalescer {
  private readonly pending = new Map<string, string[]>();
  private timer: unknown = null;
  private readonly windowMs: number;
  private readonly send: (itemId: string, text: string) => void;
  private readonly timers: Timers;

  constructor(windowMs: number, send: (itemId: string, text: string) => void, timers: Timers = REAL_TIMERS) {
    this.windowMs = windowMs;
    this.send = send;
    this.timers = timers;
  }

  add(itemId: string, text: string): void {
    if (text === '') return;
    if (this.windowMs <= 0) {
      this.send(itemId, text);
      return;
    }
    const parts = this.pending.get(itemId);
    if (parts) parts.push(text);
    else this.pending.set(itemId, [text]);
    this.timer ??= this.timers.set(() => {
      this.timer = null;
      this.flush();
    }, this.windowMs);
  }

  /** Sends what waits now, item by item. */
  flush(): void {
    this.stopTimer();
    if (this.pending.size === 0) return;
    const pending = [...this.pending];
    this.pending.clear();
    for (const [itemId, parts] of pending) this.send(itemId, parts.join(''));
  }

  /** Drops what waits, unsent (a chat killed). */
  discard(): void {
    this.stopTimer();
    this.pending.clear();
  }

  private stopTimer(): void {
    if (this.timer !== null) {
      this.timers.clear(this.timer);
      this.timer = null;
    }
  }
}
