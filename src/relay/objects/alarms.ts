// One alarm, shared by every concern of a Durable Object. An object has a single storage alarm; the
// meter's write, a ChatRoom's item flush and the HostLink's presence check each want it at their own
// time. Each concern asks for a time by name (want); the object's one `alarm()` hands `run` a handler
// per concern, and `run` calls those that are due and sets the storage alarm to the earliest time
// still wanted.
//
// Rules, each for a reason:
// - A want only ever moves earlier: a concern that asks again for a later time keeps the earlier one
//   (it fires, finds nothing due, and asks again), so no concern can postpone another's alarm.
// - The storage is touched only when a want is earlier than the alarm this scheduler knows is set:
//   wants come on hot paths (a count, a streamed delta), and asking the storage on each cost the most
//   in the profile. A refused `setAlarm` forgets the armed time, so the next want tries again.
// - A concern is due when its time has come, or when it is no later than the alarm that fired (the
//   test pool fires an alarm before its time; the concern checks its own clock), or when this life of
//   the object never heard from it: its want may have been set by the life before, and lost with the
//   memory (a restart keeps the storage alarm, not the wants). A due concern's want is cleared before
//   it runs, so it is not run twice and may ask again for its next time.
import { log } from '../log.ts';

/** What the scheduler needs of the object's storage (a test hands it a fake). */
export interface AlarmStorage {
  getAlarm(): Promise<number | null>;
  setAlarm(at: number): Promise<void>;
}

export class Alarms<Name extends string = string> {
  /** The clock; a field so a test can move time on without waiting for it. */
  now: () => number = () => Date.now();
  private readonly storage: AlarmStorage;
  private readonly wanted = new Map<Name, number>();
  /** Concerns that asked in this life of the object (see the rules above). */
  private readonly heard = new Set<Name>();
  /** The storage alarm as this scheduler last set it (or found it earlier); null when not known. */
  private armedFor: number | null = null;
  /** After an alarm fired the storage holds none, until a set: no need to read it before setting. */
  private cleared = false;

  constructor(storage: AlarmStorage) {
    this.storage = storage;
  }

  /** Whether a storage alarm is known to be set for the earliest want. */
  get armed(): boolean {
    return this.armedFor !== null;
  }

  /**
   * Asks for `name` to run at `at` or sooner. Answers the storage call when one was made (it rejects
   * when the storage refused, the failure logged already), or null when memory settled it.
   */
  want(name: Name, at: number): Promise<void> | null {
    this.heard.add(name);
    const current = this.wanted.get(name);
    if (current === undefined || at < current) this.wanted.set(name, at);
    // The earliest of all (a few concerns): after a refused set, another concern's sooner want is still unarmed.
    return this.arm(this.earliest()!);
  }

  /** The object's alarm: runs the due concerns, in the handlers' order, then arms for the earliest still wanted. */
  async run(handlers: Record<Name, () => unknown>): Promise<void> {
    const firedFor = this.armedFor ?? -Infinity;
    this.armedFor = null;
    this.cleared = true;
    const by = Math.max(this.now(), firedFor);
    const due = (Object.keys(handlers) as Name[]).filter((name) => {
      const at = this.wanted.get(name);
      return at === undefined ? !this.heard.has(name) : at <= by;
    });
    for (const name of due) {
      this.wanted.delete(name);
      this.heard.add(name);
    }
    let failure: unknown = null;
    for (const name of due) {
      try {
        await handlers[name]();
      } catch (error) {
        failure ??= error;
      }
    }
    const next = this.earliest();
    if (next !== null) await this.arm(next)?.catch(() => undefined);
    // A concern that failed fails the alarm, so the runtime tries it again, as before the scheduler.
    if (failure !== null) throw failure;
  }

  private earliest(): number | null {
    let at: number | null = null;
    for (const when of this.wanted.values()) if (at === null || when < at) at = when;
    return at;
  }

  /** Sets the storage alarm to `at` unless one no later is known to be set; never moves it later. */
  private arm(at: number): Promise<void> | null {
    if (this.armedFor !== null && this.armedFor <= at) return null;
    // Known: the alarm this scheduler set (later than `at`), or none since one fired. Unknown (a new
    // life of the object): whatever the life before set is read first, and kept if it is sooner.
    const known = this.armedFor !== null || this.cleared;
    this.armedFor = at;
    this.cleared = false;
    const storage = this.storage;
    const set = known
      ? storage.setAlarm(at)
      : storage.getAlarm().then((current) => {
          if (this.armedFor !== at) return; // an earlier want set the alarm meanwhile
          if (current !== null && current <= at) {
            this.armedFor = current;
            return;
          }
          return storage.setAlarm(at);
        });
    return set.catch((error: unknown) => {
      // Only this call's: an earlier alarm asked for since is not undone by this one failing.
      if (this.armedFor === at) this.armedFor = null;
      log.warn('alarm not set', { at, error: String(error) });
      throw error;
    });
  }
}
