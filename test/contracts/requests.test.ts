// The request registry: one rule per request type, consistent with itself and with the protocol's
// table, and the requirement a request puts on its sender.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  AGENT_REQUEST_SCHEMAS,
  LINK_ATTACHMENT_READ,
  REQUEST_RULES,
  REQUEST_TYPES,
  ROUTE_VISUAL_PAGE,
  isChatRequest,
  isHostRequest,
  isRequestType,
  requestsWhere,
  requirementOf,
  switchesAccount,
  type AgentRequestType,
  type ChatRequestType,
  type ClientRequestType,
  type HostRequestType,
  type RequestType,
} from '../../src/contracts/index.ts';

const AGENT_TYPES = Object.keys(AGENT_REQUEST_SCHEMAS) as AgentRequestType[];

describe('the request registry', () => {
  it('has exactly the protocol table and the two route requests', () => {
    expect([...REQUEST_TYPES].sort()).toEqual([...AGENT_TYPES, LINK_ATTACHMENT_READ, ROUTE_VISUAL_PAGE].sort());
    expectTypeOf<RequestType>().toEqualTypeOf<AgentRequestType | 'attachment.read' | 'visual.page'>();
    expectTypeOf<ClientRequestType>().toEqualTypeOf<AgentRequestType>();
  });

  it('sends the route requests never from a socket, and every protocol request from one', () => {
    expect([...requestsWhere((rule) => rule.from === 'route')].sort()).toEqual([LINK_ATTACHMENT_READ, ROUTE_VISUAL_PAGE]);
    for (const type of REQUEST_TYPES) {
      const fromSocket = REQUEST_RULES[type].from === 'socket';
      expect(isChatRequest(type) || isHostRequest(type), type).toBe(fromSocket);
      expect(isChatRequest(type) && isHostRequest(type), type).toBe(false);
    }
  });

  it('splits the client requests between the chat and the host, at run time as the types do', () => {
    const chat = AGENT_TYPES.filter(isChatRequest);
    const host = AGENT_TYPES.filter(isHostRequest);
    expect([...chat, ...host].sort()).toEqual([...AGENT_TYPES].sort());
    expect(host.sort()).toEqual([
      'accounts.create',
      'accounts.list',
      'accounts.refresh',
      'accounts.save',
      'accounts.watchLogin',
      'chat.create',
      'chat.list',
      'chat.setPreferences',
      'folders.list',
      'hooks.set',
      'hooks.status',
      'provider.list',
      'session.approvalPreference',
      'session.approve',
      'session.history',
      'session.list',
      'session.resume',
      'usage.limits',
      'usage.refreshLimits',
      'usage.subscribe',
      'usage.summary',
      'usage.unsubscribe',
    ]);
    // A payload that names a chat belongs to that chat, except creating one, which is about the host.
    for (const type of AGENT_TYPES) {
      const shape = (AGENT_REQUEST_SCHEMAS[type].payload as { shape?: Record<string, unknown> }).shape ?? {};
      expect('chatId' in shape, type).toBe(isChatRequest(type) || type === 'chat.create');
    }
    expectTypeOf<'chat.send'>().toExtend<ChatRequestType>();
    expectTypeOf<'chat.list'>().toExtend<HostRequestType>();
    expectTypeOf<Extract<HostRequestType, ChatRequestType>>().toBeNever();
  });

  it('audits every request that acts on the machine, and journals every one that changes something', () => {
    for (const type of REQUEST_TYPES) {
      const rule = REQUEST_RULES[type];
      if (rule.actsOnMachine) expect(rule.audited, `${type} acts but is not audited`).toBe(true);
      // What the relay answers itself never reaches the machine.
      if (rule.servedBy === 'relay') expect(rule.actsOnMachine, type).toBe(false);
      // A settling request is answered once: a retried approval must not settle twice.
      if (rule.settles) expect(rule.answeredOnce && rule.actsOnMachine, type).toBe(true);
      // Only chat requests are about one socket or make chats from one.
      if (rule.socketBound || rule.switchesAccount) expect(rule.scope, type).toBe('chat');
    }
    expect([...requestsWhere((rule) => rule.settles)].sort()).toEqual(['chat.answer', 'chat.approve', 'chat.dismiss', 'session.approve']);
    expect([...requestsWhere((rule) => rule.makesChats)].sort()).toEqual(['chat.continueOn', 'chat.create', 'chat.fork', 'session.resume']);
    expect([...requestsWhere((rule) => rule.socketBound)].sort()).toEqual(['chat.attach', 'chat.detach', 'chat.history']);
  });

  it('asks host-wide roles of host requests and of those that make chats, the chat role of the rest', () => {
    expect(requirementOf('chat.list')).toEqual({ role: 'viewer', hostWide: true });
    expect(requirementOf('accounts.save')).toEqual({ role: 'owner', hostWide: true });
    expect(requirementOf('chat.send')).toEqual({ role: 'operator', hostWide: false });
    expect(requirementOf('chat.fork')).toEqual({ role: 'operator', hostWide: true });
    expect(requirementOf('chat.continueOn')).toEqual({ role: 'owner', hostWide: true });
    expect(requirementOf(ROUTE_VISUAL_PAGE)).toEqual({ role: 'viewer', hostWide: false });
  });

  it("keeps the machine's paths from viewers: the agents' executables, config and data folder (provider.list) and its project folders (usage.summary) need an operator of the host", () => {
    for (const type of ['provider.list', 'usage.summary', 'usage.subscribe'] as const) {
      expect(requirementOf(type), type).toEqual({ role: 'operator', hostWide: true });
    }
    // What a viewer still reads of the host: its chats and its plan limits (no paths).
    expect(requirementOf('usage.limits')).toEqual({ role: 'viewer', hostWide: true });
  });

  it('gives a request that moves a chat onto another account what chat.continueOn needs, and only such a request', () => {
    expect(requirementOf('chat.configure')).toEqual({ role: 'operator', hostWide: false });
    expect(requirementOf('chat.configure', true)).toEqual(requirementOf('chat.continueOn'));
    expect(requirementOf('chat.fork', true)).toEqual(requirementOf('chat.continueOn'));
    // A rule that cannot switch accounts is not raised by the flag.
    expect(requirementOf('chat.send', true)).toEqual(requirementOf('chat.send'));
  });

  it('reads an account switch from the payload against the chat it knows', () => {
    const onWork = { provider: 'claude', account: 'work' };
    const onDefault = { provider: 'claude' };
    expect(switchesAccount({}, onWork)).toBe(false);
    expect(switchesAccount({ account: 'work' }, onWork)).toBe(false);
    expect(switchesAccount({ account: 'home' }, onWork)).toBe(true);
    expect(switchesAccount({ account: 'claude' }, onWork)).toBe(true);
    // No account and one named after its kind are both the default account.
    expect(switchesAccount({ account: 'claude' }, onDefault)).toBe(false);
    expect(switchesAccount({ account: 'work' }, onDefault)).toBe(true);
    expect(switchesAccount({ provider: 'codex' }, onDefault)).toBe(true);
    expect(switchesAccount({ provider: 'claude' }, onDefault)).toBe(false);
    // A chat the checker does not know: any account named is taken for a switch.
    expect(switchesAccount({ account: 'work' }, null)).toBe(true);
    expect(switchesAccount({}, null)).toBe(false);
  });

  it('knows only its own names', () => {
    for (const name of ['toString', '__proto__', 'constructor', 'chat.unknown', '']) expect(isRequestType(name), name).toBe(false);
    expect(isRequestType('visual.page')).toBe(true);
  });
});
