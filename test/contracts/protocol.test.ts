import { describe, expect, expectTypeOf, it } from 'vitest';
import * as contracts from '../../src/contracts/index.ts';
import { AGENT_EVENT_SCHEMAS, AGENT_REQUEST_SCHEMAS, EmptySchema, isAgentEventName, isAgentRequestType } from '../../src/contracts/protocol.ts';
import type { AgentEventName, AgentRequestType, EventPayload, RequestPayload, RequestResult } from '../../src/contracts/protocol.ts';
import {
  CHAT_ATTACHMENT_MAX_BYTES,
  CHAT_ATTACHMENTS_MAX_BYTES,
  CHAT_ATTACHMENTS_MAX_COUNT,
  CHAT_BOOKMARK_LIMITS,
  CHAT_FORK_TITLE_MAX,
  CHAT_REQUEST_LIMITS,
  SUGGESTED_TITLE_LIMIT,
} from '../../src/contracts/limits.ts';
import { chatInfo } from './fixtures.ts';

const REQUEST_NAMES = [
  'chat.create',
  'chat.history',
  'chat.attach',
  'chat.detach',
  'chat.send',
  'chat.uiChoice',
  'ui.query',
  'chat.unqueue',
  'chat.sendNow',
  'chat.cancel',
  'chat.approve',
  'chat.answer',
  'chat.dismiss',
  'chat.configure',
  'chat.setPreferences',
  'chat.compact',
  'chat.clear',
  'chat.turnDiff',
  'chat.fork',
  'chat.continueOn',
  'chat.forkInfo',
  'chat.summarize',
  'chat.subagent',
  'chat.stopSubagent',
  'chat.stopTask',
  'chat.addBookmark',
  'chat.renameBookmark',
  'chat.removeBookmark',
  'chat.removeVisual',
  'skills.list',
  'provider.list',
  'accounts.list',
  'accounts.save',
  'accounts.refresh',
  'accounts.create',
  'accounts.watchLogin',
  'usage.summary',
  'usage.subscribe',
  'usage.unsubscribe',
  'usage.limits',
  'usage.refreshLimits',
  'chat.kill',
  'chat.list',
  // Terminal sessions (terminal.ts)
  'session.list',
  'session.history',
  'session.approve',
  'session.approvalPreference',
  'session.resume',
  'hooks.status',
  'hooks.set',
  // The new-chat folder picker (folders.ts)
  'folders.list',
];

describe('AGENT_REQUEST_SCHEMAS', () => {
  it("has exactly the 43 documented requests, the 7 of terminal sessions and the folder picker's", () => {
    expect(Object.keys(AGENT_REQUEST_SCHEMAS).sort()).toEqual([...REQUEST_NAMES].sort());
    expect(Object.keys(AGENT_REQUEST_SCHEMAS)).toHaveLength(51);
  });

  it.each(Object.entries(AGENT_REQUEST_SCHEMAS))('%s has a payload and a result schema', (_name, contract) => {
    expect(Object.keys(contract).sort()).toEqual(['payload', 'result']);
    expect(typeof contract.payload.safeParse).toBe('function');
    expect(typeof contract.result.safeParse).toBe('function');
  });

  it('answers {} for the requests that only acknowledge, stripping anything extra', () => {
    for (const name of ['chat.detach', 'chat.sendNow', 'chat.cancel', 'chat.approve', 'usage.subscribe', 'chat.kill'] as const) {
      expect(AGENT_REQUEST_SCHEMAS[name].result).toBe(EmptySchema);
    }
    expect(EmptySchema.parse({ extra: 1 })).toEqual({});
  });

  it('checks a payload against its own schema', () => {
    const send = AGENT_REQUEST_SCHEMAS['chat.send'].payload;
    expect(send.safeParse({ chatId: 'chat-1', text: 'hi' }).success).toBe(true);
    expect(send.safeParse({ chatId: 'chat-1', text: '' }).success).toBe(false);
    expect(AGENT_REQUEST_SCHEMAS['chat.create'].result.safeParse(chatInfo()).success).toBe(true);
    expect(AGENT_REQUEST_SCHEMAS['chat.list'].result.safeParse({ chats: [chatInfo()] }).success).toBe(true);
  });

  it('types each payload and result from its schema', () => {
    expectTypeOf<RequestPayload<'chat.send'>['text']>().toEqualTypeOf<string>();
    expectTypeOf<RequestPayload<'chat.approve'>['decision']>().toEqualTypeOf<'allow' | 'allow-always' | 'deny'>();
    expectTypeOf<RequestResult<'chat.send'>>().toEqualTypeOf<{ queued: boolean; turnId?: string | undefined }>();
    expectTypeOf<RequestResult<'chat.fork'>['edgeId']>().toEqualTypeOf<string | null>();
    expectTypeOf<'chat.send'>().toExtend<AgentRequestType>();
  });

  it('tells a request name from anything else, inherited names included', () => {
    expect(isAgentRequestType('chat.send')).toBe(true);
    expect(isAgentRequestType('chat.teleport')).toBe(false);
    expect(isAgentRequestType('toString')).toBe(false);
    expect(isAgentRequestType('__proto__')).toBe(false);
  });
});

