// How a thread's items become list rows (src/web/chat/items/rows.ts): a subagent's work drawn inside
// its row (nested subagents inside theirs), a turn's footer after the last item of that turn and only
// once it settled, visuals among the items by time (none from a page not loaded yet).
import { describe, expect, it } from 'vitest';
import type { ChatItem, ChatVisual } from '../../src/contracts/index.ts';
import { layoutThread } from '../../src/web/chat/items/rows.ts';

let clock = 1_000;
const at = () => (clock += 10);
const user = (id: string, turnId: string | null): ChatItem => ({ id, kind: 'user', createdAt: at(), turnId, text: id });
const turn = (id: string, state: 'running' | 'done' = 'done'): ChatItem => ({
  id,
  kind: 'turn',
  createdAt: at(),
  turnId: id,
  state,
  endedAt: state === 'running' ? null : 1_000_000,
  costUsd: 0.01,
});
const reply = (id: string, turnId: string, parentToolUseId: string | null = null): ChatItem => ({
  id,
  kind: 'assistant',
  createdAt: at(),
  turnId,
  text: id,
  streaming: false,
  parentToolUseId,
});
const tool = (id: string, turnId: string, parentToolUseId: string | null = null): ChatItem => ({
  id,
  kind: 'tool',
  createdAt: at(),
  turnId,
  toolUseId: `use-${id}`,
  name: 'Bash',
  input: {},
  output: '',
  state: 'done',
  parentToolUseId,
});
const subagent = (id: string, turnId: string, toolUseId: string, parentToolUseId?: string): ChatItem => ({
  id,
  kind: 'subagent',
  createdAt: at(),
  turnId,
  toolUseId,
  description: id,
  subagentType: null,
  prompt: null,
  background: false,
  status: 'running',
  startedAt: clock,
  finishedAt: null,
  summary: null,
  result: null,
  usage: null,
  lastTool: null,
  itemsTruncated: false,
  ...(parentToolUseId ? { parentToolUseId } : {}),
});
const visual = (id: string, time: number): ChatVisual => ({ id, title: id, at: time, maxHeight: 400, size: 10 });

describe('thread rows', () => {
  it('draws a turn footer after the last item of its turn, and none while the turn runs', () => {
    const items = [user('u1', 't1'), turn('t1'), reply('r1', 't1'), tool('x1', 't1'), user('u2', 't2'), turn('t2', 'running'), reply('r2', 't2')];
    const { rows, rowOf } = layoutThread(items, [], false);
    expect(rows.map((r) => r.key)).toEqual(['i:u1', 'i:r1', 'i:x1', 't:t1', 'i:u2', 'i:r2']);
    expect(rowOf.get('t1')).toBe('t:t1');
    expect(rowOf.has('t2')).toBe(false);
  });

  it('draws a compaction turn (no message, only the marker) as the marker, then its footer once it settled', () => {
    const compaction = (id: string, turnId: string): ChatItem => ({ id, kind: 'compaction', createdAt: at(), turnId, preTokens: 1200 });
    const before = [user('u1', 't1'), turn('t1'), reply('r1', 't1')];
    // As the host writes it: the turn first (running), its marker, then the turn again, settled.
    const running = [...before, { ...turn('c1', 'running'), label: 'Compact' } as ChatItem, compaction('m1', 'c1')];
    expect(layoutThread(running, [], false).rows.map((r) => r.key)).toEqual(['i:u1', 'i:r1', 't:t1', 'i:m1']);
    const settled = running.map((item) => (item.id === 'c1' ? ({ ...item, state: 'done', endedAt: clock } as ChatItem) : item));
    const { rows, rowOf } = layoutThread(settled, [], false);
    expect(rows.map((r) => r.key)).toEqual(['i:u1', 'i:r1', 't:t1', 'i:m1', 't:c1']);
    expect(rowOf.get('m1')).toBe('i:m1');
  });

  it("draws a subagent's work inside its row, nested subagents inside theirs; work of a parent not loaded stands alone", () => {
    const items = [
      user('u1', 't1'),
      turn('t1'),
      subagent('s1', 't1', 'agent-1'),
      reply('a1', 't1', 'agent-1'),
      tool('x1', 't1', 'agent-1'),
      subagent('s2', 't1', 'agent-2', 'agent-1'),
      tool('x2', 't1', 'agent-2'),
      reply('r1', 't1'),
      tool('x3', 't1', 'agent-gone'),
    ];
    const { rows, rowOf, children } = layoutThread(items, [], false);
    expect(rows.map((r) => r.key)).toEqual(['i:u1', 'i:s1', 'i:r1', 'i:x3', 't:t1']);
    expect(children.get('s1')).toEqual(['a1', 'x1', 's2']);
    expect(children.get('s2')).toEqual(['x2']);
    for (const id of ['a1', 'x1', 's2', 'x2']) expect(rowOf.get(id), id).toBe('i:s1');
  });

  it('places visuals among the items by time, before the footer of the turn that published them', () => {
    const items = [user('u1', 't1'), turn('t1'), reply('r1', 't1')];
    const published = visual('v1', clock + 1);
    const { rows } = layoutThread(items, [published, visual('v0', 0)], false);
    expect(rows.map((r) => r.key)).toEqual(['v:v0', 'i:u1', 'i:r1', 'v:v1', 't:t1']);
    // With older pages still to load, a visual older than the first loaded item waits for its page.
    expect(layoutThread(items, [published, visual('v0', 0)], true).rows.map((r) => r.key)).toEqual(['i:u1', 'i:r1', 'v:v1', 't:t1']);
  });
});
