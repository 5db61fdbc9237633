// Every request type of the protocol × every kind of person: allowed or refused exactly as
// MINIMAL_ROLE says, and a refused frame never reaches the host.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { AGENT_REQUEST_SCHEMAS, type AgentRequestType } from '../../src/contracts/index.ts';
import { MINIMAL_ROLE, roleAllows, type Role } from '../../src/relay/auth/roles.ts';
import { FakeHost, OWNER, approvalItem, userItem } from './peers.ts';
import { api, chatOf, disable, expire, grant, lobbyOf, refusedAt, signIn, team, type Person, type Watched } from './people.ts';

const HOST = 'host-matrix';
const CHAT = 'm1';

/** A valid minimal payload of every request type (checked against its schema below). */
function payloadOf(type: AgentRequestType, who: string): Record<string, unknown> {
  const chat = { chatId: CHAT };
  const ui = { ...chat, itemId: 'u1', blockId: 'b1', revision: 'r1' };
  const table: Record<AgentRequestType, Record<string, unknown>> = {
    'chat.create': { chatId: `made-by-${who}` },
    'chat.list': {},
    'chat.attach': chat,
    'chat.detach': chat,
    'chat.history': { ...chat, cursor: 'h1.0.0' },
    'chat.send': { ...chat, text: 'hello' },
    'chat.uiChoice': { ...ui, choiceId: 'c1' },
    'ui.query': { ...ui, query: 'q' },
    'chat.unqueue': { ...chat, messageId: 'm-1' },
    'chat.sendNow': { ...chat, messageId: 'm-1' },
    'chat.cancel': chat,
    'chat.kill': chat,
    'chat.approve': { ...chat, requestId: 'req-1', decision: 'deny' },
    'chat.answer': { ...chat, requestId: 'req-2', answers: {} },
    'chat.dismiss': { ...chat, itemId: 'ap1' },
    'chat.configure': { ...chat, runtimeMode: 'full-access' },
    'chat.setPreferences': {},
    'chat.compact': chat,
    'chat.clear': chat,
    'chat.turnDiff': { ...chat, turnId: 't1' },
    'chat.fork': { ...chat, turnId: 't1' },
    'chat.continueOn': { ...chat, account: 'work' },
    'chat.forkInfo': { ...chat, turnId: 't1' },
    'chat.summarize': chat,
    'chat.subagent': { ...chat, toolUseId: 'tu1' },
    'chat.stopSubagent': { ...chat, toolUseId: 'tu1' },
    'chat.stopTask': { ...chat, taskId: 'task1' },
    'skills.list': chat,
    'chat.addBookmark': { ...chat, itemId: 'u1' },
    'chat.renameBookmark': { ...chat, itemId: 'u1', name: 'n' },
    'chat.removeBookmark': { ...chat, itemId: 'u1' },
    'chat.removeVisual': { ...chat, visualId: 'v1' },
    'provider.list': {},
    'accounts.list': {},
    'accounts.save': { accounts: {} },
    'accounts.refresh': {},
    'accounts.create': { kind: 'claude', label: 'Work' },
    'accounts.watchLogin': { id: 'work' },
    'usage.summary': { from: '2026-01-01', to: '2026-01-02', resolution: 'day', timeZone: 'UTC' },
    'usage.subscribe': {},
    'usage.unsubscribe': {},
    'usage.limits': {},
    'usage.refreshLimits': {},
  };
  return table[type];
}

/** Requests the Lobby serves (host-wide); every other one goes on the chat's own socket. */
const ON_LOBBY = new Set<string>([
  'chat.list', 'chat.create', 'chat.setPreferences', 'provider.list', 'skills.list',
  'accounts.list', 'accounts.refresh', 'accounts.save', 'accounts.create', 'accounts.watchLogin',
  'usage.summary', 'usage.subscribe', 'usage.unsubscribe', 'usage.limits', 'usage.refreshLimits',
]);

