import { describe, expect, it } from 'vitest';
import { marked } from 'marked';
import { ChatTranscriptSchema, type ChatItem } from '../../src/contracts/index.ts';
import { ThreadModel, chatTitle, transcriptJson, transcriptMarkdown } from '../../src/client/index.ts';
import { ITEMS, chatInfo } from '../contracts/fixtures.ts';

const T0 = 1_760_000_000_000;
const at = (n: number) => ({ createdAt: T0 + n * 1000 });
const turn = 'turn-1';
const REPLY = 'Here is the plan:\n\n- read the log\n- fix the test\n\n```ts\nconst fixed = true;\n```';
const items: ChatItem[] = [
  {
    ...ITEMS.user,
    id: 'u1',
    ...at(0),
    turnId: turn,
    text: 'Fix the **flaky** test',
    attachments: [{ id: 'f1', name: 'log.txt', mime: 'text/plain', size: 42, path: '/home/me/.tether/f1/log.txt' }],
  },
  { ...ITEMS.thinking, id: 'th1', ...at(1), turnId: turn, text: 'The log shows a race.', streaming: false, endedAt: T0 + 1500 },
  { ...ITEMS.assistant, id: 'a1', ...at(2), turnId: turn, text: REPLY },
  {
    ...ITEMS.tool,
    id: 't1',
    ...at(3),
    turnId: turn,
    name: 'Edit',
    input: { file_path: 'a.ts' },
    output: 'has ``` inside',
    state: 'done',
    changes: [{ path: 'a.ts', kind: 'update', diff: '@@ -1 +1 @@\n-a\n+b\n' }],
  },
  { ...ITEMS.subagent, id: 's1', ...at(4), turnId: turn, description: 'Search the repo', status: 'done', result: 'Found 3 uses.', finishedAt: T0 + 4500 },
  { ...ITEMS.approval, id: 'ap1', ...at(5), turnId: turn, requestId: 'r1', toolName: 'Bash', decision: 'allow', description: 'Run the tests' },
  { ...ITEMS.question, id: 'q1', ...at(6), turnId: turn, requestId: 'r2', answers: { layout: 'Compact' }, state: 'answered' },
  { ...ITEMS.note, id: 'n1', ...at(7), turnId: turn, level: 'warning', text: 'Rate limit soon' },
  { ...ITEMS.compaction, id: 'c1', ...at(8), turnId: null, preTokens: 120_000 },
  { ...ITEMS.turn, id: turn, ...at(0), turnId: turn, state: 'error', endedAt: T0 + 9000, costUsd: 0.0123, limit: { kind: 'usage', resetsAt: T0 + 3_600_000 } },
] as ChatItem[];
const info = chatInfo({ chatId: 'chat-x', suggestedTitle: 'Flaky test', slashCommands: ['compact'], forkOf: { chatId: 'chat-0', turnId: 'turn-0', at: T0 } });

function thread(): ThreadModel {
  const model = new ThreadModel('chat-x');
  model.applyAttach({ info, items: items.map((i) => ({ ...i })), seq: 10 });
  return model;
}

