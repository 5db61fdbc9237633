// The relay's counters: what is connected (gauges each object writes for itself), events in and
// delivered, errors by code, how and when objects write them, Analytics Engine when bound, and the
// owner's route. Every object here runs on a clock of the test's (an hour of its own, years ahead), so
// counts land in a D1 row no other test writes to, and no metrics alarm fires by itself: writes happen
// when the test flushes or runs an alarm.
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { RELAY_COUNTERS, RelayMetricsSchema, errorCounter, type RelayMetrics } from '../../src/contracts/index.ts';
import { Meter } from '../../src/relay/metrics/meter.ts';
import { Alarms } from '../../src/relay/objects/alarms.ts';
import { HOUR_MS, hourOf } from '../../src/relay/db/metrics.ts';
import { Tally } from '../../src/relay/metrics/tally.ts';
import { workerMeter } from '../../src/relay/metrics/worker-meter.ts';
import { roomName } from '../../src/relay/objects/stubs.ts';
import { Client, FakeHost, hostToken, infoFor, until, userItem } from './peers.ts';
import { api, signIn, type Person } from './people.ts';

const unique = () => crypto.randomUUID().slice(0, 8);
const FAR = hourOf(Date.now()) + 20 * 365 * 24 * HOUR_MS;
let hours = 0;
/** A clock of one test: the start of an hour nobody else uses, moved on by hand. */
const newClock = () => ({ t: FAR + ++hours * 10 * HOUR_MS });

type Stub = DurableObjectStub;
const linkOf = (hostId: string): Stub => env.HOST_LINK.get(env.HOST_LINK.idFromName(hostId));
const lobbyOf = (hostId: string): Stub => env.LOBBY.get(env.LOBBY.idFromName(hostId));
const roomOf = (hostId: string, chatId: string): Stub => env.CHAT_ROOM.get(env.CHAT_ROOM.idFromName(roomName(hostId, chatId)));

const meterOf = (instance: unknown) => (instance as { meter: Meter }).meter;

/** Puts these objects' meters on the test's clock (before anything happens in them). */
async function onClock(clock: { t: number }, ...stubs: Stub[]): Promise<void> {
  for (const stub of stubs)
    await runInDurableObject(stub, (o) => {
      meterOf(o).now = () => clock.t;
    });
}

async function flush(...stubs: Stub[]): Promise<void> {
  for (const stub of stubs) await runInDurableObject(stub, (o) => meterOf(o).flush());
}

/** The counts written under one hour, by name. */
async function countsAt(hour: number): Promise<Record<string, number>> {
  const { results } = await env.DB.prepare('SELECT name, value FROM relay_counters WHERE hour = ?').bind(hour).all<{ name: string; value: number }>();
  return Object.fromEntries(results.map((r) => [r.name, r.value]));
}

async function socketRow(stub: Stub): Promise<{ kind: string; sockets: number; expires_at: number } | null> {
  return env.DB.prepare('SELECT kind, sockets, expires_at FROM relay_sockets WHERE object_id = ?').bind(stub.id.toString()).first();
}

let owner: Person | null = null;
async function metrics(): Promise<RelayMetrics> {
  owner ??= await signIn(`metrics-owner-${unique()}`, { owner: true });
  const reply = await api(owner, 'GET', '/api/relay/metrics');
  expect(reply.status).toBe(200);
  return RelayMetricsSchema.parse(reply.body);
}

const isOnline = (host: FakeHost) => env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline();
const online = (host: FakeHost) => until(() => isOnline(host), 'host online');

