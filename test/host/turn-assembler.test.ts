// The turn assembler (turn-assembler.ts) on its own: provider output and a turn's state in, the
// turn's next state and the steps ChatSession takes out, with ids and times from the test's clock.
import { describe, expect, it } from 'vitest';
import type { ChatInfo, ChatItem } from '../../src/contracts/index.ts';
import type { ProviderOutput } from '../../src/host/providers/provider.ts';
import {
  type Assembled,
  assembleOutlived,
  assembleTurn,
  closeStreams,
  openTurn,
  type OutlivedItems,
  type OutlivedWork,
  type TurnState,
  type TurnStep,
} from '../../src/host/chats/turn-assembler.ts';

/** A thread the assembler reads, taking the upserts it answers, and a clock counting ids from 1 at t=1000. */
function bench(info: Partial<ChatInfo> = {}) {
  const items = new Map<string, ChatItem>();
  const view = {
    get: (id: string) => items.get(id),
    get items() {
      return [...items.values()];
    },
    info: { usage: { contextTokens: 5, contextWindow: 100, costUsd: 0, turns: 0 }, ...info } as ChatInfo,
  };
  let ids = 0;
  const clock = { now: () => 1000, newId: (prefix: string) => `${prefix}-${++ids}` };
  let turn: TurnState = openTurn('turn-1');
  const feed = (output: ProviderOutput): TurnStep[] => {
    const out: Assembled = assembleTurn(turn, output, view, clock);
    turn = out.turn;
    for (const step of out.steps) {
      if (step.type === 'upsert') items.set(step.item.id, step.item);
      if (step.type === 'update') items.set(step.itemId, step.change(items.get(step.itemId)!));
    }
    return out.steps;
  };
  return { items, view, clock, feed, turn: () => turn };
}

