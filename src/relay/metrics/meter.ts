// One Durable Object's counters and socket count. Counting only adds to a map in memory; what was
// counted is written at most once a minute (FLUSH_EVERY_MS), and a change in sockets a few seconds
// after it, by the object's own alarm. The alarm is shared with whatever else the object uses it for,
// through the object's scheduler (objects/alarms.ts): the meter asks it for a time under the name
// 'meter', and the object's alarm calls `alarm()` when that time is due.
//
// What can be lost: an object evicted or crashed before its alarm loses what it counted since its last
// write (at most a minute's counts); a write D1 refuses is kept and tried again a minute later.
// Sockets are a gauge, not a sum: each object writes its own row (kind, count) and the route adds the
// rows up. Hibernation keeps sockets (`ctx.getWebSockets()` still lists them), so the count is read
// from the runtime at each write, never kept by hand. While an object has sockets it renews its row
// every ten minutes; the row of an object that died with its sockets (a deploy drops every socket)
// runs out unrenewed.
//
// The cost of that design: every Lobby and ChatRoom holding sockets wakes from hibernation every ten
// minutes, with nothing else to do, for one D1 upsert (a HostLink is awake anyway: its presence check
// runs every two seconds). An idle relay with many open chats pays that many wake-ups and writes. It
// buys a gauge that heals: without renewal, the row of an object that died with its sockets would
// count them for ever.
import { failureText } from '../db/failures.ts';
import { hourOf, type ObjectKind, type SocketsRow } from '../db/metrics.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import type { Alarms } from '../objects/alarms.ts';
import { recordFlush } from './record.ts';
import { Tally, type Taken } from './tally.ts';

export const FLUSH_EVERY_MS = 60_000;
/** A change in sockets is written this long after it: a burst of connects is one write. */
const SOCKETS_SETTLE_MS = 5_000;
/** How often an object with sockets renews its row. */
export const SOCKETS_RENEW_MS = 10 * 60_000;
/** How long a row counts unrenewed: two renewals and a half, so one late alarm drops no live object. */
export const SOCKETS_ROW_LIFE_MS = 25 * 60_000;

export class Meter {
  /** The clock; a field so a test can move time on without waiting for it. */
  now: () => number = () => Date.now();
  private readonly tally = new Tally();
  private readonly ctx: DurableObjectState;
  private readonly env: Env;
  private readonly kind: ObjectKind;
  private readonly sockets: () => number;
  /** The socket count this object last wrote, and when; null until it has in this life (after a restart nobody knows). */
  private written: { sockets: number; at: number } | null = null;
  private socketsChangedAt: number | null = null;
  /** After a write D1 refused, the next is not tried before this. */
  private retryAt: number | null = null;
  private readonly alarms: Pick<Alarms<'meter'>, 'want' | 'armed'>;
  /**
   * The writes, one after another: a flush resolves once everything counted before it is in D1, even
   * when an alarm's write was under way (an object shares promises across its events, unlike a Worker).
   */
  private writes: Promise<void> = Promise.resolve();

  /**
   * `sockets`: the object's open sockets now (the hello'd host link, or clients), read at each write;
   * `alarms`: the object's one alarm, shared with its other concerns.
   */
  constructor(ctx: DurableObjectState, env: Env, kind: ObjectKind, sockets: () => number, alarms: Pick<Alarms<'meter'>, 'want' | 'armed'>) {
    this.ctx = ctx;
    this.alarms = alarms;
    this.env = env;
    this.kind = kind;
    this.sockets = sockets;
  }

  /**
   * Adds `n` to a counter. On hot paths: a map update, and an alarm asked for by the first count after a
   * write (its write is due sooner than a renewal's) or by any count while no alarm is known to be armed
   * (after a failed `setAlarm`, so a failure costs one more try at the next count, not the counts).
   */
  count(name: string, n = 1): void {
    const first = this.tally.empty;
    this.tally.add(name, n, this.now);
    if ((first || !this.alarms.armed) && !this.tally.empty) this.arm();
  }

  /** A socket opened or closed here: the count is written shortly. */
  socketsChanged(): void {
    this.socketsChangedAt ??= this.now();
    this.arm();
  }

  /**
   * The 'meter' concern of the object's alarm (alarms.ts): writes what is due and asks for the next
   * time if anything waits. Never throws. The scheduler may call it early (an alarm that fired for
   * another concern, or before its time in tests): it checks its own clock.
   */
  async alarm(): Promise<void> {
    if (this.due(this.now())) await this.flush();
    this.arm();
  }

  /** Writes what was counted and, when it changed or needs renewing, the socket count. Never throws. */
  flush(): Promise<void> {
    // The chain must never stay rejected: every later flush waits on it.
    this.writes = this.writes
      .then(() => this.flushOnce())
      .catch((error: unknown) => {
        log.warn('metrics flush failed', { kind: this.kind, error: String(error) });
      });
    return this.writes;
  }

  private async flushOnce(): Promise<void> {
    const now = this.now();
    const changedAt = this.socketsChangedAt;
    // Cleared before the count is read: a socket that comes or goes during the write asks again.
    this.socketsChangedAt = null;
    let taken: Taken | null = null;
    try {
      const sockets = this.sockets();
      const written = this.written;
      const stale = written === null || written.sockets !== sockets || (sockets > 0 && now >= written.at + SOCKETS_RENEW_MS);
      const row: SocketsRow | null = stale ? { objectId: this.ctx.id.toString(), kind: this.kind, sockets, expiresAt: now + SOCKETS_ROW_LIFE_MS } : null;
      taken = this.tally.take();
      if (!taken && !row) return;
      await recordFlush(this.env, this.kind, { hour: taken?.hour ?? hourOf(now), counts: taken?.counts ?? null, sockets: row });
      if (row) this.written = { sockets, at: now };
      this.retryAt = null;
    } catch (error) {
      if (taken) this.tally.restore(taken);
      if (changedAt !== null) this.socketsChangedAt ??= changedAt;
      this.retryAt = now + FLUSH_EVERY_MS;
      log.warn('metrics not written', { kind: this.kind, error: failureText(error) });
    }
  }

  /** When the next write is due; null when nothing waits. */
  private nextDue(): number | null {
    let at = Infinity;
    const counts = this.tally.dueAt(FLUSH_EVERY_MS);
    if (counts !== null) at = counts;
    if (this.socketsChangedAt !== null) at = Math.min(at, this.socketsChangedAt + SOCKETS_SETTLE_MS);
    if (this.written !== null && this.written.sockets > 0) at = Math.min(at, this.written.at + SOCKETS_RENEW_MS);
    if (at === Infinity) return null;
    return this.retryAt === null ? at : Math.max(at, this.retryAt);
  }

  private due(now: number): boolean {
    if (this.retryAt !== null && now < this.retryAt) return false;
    // The first alarm of this life writes: a row from before a restart may be stale, or due for renewal.
    if (this.written === null) return true;
    const at = this.nextDue();
    return at !== null && now >= at;
  }

  /** Asks for an alarm no later than the next write is due; the scheduler never moves it later. */
  private arm(): void {
    const at = this.nextDue();
    if (at === null) return;
    // A refusal is logged by the scheduler; the next count asks again (count, above).
    void this.alarms.want('meter', at)?.catch(() => undefined);
  }
}