describe('relay counters', () => {
  it('counts a host and its clients while connected (a hibernated object too), and drops them when they leave', async () => {
    const clock = newClock();
    const host = new FakeHost(`host-gauge-${unique()}`);
    const [link, lobby, room] = [linkOf(host.hostId), lobbyOf(host.hostId), roomOf(host.hostId, 'g1')];
    await onClock(clock, link, lobby, room);
    const before = (await metrics()).connected;

    await host.connect();
    host.create('g1', [userItem('u1', 'hi')]);
    await online(host);
    const lobbyClient = await Client.lobby(host.hostId);
    const chatClient = await Client.chat(host.hostId, 'g1');
    await chatClient.request('chat.attach', { chatId: 'g1' });
    await flush(link, lobby, room);
    expect((await metrics()).connected).toEqual({
      hosts: before.hosts + 1,
      lobbySockets: before.lobbySockets + 1,
      chatSockets: before.chatSockets + 1,
    });
    expect(await socketRow(link)).toEqual({ kind: 'host', sockets: 1, expires_at: clock.t + 25 * 60_000 });

    // Evicted with its sockets hibernated: the new instance knows nothing of them but the runtime's list.
    await evictDurableObject(lobby);
    await onClock(clock, lobby);
    clock.t += 1_000;
    await flush(lobby);
    expect(await socketRow(lobby)).toEqual({ kind: 'lobby', sockets: 1, expires_at: clock.t + 25 * 60_000 });
    // Its socket still works, and still counts as one.
    expect((await lobbyClient.request('chat.list', {})).ok).toBe(true);

    lobbyClient.close();
    chatClient.close();
    host.disconnect();
    await until(async () => {
      await flush(link, lobby, room);
      return (await socketRow(link)) === null && (await socketRow(lobby)) === null && (await socketRow(room)) === null;
    }, 'rows gone after the sockets closed');
    expect((await metrics()).connected).toEqual(before);
  });

  it('counts events in from the host and each delivery to a client socket, exactly', async () => {
    const clock = newClock();
    const host = new FakeHost(`host-events-${unique()}`);
    const [link, lobby, room] = [linkOf(host.hostId), lobbyOf(host.hostId), roomOf(host.hostId, 'e1')];
    await onClock(clock, link, lobby, room);
    await host.connect();
    host.create('e1', []);
    await online(host);
    const lobbyClient = await Client.lobby(host.hostId);
    const [a, b] = [await Client.chat(host.hostId, 'e1'), await Client.chat(host.hostId, 'e1')];
    await a.request('chat.attach', { chatId: 'e1' });
    await b.request('chat.attach', { chatId: 'e1' });

    for (let i = 0; i < 5; i++) host.emit('e1', { type: 'item', item: userItem(`u${i}`, `message ${i}`) });
    host.sendEvent('chat.status', { chatId: 'e1', info: infoFor('e1', { status: 'running' }) });
    await a.waitFor(() => a.chatEvents().length === 5, 'five events on a');
    await b.waitFor(() => b.chatEvents().length === 5, 'five events on b');
    await lobbyClient.waitFor((f) => f.event === 'chat.status', 'the status on the lobby');
    await until(() => host.outbox.size === 0, 'all acknowledged');
    await flush(link, lobby, room);

    const counts = await countsAt(clock.t);
    // Six frames from the host: five chat events and one status. Delivered: five events to two sockets, the status to one.
    expect(counts[RELAY_COUNTERS.eventsIn]).toBe(6);
    expect(counts[RELAY_COUNTERS.eventsDelivered]).toBe(11);
    host.disconnect();
  });

  it('counts errors by code: bad frames, refused requests, dropped host frames, a host offline, a bad HTTP request', async () => {
    const clock = newClock();
    const host = new FakeHost(`host-errors-${unique()}`);
    const [link, lobby, room] = [linkOf(host.hostId), lobbyOf(host.hostId), roomOf(host.hostId, 'x1')];
    await onClock(clock, link, lobby, room);
    await host.connect();
    host.create('x1', []);
    await online(host);
    const chat = await Client.chat(host.hostId, 'x1');
    await chat.request('chat.attach', { chatId: 'x1' });
    const lobbyClient = await Client.lobby(host.hostId);

    chat.sendRaw('not json');
    await chat.waitFor((f) => f.id === null && f.error?.code === 'bad-request', 'bad-request');
    expect((await chat.request('chat.teleport', {})).error.code).toBe('unknown-request');
    expect((await chat.request('chat.addBookmark', { chatId: 'elsewhere', itemId: 'u1' })).error.code).toBe('bad-request');
    host.ws!.send('garbage');
    host.sendEvent('chat.event', { nochat: true });
    host.sendEvent('usage.changed', { scannedAt: 'yesterday' });
    host.sendEvent('chat.event', { chatId: 'x1', event: { type: 'bogus' }, seq: 1 });
    await until(() => host.outbox.size === 0, 'acknowledged');
    host.disconnect();
    await until(async () => !(await isOnline(host)), 'host offline');
    expect((await lobbyClient.request('provider.list', {})).error.code).toBe('host-offline');

    // The Worker's own: written by this isolate's meter, put on the clock after it wrote what it held.
    workerMeter.now = () => clock.t;
    try {
      await workerMeter.flush(env);
      const someone = await signIn(`metrics-someone-${unique()}`);
      expect((await api(someone, 'POST', '/api/users/anyone/disable')).body.code).toBe('forbidden');
      await workerMeter.flush(env);
    } finally {
      workerMeter.now = () => Date.now();
    }
    await flush(link, lobby, room);

    expect(await countsAt(clock.t)).toMatchObject({
      [errorCounter('bad-request')]: 2,
      [errorCounter('unknown-request')]: 1,
      [RELAY_COUNTERS.hostFramesDropped]: 4,
      [errorCounter('host-offline')]: 1,
      [errorCounter('forbidden')]: 1,
    });
  });

  it("writes at most once a minute, from the object's own alarm, and renews its socket row while it has sockets", async () => {
    const clock = newClock();
    const host = new FakeHost(`host-alarm-${unique()}`);
    const lobby = lobbyOf(host.hostId);
    await onClock(clock, lobby);
    await hostToken(host.hostId); // known to the relay, never connected
    const client = await Client.lobby(host.hostId);
    const alarmAt = () => runInDurableObject(lobby, (_, state) => state.storage.getAlarm());
    // A socket came: written a few seconds after, on the alarm.
    await until(async () => (await alarmAt()) === clock.t + 5_000, 'an alarm for the socket');
    clock.t += 5_000;
    expect(await runDurableObjectAlarm(lobby)).toBe(true);
    expect(await socketRow(lobby)).toMatchObject({ kind: 'lobby', sockets: 1 });
    const rowAt = clock.t;

    // A count asks for an alarm a minute on, and nothing is written before it.
    clock.t += 5_000;
    client.sendRaw('not json');
    await client.waitFor((f) => f.error?.code === 'bad-request', 'bad-request');
    await until(async () => (await alarmAt()) === clock.t + 60_000, 'an alarm a minute on');
    clock.t += 30_000;
    expect(await runDurableObjectAlarm(lobby)).toBe(true);
    expect(await countsAt(clock.t)).toEqual({});
    expect(await alarmAt()).toBe(clock.t + 30_000);
    clock.t += 30_000;
    expect(await runDurableObjectAlarm(lobby)).toBe(true);
    expect(await countsAt(hourOf(clock.t))).toEqual({ [errorCounter('bad-request')]: 1 });

    // With nothing counted, the next alarm is the row's renewal, ten minutes after it was written.
    expect(await alarmAt()).toBe(rowAt + 10 * 60_000);
    clock.t = rowAt + 10 * 60_000;
    expect(await runDurableObjectAlarm(lobby)).toBe(true);
    expect(await socketRow(lobby)).toEqual({ kind: 'lobby', sockets: 1, expires_at: clock.t + 25 * 60_000 });

    // The socket goes: its row goes a few seconds later.
    // Waited for by the alarm its close handler asks for (a socket reads closed before that handler
    // ran: waiting for no open socket let the alarm below run first, under load, and keep the row).
    client.close();
    await until(async () => (await alarmAt()) === clock.t + 5_000, 'an alarm for the socket gone');
    clock.t += 5_000;
    expect(await runDurableObjectAlarm(lobby)).toBe(true);
    expect(await socketRow(lobby)).toBeNull();
  });

  it("keeps writing after a socket count or a setAlarm fails, and arms again after another concern's alarm fired", async () => {
    // The meter alone on an object's one alarm (alarms.ts), the storage as the runtime keeps it (a set replaces it, a firing uses it up).
    const clock = newClock();
    const store = {
      alarm: null as number | null,
      sets: 0,
      refuse: 1,
      getAlarm: async () => store.alarm,
      setAlarm: async (at: number) => {
        store.sets++;
        if (store.refuse-- > 0) throw new Error('alarm refused');
        store.alarm = at;
      },
    };
    let readable = false;
    const sockets = () => {
      if (!readable) throw new Error('sockets unreadable');
      return 0;
    };
    const alarms = new Alarms<'flush' | 'meter'>(store);
    alarms.now = () => clock.t;
    const meter = new Meter({ id: env.LOBBY.newUniqueId(), storage: store } as unknown as DurableObjectState, env, 'lobby', sockets, alarms);
    meter.now = () => clock.t;
    const name = `meter-${unique()}`;

    // The first count's alarm is refused: a later count (not the first since a write) asks again.
    const firstAt = clock.t;
    meter.count(name);
    await until(() => store.sets === 1, 'the refused alarm');
    meter.count(name);
    await until(() => store.alarm === firstAt + 60_000, 'the alarm asked again');

    // A write whose socket count throws keeps what was counted, and the writes after it still happen.
    await meter.flush();
    readable = true;
    await meter.flush();
    expect(await countsAt(clock.t)).toEqual({ [name]: 2 });

    // Another concern's sooner alarm replaced the meter's and fired: the meter's pending time is set
    // again (its first, which a later count does not move later).
    clock.t += 1_000;
    meter.count(name);
    void alarms.want('flush', clock.t + 10);
    await until(() => store.alarm === clock.t + 10, 'the sooner alarm');
    clock.t += 10;
    store.alarm = null;
    let flushed = 0;
    await alarms.run({
      flush: () => {
        flushed++;
      },
      meter: () => meter.alarm(),
    });
    expect(flushed).toBe(1);
    await until(() => store.alarm === firstAt + 60_000, "the meter's alarm set again");
  });

  it("shares the alarm with a presence check every two seconds: each check sets the storage once, reads it never, and the meter's renewal waits behind", async () => {
    const clock = newClock();
    const store = {
      alarm: null as number | null,
      gets: 0,
      sets: 0,
      getAlarm: async () => {
        store.gets++;
        return store.alarm;
      },
      setAlarm: async (at: number) => {
        store.sets++;
        store.alarm = at;
      },
    };
    const alarms = new Alarms<'presence' | 'meter'>(store);
    alarms.now = () => clock.t;
    const meter = new Meter({ id: env.HOST_LINK.newUniqueId(), storage: store } as unknown as DurableObjectState, env, 'host', () => 1, alarms);
    meter.now = () => clock.t;
    meter.socketsChanged();
    await until(() => store.alarm === clock.t + 5_000, 'the settle alarm');
    clock.t += 5_000;
    store.alarm = null;
    let checking = true;
    const concerns = { presence: () => (checking ? alarms.want('presence', clock.t + 2_000) : undefined), meter: () => meter.alarm() };
    await alarms.run(concerns); // writes the row (the renewal is ten minutes away); presence runs, never heard of before
    const rowAt = clock.t;
    expect(store.alarm).toBe(clock.t + 2_000);
    const asked = { gets: store.gets, sets: store.sets };
    for (let i = 0; i < 5; i++) {
      clock.t += 2_000;
      store.alarm = null;
      await alarms.run(concerns);
      expect(store.alarm).toBe(clock.t + 2_000);
    }
    expect({ gets: store.gets, sets: store.sets }).toEqual({ gets: asked.gets, sets: asked.sets + 5 });
    // The checks stop (the host left): the alarm falls back to the meter's renewal.
    checking = false;
    clock.t += 2_000;
    store.alarm = null;
    await alarms.run(concerns);
    expect(store.alarm).toBe(rowAt + 10 * 60_000);
  });

  it("writes counts under the hour of the first, and no later than that hour's end", () => {
    const tally = new Tally();
    const hour = hourOf(FAR);
    tally.add('x', 1, () => hour + HOUR_MS - 10_000);
    tally.add('x', 2, () => hour + HOUR_MS + 10_000);
    expect(tally.dueAt(60_000)).toBe(hour + HOUR_MS);
    expect(tally.take()).toEqual({ hour, since: hour + HOUR_MS - 10_000, counts: new Map([['x', 3]]) });
    expect(tally.empty).toBe(true);
  });

  it("does not hold back a chat's item writes behind its own later alarm", async () => {
    const clock = newClock();
    const host = new FakeHost(`host-items-${unique()}`);
    const room = roomOf(host.hostId, 'i1');
    await onClock(clock, room);
    await host.connect();
    host.create('i1', []);
    await online(host);
    const chat = await Client.chat(host.hostId, 'i1');
    await chat.request('chat.attach', { chatId: 'i1' });
    host.emit('i1', { type: 'item', item: { kind: 'assistant', id: 'a1', createdAt: 1, turnId: 't1', text: 'He', streaming: true } });
    await chat.waitFor(() => chat.chatEvents().length === 1, 'the item');
    // The meter's alarm stands years ahead (its clock); the room wrote items just now, so a delta's item
    // write waits for an alarm of its own, which must come before the meter's.
    await until(async () => (await runInDurableObject(room, (_, state) => state.storage.getAlarm()))! >= FAR, "the meter's alarm");
    await runInDurableObject(room, (o) => {
      (o as unknown as { replica: { lastFlush: number } }).replica.lastFlush = Date.now() + 60_000;
    });
    host.emit('i1', { type: 'delta', itemId: 'a1', text: 'llo' });
    await chat.waitFor(() => chat.chatEvents().length === 2, 'the delta');
    await until(async () => (await runInDurableObject(room, (_, state) => state.storage.getAlarm()))! < FAR, "the item write's alarm");
    host.disconnect();
  });

  it('sends each write to Analytics Engine as well when METRICS is bound', async () => {
    // The pool's Analytics Engine binding keeps nothing it is given, so the object gets a recording one.
    const clock = newClock();
    const host = new FakeHost(`host-ae-${unique()}`);
    const lobby = lobbyOf(host.hostId);
    await onClock(clock, lobby);
    const points: AnalyticsEngineDataPoint[] = [];
    await runInDurableObject(lobby, (o) => {
      (o as unknown as { env: { METRICS?: AnalyticsEngineDataset } }).env.METRICS = {
        writeDataPoint: (p) => {
          if (p) points.push(p);
        },
      };
    });
    try {
      await hostToken(host.hostId);
      const client = await Client.lobby(host.hostId);
      client.sendRaw('not json');
      await client.waitFor((f) => f.error?.code === 'bad-request', 'bad-request');
      await flush(lobby);
      expect(points).toEqual([
        { indexes: [errorCounter('bad-request')], blobs: [errorCounter('bad-request'), 'lobby'], doubles: [1] },
        { indexes: ['sockets'], blobs: ['sockets', 'lobby', lobby.id.toString()], doubles: [1] },
      ]);
      // D1 has them too.
      expect(await countsAt(clock.t)).toEqual({ [errorCounter('bad-request')]: 1 });
      client.close();
    } finally {
      await runInDurableObject(lobby, (o) => {
        delete (o as unknown as { env: { METRICS?: unknown } }).env.METRICS;
      });
    }
  });

  it('answers its owner only: the last 24 hours, totals and what is connected', async () => {
    const m = await metrics();
    expect(m.hours).toHaveLength(24);
    expect(m.hours.at(-1)!.hour).toBe(hourOf(Date.now()));
    expect(m.hours[0]!.hour).toBe(hourOf(Date.now()) - 23 * HOUR_MS);
    expect(m.analyticsEngine).toBe(env.METRICS !== undefined);
    expect(m.flushEveryMs).toBe(60_000);
    // What the tests above wrote in their own (future) hours is in the totals.
    expect(m.totals[RELAY_COUNTERS.eventsIn]).toBeGreaterThanOrEqual(6);

    const someone = await signIn(`metrics-nobody-${unique()}`);
    const refused = await api(someone, 'GET', '/api/relay/metrics');
    expect(refused).toEqual({ status: 403, body: { code: 'forbidden', message: "Only the relay's owner reads its counters" } });
    expect((await api(null, 'GET', '/api/relay/metrics')).status).toBe(401);
  });
});
