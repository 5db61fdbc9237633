// Copilot's ACP frames, recorded from the real binary (test/host/fixtures/copilot/record.ts), through
// the ACP mapper with Copilot's spec and the CopilotReader, as the driver hands them on. The two
// defects other Copilot builds have (github/copilot-cli#989: permission requests that name a fixed
// label instead of the tool call; #4537: tools run without asking) do not show in 1.0.102, so they
// are played by changing the recorded frames exactly that way.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeMode } from '../../src/contracts/index.ts';
import { AcpMapper } from '../../src/host/providers/acp/mapper.ts';
import { copilotSpec } from '../../src/host/providers/copilot/index.ts';
import { matchPermission, subjectOf } from '../../src/host/providers/copilot/permissions.ts';
import { CopilotReader } from '../../src/host/providers/copilot/session.ts';
import type { ProviderOutput } from '../../src/host/providers/provider.ts';
import { GREETING, THOUGHT } from './fixtures/copilot/scenario.ts';

const fixtures = path.join(import.meta.dirname, 'fixtures', 'copilot');

type Frame = Record<string, any>;
type Line = { meta?: Frame; out?: Frame; in?: Frame; files?: Record<string, string> };

function transcript(name: string): Line[] {
  return readFileSync(path.join(fixtures, `${name}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

type Decision = 'allow' | 'allow-always' | 'deny';
const DECISIONS: Record<string, Decision> = { allow_once: 'allow', allow_always: 'allow-always', reject_once: 'deny' };

/**
 * Replays a transcript as the driver would: updates while the prompt is out reach the chat, each
 * permission request becomes an approval answered as the recording answered it, a cancel answers
 * every waiting request. Answers the outputs, the answers given, and the answers recorded.
 */
function replay(lines: Line[], runtimeMode: RuntimeMode = 'supervised', reader = new CopilotReader(runtimeMode)) {
  const mapper = new AcpMapper(copilotSpec({ clientVersion: '0.0.0' }));
  const outputs: ProviderOutput[] = [];
  const emit = reader.turn((output) => outputs.push(output));
  const given: Frame[] = [];
  const recorded: Frame[] = [];
  const cancelled: string[] = [];
  let prompt: number | null = null;
  for (const line of lines) {
    const sent = line.in;
    if (sent?.method === 'session/prompt') {
      prompt = sent.id;
      mapper.turnStarted();
    } else if (sent?.method === 'session/cancel') {
      cancelled.push(...mapper.cancelAll().map((r) => r.requestId));
    } else if (sent && sent.method === undefined && sent.result?.outcome?.optionId) {
      recorded.push(sent);
      const decision = DECISIONS[sent.result.outcome.optionId]!;
      const answer = mapper.permissionReply(`rpc-${sent.id}`, decision)!;
      reader.answered(`rpc-${sent.id}`, decision);
      given.push({ jsonrpc: '2.0', id: sent.id, result: answer.reply });
      answer.outputs.forEach(emit);
    }
    const message = line.out;
    if (!message) continue;
    if (message.method === 'session/update') {
      const mapped = mapper.update(message.params);
      if (prompt !== null) mapped.forEach(emit);
    } else if (message.method === 'session/request_permission') {
      const { outputs: asked, reply } = mapper.permission(`rpc-${message.id}`, message.params);
      expect(reply).toBeUndefined();
      asked.forEach(emit);
    } else if (message.id === prompt && message.result) {
      mapper.promptDone(message.result).forEach(emit);
    }
  }
  return { outputs, given, recorded, cancelled };
}

const of = <T extends ProviderOutput['type']>(outputs: ProviderOutput[], type: T) =>
  outputs.filter((o): o is Extract<ProviderOutput, { type: T }> => o.type === type);
const text = (outputs: ProviderOutput[], type: 'text' | 'thinking') =>
  of(outputs, type)
    .map((o) => o.text)
    .join('');
const warnings = (outputs: ProviderOutput[]) =>
  of(outputs, 'note')
    .filter((n) => n.level === 'warning')
    .map((n) => n.text);

/** The recorded frames with every permission request's `toolCall.toolCallId` set to a fixed label (#989). */
function labelled(lines: Line[], label: string): Line[] {
  return lines.map((line) =>
    line.out?.method === 'session/request_permission'
      ? { out: { ...line.out, params: { ...line.out.params, toolCall: { ...line.out.params.toolCall, toolCallId: label } } } }
      : line,
  );
}

/** The recorded frames as a build that never asks would send them (#4537): no request, no answer. */
function unasked(lines: Line[]): Line[] {
  const asked = new Set(lines.filter((l) => l.out?.method === 'session/request_permission').map((l) => l.out!.id));
  return lines.filter((l) => l.out?.method !== 'session/request_permission' && !(l.in && l.in.method === undefined && asked.has(l.in.id)));
}

describe('the Copilot frames through the ACP mapper', () => {
  it('a text turn: the thought, the reply, the context against its window, done', () => {
    const { outputs } = replay(transcript('text'));
    expect(text(outputs, 'thinking')).toBe(THOUGHT);
    expect(text(outputs, 'text')).toBe(GREETING);
    expect(of(outputs, 'usage').at(-1)).toEqual({ type: 'usage', contextTokens: expect.any(Number), contextWindow: 168000 });
    expect(of(outputs, 'title'), "Copilot's own title for the session").toEqual([{ type: 'title', title: 'hello there' }]);
    expect(of(outputs, 'note')).toEqual([]);
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
  });

  it('a shell call that needs permission: the approval is on its tool, answered by option kind exactly as recorded, and the tool ends with its output', () => {
    const { outputs, given, recorded } = replay(transcript('approval'));
    const [start] = of(outputs, 'tool-start');
    expect(start).toMatchObject({ name: 'Bash', input: { command: 'echo built > build.txt' }, description: 'Run the build' });
    expect(of(outputs, 'approval')).toEqual([
      expect.objectContaining({
        toolUseId: start!.toolUseId,
        toolName: 'Bash',
        canAllowAlways: true,
        input: expect.objectContaining({ command: 'echo built > build.txt' }),
      }),
    ]);
    expect(given).toEqual(recorded);
    expect(of(outputs, 'tool-end')).toEqual([
      expect.objectContaining({ toolUseId: start!.toolUseId, error: false, output: expect.stringContaining('exit code 0') }),
    ]);
    expect(warnings(outputs)).toEqual([]);
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
  });

  it('a denied shell call answers reject_once and ends its tool in error', () => {
    const { outputs, given, recorded } = replay(transcript('deny'));
    expect(given).toEqual(recorded);
    expect(recorded[0]!.result.outcome.optionId).toBe('reject_once');
    const ends = of(outputs, 'tool-end');
    expect(ends.every((e) => e.error)).toBe(true);
    expect(ends.at(-1)!.output).toBe('The user rejected this tool call.');
    expect(warnings(outputs)).toEqual([]);
    // Copilot's own line about it, sent as reply text, is a note; the reply is the model's words only.
    expect(text(outputs, 'text')).toBe('Running the build.');
    expect(of(outputs, 'note')).toEqual([{ type: 'note', level: 'info', text: 'Operation cancelled by user' }]);
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
  });

  it("file edits: a created file and an edit carry the hunks of Copilot's git diff, not its snippet", () => {
    const lines = transcript('edit');
    const { outputs, given, recorded } = replay(lines);
    expect(given).toEqual(recorded);
    expect(of(outputs, 'tool-start').map((s) => s.name)).toEqual(['Write', 'Edit']);
    const [created, edited] = of(outputs, 'tool-end');
    const file = (created!.changes ?? [])[0]!.path;
    expect(file.endsWith('/notes.md') && path.isAbsolute(file)).toBe(true);
    expect(created).toMatchObject({
      error: false,
      output: expect.stringMatching(/^Created file .*notes\.md with 12 characters$/),
      changes: [{ path: file, kind: 'add', diff: '@@ -1,0 +1,1 @@\n+first notes\n' }],
    });
    expect(edited).toMatchObject({ error: false, changes: [{ path: file, kind: 'update', diff: '@@ -1,2 +1,2 @@\n-first notes\n+second notes\n \n' }] });
    expect(text(outputs, 'text')).toBe('Notes written.');
    expect(of(outputs, 'note')).toEqual([{ type: 'note', level: 'info', text: file }]);
    // What the edits really left behind, as the recording saw the folder.
    expect(lines.at(-1)!.files).toEqual({ 'notes.md': 'second notes\n' });
  });

  it('a tool Copilot runs without asking (a read in the work folder) still shows as a tool, and is no cause for a warning', () => {
    const { outputs } = replay(transcript('unasked'));
    expect(of(outputs, 'approval')).toEqual([]);
    const [start] = of(outputs, 'tool-start');
    expect(start).toMatchObject({ name: 'Read' });
    expect(of(outputs, 'tool-end')).toEqual([expect.objectContaining({ toolUseId: start!.toolUseId, error: false })]);
    expect(warnings(outputs)).toEqual([]);
  });

  it('two shell calls asked at once: each approval on its own tool, each answer under its own request', () => {
    const { outputs, given, recorded } = replay(transcript('parallel'));
    const starts = of(outputs, 'tool-start');
    expect(of(outputs, 'approval').map((a) => [a.toolUseId, (a.input as { command: string }).command])).toEqual(
      starts.map((s) => [s.toolUseId, (s.input as { command: string }).command]),
    );
    expect(new Set(of(outputs, 'approval').map((a) => a.requestId)).size).toBe(2);
    expect(given).toEqual(recorded);
  });

  it('a cancel with a permission waiting: the request is cancelled, the prompt ends cancelled, the turn aborted', () => {
    const lines = transcript('cancel');
    const { outputs, cancelled } = replay(lines);
    expect(cancelled).toEqual(of(outputs, 'approval').map((a) => a.requestId));
    expect(lines.find((l) => l.in?.result?.outcome)!.in!.result).toEqual({ outcome: { outcome: 'cancelled' } });
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'aborted', message: 'Copilot CLI stopped the turn' });
  });
});

describe("Copilot's permission defects, played on the recorded frames", () => {
  it('requests named by a fixed label are matched to their calls by what they ask, never to a made-up tool', () => {
    const { outputs, given, recorded } = replay(labelled(transcript('parallel'), 'shell-permission'));
    const starts = of(outputs, 'tool-start');
    expect(starts.map((s) => s.toolUseId)).not.toContain('shell-permission');
    expect(of(outputs, 'approval').map((a) => a.toolUseId)).toEqual(starts.map((s) => s.toolUseId));
    expect(given).toEqual(recorded);
    expect(warnings(outputs)).toEqual([]);
  });

  it('a fixed label that two waiting calls could both be: shown apart with its own content, said so, and nobody warned of the run', () => {
    // Both calls run the same command, so nothing can tell which one a request is about.
    const same = transcript('parallel').map((line) => JSON.parse(JSON.stringify(line).replaceAll('echo two > two.txt', 'echo one > one.txt')) as Line);
    const { outputs, given, recorded } = replay(labelled(same, 'shell-permission'));
    const approvals = of(outputs, 'approval');
    expect(approvals.map((a) => a.toolUseId)).toEqual([null, null]);
    expect(approvals.map((a) => a.input)).toEqual([
      expect.objectContaining({ command: 'echo one > one.txt', commands: ['echo one > one.txt'] }),
      expect.objectContaining({ command: 'echo one > one.txt' }),
    ]);
    expect(warnings(outputs)).toEqual([expect.stringContaining('did not say which tool call'), expect.stringContaining('did not say which tool call')]);
    // Each decision still goes back under its own request; the two tools show and end.
    expect(given).toEqual(recorded);
    expect(of(outputs, 'tool-start').map((s) => s.toolUseId)).not.toContain('shell-permission');
    expect(of(outputs, 'tool-end').map((e) => e.error)).toEqual([false, false]);
  });

  it('a build that runs a shell command without asking: the tool shows, with a warning in a chat that asks first', () => {
    const { outputs } = replay(unasked(transcript('approval')));
    expect(of(outputs, 'approval')).toEqual([]);
    expect(of(outputs, 'tool-end')).toEqual([expect.objectContaining({ error: false })]);
    expect(warnings(outputs)).toEqual(['Copilot ran a shell command (echo built > build.txt) without asking, though this chat asks first. Check what it did.']);
    // Allowed to anyway: full access, or the person allowed shell commands always earlier on.
    expect(warnings(replay(unasked(transcript('approval')), 'full-access').outputs)).toEqual([]);
    const reader = new CopilotReader('supervised');
    const always = transcript('approval').map((line) =>
      line.in?.result?.outcome ? { in: { ...line.in, result: { outcome: { outcome: 'selected', optionId: 'allow_always' } } } } : line,
    );
    expect(replay(always, 'supervised', reader).given[0]!.result.outcome.optionId).toBe('allow_always');
    expect(warnings(replay(unasked(transcript('approval')), 'supervised', reader).outputs)).toEqual([]);
  });

  it('an edit run without asking warns only where edits are asked for', () => {
    expect(warnings(replay(unasked(transcript('edit')), 'supervised').outputs)).toHaveLength(2);
    expect(warnings(replay(unasked(transcript('edit')), 'auto-accept-edits').outputs)).toEqual([]);
  });

  it('matches on the subject Copilot words differently in a call and its request', () => {
    expect(subjectOf('execute', { command: 'ls', description: 'list' }, undefined)).toBe(subjectOf('execute', { command: 'ls', commands: ['ls'] }, undefined));
    expect(subjectOf('edit', { path: '/w/a.md', file_text: 'x' }, [{ path: '/w/a.md' }])).toBe(
      subjectOf('edit', { fileName: '/w/a.md', diff: '…' }, [{ path: '/w/a.md' }]),
    );
    expect(subjectOf('execute', {}, undefined)).toBeNull();
    // An id this turn never announced that is not a label: the request announces its own call.
    expect(
      matchPermission({ sessionId: 's', options: [], toolCall: { toolCallId: 'call_7', kind: 'execute', rawInput: { command: 'ls' } } }, new Map()),
    ).toBeUndefined();
    expect(
      matchPermission(
        { sessionId: 's', options: [], toolCall: { toolCallId: 'write-permission', kind: 'edit', rawInput: { fileName: '/w/a.md' } } },
        new Map(),
      ),
    ).toBeNull();
  });
});

describe('what Copilot sends that this host does not know', () => {
  it('becomes notes, never an exception', () => {
    const mapper = new AcpMapper(copilotSpec({ clientVersion: '0.0.0' }));
    mapper.turnStarted();
    const odd = [
      { sessionId: 's', update: { sessionUpdate: 'hologram_update', beams: 3 } },
      { sessionId: 's', update: { kind: 'no sessionUpdate' } },
      { sessionId: 's', update: { sessionUpdate: 'tool_call', title: 'no id' } },
      { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'audio', data: '' } } },
      { sessionId: 's', update: { sessionUpdate: 'plan', entries: 'not a list' } },
      null,
      'a string',
    ];
    const outputs = odd.flatMap((params) => mapper.update(params));
    expect(outputs.map((o) => o.type)).toEqual(odd.map(() => 'note'));
    expect(outputs[0]).toMatchObject({ level: 'info', text: expect.stringContaining('hologram_update') });
    expect(mapper.malformed('{not json', 'not JSON')).toEqual([expect.objectContaining({ type: 'note', level: 'info' })]);
  });

  it("the mode: Copilot's ACP mode with what its launch flags allow, as the runtime mode it really is", () => {
    const session = { type: 'session', agentSessionId: 's', permissionMode: 'https://agentclientprotocol.com/protocol/session-modes#agent' } as const;
    const seen = (mode: RuntimeMode) => {
      const out: ProviderOutput[] = [];
      new CopilotReader(mode).turn((o) => out.push(o))(session);
      return out[0];
    };
    expect(seen('supervised')).toMatchObject({ permissionMode: 'agent, ask', effectiveRuntimeMode: 'supervised' });
    expect(seen('auto')).toMatchObject({ permissionMode: 'agent, allow-tool=write', effectiveRuntimeMode: 'auto-accept-edits' });
    expect(seen('full-access')).toMatchObject({ permissionMode: 'agent, allow-all', effectiveRuntimeMode: 'full-access' });
    // Autopilot allows everything whatever the flags.
    const out: ProviderOutput[] = [];
    new CopilotReader('supervised').turn((o) => out.push(o))({
      type: 'mode',
      permissionMode: 'https://agentclientprotocol.com/protocol/session-modes#autopilot',
      effectiveRuntimeMode: 'full-access',
    });
    expect(out).toEqual([{ type: 'mode', permissionMode: 'autopilot', effectiveRuntimeMode: 'full-access' }]);
  });

  it('a session refused for want of a sign-in (1.0.102 answers session/new "Authentication required") says how to give it one', () => {
    const out: ProviderOutput[] = [];
    new CopilotReader('supervised').turn((o) => out.push(o))({
      type: 'turn-end',
      state: 'error',
      message: 'Copilot CLI could not start the turn: Authentication required',
    });
    expect(out).toEqual([
      { type: 'note', level: 'warning', text: expect.stringContaining('COPILOT_PROVIDER_BASE_URL') },
      { type: 'turn-end', state: 'error', message: 'Copilot CLI could not start the turn: Authentication required' },
    ]);
  });
});
