// Every request type of the registry × every role (none, viewer, operator, owner) held on the whole
// host and on one chat × the socket it is sent on (the chat's own, the lobby): allowed or refused
// exactly as the registry says (scope, least role, makes chats, account switch), and a refused frame
// never reaches the host. The expectations are computed from the registry, so a new request type is
// covered as soon as it has a rule (and a payload below, which the compiler asks for).
import { SELF, env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_REQUEST_SCHEMAS,
  REQUEST_RULES,
  REQUEST_TYPES,
  isChatRequest,
  requirementOf,
  type AgentRequestType,
  type RequestType,
} from '../../src/contracts/index.ts';
import { roleAllows, type Role } from '../../src/relay/auth/roles.ts';
import { FakeHost, OWNER, approvalItem, userItem, visualTicket } from './peers.ts';
import { api, chatOf, disable, expire, grant, lobbyOf, refusedAt, signIn, team, type Person, type Watched } from './people.ts';

const HOST = 'host-matrix';
const CHAT = 'm1';
const OTHER_CHAT = 'm2';

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
    'session.list': {},
    'session.history': { sessionId: 's1' },
    'session.approve': { sessionId: 's1', requestId: 'ap1', choiceId: 'allow' },
    'session.approvalPreference': { enabled: false },
    'session.resume': { sessionId: 's1' },
    'hooks.status': {},
    'hooks.set': { kind: 'claude', installed: true },
    'folders.list': {},
  };
  return table[type];
}

/** A payload variant that moves the chat onto another account, for each request whose rule says it can. */
const ANOTHER_ACCOUNT = { account: 'elsewhere' };

// Clearing and killing the chat go last, so every other request meets the chat as it was.
const LAST = (type: RequestType) => Number(type === 'chat.clear' || type === 'chat.kill');
const SOCKET_TYPES = (REQUEST_TYPES.filter((type) => REQUEST_RULES[type].from === 'socket') as AgentRequestType[]).sort((a, b) => LAST(a) - LAST(b));
const ROUTE_TYPES = REQUEST_TYPES.filter((type) => REQUEST_RULES[type].from === 'route');

/** Each request as sent: its type, a name for the variant, and its payload. */
interface Sent {
  type: AgentRequestType;
  variant: string;
  switches: boolean;
  payload: (who: string) => Record<string, unknown>;
}
const SENT: Sent[] = SOCKET_TYPES.flatMap((type) => [
  { type, variant: type, switches: false, payload: (who: string) => payloadOf(type, who) },
  ...(REQUEST_RULES[type].switchesAccount
    ? [{ type, variant: `${type}+account`, switches: true, payload: (who: string) => ({ ...payloadOf(type, who), ...ANOTHER_ACCOUNT }) }]
    : []),
]).sort((a, b) => LAST(a.type) - LAST(b.type));

type Where = 'host' | 'chat';
type Held = Role | 'none';
type Outcome = 'allowed' | 'forbidden' | 'wrong-socket';

/**
 * What the registry says of one request from someone holding `held` on the whole host (`where` =
 * host) or on CHAT only, sent on `socket`.
 */
function expected(sent: Sent, where: Where, held: Held, socket: 'chat' | 'lobby'): Outcome {
  const { type } = sent;
  if (socket === 'chat' && !isChatRequest(type)) return 'wrong-socket';
  if (socket === 'lobby' && isChatRequest(type) && REQUEST_RULES[type].socketBound) return 'wrong-socket';
  // A list is answered to anyone who sees one chat of the host (filtered to those): everyone here does.
  if (type === 'chat.list') return 'allowed';
  const { role, hostWide } = requirementOf(type, sent.switches);
  const holds = held === 'none' || (where === 'chat' && hostWide) ? null : held;
  return holds !== null && roleAllows(holds, role) ? 'allowed' : 'forbidden';
}

function outcomeOf(reply: Record<string, any>): Outcome | string {
  if (reply.ok) return 'allowed';
  const { code, message } = reply.error as { code: string; message: string };
  if (code === 'forbidden') return 'forbidden';
  // Every payload here is valid: a bad-request is the socket refusing what it does not serve.
  if (code === 'bad-request') return /lobby socket|chat's own socket/.test(message) ? 'wrong-socket' : `bad-request: ${message}`;
  if (code === 'unauthorized') return 'unauthorized';
  // Anything else came from serving it (the fake host, or the relay's own records): it was let through.
  return 'allowed';
}

let host: FakeHost;
let owner: Person;
/** People by where and what they hold; `host-none` holds nothing on CHAT nor the host, only a viewer grant on another chat (so a lobby opens for them). */
const people = {} as Record<`${Where}-${Held}`, Person>;
const others: Record<string, Person> = {};

