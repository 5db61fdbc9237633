// The routes' bodies and queries as the validator in their chain reads them (src/relay/http/body.ts,
// @hono/zod-validator): the same `{ code, message }` answers the relay gave before it, a body read as
// JSON whatever its Content-Type says, and a caller's role checked before the shape of what they sent.
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { FakeHost, OWNER } from './peers.ts';
import { signIn, type Person } from './people.ts';

async function send(who: Person, method: string, path: string, body: string, contentType?: string): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${who.token}` };
  if (contentType) headers['Content-Type'] = contentType;
  const res = await SELF.fetch(`http://relay.test${path}`, { method, headers, body });
  return { status: res.status, body: await res.json() };
}

describe('request bodies and queries', () => {
  it('refuses a body that is not JSON as bad-request, never a 500', async () => {
    const me = await signIn('bodies-1');
    for (const contentType of ['application/json', 'text/plain', undefined]) {
      expect(await send(me, 'POST', '/api/teams', '{"name":', contentType), String(contentType)).toEqual({
        status: 400,
        body: { code: 'bad-request', message: 'The body must be JSON' },
      });
    }
  });

  it('reads a JSON body sent as text/plain (as `curl -d` sends it) as JSON', async () => {
    const me = await signIn('bodies-2');
    const made = await send(me, 'POST', '/api/teams', JSON.stringify({ name: 'curl team' }), 'text/plain');
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: 'curl team', role: 'owner' });
    expect((await send(me, 'POST', '/api/teams', JSON.stringify({ name: 7 }), 'text/plain')).body).toMatchObject({
      code: 'bad-request',
      message: expect.stringMatching(/^name: /),
    });
  });

  it('names the first field at fault, or the body when it is the whole', async () => {
    const me = await signIn('bodies-3');
    const wrong = await send(me, 'POST', '/api/teams', JSON.stringify({ name: ['x'] }), 'application/json');
    expect(wrong).toMatchObject({ status: 400, body: { code: 'bad-request', message: expect.stringMatching(/^name: /) } });
    const notAnObject = await send(me, 'POST', '/api/teams', '"x"', 'application/json');
    expect(notAnObject).toMatchObject({ status: 400, body: { code: 'bad-request', message: expect.stringMatching(/^body: /) } });
  });

  it('checks who may change a host before what they sent', async () => {
    const host = await new FakeHost(`bodies-host-${crypto.randomUUID().slice(0, 8)}`).connect();
    const outsider = await signIn('bodies-outsider');
    const bad = JSON.stringify({ name: '' });
    expect(await send(outsider, 'PATCH', `/api/hosts/${host.hostId}`, bad, 'application/json')).toMatchObject({
      status: 404,
      body: { code: 'host-not-found' },
    });
    expect(await send(outsider, 'POST', `/api/hosts/${host.hostId}/grants`, '{', 'application/json')).toMatchObject({
      status: 403,
      body: { code: 'forbidden' },
    });
    const owner = await signIn(OWNER);
    expect(await send(owner, 'PATCH', `/api/hosts/${host.hostId}`, bad, 'application/json')).toMatchObject({
      status: 400,
      body: { code: 'bad-request', message: expect.stringMatching(/^name: /) },
    });
    host.disconnect();
  });

  it('refuses a query out of range as bad-request naming it', async () => {
    const me = await signIn('bodies-4');
    for (const path of ['/api/chats?limit=0', '/api/push/deliveries?limit=x']) {
      const res = await SELF.fetch(`http://relay.test${path}`, { headers: { Authorization: `Bearer ${me.token}` } });
      expect(res.status, path).toBe(400);
      expect(await res.json(), path).toMatchObject({ code: 'bad-request', message: expect.stringMatching(/^limit: /) });
    }
  });
});
