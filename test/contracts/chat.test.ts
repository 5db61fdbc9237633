import { describe, expect, it } from 'vitest';
import {
  ChatAnswerPayloadSchema,
  ChatApprovalItemSchema,
  ChatApprovePayloadSchema,
  ChatAssistantItemSchema,
  ChatAttachmentSchema,
  ChatAttachmentUploadSchema,
  ChatAttachmentUploadsSchema,
  ChatAttachPayloadSchema,
  ChatAttachResultSchema,
  ChatBookmarkSchema,
  ChatCompactionItemSchema,
  ChatEventEnvelopeSchema,
  ChatEventSchema,
  ChatForkPayloadSchema,
  ChatForkResultSchema,
  ChatHistoryPageSchema,
  ChatHistoryPayloadSchema,
  ChatInfoSchema,
  ChatItemSchema,
  ChatNoteItemSchema,
  ChatPreferencesPayloadSchema,
  ChatQuestionItemSchema,
  ChatRenameBookmarkPayloadSchema,
  ChatRequestSummarySchema,
  ChatSendPayloadSchema,
  ChatSendResultSchema,
  ChatSubagentItemSchema,
  ChatSubagentPayloadSchema,
  ChatSubagentResultSchema,
  ChatThinkingItemSchema,
  ChatToolItemSchema,
  ChatTurnDiffResultSchema,
  ChatTurnItemSchema,
  ChatUiChoicePayloadSchema,
  ChatUiQueryPayloadSchema,
  ChatUiQueryReadingSchema,
  ChatUnqueueResultSchema,
  ChatUserItemSchema,
  generatedImageAttachment,
  UiBlocksSchema,
} from '../../src/contracts/chat.ts';
import type { ChatItem } from '../../src/contracts/chat.ts';
import {
  CHAT_ATTACHMENT_MAX_BYTES,
  CHAT_ATTACHMENTS_MAX_COUNT,
  CHAT_BOOKMARK_LIMITS,
  CHAT_FORK_TITLE_MAX,
  SUGGESTED_TITLE_LIMIT,
} from '../../src/contracts/limits.ts';
import { base64OfSize, chatInfo, ITEMS } from './fixtures.ts';

const messagesOf = (result: { success: boolean; error?: { issues: { message: string }[] } }) => result.error?.issues.map((issue) => issue.message) ?? [];

const ITEM_SCHEMAS = {
  user: ChatUserItemSchema,
  assistant: ChatAssistantItemSchema,
  thinking: ChatThinkingItemSchema,
  tool: ChatToolItemSchema,
  subagent: ChatSubagentItemSchema,
  approval: ChatApprovalItemSchema,
  question: ChatQuestionItemSchema,
  turn: ChatTurnItemSchema,
  note: ChatNoteItemSchema,
  compaction: ChatCompactionItemSchema,
} as const;