describe('the turn assembler', () => {
  it('opens a reply on its first text and streams the rest into it; a thought closes before the reply opens', () => {
    const { feed, turn } = bench();
    expect(feed({ type: 'thinking', text: 'hmm' })).toEqual([
      { type: 'upsert', item: { id: 'thought-1', kind: 'thinking', createdAt: 1000, turnId: 'turn-1', text: '', streaming: true, endedAt: null } },
      { type: 'delta', itemId: 'thought-1', text: 'hmm' },
    ]);
    expect(feed({ type: 'text', text: 'Hel' })).toEqual([
      { type: 'close', itemId: 'thought-1' },
      { type: 'upsert', item: { id: 'reply-2', kind: 'assistant', createdAt: 1000, turnId: 'turn-1', text: '', streaming: true } },
      { type: 'delta', itemId: 'reply-2', text: 'Hel' },
    ]);
    expect(feed({ type: 'text', text: 'lo' })).toEqual([{ type: 'delta', itemId: 'reply-2', text: 'lo' }]);
    expect(turn()).toMatchObject({ reply: 'reply-2', replyParent: null, thought: null });
    expect(feed({ type: 'text-end' })).toEqual([{ type: 'close', itemId: 'reply-2' }]);
    expect(turn().reply).toBeNull();
    expect(feed({ type: 'text-end' })).toEqual([]);
  });

  it("a subagent's text is a reply of its own: the agent's open reply closes first", () => {
    const { feed } = bench();
    feed({ type: 'text', text: 'mine' });
    expect(feed({ type: 'text', text: 'sub', parentToolUseId: 'call-9', phase: 'final' })).toEqual([
      { type: 'close', itemId: 'reply-1' },
      {
        type: 'upsert',
        item: { id: 'reply-2', kind: 'assistant', createdAt: 1000, turnId: 'turn-1', text: '', streaming: true, phase: 'final', parentToolUseId: 'call-9' },
      },
      { type: 'delta', itemId: 'reply-2', text: 'sub' },
    ]);
  });

  it('a tool closes the streams, streams its output, and settles after the streamed text is in; the state given is never changed', () => {
    const { feed, items, turn } = bench();
    feed({ type: 'text', text: 'Let me look.' });
    const before = turn();
    const started = feed({ type: 'tool-start', toolUseId: 'call-1', name: 'Bash', input: { command: 'ls' }, description: 'List' });
    expect(started.map((s) => s.type)).toEqual(['close', 'upsert']);
    expect(before.tools.size).toBe(0);
    expect(turn().tools.get('call-1')).toBe('tool-2');
    expect(items.get('tool-2')).toMatchObject({
      kind: 'tool',
      state: 'running',
      toolUseId: 'call-1',
      parentToolUseId: null,
      progress: { startedAt: 1000, description: 'List', output: null },
    });
    expect(feed({ type: 'tool-output', toolUseId: 'call-1', text: 'a\n' })).toEqual([{ type: 'delta', itemId: 'tool-2', text: 'a\n' }]);
    expect(feed({ type: 'tool-output', toolUseId: 'call-unknown', text: 'x' })).toEqual([]);
    const ended = feed({ type: 'tool-end', toolUseId: 'call-1', output: 'a', error: true, changes: [] });
    expect(ended).toEqual([{ type: 'update', itemId: 'tool-2', change: expect.any(Function) }]);
    expect(items.get('tool-2')).toMatchObject({ state: 'error', output: 'a' });
    expect(items.get('tool-2')).not.toHaveProperty('changes');
    expect(feed({ type: 'tool-end', toolUseId: 'call-unknown', output: null })).toEqual([]);
  });

  it("a subagent's progress and end change its row; its end is timed by the clock", () => {
    const { feed, items } = bench();
    feed({ type: 'subagent-start', toolUseId: 'call-s', description: 'Explore', subagentType: 'explorer', prompt: 'look', background: false });
    feed({ type: 'subagent-progress', toolUseId: 'call-s', lastTool: 'Read', native: { agentId: 'a1' }, model: 'm' });
    expect(items.get('subagent-1')).toMatchObject({ status: 'running', lastTool: 'Read', native: { agentId: 'a1' }, model: 'm' });
    feed({ type: 'subagent-end', toolUseId: 'call-s', status: 'done', result: 'found it' });
    expect(items.get('subagent-1')).toMatchObject({ status: 'done', finishedAt: 1000, result: 'found it', lastTool: 'Read' });
    expect(feed({ type: 'subagent-end', toolUseId: 'call-other', status: 'failed' })).toEqual([]);
  });

  it('a request opens pending and re-derives the info; withdrawn, it settles as cancelled', () => {
    const { feed, items } = bench();
    expect(
      feed({ type: 'approval', requestId: 'r1', toolUseId: 'call-1', toolName: 'Bash', input: {}, description: null, canAllowAlways: false }).at(-1),
    ).toEqual({ type: 'info', patch: {} });
    expect(items.get('approval-1')).toMatchObject({ decision: 'pending', requestId: 'r1' });
    expect(feed({ type: 'request-cancelled', requestId: 'r1' })).toEqual([
      { type: 'upsert', item: expect.objectContaining({ id: 'approval-1', decision: 'cancelled' }) },
      { type: 'info', patch: {} },
    ]);
    expect(feed({ type: 'request-cancelled', requestId: 'r1' })).toEqual([]);
  });

  it("usage keeps the turn's cost (never below zero) and replaces the context numbers; compaction empties the meter", () => {
    const { feed, turn } = bench();
    expect(feed({ type: 'usage', costUsd: -2, contextTokens: 40 })).toEqual([
      { type: 'info', patch: { usage: { contextTokens: 40, contextWindow: 100, costUsd: 0, turns: 0 } } },
    ]);
    expect(turn().costUsd).toBe(0);
    feed({ type: 'usage', costUsd: 0.25 });
    expect(turn().costUsd).toBe(0.25);
    expect(feed({ type: 'compaction', preTokens: 90 })).toEqual([
      { type: 'upsert', item: { id: 'compaction-1', kind: 'compaction', createdAt: 1000, turnId: 'turn-1', preTokens: 90 } },
      { type: 'info', patch: { usage: { contextTokens: 0, contextWindow: 100, costUsd: 0, turns: 0 } } },
    ]);
  });

  it("the agent's title names the chat, except a fork's; a visual is published under the turn; the end finishes it", () => {
    expect(bench().feed({ type: 'title', title: 'Fix the build' })).toEqual([{ type: 'info', patch: { suggestedTitle: 'Fix the build' } }]);
    expect(bench({ forkOf: { chatId: 'chat-0', turnId: 'turn-0', at: 1 } }).feed({ type: 'title', title: 'Fix the build' })).toEqual([]);
    const { feed } = bench();
    feed({ type: 'thinking', text: 'x' });
    expect(feed({ type: 'visual', title: 'Chart', html: '<p>1</p>' })).toEqual([
      { type: 'close', itemId: 'thought-1' },
      { type: 'visual', input: { title: 'Chart', html: '<p>1</p>', turnId: 'turn-1' } },
    ]);
    expect(feed({ type: 'turn-end', state: 'error', message: 'boom' })).toEqual([{ type: 'finish', state: 'error', message: 'boom', outliving: [] }]);
  });

  it('closeStreams closes the open reply before the open thought, and nothing when none is open', () => {
    const state: TurnState = { ...openTurn('t'), reply: 'r', replyParent: 'p', thought: 'th' };
    expect(closeStreams(state)).toEqual({
      turn: { ...state, reply: null, replyParent: null, thought: null },
      steps: [
        { type: 'close', itemId: 'r' },
        { type: 'close', itemId: 'th' },
      ],
    });
    expect(closeStreams(openTurn('t')).steps).toEqual([]);
  });
});

