// Minimal valid wire values: each test changes one thing and sees what happens.
import type { ChatInfo, ChatItem } from '../../src/contracts/index.ts';

export function chatInfo(overrides: Record<string, unknown> = {}): ChatInfo & Record<string, unknown> {
  return {
    chatId: 'chat-1',
    provider: 'claude',
    cwd: '/home/me/project',
    agentSessionId: null,
    model: null,
    selection: { model: 'example-model', options: {} },
    runtimeMode: 'full-access',
    status: 'idle',
    running: false,
    activeTurnId: null,
    slashCommands: [],
    usage: { contextTokens: 0, contextWindow: null, costUsd: 0, turns: 0 },
    createdAt: 1_760_000_000_000,
    ...overrides,
  };
}

const base = { id: 'item-1', createdAt: 1_760_000_000_000, turnId: 'turn-1' };

/** One valid item of every kind, keyed by kind. */
export const ITEMS = {
  user: { ...base, kind: 'user', text: 'Fix the flaky test' },
  assistant: { ...base, kind: 'assistant', text: 'Done.', streaming: false },
  thinking: { ...base, kind: 'thinking', text: 'Looking at the log', streaming: true, endedAt: null },
  tool: {
    ...base,
    kind: 'tool',
    toolUseId: 'toolu_1',
    name: 'Bash',
    input: { command: 'npm test' },
    output: null,
    state: 'running',
    parentToolUseId: null,
  },
  subagent: {
    ...base,
    kind: 'subagent',
    toolUseId: 'toolu_2',
    description: 'Search the repo',
    subagentType: null,
    prompt: null,
    background: false,
    status: 'running',
    startedAt: 1_760_000_000_000,
    finishedAt: null,
    summary: null,
    result: null,
    usage: null,
    lastTool: null,
    itemsTruncated: false,
  },
  approval: {
    ...base,
    kind: 'approval',
    requestId: 'permission-1',
    toolUseId: null,
    toolName: 'Edit',
    input: { path: 'a.ts' },
    description: null,
    canAllowAlways: false,
    decision: 'pending',
  },
  question: {
    ...base,
    kind: 'question',
    requestId: 'question-1',
    questions: [
      {
        id: 'layout',
        header: 'Layout',
        question: 'Which layout?',
        choices: [{ label: 'Compact', description: 'Dense rows' }],
        multiSelect: false,
      },
    ],
    answers: null,
    state: 'pending',
  },
  turn: { ...base, kind: 'turn', state: 'running', endedAt: null, costUsd: 0 },
  note: { ...base, kind: 'note', level: 'info', text: 'Compacted' },
  compaction: { ...base, kind: 'compaction', preTokens: null },
} as const satisfies Record<ChatItem['kind'], Record<string, unknown>>;

/** base64 of `bytes` zero bytes, without decoding or allocating them. */
export function base64OfSize(bytes: number): string {
  const full = Math.floor(bytes / 3);
  const rest = bytes % 3;
  return 'AAAA'.repeat(full) + (rest === 1 ? 'AA==' : rest === 2 ? 'AAA=' : '');
}