describe('ChatInfo', () => {
  it('parses a record without any optional field, as older records are', () => {
    const info = ChatInfoSchema.parse(chatInfo());
    expect(info.queue).toBeUndefined();
    expect(info.requests).toBeUndefined();
    expect(info).not.toHaveProperty('background');
    expect(info).not.toHaveProperty('skills');
  });

  it('parses a record with every optional field', () => {
    const full = chatInfo({
      account: 'work',
      effectiveRuntimeMode: 'auto',
      permissionMode: 'acceptEdits',
      skills: ['review'],
      queue: [{ id: 'q1', turnId: 't2', text: 'next', createdAt: 1 }],
      queuePaused: true,
      background: [{ id: 'b1', kind: 'monitor', description: 'watch', command: null, startedAt: 1 }],
      delegating: true,
      usage: {
        contextTokens: 10,
        contextWindow: 200_000,
        costUsd: 0.5,
        turns: 1,
        breakdown: { toolOutput: 1, filesRead: 2, conversation: 3, system: 4 },
      },
      suggestedTitle: 'Fix the flaky test',
      hidden: false,
      forkOf: { chatId: 'chat-0', turnId: 'turn-9', at: 5 },
      resumeAtReset: true,
      limit: { kind: 'usage' },
      resumeAt: 1_760_000_360_000,
      requests: [
        {
          requestId: 'permission-1',
          itemId: 'item-3',
          kind: 'approval',
          createdAt: 1,
          approval: {
            toolName: 'Bash',
            subject: 'npm test',
            description: null,
            command: 'npm test',
            canAllowAlways: true,
            allowAlways: { label: 'Always allow npm test', description: 'In this folder' },
          },
        },
      ],
    });
    expect(ChatInfoSchema.safeParse(full).success).toBe(true);
  });

  it('strips keys it does not know', () => {
    expect(ChatInfoSchema.parse(chatInfo({ futureField: 1 }))).not.toHaveProperty('futureField');
  });

  it('needs nullable keys present: absent is not null', () => {
    const { agentSessionId: _, ...withoutSession } = chatInfo();
    expect(ChatInfoSchema.safeParse(withoutSession).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ activeTurnId: undefined })).success).toBe(false);
  });

  it('refuses null where a field is only optional', () => {
    expect(ChatInfoSchema.safeParse(chatInfo({ queue: null })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ account: null })).success).toBe(false);
  });

  it('refuses near misses', () => {
    expect(ChatInfoSchema.safeParse(chatInfo({ status: 'busy' })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ provider: 'cursor' })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ runtimeMode: 'yolo' })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ chatId: '' })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ account: 'Work/../x' })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ suggestedTitle: 'x'.repeat(SUGGESTED_TITLE_LIMIT + 1) })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ suggestedTitle: '' })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ createdAt: Number.NaN })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ usage: { contextTokens: 0, contextWindow: 0, costUsd: 0, turns: 0 } })).success).toBe(false);
    expect(ChatInfoSchema.safeParse(chatInfo({ limit: { kind: 'quota' } })).success).toBe(false);
  });

  it('holds no maximum on requests: cutting is the host’s job', () => {
    const request = { requestId: 'r', itemId: 'i', kind: 'question', createdAt: 1 };
    expect(ChatInfoSchema.safeParse(chatInfo({ requests: Array.from({ length: 20 }, () => request) })).success).toBe(true);
    const longSubject = { toolName: 'Bash', subject: 'x'.repeat(5000), description: null, canAllowAlways: false };
    expect(ChatRequestSummarySchema.safeParse({ ...request, kind: 'approval', approval: longSubject }).success).toBe(true);
  });
});