describe('the work of a subagent that outlived its turn', () => {
  /** A thread whose turn-0 ended with subagent call-s still running; `feed` runs outlived work with no turn (or `active`) running. */
  function outliving(active: string | null = null, status: 'running' | 'done' = 'running') {
    const { items, view, clock } = bench();
    items.set('subagent-0', {
      id: 'subagent-0',
      kind: 'subagent',
      createdAt: 1,
      turnId: 'turn-0',
      toolUseId: 'call-s',
      description: 'Explore',
      subagentType: null,
      prompt: null,
      background: true,
      status,
      startedAt: 1,
      finishedAt: null,
      summary: null,
      result: null,
      usage: null,
      lastTool: null,
      itemsTruncated: false,
    });
    let open: OutlivedItems = new Map();
    const feed = (work: OutlivedWork): TurnStep[] => {
      const out = assembleOutlived(work, open, view, active, clock);
      open = out.items;
      for (const step of out.steps) {
        if (step.type === 'upsert') items.set(step.item.id, step.item);
        if (step.type === 'update') items.set(step.itemId, step.change(items.get(step.itemId)!));
      }
      return out.steps;
    };
    return { items, feed, open: () => open };
  }

  it('its tools and replies go under its row in the turn it outlived; its end closes them and settles the row', () => {
    const { items, feed, open } = outliving();
    feed({ type: 'tool-start', toolUseId: 'call-t', name: 'Bash', input: {}, parentToolUseId: 'call-s' });
    expect(items.get('tool-1')).toMatchObject({ turnId: 'turn-0', parentToolUseId: 'call-s', state: 'running' });
    expect(feed({ type: 'tool-output', toolUseId: 'call-t', text: 'out' })).toEqual([{ type: 'delta', itemId: 'tool-1', text: 'out' }]);
    expect(feed({ type: 'text', text: 'found', parentToolUseId: 'call-s' })).toEqual([
      { type: 'upsert', item: { id: 'reply-2', kind: 'assistant', createdAt: 1000, turnId: 'turn-0', text: '', streaming: true, parentToolUseId: 'call-s' } },
      { type: 'delta', itemId: 'reply-2', text: 'found' },
    ]);
    expect([...open()]).toEqual([
      ['call-t', 'tool-1'],
      ['reply:call-s', 'reply-2'],
    ]);
    const ended = feed({ type: 'subagent-end', toolUseId: 'call-s', status: 'done', result: 'all done' });
    expect(ended.map((s) => s.type)).toEqual(['close', 'update', 'upsert']);
    expect(items.get('tool-1')).toMatchObject({ state: 'error' });
    expect(items.get('subagent-0')).toMatchObject({ status: 'done', finishedAt: 1000, result: 'all done' });
    expect(open().size).toBe(0);
  });

  it('a tool that ends settles under a running row; the reply closes on its own text-end', () => {
    const { items, feed, open } = outliving();
    feed({ type: 'tool-start', toolUseId: 'call-t', name: 'Read', input: {}, parentToolUseId: 'call-s' });
    feed({ type: 'tool-end', toolUseId: 'call-t', output: 'text' });
    expect(items.get('tool-1')).toMatchObject({ state: 'done', output: 'text' });
    feed({ type: 'text', text: 'x', parentToolUseId: 'call-s' });
    expect(feed({ type: 'text-end', parentToolUseId: 'call-s' })).toEqual([{ type: 'close', itemId: 'reply-2' }]);
    expect(open().size).toBe(0);
    expect(feed({ type: 'text-end', parentToolUseId: 'call-s' })).toEqual([]);
  });

  it('a row of the running turn, a settled row, or work under no row is not touched', () => {
    for (const { feed } of [outliving('turn-0'), outliving(null, 'done')]) {
      expect(feed({ type: 'tool-start', toolUseId: 'call-t', name: 'Bash', input: {}, parentToolUseId: 'call-s' })).toEqual([]);
      expect(feed({ type: 'subagent-progress', toolUseId: 'call-s', lastTool: 'Bash' })).toEqual([]);
    }
    const { feed } = outliving();
    expect(feed({ type: 'text', text: 'stray', parentToolUseId: 'call-other' })).toEqual([]);
    expect(feed({ type: 'tool-output', toolUseId: 'call-unknown', text: 'x' })).toEqual([]);
  });
});
