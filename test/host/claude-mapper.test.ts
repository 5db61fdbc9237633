// The Claude Code mapper, fed transcripts recorded from the real CLI (2.1.197) against the scripted
// model server (test/support/anthropic-server.ts), paths normalized to /repo and /config. A fixture
// line `{"in": …}` is what the host wrote; every other line is the CLI's stdout, fed as it came.
// `odd-lines.jsonl` is written by hand: what the CLI has not sent yet, or should never send.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaudeStreamMapper, interruptLine, ruleWords, runtimeModeOf, userLine, type MappedLine } from '../../src/host/providers/claude/mapper.ts';
import type { ProviderOutput } from '../../src/host/providers/provider.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures', 'claude');

interface Turn {
  outputs: ProviderOutput[];
  /** What the host answered to each control request of the turn, by request id. */
  answers: Map<string, Record<string, any>>;
}

interface Played {
  mapper: ClaudeStreamMapper;
  turns: Turn[];
  replies: NonNullable<MappedLine['reply']>[];
}

/** Feeds a fixture's CLI lines through one mapper; outputs are cut into turns at each `turn-end`. */
function play(name: string): Played {
  const mapper = new ClaudeStreamMapper();
  const turns: Turn[] = [];
  const replies: Played['replies'] = [];
  let turn: Turn = { outputs: [], answers: new Map() };
  for (const line of readFileSync(path.join(FIXTURES, name), 'utf8').split('\n')) {
    if (line.startsWith('{"in":')) {
      const written = JSON.parse(line).in;
      if (written.type === 'control_response') turn.answers.set(written.response.request_id, written);
      continue;
    }
    const mapped = mapper.map(line);
    if (mapped.reply) replies.push(mapped.reply);
    for (const output of mapped.outputs) {
      turn.outputs.push(output);
      if (output.type === 'turn-end') {
        turns.push(turn);
        turn = { outputs: [], answers: new Map() };
      }
    }
  }
  if (turn.outputs.length > 0) turns.push(turn);
  return { mapper, turns, replies };
}

function of<T extends ProviderOutput['type']>(turn: Turn, type: T): Extract<ProviderOutput, { type: T }>[] {
  return turn.outputs.filter((o): o is Extract<ProviderOutput, { type: T }> => o.type === type);
}

const joined = (turn: Turn, type: 'text' | 'thinking') =>
  of(turn, type)
    .map((o) => o.text)
    .join('');