describe('ChatItem', () => {
  it.each(Object.entries(ITEMS))('parses a %s item through the union and its own schema', (kind, item) => {
    expect(ChatItemSchema.parse(item).kind).toBe(kind);
    expect(ITEM_SCHEMAS[kind as keyof typeof ITEM_SCHEMAS].safeParse(item).success).toBe(true);
  });

  it('refuses a kind it does not know', () => {
    expect(ChatItemSchema.safeParse({ ...ITEMS.note, kind: 'banner' }).success).toBe(false);
  });

  it('needs id, createdAt and a turnId that is null outside a turn', () => {
    expect(ChatItemSchema.safeParse({ ...ITEMS.note, turnId: null }).success).toBe(true);
    const { turnId: _, ...withoutTurn } = ITEMS.note;
    expect(ChatItemSchema.safeParse(withoutTurn).success).toBe(false);
    expect(ChatItemSchema.safeParse({ ...ITEMS.note, id: '' }).success).toBe(false);
  });

  it('refuses a wrong enum value in each kind that has one', () => {
    expect(ChatItemSchema.safeParse({ ...ITEMS.tool, state: 'pending' }).success).toBe(false);
    expect(ChatItemSchema.safeParse({ ...ITEMS.subagent, status: 'cancelled' }).success).toBe(false);
    expect(ChatItemSchema.safeParse({ ...ITEMS.approval, decision: 'maybe' }).success).toBe(false);
    expect(ChatItemSchema.safeParse({ ...ITEMS.question, state: 'open' }).success).toBe(false);
    expect(ChatItemSchema.safeParse({ ...ITEMS.turn, state: 'paused' }).success).toBe(false);
    expect(ChatItemSchema.safeParse({ ...ITEMS.note, level: 'debug' }).success).toBe(false);
    expect(ChatItemSchema.safeParse({ ...ITEMS.subagent, origin: 'adecore' }).success).toBe(false);
  });

  it('keeps the assistant’s parentToolUseId optional and nullable', () => {
    expect(ChatAssistantItemSchema.safeParse({ ...ITEMS.assistant, parentToolUseId: null }).success).toBe(true);
    expect(ChatAssistantItemSchema.safeParse({ ...ITEMS.assistant, parentToolUseId: 'toolu_2' }).success).toBe(true);
    expect(ChatAssistantItemSchema.safeParse(ITEMS.assistant).success).toBe(true);
  });

  it('keeps the subagent’s parentToolUseId plain optional: null is refused', () => {
    expect(ChatSubagentItemSchema.safeParse(ITEMS.subagent).success).toBe(true);
    expect(ChatSubagentItemSchema.safeParse({ ...ITEMS.subagent, parentToolUseId: null }).success).toBe(false);
  });

  it('keeps the tool’s parentToolUseId nullable but required', () => {
    const { parentToolUseId: _, ...withoutParent } = ITEMS.tool;
    expect(ChatToolItemSchema.safeParse(withoutParent).success).toBe(false);
  });

  it('needs thinking.endedAt present (null while running)', () => {
    const { endedAt: _, ...running } = ITEMS.thinking;
    expect(ChatThinkingItemSchema.safeParse(running).success).toBe(false);
  });

  it('refuses null for optional arrays on a user item', () => {
    expect(ChatUserItemSchema.safeParse({ ...ITEMS.user, mentions: null }).success).toBe(false);
    expect(ChatUserItemSchema.safeParse({ ...ITEMS.user, mentions: ['src/a.ts'], chats: ['chat-2'] }).success).toBe(true);
  });

  it('needs at least one question, and answers null until answered', () => {
    expect(ChatQuestionItemSchema.safeParse({ ...ITEMS.question, questions: [] }).success).toBe(false);
    expect(ChatQuestionItemSchema.safeParse({ ...ITEMS.question, answers: { layout: 'Compact' }, state: 'answered' }).success).toBe(true);
    const { answers: _, ...withoutAnswers } = ITEMS.question;
    expect(ChatQuestionItemSchema.safeParse(withoutAnswers).success).toBe(false);
  });

  it('reads a tool item with progress, file changes and a workflow', () => {
    const tool = {
      ...ITEMS.tool,
      progress: { startedAt: null, description: 'Running tests', output: 'ok 1\n' },
      changes: [{ path: 'a.ts', kind: 'update', diff: '@@ -1 +1 @@' }],
      workflow: {
        name: null,
        phases: [{ index: 0, title: 'Plan' }],
        agents: [
          {
            index: 0,
            label: 'Planner',
            phaseIndex: 0,
            agentId: null,
            status: 'running',
            startedAt: null,
            durationMs: null,
            lastTool: null,
          },
        ],
      },
    };
    expect(ChatToolItemSchema.safeParse(tool).success).toBe(true);
    expect(ChatToolItemSchema.safeParse({ ...tool, progress: { startedAt: null, description: null } }).success).toBe(false);
    expect(ChatToolItemSchema.safeParse({ ...tool, changes: [{ path: 'a.ts', kind: 'rename', diff: '' }] }).success).toBe(false);
  });

  it('reads a settled turn with a checkpoint diff and a limit', () => {
    const turn = {
      ...ITEMS.turn,
      state: 'error',
      endedAt: 2,
      costUsd: 0.1,
      attempt: 2,
      checkpointDiff: {
        files: [{ path: 'logo.png', kind: 'add', added: 0, deleted: 0, diff: '', omitted: 'binary' }],
        truncated: false,
      },
      limit: { kind: 'overload' },
    };
    expect(ChatTurnItemSchema.safeParse(turn).success).toBe(true);
    expect(ChatTurnItemSchema.safeParse({ ...turn, attempt: 0 }).success).toBe(false);
    expect(ChatTurnItemSchema.safeParse({ ...turn, costUsd: -1 }).success).toBe(false);
  });

  it('needs compaction.preTokens present, null when unknown', () => {
    expect(ChatCompactionItemSchema.safeParse({ ...ITEMS.compaction, preTokens: 12_000 }).success).toBe(true);
    expect(ChatCompactionItemSchema.safeParse({ ...ITEMS.compaction, preTokens: -1 }).success).toBe(false);
    const { preTokens: _, ...withoutTokens } = ITEMS.compaction;
    expect(ChatCompactionItemSchema.safeParse(withoutTokens).success).toBe(false);
  });

  it('reads an assistant reply with intelligent-UI blocks, answers and queries', () => {
    const reading = { state: 'fresh', value: [1, 2], readId: 'read-1', readAt: 5 };
    const reply = {
      ...ITEMS.assistant,
      ui: [
        {
          id: 'block-1',
          catalogVersion: 1,
          revision: 'r1',
          start: 0,
          end: 10,
          complete: true,
          defaults: {},
          queries: { totals: { source: 'db', args: { period: 'week' } } },
          nodes: [
            {
              id: 'n1',
              type: 'stack',
              props: {},
              expressions: {},
              bindings: {},
              children: [
                {
                  id: 'n2',
                  type: 'button',
                  props: { label: 'Go' },
                  expressions: {},
                  bindings: { value: 'x' },
                  children: [],
                  complete: true,
                  fallback: 'Go',
                  start: 1,
                  end: 2,
                },
              ],
              complete: true,
              fallback: '',
              start: 0,
              end: 10,
            },
          ],
          diagnostics: [{ code: 'unknown-prop', message: 'Unknown prop', start: 0, end: 1 }],
          fallback: 'Go',
        },
      ],
      uiAnswers: {
        'block-1': {
          itemId: 'item-1',
          blockId: 'block-1',
          revision: 'r1',
          choiceId: 'go',
          label: 'Go',
          sourceAt: 1,
          older: false,
          at: 2,
          queued: false,
          turnId: 'turn-2',
        },
      },
      uiQueries: {
        authorChatId: 'chat-1',
        access: { writer: true },
        blocks: { 'block-1': { revision: 'r1', readings: { totals: reading }, fallback: '' } },
      },
    };
    expect(ChatAssistantItemSchema.safeParse(reply).success).toBe(true);
    const badChild = structuredClone(reply);
    (badChild.ui[0]!.nodes[0]!.children[0] as Record<string, unknown>).start = -1;
    expect(ChatAssistantItemSchema.safeParse(badChild).success).toBe(false);
    expect(UiBlocksSchema.safeParse([{ ...reply.ui[0], revision: '' }]).success).toBe(false);
  });
});

