// RelayApi against a small stand-in for the relay's auth routes (the real routes are exercised in
// test/e2e/sdk.e2e.test.ts): what matters here is when it refreshes, and that it refreshes once.
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/contracts/index.ts';
import { LocalStorageTokenStore, MemoryTokenStore, RelayApi, type SessionTokens } from '../../src/client/index.ts';

class FakeRelay {
  refreshes = 0;
  calls: string[] = [];
  private generation = 0;
  private refreshToken = 'r0';
  accessToken = 'a0';
  expiresIn = 600_000;
  /** Refresh tokens used already: presenting one again ends the session, as the relay does. */
  private used = new Set<string>();
  ended = false;

  session(): SessionTokens {
    return { sessionId: 's1', refreshToken: this.refreshToken, accessToken: this.accessToken, expiresAt: Date.now() + this.expiresIn, userId: 'u1' };
  }

  fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const auth = (init?.headers as Record<string, string> | undefined)?.Authorization;
    this.calls.push(`${init?.method} ${url.pathname}`);
    // A network's latency: calls made at once are all in flight together, which the single refresh is about.
    await new Promise((r) => setTimeout(r, 5));
    const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname === '/api/auth/refresh') {
      this.refreshes += 1;
      const { refreshToken } = JSON.parse(String(init!.body)) as { refreshToken: string };
      if (this.ended || this.used.has(refreshToken) || refreshToken !== this.refreshToken) {
        this.ended = true;
        return json(401, { code: 'unauthorized', message: 'Refresh token reused: session ended' });
      }
      this.used.add(refreshToken);
      this.generation += 1;
      this.refreshToken = `r${this.generation}`;
      this.accessToken = `a${this.generation}`;
      const { userId: _, ...tokens } = this.session();
      return json(200, tokens);
    }
    if (auth !== `Bearer ${this.accessToken}` || this.ended) return json(401, { code: 'unauthorized', message: 'Sign in first' });
    if (url.pathname === '/api/me')
      return json(200, { id: 'u1', email: 'a@b.c', name: 'A', emailVerified: true, isOwner: true, createdAt: 1, sessionId: 's1' });
    if (url.pathname === '/api/hosts/h9') return json(404, { code: 'host-not-found', message: 'No such host' });
    if (url.pathname === '/api/hosts') return json(200, { hosts: [{ id: 'h1', name: 'laptop' }] });
    return json(404, { code: 'not-found', message: 'No such route' });
  };
}

describe('RelayApi', () => {
  it('refreshes an access token near its end once, however many calls want it at the same time', async () => {
    const relay = new FakeRelay();
    relay.expiresIn = 10_000; // under the minute: refresh before use
    const api = new RelayApi('http://relay.test', { tokens: new MemoryTokenStore(relay.session()), fetch: relay.fetch });
    relay.expiresIn = 600_000;
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.me()));
    expect(answers.every((me) => me.id === 'u1')).toBe(true);
    expect(relay.refreshes).toBe(1);
    expect(api.userId).toBe('u1'); // kept across the refresh, which does not say it
  });

  it('answers a 401 by refreshing once and trying the call again', async () => {
    const relay2 = new FakeRelay();
    const api2 = new RelayApi('http://relay.test', { tokens: new MemoryTokenStore({ ...relay2.session(), accessToken: 'stale' }), fetch: relay2.fetch });
    expect((await api2.me()).id).toBe('u1');
    expect(relay2.calls).toEqual(['GET /api/me', 'POST /api/auth/refresh', 'GET /api/me']);
  });

  it('signs out when the relay refuses the refresh, and tells listeners', async () => {
    const relay = new FakeRelay();
    const store = new MemoryTokenStore({ ...relay.session(), expiresAt: Date.now() });
    const api = new RelayApi('http://relay.test', { tokens: store, fetch: relay.fetch });
    relay.ended = true;
    const reasons: ProtocolError[] = [];
    api.onSignedOut((why) => reasons.push(why));
    await expect(api.hosts()).rejects.toMatchObject({ code: 'unauthorized' });
    expect(api.signedIn).toBe(false);
    expect(store.load()).toBeNull();
    expect(reasons).toHaveLength(1);
  });

  it("turns error answers into ProtocolErrors with the relay's code and message", async () => {
    const relay = new FakeRelay();
    const api = new RelayApi('http://relay.test', { tokens: new MemoryTokenStore(relay.session()), fetch: relay.fetch });
    const error = await api.renameHost('h9', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ code: 'host-not-found', message: 'No such host' });
    // A shape the contract does not allow is refused clearly rather than handed on.
    await expect(api.hosts()).rejects.toMatchObject({ code: 'internal', message: expect.stringContaining('unexpected shape') });
    const offline = new RelayApi('http://127.0.0.1:9', { tokens: new MemoryTokenStore(relay.session()) });
    await expect(offline.me()).rejects.toMatchObject({ code: 'host-offline' });
  });

  it('takes over a token another tab refreshed instead of spending the used refresh token', async () => {
    const relay = new FakeRelay();
    const storage = new Map<string, string>();
    const shared = {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, v),
      removeItem: (k: string) => void storage.delete(k),
    } as Storage;
    relay.expiresIn = 10_000;
    const tabA = new RelayApi('http://relay.test', { tokens: new LocalStorageTokenStore('s', shared), fetch: relay.fetch });
    tabA.adopt(relay.session());
    const tabB = new RelayApi('http://relay.test', { tokens: new LocalStorageTokenStore('s', shared), fetch: relay.fetch });
    relay.expiresIn = 600_000;
    await tabA.me(); // refreshes, stores the new pair
    await tabB.me(); // finds its copy rotated: adopts tab A's token
    expect(relay.refreshes).toBe(1);
    expect(relay.ended).toBe(false);
  });
});
