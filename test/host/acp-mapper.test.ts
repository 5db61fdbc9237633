// The ACP mapper against transcripts recorded from the real `gemini --acp` (0.61.0) by
// test/host/fixtures/gemini/record.ts, every recorded frame against the ACP JSON Schema the pinned
// SDK ships, and frames the recordings do not have (other agents' updates, unknown and malformed
// ones, plans, usage, elicitations, a permission request whose tool id is a fixed label).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import schema from '@agentclientprotocol/sdk/schema/v1/schema.json' with { type: 'json' };
import type { PromptResponse, RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { AcpMapper } from '../../src/host/providers/acp/mapper.ts';
import type { AcpAgentSpec } from '../../src/host/providers/acp/spec.ts';
import { geminiModelUsed, geminiSpec } from '../../src/host/providers/gemini/index.ts';
import type { ProviderOutput } from '../../src/host/providers/provider.ts';

const fixtures = path.join(import.meta.dirname, 'fixtures', 'gemini');
const gemini = geminiSpec({ clientVersion: '0.0.0' });

type Line = { meta?: unknown; out?: Record<string, any>; in?: Record<string, any> };

function transcript(name: string): Line[] {
  return readFileSync(path.join(fixtures, `${name}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

/**
 * Replays a transcript's Gemini side as the driver does: updates before the prompt went out only
 * feed the mapper; a permission request is decided by `decide`; the prompt's answer ends the turn.
 */
function replay(name: string, decide?: (requestId: string) => 'allow' | 'allow-always' | 'deny' | 'cancel') {
  const mapper = new AcpMapper(gemini);
  const outputs: ProviderOutput[] = [];
  const replies: RequestPermissionResponse[] = [];
  let promptId: unknown;
  for (const line of transcript(name)) {
    if (line.in?.method === 'session/prompt') {
      promptId = line.in.id;
      mapper.turnStarted();
    }
    const msg = line.out;
    if (!msg) continue;
    if (msg.method === 'session/update') {
      const out = mapper.update(msg.params);
      if (promptId !== undefined) outputs.push(...out);
    } else if (msg.method === 'session/request_permission') {
      const requestId = `r${String(msg.id)}`;
      const asked = mapper.permission(requestId, msg.params as RequestPermissionRequest);
      outputs.push(...asked.outputs);
      const decision = decide?.(requestId);
      if (decision === 'cancel') {
        for (const pending of mapper.cancelAll()) expect(pending).toEqual({ requestId, kind: 'permission' });
        replies.push({ outcome: { outcome: 'cancelled' } });
      } else if (decision) {
        const answer = mapper.permissionReply(requestId, decision)!;
        outputs.push(...answer.outputs);
        replies.push(answer.reply);
      }
    } else if (msg.id === promptId && promptId !== undefined) {
      outputs.push(...('error' in msg ? mapper.promptFailed(msg.error) : mapper.promptDone(msg.result as PromptResponse)));
    }
  }
  const recordedReplies = transcript(name)
    .filter((l) => l.in && l.in.method === undefined)
    .map((l) => l.in!.result);
  return { mapper, outputs, replies, recordedReplies };
}

const types = (outputs: ProviderOutput[]) => outputs.map((o) => o.type);
const texts = (outputs: ProviderOutput[], type: 'text' | 'thinking') =>
  outputs
    .filter((o): o is Extract<ProviderOutput, { type: typeof type }> => o.type === type)
    .map((o) => o.text)
    .join('');
const find = <T extends ProviderOutput['type']>(outputs: ProviderOutput[], type: T) =>
  outputs.filter((o): o is Extract<ProviderOutput, { type: T }> => o.type === type);

describe('the ACP mapper on recorded Gemini transcripts', () => {
  it("streams a thought and the reply, then the turn's tokens from _meta.quota, and ends the turn done", () => {
    const { outputs } = replay('text');
    expect(texts(outputs, 'thinking')).toBe('**Greeting**\nA greeting; answer briefly.');
    expect(texts(outputs, 'text')).toBe('Hello from the scripted Gemini.');
    expect(outputs.slice(-2)).toEqual([
      { type: 'usage', contextTokens: 1230 },
      { type: 'turn-end', state: 'done' },
    ]);
  });

  it('shows a call announced only in its permission request, approves it with the allow_once option, and ends it with its file change', () => {
    const { outputs, replies, recordedReplies } = replay('approval', () => 'allow');
    expect(replies).toEqual([{ outcome: { outcome: 'selected', optionId: 'proceed_once' } }]);
    expect(replies).toEqual(recordedReplies);
    const start = find(outputs, 'tool-start')[0]!;
    expect(start).toMatchObject({ name: 'Write', description: 'Writing to notes.txt', input: { content: 'first line\nsecond line\n' } });
    expect((start.input as { file_path: string }).file_path).toMatch(/\/notes\.txt$/);
    const approval = find(outputs, 'approval')[0]!;
    expect(approval).toMatchObject({
      toolUseId: start.toolUseId,
      toolName: 'Write',
      description: 'Writing to notes.txt',
      canAllowAlways: true,
      allowAlways: { label: 'Allow for this session' },
    });
    // The tool starts before its approval, so the approval card sits on a visible call.
    expect(types(outputs).indexOf('tool-start')).toBeLessThan(types(outputs).indexOf('approval'));
    const end = find(outputs, 'tool-end')[0]!;
    expect(end).toMatchObject({ toolUseId: start.toolUseId, error: false });
    expect(end.changes).toEqual([{ path: expect.stringMatching(/\/notes\.txt$/), kind: 'add', diff: '@@ -0,0 +1,2 @@\n+first line\n+second line\n' }]);
    expect(texts(outputs, 'text')).toBe('The write_file call finished.');
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
  });

  it('denies with the reject_once option and ends the refused call itself (Gemini says nothing more of it)', () => {
    const { outputs, replies, recordedReplies } = replay('deny', () => 'deny');
    expect(replies).toEqual([{ outcome: { outcome: 'selected', optionId: 'cancel' } }]);
    expect(replies).toEqual(recordedReplies);
    const start = find(outputs, 'tool-start')[0]!;
    expect(find(outputs, 'tool-end')).toEqual([{ type: 'tool-end', toolUseId: start.toolUseId, output: 'Denied', error: true }]);
    expect(texts(outputs, 'text')).toBe('Not touching it, then.');
  });

  it("allows a shell call for the session with the allow_always option; the command is the approval's subject", () => {
    const { outputs, replies, recordedReplies } = replay('shell', () => 'allow-always');
    expect(replies).toEqual([{ outcome: { outcome: 'selected', optionId: 'proceed_always' } }]);
    expect(replies).toEqual(recordedReplies);
    expect(find(outputs, 'approval')[0]).toMatchObject({ toolName: 'Bash', input: { command: 'echo built > build.txt' } });
    // Gemini's completed shell update carries no output.
    expect(find(outputs, 'tool-end')[0]).toMatchObject({ output: null, error: false });
  });

  it("answers a permission waiting at cancel as cancelled, and the prompt's cancelled stop ends the turn aborted", () => {
    const { outputs, replies, recordedReplies } = replay('cancel', () => 'cancel');
    expect(replies).toEqual([{ outcome: { outcome: 'cancelled' } }]);
    expect(replies).toEqual(recordedReplies);
    expect(outputs.at(-1)).toMatchObject({ type: 'turn-end', state: 'aborted' });
  });

  it('reads the model that answered from _meta.quota.model_usage (what -m auto routed to)', () => {
    const result = transcript('text').find((l) => l.out?.result?.stopReason)!.out!.result;
    expect(geminiModelUsed(result)).toBe('gemini-2.5-pro');
    expect(geminiModelUsed({ _meta: { quota: { model_usage: [{ model: 'gemini-3.5-flash' }, { model: 'gemini-3.1-pro-preview' }] } } })).toBe(
      'gemini-3.1-pro-preview',
    );
    expect(geminiModelUsed({})).toBeNull();
  });

  it("takes the JSON-RPC 429 as the turn's usage limit", () => {
    const { outputs } = replay('limit');
    expect(outputs).toEqual([{ type: 'turn-end', state: 'error', message: 'You have exhausted your daily quota on this model.', limit: { kind: 'usage' } }]);
  });

  it("leaves a loaded session's replayed history out of the turn", () => {
    const { outputs } = replay('load');
    expect(texts(outputs, 'text')).toBe('You said hello there before.');
    expect(texts(outputs, 'thinking')).toBe('');
  });

  it('records frames that follow the ACP schema of the pinned SDK', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false, logger: false });
    ajv.addSchema(schema as object, 'acp');
    const check = (def: string, value: unknown) => {
      const validate = ajv.getSchema(`acp#/$defs/${def}`)!;
      expect(validate(value), `${def}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value).slice(0, 300)}`).toBe(true);
    };
    let checked = 0;
    for (const file of readdirSync(fixtures).filter((f) => f.endsWith('.jsonl'))) {
      for (const line of transcript(file.replace(/\.jsonl$/, ''))) {
        const msg = line.out;
        if (!msg) continue;
        if (msg.method === 'session/update') check('SessionNotification', msg.params);
        else if (msg.method === 'session/request_permission') check('RequestPermissionRequest', msg.params);
        else if (msg.result?.stopReason) check('PromptResponse', msg.result);
        else continue;
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(30);
  });
});

/** A spec for frames no recording has: a generic agent. */
const generic: AcpAgentSpec = {
  ...gemini,
  name: 'Agent',
  quirks: {},
};

function feed(mapper: AcpMapper, ...updates: unknown[]): ProviderOutput[] {
  return updates.flatMap((update) => mapper.update({ sessionId: 's', update }));
}

describe('the ACP mapper on frames from other agents and from the future', () => {
  it('turns an unknown update, a malformed known one and a non-update into info notes, never throwing', () => {
    const mapper = new AcpMapper(generic);
    const outputs = [
      ...feed(
        mapper,
        { sessionUpdate: 'hologram_update', beams: 3 },
        { sessionUpdate: 'tool_call' },
        { sessionUpdate: 'agent_thought_chunk', content: { type: 'image', data: 'x' } },
        { sessionUpdate: 'plan', entries: 'soon' },
        { nothing: true },
      ),
      ...mapper.update(null),
      ...mapper.update('a string'),
    ];
    expect(outputs.every((o) => o.type === 'note' && o.level === 'info')).toBe(true);
    expect(outputs).toHaveLength(7);
    expect(outputs[0]).toMatchObject({ text: expect.stringContaining('hologram_update') });
    expect(mapper.malformed('not json {', 'not JSON')).toEqual([
      { type: 'note', level: 'info', text: 'Agent printed a line this host could not read (not JSON): not json {' },
    ]);
  });

  it('keeps the quiet updates quiet and the commands for the session', () => {
    const mapper = new AcpMapper(generic);
    expect(
      feed(
        mapper,
        { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'hi' } },
        { sessionUpdate: 'session_info_update', updatedAt: '2026-01-01T00:00:00Z' },
        { sessionUpdate: 'session_info_update', title: null },
        { sessionUpdate: 'session_info_update', title: '   ' },
        { sessionUpdate: 'config_option_update', configOptions: [] },
        {
          sessionUpdate: 'available_commands_update',
          availableCommands: [
            { name: 'memory', description: 'm' },
            { name: 'init', description: 'i' },
          ],
        },
      ),
    ).toEqual([]);
    expect(mapper.slashCommands).toEqual(['/memory', '/init']);
  });

  it("passes the session's title on as the agent's title for the chat", () => {
    expect(feed(new AcpMapper(generic), { sessionUpdate: 'session_info_update', title: 'Fix the flaky test', updatedAt: '2026-01-01T00:00:00Z' })).toEqual([
      { type: 'title', title: 'Fix the flaky test' },
    ]);
  });

  it('splits replies by messageId, and a tool call closes the reply before it', () => {
    const mapper = new AcpMapper(generic);
    expect(
      types(
        feed(
          mapper,
          { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: 'one' } },
          { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: ' more' } },
          { sessionUpdate: 'agent_message_chunk', messageId: 'm2', content: { type: 'text', text: 'two' } },
          { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'ls', kind: 'execute', status: 'in_progress', rawInput: { command: 'ls' } },
          { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'a\nb' } }] },
        ),
      ),
    ).toEqual(['text', 'text', 'text-end', 'text', 'text-end', 'tool-start', 'tool-end']);
  });

  it("maps a tool call's lifecycle: start once, output from content, a failure as an error, a diff as unified hunks", () => {
    const mapper = new AcpMapper(generic);
    const outputs = feed(
      mapper,
      { sessionUpdate: 'tool_call', toolCallId: 'e1', title: 'Edit a.txt', kind: 'edit', status: 'pending', locations: [{ path: '/w/a.txt' }] },
      { sessionUpdate: 'tool_call_update', toolCallId: 'e1', status: 'in_progress' },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'e1',
        status: 'completed',
        content: [{ type: 'diff', path: '/w/a.txt', oldText: 'one\ntwo\n', newText: 'one\nTWO\n' }],
      },
      { sessionUpdate: 'tool_call', toolCallId: 'x1', title: 'rm -rf /', kind: 'execute', status: 'failed', rawOutput: { error: 'refused' } },
      { sessionUpdate: 'tool_call_update', toolCallId: 'late', status: 'completed', title: 'Read b.txt', kind: 'read', locations: [{ path: '/w/b.txt' }] },
    );
    expect(outputs).toEqual([
      { type: 'tool-start', toolUseId: 'e1', name: 'Edit', input: { title: 'Edit a.txt', file_path: '/w/a.txt' }, description: 'Edit a.txt' },
      {
        type: 'tool-end',
        toolUseId: 'e1',
        output: null,
        error: false,
        changes: [{ path: '/w/a.txt', kind: 'update', diff: '@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n' }],
      },
      { type: 'tool-start', toolUseId: 'x1', name: 'Bash', input: { title: 'rm -rf /', command: 'rm -rf /' }, description: 'rm -rf /' },
      { type: 'tool-end', toolUseId: 'x1', output: '{"error":"refused"}', error: true },
      { type: 'tool-start', toolUseId: 'late', name: 'Read', input: { title: 'Read b.txt', file_path: '/w/b.txt' }, description: 'Read b.txt' },
      { type: 'tool-end', toolUseId: 'late', output: null, error: false },
    ]);
  });

  it("shows a plan as a to-do list, and usage_update as the context meter with the turn's cost", () => {
    const mapper = new AcpMapper(generic);
    feed(mapper, { sessionUpdate: 'usage_update', used: 10, size: 100, cost: { amount: 0.5, currency: 'USD' } });
    mapper.turnStarted();
    const outputs = feed(
      mapper,
      {
        sessionUpdate: 'plan',
        entries: [
          { content: 'Read', priority: 'high', status: 'completed' },
          { content: 'Write', priority: 'low', status: 'in_progress' },
        ],
      },
      { sessionUpdate: 'usage_update', used: 5000, size: 200000, cost: { amount: 0.75, currency: 'USD' } },
    );
    expect(outputs).toEqual([
      {
        type: 'tool-start',
        toolUseId: 'plan-1',
        name: 'TodoWrite',
        input: {
          todos: [
            { content: 'Read', status: 'completed', activeForm: 'Read', priority: 'high' },
            { content: 'Write', status: 'in_progress', activeForm: 'Write', priority: 'low' },
          ],
        },
      },
      { type: 'tool-end', toolUseId: 'plan-1', output: null },
      { type: 'usage', contextTokens: 5000, contextWindow: 200000 },
    ]);
    expect(mapper.promptDone({ stopReason: 'end_turn' })).toEqual([
      { type: 'usage', costUsd: 0.25 },
      { type: 'turn-end', state: 'done' },
    ]);
  });

  it('reports mode changes as runtime modes, notices as notes, and a finished compaction', () => {
    const mapper = new AcpMapper(generic);
    expect(
      feed(
        mapper,
        { sessionUpdate: 'current_mode_update', currentModeId: 'yolo' },
        { sessionUpdate: 'current_mode_update', currentModeId: 'brand-new' },
        { sessionUpdate: 'notice', severity: 'warning', title: 'Slow', description: 'The model is busy' },
        { sessionUpdate: 'compaction_update', compactionId: 'c', status: 'in_progress' },
        { sessionUpdate: 'compaction_update', compactionId: 'c', status: 'completed' },
      ),
    ).toEqual([
      { type: 'mode', permissionMode: 'yolo', effectiveRuntimeMode: 'full-access' },
      { type: 'mode', permissionMode: 'brand-new' },
      { type: 'note', level: 'warning', text: 'Slow: The model is busy' },
      { type: 'compaction', preTokens: null },
    ]);
  });

  it('answers by option kind only: reject_always when there is no reject_once, cancelled when nothing rejects, unknown kinds ignored', () => {
    const mapper = new AcpMapper(generic);
    const request = (options: Array<{ optionId: string; name: string; kind: string }>): RequestPermissionRequest =>
      ({ sessionId: 's', toolCall: { toolCallId: 'c1', title: 'ls', kind: 'execute' }, options }) as RequestPermissionRequest;
    const asked = mapper.permission(
      'p1',
      request([
        { optionId: 'zap', name: 'Teleport', kind: 'allow_forever' },
        { optionId: 'ok', name: 'Yes', kind: 'allow_once' },
        { optionId: 'never', name: 'Never', kind: 'reject_always' },
      ]),
    );
    expect(find(asked.outputs, 'approval')[0]).toMatchObject({ canAllowAlways: false });
    expect(mapper.permissionReply('p1', 'deny')!.reply).toEqual({ outcome: { outcome: 'selected', optionId: 'never' } });
    expect(mapper.permissionReply('p1', 'allow')).toBeNull();
    mapper.permission('p2', request([{ optionId: 'ok', name: 'Yes', kind: 'allow_once' }]));
    expect(mapper.permissionReply('p2', 'allow-always')!.reply).toEqual({ outcome: { outcome: 'selected', optionId: 'ok' } });
    mapper.permission('p3', request([{ optionId: 'ok', name: 'Yes', kind: 'allow_once' }]));
    expect(mapper.permissionReply('p3', 'deny')!.reply).toEqual({ outcome: { outcome: 'cancelled' } });
    // Nothing to allow with: answered cancelled at once, with a warning.
    const refused = mapper.permission('p4', request([{ optionId: 'no', name: 'No', kind: 'reject_once' }]));
    expect(refused.reply).toEqual({ outcome: { outcome: 'cancelled' } });
    expect(refused.outputs).toMatchObject([{ type: 'note', level: 'warning' }]);
  });

  it('lets a spec match a request whose tool id is a fixed label to the call it is about, or to none', () => {
    const mapper = new AcpMapper({
      ...generic,
      quirks: {
        matchPermission: (request, calls) => {
          if (request.toolCall.toolCallId !== 'shell-permission') return undefined;
          const pending = [...calls.values()].filter((c) => c.kind === 'execute' && !c.ended);
          return pending.length === 1 ? pending[0]!.toolCallId : null;
        },
      },
    });
    feed(mapper, { sessionUpdate: 'tool_call', toolCallId: 'call_7', title: 'make', kind: 'execute', status: 'pending', rawInput: { command: 'make' } });
    const options = [{ optionId: 'y', name: 'Allow', kind: 'allow_once' as const }];
    const matched = mapper.permission('p1', { sessionId: 's', toolCall: { toolCallId: 'shell-permission' }, options });
    expect(matched.outputs).toEqual([
      expect.objectContaining({ type: 'approval', toolUseId: 'call_7', toolName: 'Bash', input: expect.objectContaining({ command: 'make' }) }),
    ]);
    feed(mapper, { sessionUpdate: 'tool_call', toolCallId: 'call_8', title: 'make test', kind: 'execute', status: 'pending' });
    const ambiguous = mapper.permission('p2', { sessionId: 's', toolCall: { toolCallId: 'shell-permission', title: 'Run a command' }, options });
    expect(ambiguous.outputs).toEqual([expect.objectContaining({ type: 'approval', toolUseId: null, description: 'Run a command' })]);
    // No tool item was made up for the label.
    expect(ambiguous.outputs.some((o) => o.type === 'tool-start')).toBe(false);
  });

  it('turns a form elicitation into questions and the answers into typed content; a url one into continue or decline', () => {
    const mapper = new AcpMapper(generic);
    const asked = mapper.elicitation('e1', {
      mode: 'form',
      sessionId: 's',
      message: 'Set up the deploy',
      requestedSchema: {
        type: 'object',
        properties: {
          env: {
            type: 'string',
            title: 'Environment',
            oneOf: [
              { const: 'prod', title: 'Production' },
              { const: 'dev', title: 'Development' },
            ],
          },
          confirm: { type: 'boolean', title: 'Confirm' },
          replicas: { type: 'integer', title: 'Replicas', description: 'How many' },
          tags: { type: 'array', title: 'Tags', items: { type: 'string', enum: ['a', 'b'] } },
        },
      },
    });
    expect(asked.reply).toBeUndefined();
    expect(find(asked.outputs, 'question')[0]!.questions).toEqual([
      {
        id: 'env',
        header: 'Environment',
        question: 'Environment',
        choices: [
          { label: 'prod', description: 'Production' },
          { label: 'dev', description: 'Development' },
        ],
        multiSelect: false,
      },
      {
        id: 'confirm',
        header: 'Confirm',
        question: 'Confirm',
        choices: [
          { label: 'Yes', description: '' },
          { label: 'No', description: '' },
        ],
        multiSelect: false,
      },
      { id: 'replicas', header: 'Replicas', question: 'How many', choices: [], multiSelect: false },
      {
        id: 'tags',
        header: 'Tags',
        question: 'Tags',
        choices: [
          { label: 'a', description: '' },
          { label: 'b', description: '' },
        ],
        multiSelect: true,
      },
    ]);
    expect(mapper.elicitationReply('e1', { env: 'prod', confirm: 'Yes', replicas: '3', tags: 'a, b' })).toEqual({
      action: 'accept',
      content: { env: 'prod', confirm: true, replicas: 3, tags: ['a', 'b'] },
    });
    mapper.elicitation('e2', { mode: 'url', sessionId: 's', elicitationId: 'x', url: 'https://example.test/auth', message: 'Sign in' });
    expect(mapper.elicitationReply('e2', { url: 'Continue' })).toEqual({ action: 'accept' });
    mapper.elicitation('e3', { mode: 'form', sessionId: 's', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } });
    expect(mapper.elicitationReply('e3', null)).toEqual({ action: 'cancel' });
    expect(mapper.elicitation('e4', { mode: 'telepathy', message: '?' })).toMatchObject({ reply: { action: 'decline' } });
  });

  it('ends a turn by stop reason', () => {
    const mapper = new AcpMapper(generic);
    expect(mapper.promptDone({ stopReason: 'refusal' })).toEqual([{ type: 'turn-end', state: 'error', message: 'Agent refused to go on' }]);
    expect(types(mapper.promptDone({ stopReason: 'max_tokens' }))).toEqual(['note', 'turn-end']);
    expect(types(mapper.promptDone({ stopReason: 'thinking_too_hard' } as unknown as PromptResponse))).toEqual(['note', 'turn-end']);
    expect(mapper.promptFailed({ code: -32000, message: 'Authentication required' })).toEqual([
      { type: 'turn-end', state: 'error', message: 'Authentication required' },
    ]);
  });
});