beforeAll(async () => {
  host = await new FakeHost(HOST).connect();
  host.create(CHAT, [userItem('u1', 'hi'), approvalItem('ap1', 'req-1')]);
  host.create(OTHER_CHAT, [userItem('o1', 'other')]);
  for (const type of SOCKET_TYPES) host.handlers[type] ??= () => ({});
  owner = await signIn(OWNER);
  people['host-owner'] = owner;
  for (const where of ['host', 'chat'] as const) {
    for (const held of ['none', 'viewer', 'operator', 'owner'] as const) {
      if ((where === 'host' && held === 'owner') || (where === 'chat' && held === 'none')) continue;
      const who = (people[`${where}-${held}`] = await signIn(`matrix-${where}-${held}`));
      if (held === 'none') await grant(owner, HOST, { type: 'user', id: who.userId }, 'viewer', OTHER_CHAT);
      else await grant(owner, HOST, { type: 'user', id: who.userId }, held, where === 'chat' ? CHAT : undefined);
    }
  }
  for (const name of ['member', 'outsider', 'disabled', 'expired']) others[name] = await signIn(`matrix-${name}`);
  await grant(owner, HOST, { type: 'user', id: others.disabled!.userId }, 'operator');
  await grant(owner, HOST, { type: 'user', id: others.expired!.userId }, 'operator');
  // A team of which the member is part, with no grant on this host.
  await team(owner, 'matrix team', [others.member!]);
  await disable(others.disabled!.userId);
  await expire(others.expired!.sessionId);
});

const CASES: [Where, Held][] = [
  ['host', 'owner'],
  ['host', 'operator'],
  ['host', 'viewer'],
  ['host', 'none'],
  ['chat', 'owner'],
  ['chat', 'operator'],
  ['chat', 'viewer'],
];