describe('transcriptJson', () => {
  it('parses with the ChatTranscript schema after a JSON round trip', () => {
    const json = JSON.parse(JSON.stringify(transcriptJson(thread())));
    const parsed = ChatTranscriptSchema.parse(json);
    expect(parsed.chat).toMatchObject({
      id: 'chat-x',
      title: 'Flaky test',
      agent_working_folder: '/home/me/project',
      agent_mode: 'full-access',
      current_model: { provider: 'claude', requested_model: 'example-model' },
      branched_from: { chat_id: 'chat-0', through_message_id: 'turn-0' },
    });
    expect(parsed.tool_policy).toEqual({ chat_id: 'chat-x', mode: 'full-access', workspace_ids: [] });
    expect(parsed.agent_commands?.map((c) => c.name)).toEqual(['compact']);
  });

  it('puts each item kind where it belongs', () => {
    const t = transcriptJson(thread());
    // user and assistant items are the messages, in order; the reply knows the message that started its turn
    expect(t.messages.map((m) => [m.id, m.role, m.ordinal])).toEqual([
      ['u1', 'user', 0],
      ['a1', 'assistant', 1],
    ]);
    const reply = t.messages[1]!;
    expect(reply).toMatchObject({ markdown: REPLY, origin_message_id: 'u1', state: 'error', error_class: 'usage-limit', completed_at: T0 + 9000 });
    // their markdown split into blocks the way marked reads it
    const blocksOf = (id: string) => t.blocks.filter((b) => b.message_id === id && b.kind !== 'thinking');
    expect(blocksOf('a1').map((b) => b.kind)).toEqual(['paragraph', 'list', 'code']);
    expect(
      blocksOf('a1')
        .map((b) => b.markdown)
        .join('\n\n'),
    ).toBe(REPLY);
    expect(blocksOf('a1')[2]!.plain_text).toBe('const fixed = true;');
    expect(blocksOf('u1')[0]!.plain_text).toBe('Fix the flaky test');
    // thinking: a block beside the turn's reply
    expect(t.blocks.find((b) => b.kind === 'thinking')).toMatchObject({ id: 'th1', message_id: 'a1', markdown: 'The log shows a race.' });
    // tools, subagents, approvals and questions: activities
    const activity = (id: string) => t.tool_activities.find((a) => a.id === id);
    expect(activity('t1')).toMatchObject({
      kind: 'tool',
      name: 'Edit',
      state: 'done',
      output: 'has ``` inside',
      message_id: 'a1',
      changes: [{ path: 'a.ts' }],
    });
    expect(activity('s1')).toMatchObject({ kind: 'subagent', state: 'done', output: 'Found 3 uses.', completed_at: T0 + 4500 });
    expect(activity('ap1')).toMatchObject({ kind: 'approval', name: 'Bash', state: 'allow' });
    expect(activity('q1')).toMatchObject({ kind: 'question', state: 'answered', answers: { layout: 'Compact' } });
    // notes and compactions: notices
    expect(t.notices.map((n) => [n.id, n.kind, n.level])).toEqual([
      ['n1', 'note', 'warning'],
      ['c1', 'compaction', 'info'],
    ]);
    expect(t.notices[1]!.text).toContain('120000');
    // turns: usage
    expect(t.usage).toEqual([
      {
        message_id: 'a1',
        turn_id: turn,
        state: 'error',
        cost_usd: 0.0123,
        started_at: T0,
        ended_at: T0 + 9000,
        duration_ms: 9000,
        limit: { kind: 'usage', resets_at: T0 + 3_600_000 },
      },
    ]);
    // attachments of user messages
    expect(t.attachments).toEqual([expect.objectContaining({ id: 'f1', message_id: 'u1', name: 'log.txt', size: 42, ordinal: 0 })]);
    // every item is somewhere
    const placed = new Set([
      ...t.messages.map((m) => m.id),
      ...t.blocks.map((b) => b.id),
      ...t.tool_activities.map((a) => a.id),
      ...t.notices.map((n) => n.id),
      ...t.usage.map((u) => u.turn_id),
    ]);
    expect(items.filter((i) => !placed.has(i.id)).map((i) => i.id)).toEqual([]);
  });

  it("calls a chat without a title after its agent and folder, as the app's list and header do", () => {
    const model = new ThreadModel('chat-y');
    model.applyAttach({ info: chatInfo({ chatId: 'chat-y', cwd: '/home/me/web-app' }), items: [], seq: 1 });
    expect(transcriptJson(model).chat.title).toBe('Claude Code in web-app');
    expect(transcriptMarkdown(model).startsWith('# Claude Code in web-app\n')).toBe(true);
    expect(chatTitle({ suggestedTitle: 'Named', provider: 'codex', cwd: '/x' })).toBe('Named');
    expect(chatTitle({ provider: 'gemini', cwd: '/' })).toBe('Gemini');
  });

  it('refuses a thread that was never attached', () => {
    expect(() => transcriptJson(new ThreadModel('c'))).toThrow(/attach/);
  });
});

describe('transcriptMarkdown', () => {
  it('draws every item, and fences tool output that holds a fence of its own', () => {
    const md = transcriptMarkdown(thread());
    expect(md.startsWith('# Flaky test\n')).toBe(true);
    for (const piece of [
      '## You',
      'Fix the **flaky** test',
      'log.txt',
      '<summary>Thinking</summary>',
      REPLY,
      '**Tool** `Edit` · done',
      '+b',
      '**Subagent** Search the repo · done',
      'Found 3 uses.',
      '**Approval** `Bash` (Run the tests): allow',
      '→ Compact',
      '> **warning:** Rate limit soon',
      'Context compacted (120000 tokens before)',
      '$0.0123',
      '9.0 s',
      'usage limit',
    ]) {
      expect(md, piece).toContain(piece);
    }
    // The tool output stays inside one code block: marked reads it back as code, whole.
    const codes = marked
      .lexer(md)
      .filter((t) => t.type === 'code')
      .map((t) => (t as { text: string }).text);
    expect(codes).toContain('has ``` inside');
    expect(codes).toContain('const fixed = true;');
  });
});
