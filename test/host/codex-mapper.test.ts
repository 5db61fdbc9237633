// The Codex mapper against transcripts recorded from the real `codex app-server` (0.171.0) by
// test/host/fixtures/codex/record.ts, and every recorded frame against the JSON Schema the installed
// binary prints (`codex app-server generate-json-schema`).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODEX_MODES, CodexMapper, runtimeModeOf } from '../../src/host/providers/codex/mapper.ts';
import type { CodexReply } from '../../src/host/providers/codex/mapper.ts';
import { parseUnifiedDiff } from '../../src/host/providers/codex/turn-diff.ts';
import type { ProviderOutput } from '../../src/host/providers/provider.ts';
import { RESET_AT_SECONDS } from './fixtures/codex/scenario.ts';

const fixtures = path.join(import.meta.dirname, 'fixtures', 'codex');
const codex = path.resolve(import.meta.dirname, '../../node_modules/.bin/codex');

type Line = { meta?: unknown; out?: Record<string, any>; in?: Record<string, any>; files?: Record<string, string> };

function transcript(name: string): Line[] {
  return readFileSync(path.join(fixtures, `${name}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

/** Replays a transcript's Codex side through a mapper, as the driver would; answers requests by `decide`. */
function replay(name: string, decide?: (mapper: CodexMapper, output: ProviderOutput) => CodexReply | null) {
  const mapper = new CodexMapper();
  const outputs: ProviderOutput[] = [];
  const replies: CodexReply[] = [];
  for (const line of transcript(name)) {
    const msg = line.out;
    if (!msg) continue;
    if (msg.id === 1 && msg.result?.thread) mapper.threadId = msg.result.thread.id;
    if (msg.id === 2 && msg.result?.turn) mapper.turnStarted(msg.result.turn.id);
    if (typeof msg.method !== 'string') continue;
    if (msg.id !== undefined) {
      const { outputs: asked, reply } = mapper.request(msg.id, msg.method, msg.params);
      outputs.push(...asked);
      if (reply) replies.push(reply);
      for (const output of asked) {
        const answer = decide?.(mapper, output);
        if (answer) replies.push(answer);
      }
    } else {
      outputs.push(...mapper.notification(msg.method, msg.params));
    }
  }
  return {
    mapper,
    outputs,
    replies,
    recordedReplies: transcript(name)
      .filter((l) => l.in && l.in.method === undefined)
      .map((l) => l.in),
  };
}

const types = (outputs: ProviderOutput[]) => outputs.map((o) => o.type);
const texts = (outputs: ProviderOutput[], type: 'text' | 'thinking') =>
  outputs
    .filter((o): o is Extract<ProviderOutput, { type: typeof type }> => o.type === type)
    .map((o) => o.text)
    .join('');

describe('the Codex mapper on recorded transcripts', () => {
  it('streams reasoning and reply text, then usage against the context window, and ends the turn done', () => {
    const { outputs } = replay('text');
    expect(texts(outputs, 'thinking')).toBe('A greeting; answer briefly.');
    expect(texts(outputs, 'text')).toBe('Hello from the scripted model.');
    expect(types(outputs).filter((t) => t === 'thinking-end' || t === 'text-end')).toEqual(['thinking-end', 'text-end']);
    // Codex reports 95% of the configured window (200000) as usable.
    expect(outputs).toContainEqual({ type: 'usage', contextTokens: 1240, contextWindow: 190000 });
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
    // The model-metadata warning Codex gives for an unknown model reaches the chat as a warning note.
    expect(outputs).toContainEqual(expect.objectContaining({ type: 'note', level: 'warning', text: expect.stringContaining('tether-test-model') }));
  });

  it('turns a command approval into an approval on the running tool, and encodes allow exactly as the run answered', () => {
    const { outputs, replies, recordedReplies } = replay('approval', (mapper, output) =>
      output.type === 'approval' ? mapper.approvalReply(output.requestId, 'allow') : null,
    );
    const start = outputs.find((o) => o.type === 'tool-start');
    const approval = outputs.find((o) => o.type === 'approval');
    expect(start).toMatchObject({ name: 'Bash', input: { command: 'echo built > build.txt' } });
    expect(approval).toMatchObject({
      toolName: 'Bash',
      toolUseId: (start as { toolUseId: string }).toolUseId,
      canAllowAlways: true,
      input: { command: 'echo built > build.txt' },
    });
    // This Codex offers an exec-policy amendment rather than acceptForSession for a command.
    expect((approval as { allowAlways?: { label: string } }).allowAlways?.label).toBe('Always allow this command');
    expect(replies).toEqual(recordedReplies.filter((r) => r!.result?.decision !== undefined));
    expect(outputs.find((o) => o.type === 'tool-end')).toMatchObject({ error: false });
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
  });

  it('encodes deny as decline, and the declined command ends as an error tool', () => {
    const { outputs, replies, recordedReplies } = replay('decline', (mapper, output) =>
      output.type === 'approval' ? mapper.approvalReply(output.requestId, 'deny') : null,
    );
    expect(replies).toEqual(recordedReplies.filter((r) => r!.result?.decision !== undefined));
    expect(replies[0]).toMatchObject({ result: { decision: 'decline' } });
    expect(outputs.find((o) => o.type === 'tool-end')).toMatchObject({ error: true, output: 'Declined' });
  });

  it('encodes allow-always with the choice Codex offered, and a cancel on interrupt', () => {
    const mapper = new CodexMapper();
    mapper.turnStarted('t1');
    const params = { threadId: 'th', turnId: 't1', itemId: 'i1', startedAtMs: 0, command: 'make' };
    const asked = mapper.request(7, 'item/commandExecution/requestApproval', {
      ...params,
      availableDecisions: ['accept', 'acceptForSession', 'decline', 'cancel'],
    });
    const requestId = (asked.outputs[0] as { requestId: string }).requestId;
    expect(mapper.approvalReply(requestId, 'allow-always')).toEqual({ id: 7, result: { decision: 'acceptForSession' } });
    expect(mapper.approvalReply(requestId, 'allow')).toBeNull(); // answered once
    mapper.request(8, 'item/fileChange/requestApproval', { threadId: 'th', turnId: 't1', itemId: 'i2', startedAtMs: 0 });
    expect(mapper.cancelAll()).toEqual([{ id: 8, result: { decision: 'cancel' } }]);
  });

  it("asks requestUserInput as a question and answers in Codex's shape", () => {
    const { outputs, replies, recordedReplies } = replay('question', (mapper, output) =>
      output.type === 'question' ? mapper.questionReply(output.requestId, { color: 'Blue' }) : null,
    );
    const question = outputs.find((o) => o.type === 'question');
    expect(question).toMatchObject({
      questions: [
        {
          id: 'color',
          header: 'Color',
          question: 'Which color should the button be?',
          multiSelect: false,
          choices: [
            { label: 'Red', description: 'Loud and clear' },
            { label: 'Blue', description: 'Calm' },
          ],
        },
      ],
    });
    expect(replies).toEqual(recordedReplies.filter((r) => r!.result?.answers !== undefined));
    expect(texts(outputs, 'text')).toContain('Blue');
  });

  it('ends a 429 usage-limit turn as an error carrying the limit and its reset from the rate limits', () => {
    const { outputs, mapper } = replay('limit');
    expect(mapper.rateLimits).toMatchObject({ primary: { usedPercent: 100, resetsAt: RESET_AT_SECONDS } });
    expect(outputs.at(-1)).toMatchObject({ type: 'turn-end', state: 'error', limit: { kind: 'usage', resetsAt: RESET_AT_SECONDS * 1000 } });
    expect((outputs.at(-1) as { message: string }).message).toMatch(/usage limit/);
  });

  it('ends an interrupted turn aborted, quietly when we asked for it', () => {
    const mapper = new CodexMapper();
    const outputs: ProviderOutput[] = [];
    for (const line of transcript('interrupt')) {
      const msg = line.out;
      if (msg?.id === 2) mapper.turnStarted(msg.result.turn.id);
      if (line.in?.method === 'turn/interrupt') mapper.interrupting();
      if (msg && typeof msg.method === 'string' && msg.id === undefined) outputs.push(...mapper.notification(msg.method, msg.params));
    }
    expect(outputs.find((o) => o.type === 'tool-start')).toMatchObject({ name: 'Bash', input: { command: 'sleep 30' } });
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'aborted' });
  });

  it("passes the thread's name on as the agent's title for the chat, and a cleared name not at all", () => {
    const mapper = new CodexMapper();
    mapper.threadId = 'th-1';
    expect(mapper.notification('thread/name/updated', { threadId: 'th-1', threadName: 'Fix the flaky test' })).toEqual([
      { type: 'title', title: 'Fix the flaky test' },
    ]);
    expect(mapper.notification('thread/name/updated', { threadId: 'th-1', threadName: null })).toEqual([]);
    expect(mapper.notification('thread/name/updated', { threadId: 'th-1' })).toEqual([]);
    expect(mapper.notification('thread/name/updated', { threadId: 'th-2', threadName: 'Another thread' })).toEqual([]);
  });

  it('makes a note of unknown notifications, unknown requests and malformed lines, and never throws', () => {
    const mapper = new CodexMapper();
    expect(mapper.notification('thread/teleported', { threadId: 'x' })).toEqual([
      { type: 'note', level: 'info', text: 'Codex sent thread/teleported, which this host does not show' },
    ]);
    const asked = mapper.request(3, 'item/tool/call', { tool: 'x' });
    expect(asked.reply).toEqual({ id: 3, error: { code: -32601, message: 'This host does not handle item/tool/call' } });
    expect(mapper.malformed('{oops', 'not JSON')[0]).toMatchObject({ type: 'note', level: 'info' });
    for (const junk of [null, 1, 'x', [], { item: null }, { item: { id: 5 } }, { turn: 'x' }, { tokenUsage: null }]) {
      for (const method of ['item/started', 'item/completed', 'turn/completed', 'thread/tokenUsage/updated', 'item/agentMessage/delta', 'error']) {
        expect(() => mapper.notification(method, junk)).not.toThrow();
      }
      expect(() => mapper.request(9, 'item/tool/requestUserInput', junk)).not.toThrow();
    }
  });

  it('leaves out events of other threads once it knows its own, unless a spawn of its own named them', () => {
    const mapper = new CodexMapper();
    mapper.threadId = 'mine';
    expect(mapper.notification('item/agentMessage/delta', { threadId: 'other', itemId: 'a', delta: 'x' })).toEqual([]);
    expect(mapper.notification('item/agentMessage/delta', { threadId: 'mine', itemId: 'a', delta: 'x' })).toEqual([{ type: 'text', text: 'x' }]);
  });

  it("maps a spawned Codex agent to a subagent row: its own thread's command and report under it, its end with the report, the wait a tool", () => {
    const { outputs, mapper } = replay('subagent');
    const lines = transcript('subagent');
    const spawn = lines
      .map((l) => l.out)
      .find((o) => o?.method === 'item/completed' && o.params.item.type === 'collabAgentToolCall' && o.params.item.tool === 'spawnAgent')!.params.item;
    const agentThread: string = spawn.receiverThreadIds[0];
    const parentOf = (o: ProviderOutput) => ('parentToolUseId' in o ? o.parentToolUseId : undefined);

    expect(outputs.find((o) => o.type === 'subagent-start')).toEqual({
      type: 'subagent-start',
      toolUseId: spawn.id,
      description: 'SUBAGENT-PROMPT: list the files',
      subagentType: null,
      prompt: 'SUBAGENT-PROMPT: list the files',
      background: true,
    });
    expect(outputs).toContainEqual({ type: 'subagent-progress', toolUseId: spawn.id, native: { threadId: agentThread }, model: spawn.model });
    const command = outputs.find((o) => o.type === 'tool-start' && o.name === 'Bash');
    expect(command).toMatchObject({ input: { command: 'echo sub-echo' }, parentToolUseId: spawn.id });
    expect(outputs).toContainEqual(
      expect.objectContaining({ type: 'tool-end', toolUseId: (command as { toolUseId: string }).toolUseId, output: 'sub-echo\n', error: false }),
    );
    expect(
      outputs
        .filter((o) => o.type === 'text' && parentOf(o) === spawn.id)
        .map((o) => (o as { text: string }).text)
        .join(''),
    ).toBe('Subagent report: found 3 files.');
    const end = outputs.find((o) => o.type === 'subagent-end');
    expect(end).toMatchObject({ toolUseId: spawn.id, status: 'done', result: 'Subagent report: found 3 files.', usage: { toolUses: 1 } });
    expect((end as { usage: { totalTokens: number } }).usage.totalTokens).toBeGreaterThan(0);
    // The parent's own reply stays its own, the wait is a tool of the parent, and the turn ends done.
    expect(
      outputs
        .filter((o) => o.type === 'text' && !parentOf(o))
        .map((o) => (o as { text: string }).text)
        .join(''),
    ).toBe('The agent reported back.');
    expect(outputs.find((o) => o.type === 'tool-start' && o.name === 'agent:wait')).toMatchObject({ input: { receiverThreadIds: [agentThread] } });
    expect(outputs.filter((o) => o.type === 'tool-start' && o.name === 'agent:spawnAgent')).toEqual([]);
    // No reasoning of the agent's, and no usage of its thread in the chat's context meter.
    expect(outputs.filter((o) => o.type === 'thinking')).toEqual([]);
    expect(types(outputs).at(-1)).toBe('turn-end');
    expect(mapper.agentTurn(spawn.id)).toEqual({ threadId: agentThread, turnId: null });
    expect(mapper.agentTurn('call_none')).toBeNull();
  });

  it("takes up an agent thread's turn that started before its spawn completed: that turn is what stopping it interrupts", () => {
    const mapper = new CodexMapper();
    let spawnId = '';
    let agentTurn: string | null = null;
    for (const line of transcript('subagent')) {
      const msg = line.out;
      if (msg?.id === 1 && msg.result?.thread) mapper.threadId = msg.result.thread.id;
      if (typeof msg?.method !== 'string' || msg.id !== undefined) continue;
      if (msg.method === 'item/started' && msg.params.item.type === 'collabAgentToolCall' && msg.params.item.tool === 'spawnAgent')
        spawnId = msg.params.item.id;
      if (msg.method === 'turn/started' && msg.params.threadId !== mapper.threadId) agentTurn = msg.params.turn.id;
      mapper.notification(msg.method, msg.params);
      if (msg.method === 'item/started' && msg.params.item.type === 'commandExecution') break;
    }
    // As recorded, the agent's turn/started came before the spawn's item/completed.
    expect(agentTurn).not.toBeNull();
    expect(mapper.agentTurn(spawnId)).toMatchObject({ turnId: agentTurn });
  });

  it('ends a stopped agent failed with its open tools, and a spawn that named no thread failed', () => {
    const mapper = new CodexMapper();
    mapper.threadId = 'mine';
    mapper.turnStarted('t1');
    const spawn = {
      type: 'collabAgentToolCall',
      id: 'call_s',
      tool: 'spawnAgent',
      status: 'inProgress',
      senderThreadId: 'mine',
      receiverThreadIds: [],
      prompt: 'first line\nmore',
      agentsStates: {},
    };
    mapper.notification('item/started', { threadId: 'mine', item: spawn });
    mapper.notification('item/completed', { threadId: 'mine', item: { ...spawn, status: 'completed', receiverThreadIds: ['agent'] } });
    mapper.notification('turn/started', { threadId: 'agent', turn: { id: 'at1' } });
    expect(
      mapper.notification('item/started', { threadId: 'agent', item: { type: 'commandExecution', id: 'c1', command: 'sleep 120', commandActions: [] } }),
    ).toMatchObject([
      { type: 'tool-start', toolUseId: 'c1', parentToolUseId: 'call_s' },
      { type: 'subagent-progress', toolUseId: 'call_s', lastTool: 'Bash', usage: { toolUses: 1 } },
    ]);
    expect(mapper.agentTurn('call_s')).toEqual({ threadId: 'agent', turnId: 'at1' });
    mapper.stoppingAgent('agent');
    expect(mapper.notification('turn/completed', { threadId: 'agent', turn: { id: 'at1', status: 'interrupted' } })).toEqual([
      { type: 'tool-end', toolUseId: 'c1', output: null, error: true },
      { type: 'subagent-end', toolUseId: 'call_s', status: 'failed', result: null, summary: 'Stopped', usage: { totalTokens: 0, toolUses: 1, durationMs: 0 } },
    ]);
    expect(mapper.agentTurn('call_s')).toEqual({ threadId: 'agent', turnId: null });

    const failed = { ...spawn, id: 'call_f' };
    expect(mapper.notification('item/started', { threadId: 'mine', item: failed })[0]).toMatchObject({ type: 'subagent-start', description: 'first line' });
    expect(mapper.notification('item/completed', { threadId: 'mine', item: { ...failed, status: 'failed' } })).toEqual([
      { type: 'subagent-end', toolUseId: 'call_f', status: 'failed', result: 'Codex could not start the agent' },
    ]);
  });

  it('names the agents a turn leaves running in its turn-end, and passes what they say later aside, not into the next turn', () => {
    const mapper = new CodexMapper();
    mapper.threadId = 'mine';
    mapper.turnStarted('t1');
    const spawn = {
      type: 'collabAgentToolCall',
      id: 'call_o',
      tool: 'spawnAgent',
      status: 'inProgress',
      senderThreadId: 'mine',
      receiverThreadIds: [],
      prompt: 'go on',
      agentsStates: {},
    };
    mapper.notification('item/started', { threadId: 'mine', item: spawn });
    mapper.notification('item/completed', { threadId: 'mine', item: { ...spawn, status: 'completed', receiverThreadIds: ['agent'] } });
    mapper.notification('turn/started', { threadId: 'agent', turn: { id: 'at1' } });
    expect(mapper.notification('turn/completed', { threadId: 'mine', turn: { id: 't1', status: 'completed' } })).toEqual([
      { type: 'turn-end', state: 'done', outliving: ['call_o'] },
    ]);

    // The next turn runs; the agent's work is not its: it goes aside, under the agent's row (its thinking stays out).
    mapper.turnStarted('t2');
    expect(mapper.notification('item/started', { threadId: 'agent', item: { type: 'commandExecution', id: 'c9', command: 'ls', commandActions: [] } })).toEqual(
      [],
    );
    expect(mapper.notification('item/commandExecution/outputDelta', { threadId: 'agent', itemId: 'c9', delta: 'a.txt\n' })).toEqual([]);
    expect(mapper.notification('item/reasoning/summaryTextDelta', { threadId: 'agent', itemId: 'r9', delta: 'hmm' })).toEqual([]);
    expect(mapper.notification('item/agentMessage/delta', { threadId: 'agent', itemId: 'm9', delta: 'all ' })).toEqual([]);
    expect(mapper.notification('item/completed', { threadId: 'agent', item: { type: 'agentMessage', id: 'm9', text: 'all done' } })).toEqual([]);
    // Its own turn ends before its command reported an end: that command failed.
    expect(mapper.notification('turn/completed', { threadId: 'agent', turn: { id: 'at1', status: 'completed' } })).toEqual([]);
    expect(mapper.outlived.splice(0)).toEqual([
      { type: 'tool-start', toolUseId: 'c9', name: 'Bash', input: { command: 'ls' }, description: 'ls', parentToolUseId: 'call_o' },
      { type: 'subagent-progress', toolUseId: 'call_o', lastTool: 'Bash', usage: { totalTokens: 0, toolUses: 1, durationMs: 0 } },
      { type: 'tool-output', toolUseId: 'c9', text: 'a.txt\n' },
      { type: 'text', text: 'all ', parentToolUseId: 'call_o' },
      { type: 'text', text: 'done', parentToolUseId: 'call_o' },
      { type: 'text-end', parentToolUseId: 'call_o' },
      { type: 'tool-end', toolUseId: 'c9', output: null, error: true },
      { type: 'subagent-end', toolUseId: 'call_o', status: 'done', result: 'all done', usage: { totalTokens: 0, toolUses: 1, durationMs: 0 } },
    ]);
    // Ended: the next turn's end names no agent, and a gone process ends none.
    expect(mapper.notification('turn/completed', { threadId: 'mine', turn: { id: 't2', status: 'completed' } })).toEqual([{ type: 'turn-end', state: 'done' }]);
    expect(mapper.agentsGone('Codex exited')).toEqual([]);
  });

  it('names an agent an earlier turn left running in every later turn-end until it ends: it goes on past those turns too', () => {
    const mapper = new CodexMapper();
    mapper.threadId = 'mine';
    mapper.turnStarted('t1');
    const spawn = {
      type: 'collabAgentToolCall',
      id: 'call_e',
      tool: 'spawnAgent',
      status: 'completed',
      senderThreadId: 'mine',
      receiverThreadIds: ['agent'],
      prompt: 'go on',
      agentsStates: {},
    };
    mapper.notification('item/completed', { threadId: 'mine', item: spawn });
    expect(mapper.notification('turn/completed', { threadId: 'mine', turn: { id: 't1', status: 'completed' } })).toEqual([
      { type: 'turn-end', state: 'done', outliving: ['call_e'] },
    ]);
    mapper.turnStarted('t2');
    expect(mapper.notification('turn/completed', { threadId: 'mine', turn: { id: 't2', status: 'completed' } })).toEqual([
      { type: 'turn-end', state: 'done', outliving: ['call_e'] },
    ]);
    mapper.notification('turn/completed', { threadId: 'agent', turn: { id: 'at1', status: 'completed' } });
    mapper.turnStarted('t3');
    expect(mapper.notification('turn/completed', { threadId: 'mine', turn: { id: 't3', status: 'completed' } })).toEqual([{ type: 'turn-end', state: 'done' }]);
  });

  it('ends an agent still running past its turn failed when the process goes', () => {
    const mapper = new CodexMapper();
    mapper.threadId = 'mine';
    mapper.turnStarted('t1');
    const spawn = {
      type: 'collabAgentToolCall',
      id: 'call_g',
      tool: 'spawnAgent',
      status: 'completed',
      senderThreadId: 'mine',
      receiverThreadIds: ['agent'],
      prompt: 'go on',
      agentsStates: {},
    };
    mapper.notification('item/started', { threadId: 'mine', item: { ...spawn, status: 'inProgress', receiverThreadIds: [] } });
    mapper.notification('item/completed', { threadId: 'mine', item: spawn });
    mapper.notification('turn/completed', { threadId: 'mine', turn: { id: 't1', status: 'completed' } });
    expect(mapper.agentsGone('Codex exited')).toEqual([
      {
        type: 'subagent-end',
        toolUseId: 'call_g',
        status: 'failed',
        result: null,
        summary: 'Codex exited',
        usage: { totalTokens: 0, toolUses: 0, durationMs: 0 },
      },
    ]);
  });

  it('maps every runtime mode to Codex policy and back', () => {
    for (const [mode, pair] of Object.entries(CODEX_MODES)) expect(runtimeModeOf(pair.approvalPolicy, pair.sandbox)).toBe(mode);
    expect(runtimeModeOf('on-request', { type: 'workspaceWrite', writableRoots: [] })).toBe('auto');
    expect(runtimeModeOf('on-failure', 'read-only')).toBeUndefined();
  });

  it('turns an apply_patch file change into an Edit approval showing its changes, encodes allow as accept, and carries the change on the tool', () => {
    const { outputs, replies, recordedReplies } = replay('edit', (mapper, output) =>
      output.type === 'approval' ? mapper.approvalReply(output.requestId, 'allow') : null,
    );
    const approvals = outputs.filter((o) => o.type === 'approval');
    const starts = outputs.filter((o) => o.type === 'tool-start');
    expect(approvals).toHaveLength(2);
    expect(approvals.map((a) => (a as { toolUseId: string }).toolUseId)).toEqual(starts.map((s) => (s as { toolUseId: string }).toolUseId));
    expect(approvals[0]).toMatchObject({
      toolName: 'Edit',
      canAllowAlways: true,
      allowAlways: { label: 'Allow edits for this session' },
      input: { changes: [{ path: expect.stringMatching(/\/notes\.txt$/), kind: 'add', diff: '@@ -0,0 +1,2 @@\n+alpha\n+beta\n' }] },
    });
    expect(replies).toEqual(recordedReplies.filter((r) => r!.result?.decision !== undefined));
    expect(replies.map((r) => ('result' in r ? r.result : null))).toEqual([{ decision: 'accept' }, { decision: 'accept' }]);
    const ends = outputs.filter((o): o is Extract<ProviderOutput, { type: 'tool-end' }> => o.type === 'tool-end');
    expect(ends.map((e) => e.error)).toEqual([false, false]);
    expect(ends.map((e) => e.changes?.map((c) => ({ kind: c.kind, diff: c.diff })))).toEqual([
      [{ kind: 'add', diff: '@@ -0,0 +1,2 @@\n+alpha\n+beta\n' }],
      [{ kind: 'update', diff: '@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n' }],
    ]);
    expect(ends[1]!.output).toMatch(/^update \/.*notes\.txt$/);
    expect(transcript('edit').at(-1)!.files).toEqual({ 'notes.txt': 'alpha\ngamma\n' });
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
  });

  it("reads turn/diff/updated into the turn's checkpoint diff, the newest replacing the last and repeats left out", () => {
    const { outputs } = replay('edit');
    const recorded = transcript('edit').filter((l) => l.out?.method === 'turn/diff/updated');
    const diffs = outputs.filter((o): o is Extract<ProviderOutput, { type: 'turn-diff' }> => o.type === 'turn-diff');
    // Codex repeats the same diff once the turn's reply is in: only changes are passed on.
    expect(recorded.length).toBeGreaterThan(diffs.length);
    expect(diffs.map((d) => d.diff.files.map(({ path: p, kind, added, deleted }) => ({ p, kind, added, deleted })))).toEqual([
      [{ p: 'notes.txt', kind: 'add', added: 2, deleted: 0 }],
      [{ p: 'notes.txt', kind: 'add', added: 2, deleted: 0 }],
    ]);
    expect(diffs.at(-1)!.diff).toMatchObject({ truncated: false, files: [{ diff: expect.stringContaining('+alpha\n+gamma\n') }] });
  });

  it('encodes allow-always on a file change as acceptForSession: Codex asks once for both edits', () => {
    const { outputs, replies, recordedReplies } = replay('edit-session', (mapper, output) =>
      output.type === 'approval' ? mapper.approvalReply(output.requestId, 'allow-always') : null,
    );
    expect(outputs.filter((o) => o.type === 'approval')).toHaveLength(1);
    expect(replies).toEqual(recordedReplies.filter((r) => r!.result?.decision !== undefined));
    expect(replies[0]).toMatchObject({ result: { decision: 'acceptForSession' } });
    expect(outputs.filter((o) => o.type === 'tool-end').map((e) => (e as { error: boolean }).error)).toEqual([false, false]);
    expect(transcript('edit-session').at(-1)!.files).toEqual({ 'notes.txt': 'alpha\ngamma\n' });
  });

  it('encodes deny on a file change as decline: the edit ends as a declined error tool and nothing is written', () => {
    const { outputs, replies, recordedReplies } = replay('edit-decline', (mapper, output) =>
      output.type === 'approval' ? mapper.approvalReply(output.requestId, 'deny') : null,
    );
    expect(replies).toEqual(recordedReplies.filter((r) => r!.result?.decision !== undefined));
    expect(replies[0]).toMatchObject({ result: { decision: 'decline' } });
    expect(outputs.find((o) => o.type === 'tool-end')).toMatchObject({ error: true, output: 'Declined' });
    expect(outputs.filter((o) => o.type === 'turn-diff')).toEqual([]);
    expect(texts(outputs, 'text')).toContain('patch rejected by user');
    expect(transcript('edit-decline').at(-1)!.files).toEqual({});
  });

  it('reads a turn diff into checkpoint files', () => {
    const diff = [
      'diff --git a/src/a.ts b/src/a.ts',
      'index 1..2 100644',
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -1,2 +1,2 @@',
      '-old',
      '+new',
      ' same',
      'diff --git a/new.txt b/new.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.txt',
      '@@ -0,0 +1 @@',
      '+hello',
      '',
    ].join('\n');
    const parsed = parseUnifiedDiff(diff);
    expect(parsed.truncated).toBe(false);
    expect(parsed.files.map(({ path: p, kind, added, deleted }) => ({ p, kind, added, deleted }))).toEqual([
      { p: 'src/a.ts', kind: 'update', added: 1, deleted: 1 },
      { p: 'new.txt', kind: 'add', added: 1, deleted: 0 },
    ]);
  });

  it('reads a deleted file by its old name, a binary file without its text, a rename by its new name', () => {
    const diff = [
      'diff --git a/gone.txt b/gone.txt',
      'deleted file mode 100644',
      'index 3..0',
      '--- a/gone.txt',
      '+++ /dev/null',
      '@@ -1,2 +0,0 @@',
      '-one',
      '-two',
      'diff --git a/logo.png b/logo.png',
      'index 4..5 100644',
      'Binary files a/logo.png and b/logo.png differ',
      'diff --git a/old name.ts b/new name.ts',
      'similarity index 90%',
      'rename from old name.ts',
      'rename to new name.ts',
      '--- a/old name.ts',
      '+++ b/new name.ts',
      '@@ -1,3 +1,3 @@',
      ' a',
      '-b',
      '+c',
      ' d',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    const parsed = parseUnifiedDiff(diff);
    expect(parsed.files.map(({ path: p, kind, added, deleted, omitted }) => ({ p, kind, added, deleted, omitted }))).toEqual([
      { p: 'gone.txt', kind: 'delete', added: 0, deleted: 2, omitted: undefined },
      { p: 'logo.png', kind: 'update', added: 0, deleted: 0, omitted: 'binary' },
      { p: 'new name.ts', kind: 'update', added: 1, deleted: 1, omitted: undefined },
    ]);
    expect(parsed.files[2]!.diff).toMatch(/^diff --git a\/old name\.ts b\/new name\.ts\n[\s\S]*\+c\n d\n\\ No newline at end of file\n$/);
  });

  it("keeps a file whose hunk counts do not add up, by its header's name and with its text, rather than losing the turn's diff", () => {
    const diff = ['diff --git a/x.ts b/x.ts', '--- a/x.ts', '+++ b/x.ts', '@@ -1,5 +1,5 @@', '-old', '+new', ''].join('\n');
    const parsed = parseUnifiedDiff(diff);
    expect(parsed.files).toEqual([{ path: 'x.ts', kind: 'update', added: 0, deleted: 0, diff }]);
  });
});

describe('recorded frames against the schema the installed codex prints', () => {
  let dir = '';
  const validators = new Map<string, ValidateFunction>();
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tether-codex-schema-'));
    execFileSync(codex, ['app-server', 'generate-json-schema', '--out', dir], { stdio: 'ignore' });
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    for (const name of [
      'ServerNotification',
      'ServerRequest',
      'ClientRequest',
      'ClientNotification',
      'CommandExecutionRequestApprovalResponse',
      'FileChangeRequestApprovalResponse',
      'ToolRequestUserInputResponse',
    ]) {
      validators.set(name, ajv.compile(JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8'))));
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const check = (name: string, value: unknown): void => {
    const validate = validators.get(name)!;
    if (!validate(value)) throw new Error(`${name} rejects ${JSON.stringify(value).slice(0, 300)}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
  };

  it('every notification and request Codex sent, and every request, notification and answer we sent', () => {
    const files = readdirSync(fixtures).filter((f) => f.endsWith('.jsonl'));
    expect(files.length).toBeGreaterThanOrEqual(10);
    let checked = 0;
    for (const file of files) {
      const lines = transcript(file.replace(/\.jsonl$/, ''));
      const asked = new Map<unknown, string>();
      for (const line of lines) {
        const out = line.out;
        if (out && typeof out.method === 'string') {
          const { emittedAtMs: _at, ...frame } = out;
          if (out.id !== undefined) {
            asked.set(out.id, out.method);
            check('ServerRequest', frame);
          } else {
            check('ServerNotification', frame);
          }
          checked += 1;
        }
        const sent = line.in;
        if (sent && typeof sent.method === 'string') {
          check(sent.id !== undefined ? 'ClientRequest' : 'ClientNotification', sent);
          checked += 1;
        } else if (sent && 'result' in sent) {
          const method = asked.get(sent.id);
          if (method === 'item/commandExecution/requestApproval') check('CommandExecutionRequestApprovalResponse', sent.result);
          if (method === 'item/fileChange/requestApproval') check('FileChangeRequestApprovalResponse', sent.result);
          if (method === 'item/tool/requestUserInput') check('ToolRequestUserInputResponse', sent.result);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});