// Clearing and killing the chat go last, so every other request meets the chat as it was.
const TYPES = (Object.keys(AGENT_REQUEST_SCHEMAS) as AgentRequestType[])
  .sort((a, b) => Number(a === 'chat.clear' || a === 'chat.kill') - Number(b === 'chat.clear' || b === 'chat.kill'));

let host: FakeHost;
const people: Record<string, Person> = {};

beforeAll(async () => {
  host = await new FakeHost(HOST).connect();
  host.create(CHAT, [userItem('u1', 'hi'), approvalItem('ap1', 'req-1')]);
  for (const type of TYPES) host.handlers[type] ??= () => ({});
  for (const name of ['owner', 'operator', 'viewer', 'member', 'outsider', 'disabled', 'expired']) {
    people[name] = await signIn(name === 'owner' ? OWNER : `matrix-${name}`);
  }
  const owner = people.owner!;
  await grant(owner, HOST, { type: 'user', id: people.operator!.userId }, 'operator');
  await grant(owner, HOST, { type: 'user', email: `${people.viewer!.userId}@test.invalid` }, 'viewer');
  await grant(owner, HOST, { type: 'user', id: people.disabled!.userId }, 'operator');
  await grant(owner, HOST, { type: 'user', id: people.expired!.userId }, 'operator');
  // A team of which the member is part, with no grant on this host.
  await team(owner, 'matrix team', [people.member!]);
  await disable(people.disabled!.userId);
  await expire(people.expired!.sessionId);
});

describe('the authorization matrix', () => {
  it('has a valid minimal payload for every request type', () => {
    for (const type of TYPES) expect(AGENT_REQUEST_SCHEMAS[type].payload.safeParse(payloadOf(type, 'x')).success, type).toBe(true);
  });

  it.each([['owner', 'owner'], ['operator', 'operator'], ['viewer', 'viewer']] as [string, Role][])(
    'the %s may send exactly the requests their role covers; a refused one never reaches the host',
    async (name, role) => {
      const who = people[name]!;
      const lobby: Watched = await lobbyOf(who, HOST);
      const chat: Watched = await chatOf(who, HOST, CHAT);
      const outcome: Record<string, string> = {};
      for (const type of TYPES) {
        const id = `${name}-${type}`;
        const reply = await (ON_LOBBY.has(type) ? lobby : chat).client.request(type, payloadOf(type, name), id);
        const refused = !reply.ok && (reply.error.code === 'forbidden' || reply.error.code === 'unauthorized');
        outcome[type] = refused ? reply.error.code : 'allowed';
        if (refused) expect(host.received.some((f) => String(f.id).endsWith(`/${id}`)), `${type} reached the host`).toBe(false);
        if (refused && type === 'chat.addBookmark') {
          // Answered by the relay itself, not the host: nothing was written either.
          expect(await env.DB.prepare('SELECT count(*) AS n FROM bookmarks WHERE host_id = ?').bind(HOST).first('n')).toBe(0);
        }
      }
      const expected = Object.fromEntries(TYPES.map((type) => [type, roleAllows(role, MINIMAL_ROLE[type]) ? 'allowed' : 'forbidden']));
      expect(outcome).toEqual(expected);
      lobby.client.close();
      chat.client.close();
    },
  );

  it('gives no socket to a team member without a grant or an outsider (forbidden), nor to a disabled user or an ended session (unauthorized)', async () => {
    const paths = [`/v1/hosts/${HOST}/lobby`, `/v1/hosts/${HOST}/chats/${CHAT}`];
    for (const path of paths) {
      expect(await refusedAt(people.member!, path)).toEqual({ status: 403, code: 'forbidden' });
      expect(await refusedAt(people.outsider!, path)).toEqual({ status: 403, code: 'forbidden' });
      expect(await refusedAt(people.disabled!, path)).toEqual({ status: 401, code: 'unauthorized' });
      expect(await refusedAt(people.expired!, path)).toEqual({ status: 401, code: 'unauthorized' });
    }
    // Nor anything over HTTP.
    expect((await api(people.disabled!, 'GET', '/api/chats')).status).toBe(401);
    expect((await api(people.outsider!, 'GET', '/api/chats')).body.chats).toEqual([]);
  });
});
