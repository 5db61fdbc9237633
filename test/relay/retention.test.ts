// What the relay stops keeping, so nothing anyone can make grow grows without bound: the daily sweep
// (the cron trigger's `scheduled`, db/retention.ts) for failed sign-ins and refresh tokens, and each
// chat's own bounds on sends kept for an offline host and on removed visuals.
import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { FAILED_SIGNIN_KEEP_COUNT, FAILED_SIGNIN_KEEP_MS, USED_REFRESH_KEEP_MS } from '../../src/relay/db/retention.ts';
import worker from '../../src/relay/index.ts';
import { KEPT_SENDS_MAX } from '../../src/relay/objects/chat-room/kept-sends.ts';
import { roomName } from '../../src/relay/objects/stubs.ts';
import { Client, FakeHost, until, userToken } from './peers.ts';

let n = 0;
const unique = () => `${++n}-${crypto.randomUUID().slice(0, 6)}`;

/** Runs the cron trigger's handler as the runtime would, and waits for what it handed to waitUntil. */
async function runDailySweep(): Promise<void> {
  const waits: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => waits.push(p), passThroughOnException: () => undefined, props: {} } as unknown as ExecutionContext;
  await worker.scheduled({ cron: '17 4 * * *', scheduledTime: Date.now(), noRetry: () => undefined } as ScheduledController, env, ctx);
  await Promise.all(waits);
}

const count = (sql: string, ...binds: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...binds)
    .first<number>('n');

describe('the daily sweep', () => {
  it('keeps failed sign-ins for 30 days and at most the newest 10 000, and leaves every other audit row', async () => {
    const now = Date.now();
    const tag = `sweep-${unique()}`;
    const insert = (at: number, action: string) =>
      env.DB.prepare('INSERT INTO audit (at, actor, ip, action, detail) VALUES (?, NULL, ?, ?, NULL)').bind(at, tag, action);
    // Old failures go; an old sign-in and old grant changes stay (they are the owner's history, not noise).
    await env.DB.batch([
      insert(now - FAILED_SIGNIN_KEEP_MS - 60_000, 'signin-failed'),
      insert(now - FAILED_SIGNIN_KEEP_MS - 60_000, 'signin'),
      insert(now - FAILED_SIGNIN_KEEP_MS - 60_000, 'grant.created'),
      insert(now - 60_000, 'signin-failed'),
    ]);
    await runDailySweep();
    const left = await env.DB.prepare('SELECT action, at FROM audit WHERE ip = ? ORDER BY id').bind(tag).all<{ action: string; at: number }>();
    expect(left.results.map((r) => r.action)).toEqual(['signin', 'grant.created', 'signin-failed']);

    // A flood of recent failures (a botnet at the door) is cut to the newest FAILED_SIGNIN_KEEP_COUNT.
    const flood = `flood-${unique()}`;
    const rows = FAILED_SIGNIN_KEEP_COUNT + 50;
    for (let i = 0; i < rows; i += 500) {
      const values = Array.from({ length: Math.min(500, rows - i) }, (_, j) => `(${now - 1_000 + ((i + j) % 1000)}, '${flood}', 'signin-failed')`).join(',');
      await env.DB.prepare(`INSERT INTO audit (at, ip, action) VALUES ${values}`).run();
    }
    const newest = await env.DB.prepare("SELECT max(id) AS id FROM audit WHERE action = 'signin-failed'").first<number>('id');
    await runDailySweep();
    expect(await count("SELECT count(*) AS n FROM audit WHERE action = 'signin-failed'")).toBe(FAILED_SIGNIN_KEEP_COUNT);
    // The newest are the ones kept.
    expect(await count("SELECT count(*) AS n FROM audit WHERE action = 'signin-failed' AND id = ?", newest)).toBe(1);
    expect(await count("SELECT count(*) AS n FROM audit WHERE ip = ? AND action = 'signin'", tag)).toBe(1);
  });

  it("drops refresh tokens of ended sessions and used ones older than a week; a live session's current token stays", async () => {
    const now = Date.now();
    const user = `sweep-user-${unique()}`;
    await userToken(user);
    const session = (id: string, expiresAt: number, revokedAt: number | null) =>
      env.DB.prepare('INSERT INTO sessions (id, user_id, method, created_at, last_used_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)').bind(
        id,
        user,
        'password',
        now - 40 * 86_400_000,
        now,
        expiresAt,
        revokedAt,
      );
    const token = (hash: string, sessionId: string, usedAt: number | null) =>
      env.DB.prepare('INSERT INTO refresh_tokens (token_hash, session_id, created_at, used_at) VALUES (?, ?, ?, ?)').bind(
        hash,
        sessionId,
        now - 40 * 86_400_000,
        usedAt,
      );
    const [live, revoked, expired] = [`s-live-${unique()}`, `s-revoked-${unique()}`, `s-expired-${unique()}`];
    await env.DB.batch([
      session(live, now + 86_400_000, null),
      session(revoked, now + 86_400_000, now - 1000),
      session(expired, now - 1000, null),
      token(`${live}-current`, live, null),
      token(`${live}-used-yesterday`, live, now - 86_400_000),
      token(`${live}-used-long-ago`, live, now - USED_REFRESH_KEEP_MS - 60_000),
      token(`${revoked}-current`, revoked, null),
      token(`${expired}-current`, expired, null),
    ]);
    await runDailySweep();
    const left = await env.DB.prepare('SELECT token_hash FROM refresh_tokens WHERE session_id IN (?, ?, ?) ORDER BY token_hash')
      .bind(live, revoked, expired)
      .all<{ token_hash: string }>();
    expect(left.results.map((r) => r.token_hash)).toEqual([`${live}-current`, `${live}-used-yesterday`]);
  });
});