describe('Claude Code mapper: recorded turns', () => {
  const { mapper, turns } = play('turns.jsonl');

  it('announces the session, its model and the mode the CLI confirmed', () => {
    const [session] = of(turns[0], 'session');
    expect(session).toMatchObject({ model: 'claude-opus-4-8[1m]', permissionMode: 'default', effectiveRuntimeMode: 'supervised' });
    expect(session.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(session.slashCommands).toContain('compact');
  });

  it('streams thinking and text from the deltas, once each, each closed', () => {
    const first = turns[0];
    expect(joined(first, 'thinking')).toBe('The user greets me; I answer briefly.');
    expect(joined(first, 'text')).toBe('Hello! How can I help today?');
    const kinds = first.outputs.map((o) => o.type).filter((t) => t !== 'session');
    expect(kinds.indexOf('thinking-end')).toBeGreaterThan(kinds.lastIndexOf('thinking'));
    expect(kinds.indexOf('text-end')).toBeGreaterThan(kinds.lastIndexOf('text'));
    expect(of(first, 'text-end')).toHaveLength(1);
  });

  it('ends a turn with its own cost (not the process total), the context and its window', () => {
    expect(of(turns[0], 'usage')).toEqual([{ type: 'usage', costUsd: 0.001, contextTokens: 120, contextWindow: 1_000_000 }]);
    // The second result says 0.003 in total (two requests after the first turn's one): this turn cost the difference.
    expect(of(turns[1], 'usage')[0].costUsd).toBeCloseTo(0.002, 9);
    expect(turns.map((t) => t.outputs.at(-1))).toEqual(turns.map(() => ({ type: 'turn-end', state: 'done' })));
  });

  it('asks for approval with the tool call, and encodes allow-always as the real CLI took it', () => {
    const second = turns[1];
    const [start] = of(second, 'tool-start');
    const [approval] = of(second, 'approval');
    expect(start).toMatchObject({ name: 'Bash', input: { command: 'mkdir -p probe && date > probe/stamp.txt' }, description: 'Make a probe' });
    expect(approval).toMatchObject({ toolName: 'Bash', toolUseId: start.toolUseId, canAllowAlways: true });
    expect(approval.allowAlways).toEqual({ label: 'Always allow `mkdir -p probe` and `date`', description: "Saved in this project's local settings." });
    // Recorded with the CLI's suggestions echoed back; the encoder gives the same line.
    const recorded = second.answers.get(approval.requestId);
    expect(new ClaudeStreamMapper().approvalReply('x', 'allow')).toBeNull();
    const replay = new ClaudeStreamMapper();
    replayRequest(replay, 'turns.jsonl', approval.requestId);
    expect(replay.approvalReply(approval.requestId, 'allow-always')).toEqual(recorded);
    expect(replay.approvalReply(approval.requestId, 'allow-always')).toBeNull();
    expect(of(second, 'tool-end')).toEqual([{ type: 'tool-end', toolUseId: start.toolUseId, output: '(Bash completed with no output)', error: false }]);
  });

  it('reports a written and an edited file as unified changes, and the mode an approval switched to', () => {
    const [written] = of(turns[2], 'tool-end');
    expect(written.changes).toEqual([{ path: '/repo/notes.txt', kind: 'add', diff: '--- /dev/null\n+++ /repo/notes.txt\n@@ -0,0 +1,1 @@\n+hello' }]);
    expect(of(turns[2], 'mode')).toEqual([{ type: 'mode', permissionMode: 'acceptEdits', effectiveRuntimeMode: 'auto-accept-edits' }]);
    const [edited] = of(turns[3], 'tool-end');
    expect(edited.changes).toEqual([
      { path: '/repo/notes.txt', kind: 'update', diff: '--- /repo/notes.txt\n+++ /repo/notes.txt\n@@ -1,1 +1,1 @@\n-hello\n+hello world' },
    ]);
  });

  it('refuses whatever still waits when the turn is stopped, once', () => {
    // play() answers nothing, so both prompts of the fixture still wait.
    const refusals = mapper.cancelAll();
    expect(refusals.map((r: any) => r.response.response)).toEqual([
      { behavior: 'deny', message: 'The turn was stopped.', interrupt: true },
      { behavior: 'deny', message: 'The turn was stopped.', interrupt: true },
    ]);
    expect(mapper.cancelAll()).toEqual([]);
  });
});

/** Feeds a fixture up to (and including) the control request `requestId`. */
function replayRequest(mapper: ClaudeStreamMapper, name: string, requestId: string): void {
  for (const line of readFileSync(path.join(FIXTURES, name), 'utf8').split('\n')) {
    if (line.startsWith('{"in":')) continue;
    mapper.map(line);
    if (line.includes(`"request_id":"${requestId}"`)) return;
  }
}

describe('Claude Code mapper: denial, questions, subagents', () => {
  it('encodes a denial with its reason; the tool then fails', () => {
    const { turns } = play('deny.jsonl');
    const [approval] = of(turns[0], 'approval');
    const mapper = new ClaudeStreamMapper();
    replayRequest(mapper, 'deny.jsonl', approval.requestId);
    const reply = mapper.approvalReply(approval.requestId, 'deny', 'Not today');
    expect(reply).toMatchObject(turns[0].answers.get(approval.requestId)!);
    expect(reply).toMatchObject({ response: { response: { behavior: 'deny', message: 'Not today', interrupt: false } } });
    expect(of(turns[0], 'tool-end')[0]).toMatchObject({ error: true });
  });

  it('turns AskUserQuestion into a question and answers it by question text', () => {
    const { turns } = play('question-subagent.jsonl');
    const [question] = of(turns[0], 'question');
    expect(question.questions).toEqual([
      {
        id: 'q1',
        header: 'Color',
        question: 'Which color?',
        multiSelect: false,
        choices: [
          { label: 'Red', description: 'warm' },
          { label: 'Blue', description: 'cool' },
        ],
      },
    ]);
    expect(of(turns[0], 'approval')).toEqual([]);
    const mapper = new ClaudeStreamMapper();
    replayRequest(mapper, 'question-subagent.jsonl', question.requestId);
    expect(mapper.questionReply(question.requestId, { q1: 'Blue' })).toEqual(turns[0].answers.get(question.requestId));
  });

  it('a dismissed question refuses the tool instead of leaving the CLI waiting', () => {
    const mapper = new ClaudeStreamMapper();
    const { turns } = play('question-subagent.jsonl');
    const [question] = of(turns[0], 'question');
    replayRequest(mapper, 'question-subagent.jsonl', question.requestId);
    expect(mapper.questionReply(question.requestId, null)).toMatchObject({ response: { response: { behavior: 'deny' } } });
  });

  it('maps a Task into a subagent whose work names it as parent, with progress, summary and report', () => {
    const { turns } = play('question-subagent.jsonl');
    const task = turns[1];
    const [start] = of(task, 'subagent-start');
    expect(start).toMatchObject({ description: 'Find files', subagentType: 'general-purpose', prompt: 'SUBAGENT-PROMPT: list the files', background: false });
    expect(start.parentToolUseId).toBeUndefined();
    const [inner] = of(task, 'tool-start');
    expect(inner).toMatchObject({ name: 'Bash', parentToolUseId: start.toolUseId });
    expect(of(task, 'tool-end')).toEqual([{ type: 'tool-end', toolUseId: inner.toolUseId, output: 'sub-echo', error: false }]);
    expect(of(task, 'subagent-progress')[0]).toMatchObject({ toolUseId: start.toolUseId, lastTool: 'Bash', usage: { toolUses: 1 } });
    const ends = of(task, 'subagent-end');
    expect(ends.map((e) => e.status)).toEqual(['done', 'done']);
    expect(ends[0]).toMatchObject({ summary: 'Find files', usage: { toolUses: 1 } });
    expect(ends[1].result).toBe('Subagent report: found 3 files.');
    // The subagent's own text is not streamed by the CLI; nothing of it leaks into the reply.
    expect(joined(task, 'text')).not.toContain('Sub looking');
  });
});

describe('Claude Code mapper: interrupts, limits, compaction', () => {
  it('an interrupt mid-tool fails the tool and ends the turn aborted; the next turn runs', () => {
    const { turns } = play('interrupt.jsonl');
    expect(of(turns[0], 'tool-start')[0]).toMatchObject({ name: 'Bash', input: { command: 'sleep 30' } });
    expect(of(turns[0], 'tool-end')[0]).toMatchObject({ error: true });
    expect(turns[0].outputs.at(-1)).toEqual({ type: 'turn-end', state: 'aborted' });
    expect(turns[1].outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
  });

  it('a 429 ends the turn as an error carrying a usage limit, without the synthetic reply as text', () => {
    const { turns } = play('rate-limit.jsonl');
    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      expect(turn.outputs.at(-1)).toEqual({
        type: 'turn-end',
        state: 'error',
        message: 'API Error: Request rejected (429) · Rate limited',
        limit: { kind: 'usage' },
      });
      expect(of(turn, 'text')).toEqual([]);
    }
  });

  it('an overload retried and given up ends with an overload limit, the retry told as a note', () => {
    const { turns } = play('overload.jsonl');
    expect(of(turns[0], 'note')[0]).toMatchObject({ level: 'warning', text: expect.stringContaining('529') });
    expect(turns[0].outputs.at(-1)).toMatchObject({ type: 'turn-end', state: 'error', limit: { kind: 'overload' } });
  });

  it('a compaction becomes a marker with the tokens it folded', () => {
    const { turns } = play('compaction.jsonl');
    const compacted = turns.flatMap((t) => of(t, 'compaction'));
    expect(compacted).toEqual([{ type: 'compaction', preTokens: 127 }]);
    expect(turns.every((t) => t.outputs.at(-1)?.type === 'turn-end')).toBe(true);
  });
});

describe('Claude Code mapper: lines it does not expect', () => {
  const { turns, replies } = play('odd-lines.jsonl');
  const all = turns.flatMap((t) => t.outputs);
  const notes = all.filter((o) => o.type === 'note');

  it('notes a line that is not JSON or has no type, never throws', () => {
    expect(notes.filter((n) => n.text.includes('not JSON'))).toHaveLength(1);
    expect(notes.filter((n) => n.text.includes('without a type'))).toHaveLength(3);
  });

  it('notes an unknown type or system subtype once, and stays quiet about known noise', () => {
    expect(notes.filter((n) => n.text.includes('brand_new_event'))).toHaveLength(1);
    expect(notes.filter((n) => n.text.includes('system/brand_new_subtype'))).toHaveLength(1);
    expect(notes.some((n) => n.text.includes('thinking_tokens'))).toBe(false);
  });

  it('answers a control request it does not serve with an error, so the CLI never waits', () => {
    expect(replies).toEqual([
      { type: 'control_response', response: { subtype: 'error', request_id: 'hook-1', error: 'This host does not serve hook_callback' } },
    ]);
  });

  it('a withdrawn request is cancelled once; an unknown withdrawal is ignored', () => {
    expect(all.filter((o) => o.type === 'request-cancelled')).toEqual([{ type: 'request-cancelled', requestId: 'perm-1' }]);
  });

  it('keeps only the string slash commands and maps bypassPermissions to full access', () => {
    expect(all[0]).toEqual({
      type: 'session',
      agentSessionId: 'odd-session',
      model: 'claude-opus-4-8[1m]',
      permissionMode: 'bypassPermissions',
      effectiveRuntimeMode: 'full-access',
      slashCommands: ['compact'],
    });
  });

  it('a rejected rate-limit event gives the limit its reset time, in ms; a warning becomes a note', () => {
    expect(notes.some((n) => n.level === 'warning' && n.text.startsWith('85% of the five hour limit'))).toBe(true);
    expect(all.at(-1)).toEqual({
      type: 'turn-end',
      state: 'error',
      message: "You've hit your limit · resets 3am",
      limit: { kind: 'usage', resetsAt: 1_700_000_000_000 },
    });
    expect(all.some((o) => o.type === 'text')).toBe(false);
  });
});

describe('Claude Code lines the host writes', () => {
  it('sends images as base64 content blocks before the text', () => {
    expect(userLine('what is this?', [{ mime: 'image/png', data: 'iVBORw0KGgo=' }])).toEqual({
      type: 'user',
      message: {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'text', text: 'what is this?' },
        ],
      },
      parent_tool_use_id: null,
      session_id: 'default',
    });
    expect(userLine('plain').message).toEqual({ role: 'user', content: 'plain' });
  });

  it('interrupts through the control channel', () => {
    expect(interruptLine('i-1')).toEqual({ type: 'control_request', request_id: 'i-1', request: { subtype: 'interrupt' } });
  });

  it('maps every permission mode it may report', () => {
    expect(['default', 'plan', 'acceptEdits', 'auto', 'bypassPermissions', 'someday'].map(runtimeModeOf)).toEqual([
      'supervised',
      'supervised',
      'auto-accept-edits',
      'auto',
      'full-access',
      undefined,
    ]);
  });
});

describe('permission rules in words (an approval card\'s "always allow")', () => {
  it.each([
    ['Bash', 'echo hello-from-phone *', 'commands starting with `echo hello-from-phone`'],
    ['Bash', 'npm run:*', 'commands starting with `npm run`'],
    ['Bash', 'npm test', '`npm test`'],
    ['Bash', undefined, 'every command'],
    ['Read', '//srv/project/**', 'reading files in /srv/project'],
    ['Edit', undefined, 'editing any file'],
    ['WebFetch', 'domain:example.com', 'fetching from example.com'],
    ['mcp__db__query', 'users', 'mcp__db__query for users'],
  ] as const)('%s(%s) reads "%s"', (tool, content, words) => {
    expect(ruleWords(tool, content)).toBe(words);
  });
});