describe('ChatEvent', () => {
  it('reads the four event types', () => {
    expect(ChatEventSchema.safeParse({ type: 'item', item: ITEMS.user, historyIndex: 0 }).success).toBe(true);
    expect(ChatEventSchema.safeParse({ type: 'delta', itemId: 'item-1', text: 'more' }).success).toBe(true);
    expect(ChatEventSchema.safeParse({ type: 'info', info: chatInfo() }).success).toBe(true);
    expect(ChatEventSchema.safeParse({ type: 'reset', info: chatInfo(), items: [ITEMS.user, ITEMS.turn] }).success).toBe(true);
  });

  it('reads a UI streaming preview: empty text with ui and textLength', () => {
    expect(ChatEventSchema.safeParse({ type: 'delta', itemId: 'item-1', text: '', ui: [], textLength: 120 }).success).toBe(true);
  });

  it('refuses near misses', () => {
    expect(ChatEventSchema.safeParse({ type: 'patch', itemId: 'item-1', text: '' }).success).toBe(false);
    expect(ChatEventSchema.safeParse({ type: 'item', item: ITEMS.user, historyIndex: -1 }).success).toBe(false);
    expect(ChatEventSchema.safeParse({ type: 'reset', info: chatInfo() }).success).toBe(false);
  });

  it('carries a positive seq in its envelope, or none', () => {
    const event = { type: 'delta', itemId: 'item-1', text: 'x' };
    expect(ChatEventEnvelopeSchema.safeParse({ chatId: 'chat-1', event }).success).toBe(true);
    expect(ChatEventEnvelopeSchema.safeParse({ chatId: 'chat-1', event, seq: 1 }).success).toBe(true);
    expect(ChatEventEnvelopeSchema.safeParse({ chatId: 'chat-1', event, seq: 0 }).success).toBe(false);
    expect(ChatEventEnvelopeSchema.safeParse({ chatId: 'chat-1', event, seq: 1.5 }).success).toBe(false);
  });
});