describe('the authorization matrix', () => {
  it('has a valid minimal payload for every request type and variant', () => {
    for (const sent of SENT) expect(AGENT_REQUEST_SCHEMAS[sent.type].payload.safeParse(sent.payload('x')).success, sent.variant).toBe(true);
  });

  it.each(CASES)(
    'the %s %s: each request on each socket is served or refused as the registry says; a refused one never reaches the host',
    async (where, held) => {
      const who = people[`${where}-${held}`]!;
      const name = `${where}-${held}`;
      const lobby: Watched = await lobbyOf(who, HOST);
      // Someone with no role on the chat gets no socket on it: the door refuses it.
      const chat: Watched | null = held === 'none' ? null : await chatOf(who, HOST, CHAT);
      if (!chat) expect(await refusedAt(who, `/v1/hosts/${HOST}/chats/${CHAT}`)).toEqual({ status: 403, code: 'forbidden' });
      const outcome: Record<string, Outcome | string> = {};
      const want: Record<string, Outcome> = {};
      for (const sent of SENT) {
        for (const [socket, watched] of [
          ['chat', chat],
          ['lobby', lobby],
        ] as const) {
          if (!watched) continue;
          const key = `${socket} ${sent.variant}`;
          const id = `${name}-${socket}-${sent.variant}`;
          const reply = await watched.client.request(sent.type, sent.payload(name), id);
          outcome[key] = outcomeOf(reply);
          want[key] = expected(sent, where, held, socket);
          if (sent.type === 'chat.list' && reply.ok) {
            // Filtered to what they may see: the whole host for a host role, else the chats granted.
            const listed = (reply.result.chats as { chatId: string }[]).map((c) => c.chatId);
            if (where === 'host' && held !== 'none') expect(listed).toEqual(expect.arrayContaining([CHAT, OTHER_CHAT]));
            else expect(listed).toEqual([where === 'chat' ? CHAT : OTHER_CHAT]);
          }
          if (outcome[key] !== 'allowed') {
            expect(
              host.received.some((f) => String(f.id).endsWith(`/${id}`)),
              `${key} reached the host`,
            ).toBe(false);
          }
        }
      }
      expect(outcome).toEqual(want);
      // The relay's own records were not written by a refused bookmark either (whoever was let through
      // before removed theirs again: a bookmark's add is followed by its rename and removal).
      if (want['lobby chat.addBookmark'] !== 'allowed') {
        expect(await env.DB.prepare('SELECT count(*) AS n FROM bookmarks WHERE host_id = ?').bind(HOST).first('n')).toBe(0);
      }
      lobby.client.close();
      chat?.client.close();
    },
  );

  it.each(CASES)("the %s %s: the relay's own routes (visual pages, attachment files) open as the registry says", async (where, held) => {
    const who = people[`${where}-${held}`]!;
    for (const type of ROUTE_TYPES) {
      const { role, hostWide } = requirementOf(type);
      const holds = held === 'none' || (where === 'chat' && hostWide) ? null : held;
      const status = holds !== null && roleAllows(holds, role) ? 200 : 403;
      const res =
        type === 'visual.page'
          ? await visualTicket(HOST, CHAT, 'v1', who.userId)
          : await SELF.fetch(`http://relay.test/v1/attachments/${HOST}/${CHAT}/att-1/ticket`, {
              method: 'POST',
              headers: { Authorization: `Bearer ${who.token}` },
            });
      expect(res.status, type).toBe(status);
    }
  });

  it('asks what chat.continueOn asks of a chat.configure that moves the chat onto another account, and only then', async () => {
    const configure = async (who: Person, payload: Record<string, unknown>, id: string) => {
      const chat = await chatOf(who, HOST, CHAT);
      // The room holds the chat (and so knows its account), whatever the cases before did to it.
      await chat.client.request('chat.attach', { chatId: CHAT });
      const reply = await chat.client.request('chat.configure', { chatId: CHAT, ...payload }, id);
      chat.client.close();
      return reply.ok ? 'allowed' : reply.error.code;
    };
    const operator = people['host-operator']!;
    // The chat is on its provider's default account: naming that one, or none, switches nothing.
    expect(await configure(operator, { runtimeMode: 'supervised' }, 'cfg-mode')).toBe('allowed');
    expect(await configure(operator, { account: 'claude' }, 'cfg-same')).toBe('allowed');
    expect(await configure(operator, { account: 'work' }, 'cfg-switch')).toBe('forbidden');
    expect(await configure(people['chat-owner']!, { account: 'work' }, 'cfg-chat-owner')).toBe('forbidden');
    expect(await configure(owner, { account: 'work' }, 'cfg-owner')).toBe('allowed');
    expect(host.received.some((f) => /\/cfg-(switch|chat-owner)$/.test(String(f.id)))).toBe(false);
    expect(host.received.filter((f) => /\/cfg-(mode|same|owner)$/.test(String(f.id)))).toHaveLength(3);
  });

  it("refuses a request naming another chat than the socket's, before it reaches the host", async () => {
    const chat = await chatOf(owner, HOST, CHAT);
    const reply = await chat.client.request('chat.send', { chatId: OTHER_CHAT, text: 'elsewhere' }, 'owner-misaimed');
    expect(reply.error).toEqual({ code: 'bad-request', message: `This socket serves chat ${CHAT}` });
    expect(host.received.some((f) => String(f.id).endsWith('/owner-misaimed'))).toBe(false);
    chat.client.close();
  });

  it('gives no chat.create to an operator of a chat id the host does not have, on either socket', async () => {
    const early = await signIn('matrix-early');
    await grant(owner, HOST, { type: 'user', id: early.userId }, 'operator', 'not-yet');
    const chat = await chatOf(early, HOST, 'not-yet');
    const lobby = await lobbyOf(early, HOST);
    const payload = { chatId: 'not-yet', cwd: '/', runtimeMode: 'full-access' };
    expect((await chat.client.request('chat.create', payload, 'early-chat')).error.code).toBe('bad-request');
    expect((await lobby.client.request('chat.create', payload, 'early-lobby')).error.code).toBe('forbidden');
    expect(host.received.some((f) => /\/early-(chat|lobby)$/.test(String(f.id)))).toBe(false);
    chat.client.close();
    lobby.client.close();
  });

  it('gives no socket to a team member without a grant or an outsider (forbidden), nor to a disabled user or an ended session (unauthorized)', async () => {
    const paths = [`/v1/hosts/${HOST}/lobby`, `/v1/hosts/${HOST}/chats/${CHAT}`];
    for (const path of paths) {
      expect(await refusedAt(others.member!, path)).toEqual({ status: 403, code: 'forbidden' });
      expect(await refusedAt(others.outsider!, path)).toEqual({ status: 403, code: 'forbidden' });
      expect(await refusedAt(others.disabled!, path)).toEqual({ status: 401, code: 'unauthorized' });
      expect(await refusedAt(others.expired!, path)).toEqual({ status: 401, code: 'unauthorized' });
    }
    // Nor anything over HTTP.
    expect((await api(others.disabled!, 'GET', '/api/chats')).status).toBe(401);
    expect((await api(others.outsider!, 'GET', '/api/chats')).body.chats).toEqual([]);
  });
});
