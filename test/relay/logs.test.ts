// The relay's logs inside workerd: every line one JSON object with a request id, the lines of one
// HTTP request (in the Worker and in the Durable Objects it reached) under that request's id, which
// the response answers in X-Request-Id, and nothing a person typed or holds as a secret in any line.
// The Worker and its objects run in the test's isolate here, so spying on console sees their lines.
import { SELF, env } from 'cloudflare:test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Client, FakeHost, until } from './peers.ts';

const PASSWORD = 'purple elephant carries 42 lanterns';
const WRONG_PASSWORD = 'orange giraffe forgets 17 umbrellas';
const EMAIL = 'olive.logs@example.com';
const MESSAGE = 'please refactor the zanzibar billing module';
const CHAT = 'chat-logs';

let lines: string[] = [];

beforeEach(() => {
  lines = [];
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
  }
});
afterEach(() => vi.restoreAllMocks());

type Line = { level: string; msg: string; rid: string } & Record<string, unknown>;
const parsed = () => lines.map((text) => JSON.parse(text) as Line);
const linesOf = (rid: string) => parsed().filter((line) => line.rid === rid);

async function post(path: string, body: unknown, token?: string): Promise<{ status: number; rid: string | null; body: any }> {
  const res = await SELF.fetch(`http://relay.test${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, rid: res.headers.get('X-Request-Id'), body: await res.json() };
}

describe('the relay logs', () => {
  it('one JSON line per event with the request id, across the Worker and the objects, and no secrets or message text', async () => {
    // A sign-in with a wrong password, the owner's claim and a sign-in with the right one.
    const setup = await post('/api/auth/setup', { secret: env.TETHER_SETUP_SECRET, email: EMAIL, password: PASSWORD, name: 'Olive' });
    expect(setup.status).toBe(201);
    const refused = await post('/api/auth/signin', { email: EMAIL, password: WRONG_PASSWORD });
    expect(refused.status).toBe(401);
    const signedIn = await post('/api/auth/signin', { email: EMAIL, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    const { userId, accessToken, refreshToken } = signedIn.body;
    for (const reply of [refused, signedIn]) {
      expect(linesOf(reply.rid!)).toContainEqual(
        expect.objectContaining({ level: 'info', msg: 'request', method: 'POST', route: '/api/auth/signin', status: reply.status }),
      );
    }

    // The owner's host links up; a chat socket opens with a ticket (in its URL).
    const hostId = `host-logs-${crypto.randomUUID().slice(0, 6)}`;
    const host = new FakeHost(hostId);
    host.create(CHAT);
    await host.connect();
    // FakeHost pairs its host to the tests' usual owner; this one is Olive's.
    await env.DB.prepare('UPDATE hosts SET owner_id = ? WHERE id = ?').bind(userId, hostId).run();
    await until(() => parsed().some((line) => line.msg === 'host link open' && line.hostId === hostId), 'host link open');
    const linkRid = parsed().find((line) => line.msg === 'host link open')!.rid;
    expect(linesOf(linkRid)).toContainEqual(expect.objectContaining({ msg: 'request', route: '/v1/hosts/:hostId/link', status: 101 }));

    const ticket = await post('/api/auth/tickets', {}, accessToken);
    const upgrade = await SELF.fetch(`http://relay.test/v1/hosts/${hostId}/chats/${CHAT}?ticket=${ticket.body.ticket}`, { headers: { Upgrade: 'websocket' } });
    const socketRid = upgrade.headers.get('X-Request-Id')!;
    upgrade.webSocket!.accept();
    // Client's constructor is private to peers.ts; this wraps a socket opened with a ticket, as people.ts does.
    const client = new (Client as unknown as new (ws: WebSocket) => Client)(upgrade.webSocket!);
    // The Worker's line and the ChatRoom's line of the same request, under the id the response named.
    expect(linesOf(socketRid)).toContainEqual(expect.objectContaining({ msg: 'socket open', socket: 'chat', hostId, chatId: CHAT }));
    expect(linesOf(socketRid)).toContainEqual(expect.objectContaining({ msg: 'request', route: '/v1/hosts/:hostId/chats/:chatId', status: 101 }));

    // A message with a known text goes to the host and comes back as the chat's item.
    expect((await client.request('chat.attach', { chatId: CHAT })).ok).toBe(true);
    expect((await client.request('chat.send', { chatId: CHAT, text: MESSAGE })).ok).toBe(true);
    await client.waitFor((f) => f.event === 'chat.event' && f.payload.event.item?.text === MESSAGE, 'the message as an item');

    // A host frame the relay drops, and an event its ChatRoom refuses: the room's line (reached by
    // HostLink's RPC call) carries an id derived from the link's socket.
    host.ws!.send('{not json');
    host.sendEvent('chat.event', { chatId: CHAT, event: { type: 'no-such-event', text: MESSAGE }, seq: 99 });
    await until(() => parsed().some((line) => line.msg === 'bad chat.event from host'), 'the refused event logged');
    const dropped = parsed().find((line) => line.msg === 'host frame dropped')!;
    const refusedEvent = parsed().find((line) => line.msg === 'bad chat.event from host')!;
    expect(dropped).toMatchObject({ level: 'warn', why: 'not JSON', hostId });
    expect(refusedEvent).toMatchObject({ level: 'warn', chatId: CHAT });
    for (const line of [dropped, refusedEvent]) expect(line.rid.startsWith(`${linkRid}.`)).toBe(true);
    expect(dropped.rid).not.toBe(refusedEvent.rid);

    // Revoking the host from the API closes its link in HostLink, under the DELETE's id (an RPC call).
    const revoke = await SELF.fetch(`http://relay.test/api/hosts/${hostId}`, { method: 'DELETE', headers: { Authorization: `Bearer ${accessToken}` } });
    expect(revoke.status).toBe(200);
    const revokeRid = revoke.headers.get('X-Request-Id')!;
    expect(linesOf(revokeRid)).toContainEqual(expect.objectContaining({ msg: 'host link closed by relay', hostId, code: 4401 }));
    expect(linesOf(revokeRid)).toContainEqual(expect.objectContaining({ msg: 'request', method: 'DELETE', route: '/api/hosts/:id', status: 200 }));
    client.close();
    host.disconnect();

    // Every line: one JSON object with a level, a message and an id; each HTTP request's own id.
    expect(lines.length).toBeGreaterThan(10);
    for (const line of parsed()) {
      expect(line).toEqual(
        expect.objectContaining({ level: expect.stringMatching(/^(info|warn|error)$/), msg: expect.any(String), rid: expect.stringMatching(/^[0-9a-f]{16}/) }),
      );
    }
    const requests = parsed().filter((line) => line.msg === 'request');
    expect(new Set(requests.map((line) => line.rid)).size).toBe(requests.length);
    // Nothing typed, nothing secret, and no raw path (the ticket rode in one).
    const secrets = [
      PASSWORD,
      WRONG_PASSWORD,
      EMAIL,
      MESSAGE,
      accessToken,
      refreshToken,
      ticket.body.ticket,
      env.TETHER_SETUP_SECRET!,
      'zanzibar',
      'purple elephant',
    ];
    for (const text of lines) {
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toContain('?ticket=');
      expect(text).not.toContain('eyJ'); // the start of any JWT: access tokens, and the host's own token
    }
  });

  it("takes Cloudflare's ray id as the request id, and makes one of its own for anything else", async () => {
    const ray = '8f1c2d3e4a5b6c7d-LHR';
    const withRay = await SELF.fetch('http://relay.test/api/auth/methods', { headers: { 'cf-ray': ray } });
    expect(withRay.headers.get('X-Request-Id')).toBe(ray);
    expect(linesOf(ray)).toContainEqual(expect.objectContaining({ msg: 'request', route: '/api/auth/methods', status: 200 }));
    // A header that is not a ray id (it could carry anything) and a client's own X-Request-Id are not taken.
    const forged = await SELF.fetch('http://relay.test/api/auth/methods', {
      headers: { 'cf-ray': 'my password is hunter2', 'X-Request-Id': 'chosen-by-client' },
    });
    const rid = forged.headers.get('X-Request-Id')!;
    expect(rid).toMatch(/^[0-9a-f]{16}$/);
    expect(lines.join('\n')).not.toContain('hunter2');
    expect(lines.join('\n')).not.toContain('chosen-by-client');
  });
});