describe("a chat's own bounds", () => {
  it('keeps at most KEPT_SENDS_MAX sends for an offline host; the next is answered host-offline and not kept', async () => {
    const host = await new FakeHost(`host-retention-${unique()}`).connect();
    host.create('kept', []);
    const me = await Client.chat(host.hostId, 'kept');
    await me.request('chat.attach', { chatId: 'kept' });
    host.disconnect();
    await me.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline');
    for (let i = 0; i < KEPT_SENDS_MAX; i++) {
      expect((await me.request('chat.send', { chatId: 'kept', text: `message ${i}` })).result).toEqual({ queued: true });
    }
    const over = await me.request('chat.send', { chatId: 'kept', text: 'one too many' });
    expect(over.error).toMatchObject({ code: 'host-offline', message: expect.stringContaining(`${KEPT_SENDS_MAX} messages already wait`) });
    // Back online, exactly the kept ones are delivered, in order.
    await host.connect();
    await until(() => host.requestsOf('chat.send').length === KEPT_SENDS_MAX, 'kept sends delivered');
    expect(host.requestsOf('chat.send').map((f) => f.payload.text)).toEqual(Array.from({ length: KEPT_SENDS_MAX }, (_, i) => `message ${i}`));
    me.close();
    host.disconnect();
  });

  it("forgets a removed visual once the host's whole list no longer names it", async () => {
    const host = await new FakeHost(`host-retention-${unique()}`).connect();
    host.create('vis', []);
    const me = await Client.chat(host.hostId, 'vis');
    await me.request('chat.attach', { chatId: 'vis' });
    const visual = (id: string) => ({ id, title: id, at: 1, maxHeight: 600, size: 10 });
    host.sendEvent('chat.visuals', { chatId: 'vis', visuals: [visual('a'), visual('b')] });
    await me.waitFor((f) => f.event === 'chat.visuals' && f.payload.visuals.length === 2, 'two visuals');
    await me.request('chat.removeVisual', { chatId: 'vis', visualId: 'a' });
    const room = env.CHAT_ROOM.get(env.CHAT_ROOM.idFromName(roomName(host.hostId, 'vis')));
    const removed = () =>
      runInDurableObject(room, (_instance, state) =>
        state.storage.sql
          .exec<{ visual_id: string }>('SELECT visual_id FROM removed_visuals')
          .toArray()
          .map((r) => r.visual_id),
      );
    expect(await removed()).toEqual(['a']);
    // While the host still names it, it stays removed (and remembered).
    host.sendEvent('chat.visuals', { chatId: 'vis', visuals: [visual('a'), visual('b'), visual('c')] });
    await me.waitFor((f) => f.event === 'chat.visuals' && f.payload.visuals.some((v: { id: string }) => v.id === 'c'), 'third visual');
    expect(await removed()).toEqual(['a']);
    // The host dropped it too: nothing is left to hide, so nothing is kept.
    host.sendEvent('chat.visuals', { chatId: 'vis', visuals: [visual('b'), visual('c')] });
    await until(async () => (await removed()).length === 0, 'removal forgotten');
    // Left connected (see the last test of hosts.test.ts): a disconnect as the file's last step races its teardown.
  });
});