describe('attachments', () => {
  const upload = (data: string, name = 'a.png') => ({ name, mime: 'image/png', data });

  it('accept raw base64 with 0 to 2 padding characters', () => {
    for (const data of ['AAAA', 'AAA=', 'AA==', 'aGk+/w==']) {
      expect(ChatAttachmentUploadSchema.safeParse(upload(data)).success).toBe(true);
    }
  });

  it('refuse text that is not raw base64', () => {
    for (const data of ['AAA', 'A===', 'AA=A', 'data:image/png;base64,AAAA', 'AA AA', 'AA-_', 'AAAAA===']) {
      const result = ChatAttachmentUploadSchema.safeParse(upload(data));
      expect(messagesOf(result), data).toContain('Invalid attachment base64');
    }
  });

  it('refuse empty data, an empty name and names or types over 255', () => {
    expect(ChatAttachmentUploadSchema.safeParse(upload('')).success).toBe(false);
    expect(ChatAttachmentUploadSchema.safeParse(upload('AAAA', '')).success).toBe(false);
    expect(ChatAttachmentUploadSchema.safeParse(upload('AAAA', 'x'.repeat(256))).success).toBe(false);
    expect(ChatAttachmentUploadSchema.safeParse({ ...upload('AAAA'), mime: 'x'.repeat(256) }).success).toBe(false);
  });

  it('accept exactly 10 MiB decoded and refuse one byte more', () => {
    expect(ChatAttachmentUploadSchema.safeParse(upload(base64OfSize(CHAT_ATTACHMENT_MAX_BYTES))).success).toBe(true);
    const over = ChatAttachmentUploadSchema.safeParse(upload(base64OfSize(CHAT_ATTACHMENT_MAX_BYTES + 1)));
    expect(messagesOf(over)).toContain('Attachment exceeds 10 MiB');
  });

  it('refuse more than 8 in one message', () => {
    const eight = Array.from({ length: CHAT_ATTACHMENTS_MAX_COUNT }, () => upload('AAAA'));
    expect(ChatAttachmentUploadsSchema.safeParse(eight).success).toBe(true);
    expect(ChatAttachmentUploadsSchema.safeParse([...eight, upload('AAAA')]).success).toBe(false);
  });

  it('refuse more than 10 MiB across one message', () => {
    const half = base64OfSize(CHAT_ATTACHMENT_MAX_BYTES / 2);
    expect(ChatAttachmentUploadsSchema.safeParse([upload(half), upload(half)]).success).toBe(true);
    const over = ChatAttachmentUploadsSchema.safeParse([upload(half), upload(half), upload('AA==')]);
    expect(messagesOf(over)).toContain('Attachments must total at most 10 MiB per message');
  });

  it('stores id, name, mime, size and a host path, with optional positive dimensions', () => {
    const stored = { id: 'att-1', name: 'a.png', mime: 'image/png', size: 3, path: '/data/attachments/c/att-1' };
    expect(ChatAttachmentSchema.safeParse(stored).success).toBe(true);
    expect(ChatAttachmentSchema.safeParse({ ...stored, width: 10, height: 20 }).success).toBe(true);
    expect(ChatAttachmentSchema.safeParse({ ...stored, width: 0 }).success).toBe(false);
    expect(ChatAttachmentSchema.safeParse({ ...stored, size: -1 }).success).toBe(false);
    expect(ChatAttachmentSchema.safeParse({ ...stored, data: 'AAAA' })).toEqual({ success: true, data: stored });
  });

  it('finds the stored image of an ImageGeneration call and nothing else', () => {
    const attachment = { id: 'att-1', name: 'img.png', mime: 'image/png', size: 3, path: '/x/img.png' };
    const tool = { ...ITEMS.tool, name: 'ImageGeneration', input: { attachment, revisedPrompt: 'a cat' } } as ChatItem;
    expect(generatedImageAttachment(tool)).toEqual(attachment);
    expect(generatedImageAttachment({ ...tool, input: { attachment: { id: '' } } } as ChatItem)).toBeNull();
    expect(generatedImageAttachment({ ...tool, name: 'Bash' } as ChatItem)).toBeNull();
    expect(generatedImageAttachment(ITEMS.user)).toBeNull();
  });
});

