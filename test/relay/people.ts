// People for the access tests: a signed-in person (user row, session, access token), the relay's HTTP
// API as they call it, sockets opened with their own session, and how a socket ended.
//
// The relay tests' one way to sign a person in. `signIn` makes the session straight in D1 (as any
// sign-in would end), for tests about what a person may do once in; `passwordAccount` and
// `signInWithPassword` go through `POST /api/auth/signin`, for tests of signing in itself. The e2e
// tests have their own (`personToken` in test/e2e/peers.ts): they run in Node against a real
// `wrangler dev` and reach D1 only through the relay, while these run inside workerd beside it, so
// one helper per runtime is the least there can be.
import { SELF, env } from 'cloudflare:test';
import { decodeJwt } from 'jose';
import { hashPassword } from '../../src/relay/auth/passwords.ts';
import { Client, openSocket, userToken } from './peers.ts';

export interface Person {
  userId: string;
  token: string;
  sessionId: string;
}

/** A person with a fresh session (their user row is created when missing; `owner`: as the relay's owner). */
export async function signIn(userId: string, opts: { owner?: boolean } = {}): Promise<Person> {
  const token = await userToken(userId, opts);
  return { userId, token, sessionId: String(decodeJwt(token).sid) };
}

/** A user with a password and no session, as an invitation would make them. */
export async function passwordAccount(password = 'correct horse battery', prefix = 'acct'): Promise<{ id: string; email: string; password: string }> {
  const id = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const email = `${id}@example.com`;
  await env.DB.prepare('INSERT INTO users (id, email, name, created_at, password_hash) VALUES (?, ?, ?, ?, ?)')
    .bind(id, email, id, Date.now(), await hashPassword(password))
    .run();
  return { id, email, password };
}

/** The relay's answer to a password sign-in (200 with the session's tokens, or the refusal). */
export function signInWithPassword(email: string, password: string): Promise<ApiReply> {
  return api(null, 'POST', '/api/auth/signin', { email, password });
}

export interface ApiReply {
  status: number;
  body: any;
}

export async function api(who: Person | null, method: string, path: string, body?: unknown): Promise<ApiReply> {
  const headers: Record<string, string> = {};
  if (who) headers.Authorization = `Bearer ${who.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await SELF.fetch(`http://relay.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** A host's owner gives a role; answers the grant. */
export async function grant(
  owner: Person,
  hostId: string,
  subject: { type: 'user' | 'team'; id?: string; email?: string },
  role: string,
  chatId?: string,
): Promise<{ id: string }> {
  const reply = await api(owner, 'POST', `/api/hosts/${hostId}/grants`, { subject, role, ...(chatId ? { chatId } : {}) });
  if (reply.status >= 300) throw new Error(`grant refused: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** A team made by `owner`, with `members` joined through invitations they accepted while signed in. */
export async function team(owner: Person, name: string, members: Person[] = []): Promise<string> {
  const { body } = await api(owner, 'POST', '/api/teams', { name });
  for (const member of members) {
    const invitation = await api(owner, 'POST', `/api/teams/${body.id}/invitations`, { role: 'member' });
    const accepted = await api(member, 'POST', `/api/invitations/${invitation.body.token}/accept`);
    if (accepted.status !== 200) throw new Error(`join refused: ${JSON.stringify(accepted.body)}`);
  }
  return body.id;
}

export interface Watched {
  client: Client;
  /** Settles with the close code and reason once the relay closes the socket. */
  closed: Promise<{ code: number; reason: string }>;
}

/** A socket opened with this person's own session (Client.chat/lobby would start a new one). */
export async function socketOf(who: Person, path: string): Promise<Watched> {
  const ws = await openSocket(path, who.token);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason }));
  });
  // Client's constructor is private to its file; this wraps a socket opened with a chosen token.
  const client = new (Client as unknown as new (ws: WebSocket) => Client)(ws);
  return { client, closed };
}

export const lobbyOf = (who: Person, hostId: string) => socketOf(who, `/v1/hosts/${hostId}/lobby`);
export const chatOf = (who: Person, hostId: string, chatId: string) => socketOf(who, `/v1/hosts/${hostId}/chats/${encodeURIComponent(chatId)}`);

/** The door's answer to a socket request that was refused (status and body), or null if it opened. */
export async function refusedAt(who: Person, path: string): Promise<{ status: number; code: string } | null> {
  const res = await SELF.fetch(`http://relay.test${path}`, { headers: { Upgrade: 'websocket', Authorization: `Bearer ${who.token}` } });
  if (res.webSocket) {
    res.webSocket.accept();
    res.webSocket.close(1000, 'done');
    return null;
  }
  return { status: res.status, code: ((await res.json()) as { code: string }).code };
}

export async function disable(userId: string): Promise<void> {
  await env.DB.prepare('UPDATE users SET disabled_at = ? WHERE id = ?').bind(Date.now(), userId).run();
}

export async function expire(sessionId: string): Promise<void> {
  await env.DB.prepare('UPDATE sessions SET expires_at = ? WHERE id = ?')
    .bind(Date.now() - 1, sessionId)
    .run();
}