describe('AGENT_EVENT_SCHEMAS', () => {
  it('has exactly the 8 documented events and the 3 of terminal sessions', () => {
    expect(Object.keys(AGENT_EVENT_SCHEMAS).sort()).toEqual(
      [
        'chat.event',
        'chat.status',
        'chat.subagentChanged',
        'chat.bookmarks',
        'chat.visuals',
        'usage.changed',
        'usage.limitsChanged',
        'accounts.changed',
        'session.status',
        'session.approvals',
        'session.items',
      ].sort(),
    );
  });

  it('checks each payload', () => {
    expect(AGENT_EVENT_SCHEMAS['chat.status'].safeParse({ chatId: 'chat-1', info: chatInfo() }).success).toBe(true);
    expect(AGENT_EVENT_SCHEMAS['chat.subagentChanged'].safeParse({ chatId: 'chat-1', toolUseId: 'toolu_1' }).success).toBe(true);
    expect(AGENT_EVENT_SCHEMAS['chat.bookmarks'].safeParse({ chatId: 'chat-1', bookmarks: [] }).success).toBe(true);
    expect(AGENT_EVENT_SCHEMAS['chat.visuals'].safeParse({ chatId: 'chat-1' }).success).toBe(false);
    expect(AGENT_EVENT_SCHEMAS['usage.changed'].safeParse({ scannedAt: 1 }).success).toBe(true);
    expect(AGENT_EVENT_SCHEMAS['usage.changed'].safeParse({}).success).toBe(false);
    expect(AGENT_EVENT_SCHEMAS['accounts.changed'].safeParse({ accounts: {}, statuses: [] }).success).toBe(true);
  });

  it('types each payload and names', () => {
    expectTypeOf<EventPayload<'usage.changed'>>().toEqualTypeOf<{ scannedAt: number }>();
    expectTypeOf<'accounts.changed'>().toExtend<AgentEventName>();
    expect(isAgentEventName('chat.event')).toBe(true);
    expect(isAgentEventName('host.presence')).toBe(false);
  });
});

describe('constants', () => {
  it('carry the documented values', () => {
    expect(CHAT_ATTACHMENTS_MAX_COUNT).toBe(8);
    expect(CHAT_ATTACHMENT_MAX_BYTES).toBe(10_485_760);
    expect(CHAT_ATTACHMENTS_MAX_BYTES).toBe(10_485_760);
    expect(CHAT_REQUEST_LIMITS).toEqual({
      perChat: 8,
      subject: 200,
      description: 300,
      command: 1000,
      commandLines: 12,
      diff: 1500,
      diffLines: 12,
      question: 500,
      header: 100,
      choiceDescription: 200,
    });
    expect(CHAT_BOOKMARK_LIMITS).toEqual({ name: 120, excerpt: 160, perChat: 200 });
    expect(CHAT_FORK_TITLE_MAX).toBe(120);
    expect(SUGGESTED_TITLE_LIMIT).toBe(80);
  });
});

describe('index', () => {
  it('re-exports every module, the lead’s included', () => {
    for (const name of [
      'AGENT_REQUEST_SCHEMAS',
      'parseRequest',
      'ChatItemSchema',
      'ModelCatalogDataSchema',
      'ProviderAccountsSchema',
      'UsageSummaryResultSchema',
      'TaskSchema',
      'WorktreeSchema',
      'visualFrameHeight',
      'clipText',
      'ChatIdSchema',
      'CHAT_REQUEST_LIMITS',
      'AgentInfoSchema',
    ]) {
      expect(contracts, name).toHaveProperty(name);
    }
  });
});