describe('chat.send payload', () => {
  it('needs text that is not blank, or an attachment', () => {
    expect(ChatSendPayloadSchema.safeParse({ chatId: 'chat-1', text: 'hi' }).success).toBe(true);
    const blank = ChatSendPayloadSchema.safeParse({ chatId: 'chat-1', text: ' \n\t' });
    expect(messagesOf(blank)).toContain('A message needs text or an attachment');
    expect(
      ChatSendPayloadSchema.safeParse({
        chatId: 'chat-1',
        text: '',
        attachments: [{ name: 'a.png', mime: 'image/png', data: 'AAAA' }],
      }).success,
    ).toBe(true);
    expect(ChatSendPayloadSchema.safeParse({ chatId: 'chat-1', text: '', attachments: [] }).success).toBe(false);
  });

  it('sets no length on the text', () => {
    expect(ChatSendPayloadSchema.safeParse({ chatId: 'chat-1', text: 'x'.repeat(1_000_000) }).success).toBe(true);
  });

  it('caps mentions at 64, skills and chats at 16, and refuses empty entries', () => {
    const send = (extra: Record<string, unknown>) => ChatSendPayloadSchema.safeParse({ chatId: 'c', text: 'hi', ...extra });
    expect(send({ mentions: Array(64).fill('a.ts') }).success).toBe(true);
    expect(send({ mentions: Array(65).fill('a.ts') }).success).toBe(false);
    expect(send({ skills: Array(17).fill('s') }).success).toBe(false);
    expect(send({ chats: Array(17).fill('c') }).success).toBe(false);
    expect(send({ mentions: [''] }).success).toBe(false);
    expect(send({ chats: [''] }).success).toBe(false);
  });

  it('takes steer or queue as delivery', () => {
    expect(ChatSendPayloadSchema.safeParse({ chatId: 'c', text: 'hi', delivery: 'steer' }).success).toBe(true);
    expect(ChatSendPayloadSchema.safeParse({ chatId: 'c', text: 'hi', delivery: 'now' }).success).toBe(false);
  });

  it('answers whether it queued, and the turn id only from newer hosts', () => {
    expect(ChatSendResultSchema.safeParse({ queued: true }).success).toBe(true);
    expect(ChatSendResultSchema.safeParse({ queued: false, turnId: 'turn-2' }).success).toBe(true);
    expect(ChatSendResultSchema.safeParse({ queued: false, turnId: '' }).success).toBe(false);
    expect(ChatUnqueueResultSchema.safeParse({}).success).toBe(true);
  });
});

describe('approvals and questions', () => {
  it('accept the documented examples', () => {
    expect(
      ChatApprovePayloadSchema.parse({
        chatId: 'chat-1',
        requestId: 'permission-1',
        decision: 'deny',
        message: 'Use the fixture instead.',
      }).decision,
    ).toBe('deny');
    expect(ChatAnswerPayloadSchema.parse({ chatId: 'chat-1', requestId: 'question-1', answers: { layout: 'Compact' } }).answers).toEqual({ layout: 'Compact' });
  });

  it('refuse a decision only an item can carry, and an empty request id', () => {
    const approve = { chatId: 'chat-1', requestId: 'permission-1', decision: 'allow' };
    expect(ChatApprovePayloadSchema.safeParse({ ...approve, decision: 'pending' }).success).toBe(false);
    expect(ChatApprovePayloadSchema.safeParse({ ...approve, decision: 'cancelled' }).success).toBe(false);
    expect(ChatApprovePayloadSchema.safeParse({ ...approve, requestId: '' }).success).toBe(false);
    expect(ChatAnswerPayloadSchema.safeParse({ chatId: 'c', requestId: 'q', answers: { layout: 1 } }).success).toBe(false);
  });
});

