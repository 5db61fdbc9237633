// One alarm shared by an object's concerns (src/relay/objects/alarms.ts), on a fake storage and clock:
// the earliest want wins, a concern runs once per time it asked, a want moves only earlier, and the
// storage is asked only when a want is sooner than the alarm already set.
import { describe, expect, it } from 'vitest';
import { Alarms } from '../../src/relay/objects/alarms.ts';

function fakeStorage(refuse = 0) {
  const storage = {
    alarm: null as number | null,
    gets: 0,
    sets: [] as number[],
    refuse,
    getAlarm: async () => {
      storage.gets++;
      return storage.alarm;
    },
    setAlarm: async (at: number) => {
      storage.sets.push(at);
      if (storage.refuse-- > 0) throw new Error('alarm refused');
      storage.alarm = at;
    },
    /** The runtime fires the alarm: it is used up. */
    fire: () => {
      storage.alarm = null;
    },
  };
  return storage;
}

describe("the objects' one alarm", () => {
  it('arms for the earliest of two concerns, runs only the due one, and then arms for the other', async () => {
    const storage = fakeStorage();
    const alarms = new Alarms<'flush' | 'meter'>(storage);
    const clock = { t: 1_000 };
    alarms.now = () => clock.t;
    const ran: string[] = [];
    const concerns = {
      flush: () => {
        ran.push('flush');
      },
      meter: () => {
        ran.push('meter');
      },
    };
    // Both heard of in this life, so neither runs just for being unknown.
    await alarms.want('meter', 61_000);
    await alarms.want('flush', 2_000);
    expect(storage.alarm).toBe(2_000);

    clock.t = 2_000;
    storage.fire();
    await alarms.run(concerns);
    expect(ran).toEqual(['flush']);
    expect(storage.alarm).toBe(61_000);

    // The flush that ran is not run again by the next alarm unless it asks again.
    clock.t = 61_000;
    storage.fire();
    await alarms.run(concerns);
    expect(ran).toEqual(['flush', 'meter']);
    expect(storage.alarm).toBeNull();
  });

  it('moves a want earlier only when asked for sooner, and asks the storage only then', async () => {
    const storage = fakeStorage();
    const alarms = new Alarms<'flush'>(storage);
    alarms.now = () => 0;
    await alarms.want('flush', 5_000);
    expect(alarms.want('flush', 5_000)).toBeNull();
    expect(alarms.want('flush', 9_000)).toBeNull();
    expect(storage.alarm).toBe(5_000);
    await alarms.want('flush', 3_000);
    expect(storage.alarm).toBe(3_000);
    // Read once (what a life before may have set), then only set, each time sooner.
    expect({ gets: storage.gets, sets: storage.sets }).toEqual({ gets: 1, sets: [5_000, 3_000] });
  });

  it('keeps a sooner alarm a life before set, and runs every concern it never heard of on the first alarm', async () => {
    const storage = fakeStorage();
    storage.alarm = 1_500; // set before a restart: the wants behind it are gone with the memory
    const alarms = new Alarms<'presence' | 'meter'>(storage);
    const clock = { t: 1_000 };
    alarms.now = () => clock.t;
    expect(await alarms.want('meter', 60_000)).toBeUndefined();
    expect(storage.alarm).toBe(1_500);
    expect(alarms.want('meter', 50_000)).toBeNull(); // known: the storage's 1 500 is sooner
    const ran: string[] = [];
    clock.t = 1_500;
    storage.fire();
    await alarms.run({
      presence: () => {
        ran.push('presence');
      },
      meter: () => {
        ran.push('meter');
      },
    });
    expect(ran).toEqual(['presence']);
    expect(storage.alarm).toBe(50_000);
  });

  it('tries a refused set again at the next want, and fails the alarm a concern failed after arming for the rest', async () => {
    const storage = fakeStorage(1);
    const alarms = new Alarms<'flush' | 'meter'>(storage);
    alarms.now = () => 0;
    await expect(alarms.want('flush', 4_000)).rejects.toThrow('alarm refused');
    expect(alarms.armed).toBe(false);
    await alarms.want('meter', 8_000);
    expect(storage.alarm).toBe(4_000);

    alarms.now = () => 4_000;
    storage.fire();
    await expect(
      alarms.run({
        flush: () => {
          throw new Error('flush failed');
        },
        meter: () => undefined,
      }),
    ).rejects.toThrow('flush failed');
    expect(storage.alarm).toBe(8_000);
  });
});