describe('paging', () => {
  it('needs a history cursor of 1..128 and a limit of 1..100', () => {
    const page = { chatId: 'c', cursor: 'abc' };
    expect(ChatHistoryPayloadSchema.safeParse(page).success).toBe(true);
    expect(ChatHistoryPayloadSchema.safeParse({ chatId: 'c' }).success).toBe(false);
    expect(ChatHistoryPayloadSchema.safeParse({ ...page, cursor: 'x'.repeat(129) }).success).toBe(false);
    expect(ChatHistoryPayloadSchema.safeParse({ ...page, limit: 0 }).success).toBe(false);
    expect(ChatHistoryPayloadSchema.safeParse({ ...page, limit: 101 }).success).toBe(false);
    expect(ChatHistoryPayloadSchema.safeParse({ ...page, limit: 100 }).success).toBe(true);
  });

  it('attaches with an optional page size and last seen seq', () => {
    expect(ChatAttachPayloadSchema.safeParse({ chatId: 'c', historyLimit: 50, since: 0 }).success).toBe(true);
    expect(ChatAttachPayloadSchema.safeParse({ chatId: 'c', since: -1 }).success).toBe(false);
    expect(ChatAttachPayloadSchema.safeParse({ chatId: 'c', historyLimit: 2.5 }).success).toBe(false);
  });

  it('answers a history page whose cursor is null at the beginning, never absent', () => {
    expect(ChatHistoryPageSchema.safeParse({ start: 0, cursor: null }).success).toBe(true);
    expect(ChatHistoryPageSchema.safeParse({ start: 0 }).success).toBe(false);
  });

  it('answers a replay on attach with events and no items', () => {
    const replay = {
      info: chatInfo(),
      items: [],
      seq: 12,
      events: [{ type: 'delta', itemId: 'item-1', text: 'x' }],
      bookmarks: [],
      visuals: [],
    };
    expect(ChatAttachResultSchema.safeParse(replay).success).toBe(true);
    expect(ChatAttachResultSchema.safeParse({ info: chatInfo(), items: [ITEMS.user] }).success).toBe(true);
  });

  it('pages subagents by an id or workflow ref of at most 256', () => {
    const page = { chatId: 'c', toolUseId: 'workflow-agent:a1', watch: false };
    expect(ChatSubagentPayloadSchema.safeParse(page).success).toBe(true);
    expect(ChatSubagentPayloadSchema.safeParse({ ...page, toolUseId: 'x'.repeat(257) }).success).toBe(false);
    expect(ChatSubagentPayloadSchema.safeParse({ ...page, cursor: 'x'.repeat(256) }).success).toBe(true);
    expect(ChatSubagentResultSchema.safeParse({ items: [], history: { cursor: null }, source: 'codex-thread', live: true }).success).toBe(true);
    expect(ChatSubagentResultSchema.safeParse({ items: [], history: { cursor: null }, source: 'gemini-log', live: true }).success).toBe(false);
  });
});

describe('forks', () => {
  const fork = { chatId: 'chat-1', turnId: 'turn-3' };

  it('trims the title and branch before checking their length', () => {
    const parsed = ChatForkPayloadSchema.parse({ ...fork, title: '  Try B  ', worktree: { branch: ' try-b ' } });
    expect(parsed.title).toBe('Try B');
    expect(parsed.worktree?.branch).toBe('try-b');
    expect(ChatForkPayloadSchema.safeParse({ ...fork, title: `  ${'x'.repeat(CHAT_FORK_TITLE_MAX)}  ` }).success).toBe(true);
    expect(ChatForkPayloadSchema.safeParse({ ...fork, title: 'x'.repeat(CHAT_FORK_TITLE_MAX + 1) }).success).toBe(false);
    expect(ChatForkPayloadSchema.safeParse({ ...fork, title: '   ' }).success).toBe(false);
    expect(ChatForkPayloadSchema.safeParse({ ...fork, worktree: { branch: ' ' } }).success).toBe(false);
    expect(ChatForkPayloadSchema.safeParse({ ...fork, worktree: {} }).success).toBe(true);
  });

  it('answers where the fork landed, with a null edge when no line could be drawn', () => {
    const result = { info: chatInfo({ chatId: 'chat-2' }), nodeId: 'n2', viewId: 'n2', edgeId: null };
    expect(ChatForkResultSchema.safeParse(result).success).toBe(true);
    expect(ChatForkResultSchema.safeParse({ ...result, worktree: { path: '/w', branch: 'try-b' } }).success).toBe(true);
    const { edgeId: _, ...withoutEdge } = result;
    expect(ChatForkResultSchema.safeParse(withoutEdge).success).toBe(false);
  });

  it('answers a turn diff of null when there is no checkpoint, never an absent diff', () => {
    expect(ChatTurnDiffResultSchema.safeParse({ diff: null }).success).toBe(true);
    expect(ChatTurnDiffResultSchema.safeParse({}).success).toBe(false);
    const file = { path: 'a.ts', kind: 'update', added: 1, deleted: 2, diff: '' };
    expect(ChatTurnDiffResultSchema.safeParse({ diff: { files: [file], truncated: true } }).success).toBe(true);
    expect(ChatTurnDiffResultSchema.safeParse({ diff: { files: [{ ...file, omitted: 'huge' }], truncated: true } }).success).toBe(false);
  });
});

describe('preferences', () => {
  it('take a partial record per agent kind', () => {
    const picks = {
      runtimeMode: 'auto',
      selections: { codex: { model: 'gpt-x', options: { reasoning: 'high', fast: true } } },
      accounts: { claude: 'work' },
      changedAt: 0,
    };
    expect(ChatPreferencesPayloadSchema.safeParse(picks).success).toBe(true);
    expect(ChatPreferencesPayloadSchema.safeParse({ accounts: { cursor: 'work' } }).success).toBe(false);
    expect(ChatPreferencesPayloadSchema.safeParse({ accounts: { claude: 'Work' } }).success).toBe(false);
    expect(ChatPreferencesPayloadSchema.safeParse({ changedAt: -1 }).success).toBe(false);
    expect(ChatPreferencesPayloadSchema.safeParse({}).success).toBe(true);
  });
});

describe('intelligent-UI requests', () => {
  const ref = { chatId: 'c', itemId: 'item-1', blockId: 'block-1', revision: 'r1' };

  it('bound ids and read keys', () => {
    expect(ChatUiChoicePayloadSchema.safeParse({ ...ref, choiceId: 'go', reads: { totals: 'read-1' } }).success).toBe(true);
    expect(ChatUiChoicePayloadSchema.safeParse({ ...ref, choiceId: '' }).success).toBe(false);
    expect(ChatUiChoicePayloadSchema.safeParse({ ...ref, choiceId: 'go', reads: { ['k'.repeat(129)]: 'r' } }).success).toBe(false);
    expect(ChatUiChoicePayloadSchema.safeParse({ ...ref, revision: 'r'.repeat(129), choiceId: 'go' }).success).toBe(false);
    expect(ChatUiQueryPayloadSchema.safeParse({ ...ref, query: 'totals', values: { period: 'week' } }).success).toBe(true);
    expect(ChatUiQueryPayloadSchema.safeParse({ ...ref, query: '' }).success).toBe(false);
  });

  it('answer refusals as readings', () => {
    expect(ChatUiQueryReadingSchema.safeParse({ state: 'refused', readAt: 1, reason: 'block stale' }).success).toBe(true);
    expect(ChatUiQueryReadingSchema.safeParse({ state: 'denied', readAt: 1 }).success).toBe(false);
    expect(ChatUiQueryReadingSchema.safeParse({ state: 'fresh' }).success).toBe(false);
  });
});

describe('bookmarks', () => {
  it('bound the name and excerpt', () => {
    const mark = { itemId: 'item-1', excerpt: 'Fix the flaky test', createdAt: 1 };
    expect(ChatBookmarkSchema.safeParse(mark).success).toBe(true);
    expect(ChatBookmarkSchema.safeParse({ ...mark, name: 'x'.repeat(CHAT_BOOKMARK_LIMITS.name) }).success).toBe(true);
    expect(ChatBookmarkSchema.safeParse({ ...mark, name: 'x'.repeat(CHAT_BOOKMARK_LIMITS.name + 1) }).success).toBe(false);
    expect(ChatBookmarkSchema.safeParse({ ...mark, excerpt: 'x'.repeat(CHAT_BOOKMARK_LIMITS.excerpt + 1) }).success).toBe(false);
    expect(ChatBookmarkSchema.safeParse({ ...mark, itemId: '' }).success).toBe(false);
  });

  it('need a name to rename, where empty removes it', () => {
    expect(ChatRenameBookmarkPayloadSchema.safeParse({ chatId: 'c', itemId: 'i', name: '' }).success).toBe(true);
    expect(ChatRenameBookmarkPayloadSchema.safeParse({ chatId: 'c', itemId: 'i' }).success).toBe(false);
  });
});
