// The ACP driver (connection, mapper and driver together) against a scripted agent built on the
// SDK's agent side (test/host/fixtures/acp/agent.ts): what the real CLIs do not do on demand —
// updates from a newer protocol and junk lines, a burst of updates just before the prompt's answer,
// a crash mid-turn, an elicitation, a permission the agent withdraws, a cancel it ignores, a
// compliant session/load that replays history first.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcpSession } from '../../src/host/providers/acp/driver.ts';
import type { AcpAgentSpec } from '../../src/host/providers/acp/spec.ts';
import type { ProviderChatContext, ProviderOutput, TurnInput } from '../../src/host/providers/provider.ts';
import { CLI_PROFILES } from '../../src/host/providers/roster.ts';
import { tempDir, until } from './harness.ts';

const AGENT = path.join(import.meta.dirname, 'fixtures', 'acp', 'agent.ts');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let data: ReturnType<typeof tempDir>;
let log = '';

const spec = (): AcpAgentSpec => ({
  kind: 'copilot',
  name: 'Test agent',
  commandLine: () => ({ command: process.execPath, args: [AGENT], env: { ...process.env, AGENT_LOG: log } }),
  models: [{ slug: 'default', name: 'Default', legacy: false, isDefault: true, options: [] }],
  defaultModel: 'default',
  capabilities: CLI_PROFILES.copilot.capabilities,
  resumeCommand: 'agent --resume {id}',
  modes: { supervised: 'ask', 'auto-accept-edits': 'edits', auto: 'edits', 'full-access': 'all' },
  runtimeModeOf: (id) => (({ ask: 'supervised', edits: 'auto-accept-edits', all: 'full-access' }) as const)[id as 'ask'],
  quirks: { modelUsed: (response) => (typeof response._meta?.model === 'string' ? response._meta.model : null) },
});

const context = (overrides: Partial<ProviderChatContext> = {}): ProviderChatContext => ({
  chatId: 'c',
  cwd: data.dir,
  runtimeMode: 'auto-accept-edits',
  selection: { model: 'default', options: {} },
  agentSessionId: null,
  ...overrides,
});

let turns = 0;
/** Runs one turn; `react` sees every output as it comes (to answer requests). Resolves with all of them once the turn ended. */
function turn(session: AcpSession, text: string, react?: (output: ProviderOutput) => void, extra: Partial<TurnInput> = {}): Promise<ProviderOutput[]> {
  return new Promise((resolve) => {
    const outputs: ProviderOutput[] = [];
    session.startTurn({ turnId: `t${++turns}`, text, attachments: [], ...extra }, (output) => {
      outputs.push(output);
      react?.(output);
      if (output.type === 'turn-end') resolve(outputs);
    });
  });
}

/** Starts a turn whose end nobody waits for (it is interrupted); its outputs collect in the array. */
function started(session: AcpSession, text: string): ProviderOutput[] {
  const outputs: ProviderOutput[] = [];
  session.startTurn({ turnId: `t${++turns}`, text, attachments: [] }, (output) => outputs.push(output));
  return outputs;
}

const agentLog = (): Array<Record<string, any>> =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
const replyText = (outputs: ProviderOutput[]) =>
  outputs
    .filter((o) => o.type === 'text')
    .map((o) => (o.type === 'text' ? o.text : ''))
    .join('');
const of = <T extends ProviderOutput['type']>(outputs: ProviderOutput[], type: T) =>
  outputs.filter((o): o is Extract<ProviderOutput, { type: T }> => o.type === type);

let session: AcpSession;

beforeAll(() => {
  data = tempDir('tether-acp-');
  log = path.join(data.dir, 'agent.log');
  session = new AcpSession(spec(), context(), { clientVersion: '0.0.0' });
});

afterAll(async () => {
  await session?.kill();
  data?.cleanup();
});

describe('the ACP driver with a scripted SDK agent', () => {
  it("opens a session, sets the runtime mode as the agent's mode, and reports both", async () => {
    const outputs = await turn(session, 'hello');
    expect(outputs[0]).toEqual({
      type: 'session',
      agentSessionId: 'session-1',
      model: 'default',
      permissionMode: 'edits',
      effectiveRuntimeMode: 'auto-accept-edits',
    });
    expect(replyText(outputs)).toBe('echo: hello');
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
    expect(agentLog().map((l) => l.method)).toEqual(['initialize', 'session/new', 'session/set_mode', 'session/prompt']);
    const init = agentLog()[0]!.params;
    expect(init.clientCapabilities).toMatchObject({ fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } });
    expect(session.running).toBe(true);
  });

  it("applies every update sent before the prompt's answer before the turn ends", async () => {
    const outputs = await turn(session, 'burst');
    expect(replyText(outputs)).toBe(Array.from({ length: 200 }, (_, i) => `${i};`).join(''));
  });

  it('turns updates from a newer protocol, content it cannot show and junk lines into notes, and goes on', async () => {
    const outputs = await turn(session, 'future');
    const notes = of(outputs, 'note');
    expect(notes.map((n) => n.level)).toEqual(['info', 'info', 'info']);
    expect(notes.map((n) => n.text).join('\n')).toMatch(/hologram_update[\s\S]*video[\s\S]*this is not json/);
    expect(replyText(outputs)).toBe('still here');
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
  });

  it('sends an image inline when the agent takes images, and other files as links', async () => {
    await turn(session, 'look', undefined, {
      attachments: [
        { id: 'a1', name: 'dot.png', mime: 'image/png', path: '/tmp/dot.png', size: 68 },
        { id: 'a2', name: 'notes.md', mime: 'text/markdown', path: '/tmp/notes.md', size: 5 },
      ] as TurnInput['attachments'],
      images: [{ attachmentId: 'a1', path: '/tmp/dot.png', mime: 'image/png', data: PNG }],
    });
    expect(
      agentLog()
        .filter((l) => l.method === 'session/prompt')
        .at(-1)!.prompt,
    ).toEqual([
      { type: 'text', text: 'look' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource_link', uri: 'file:///tmp/notes.md', name: 'notes.md', mimeType: 'text/markdown' },
    ]);
  });

  it('answers an approval with the option of the kind the person chose', async () => {
    const outputs = await turn(session, 'permission', (output) => {
      if (output.type === 'approval') session.answerApproval(output.requestId, 'allow');
    });
    expect(of(outputs, 'approval')[0]).toMatchObject({ toolUseId: 'p1', toolName: 'Bash', input: { command: 'make' }, canAllowAlways: false });
    expect(of(outputs, 'tool-end')).toEqual([{ type: 'tool-end', toolUseId: 'p1', output: 'made', error: false }]);
    expect(
      agentLog()
        .filter((l) => l.method === 'permission-outcome')
        .at(-1)!.outcome,
    ).toEqual({ outcome: { outcome: 'selected', optionId: 'yes' } });
  });

  it('asks an elicitation as a question and sends the answer back as content', async () => {
    const outputs = await turn(session, 'elicit', (output) => {
      if (output.type === 'question') session.answerQuestion(output.requestId, { flavour: 'mint' });
    });
    expect(of(outputs, 'question')[0]!.questions).toEqual([
      {
        id: 'flavour',
        header: 'Flavour',
        question: 'Pick a flavour',
        choices: [
          { label: 'vanilla', description: '' },
          { label: 'mint', description: '' },
        ],
        multiSelect: false,
      },
    ]);
    expect(replyText(outputs)).toBe('elicitation: {"action":"accept","content":{"flavour":"mint"}}');
  });

  it('settles a permission the agent withdrew as cancelled', async () => {
    const outputs = await turn(session, 'withdraw');
    const approval = of(outputs, 'approval')[0]!;
    expect(of(outputs, 'request-cancelled')).toEqual([{ type: 'request-cancelled', requestId: approval.requestId }]);
    expect(replyText(outputs)).toBe('withdrawn: {"outcome":{"outcome":"cancelled"}}');
  });

  it('on a stop, sends session/cancel and answers the waiting permission cancelled; the next turn runs after the agent answered', async () => {
    const outputs = started(session, 'permission');
    await until(() => outputs.some((o) => o.type === 'approval'), 'the approval', 10_000);
    session.interrupt();
    await until(() => agentLog().some((l) => l.method === 'session/cancel'), 'the cancel', 10_000);
    await until(
      () =>
        agentLog()
          .filter((l) => l.method === 'permission-outcome')
          .at(-1)?.outcome.outcome.outcome === 'cancelled',
      'the cancelled outcome',
      10_000,
    );
    expect(outputs.some((o) => o.type === 'turn-end')).toBe(false);
    const next = await turn(session, 'hello again');
    expect(replyText(next)).toBe('echo: hello again');
  });

  it('a crash mid-turn ends the turn with the exit and stderr; the next turn starts a process that loads the session, its replay left out', async () => {
    const outputs = await turn(session, 'crash');
    expect(replyText(outputs)).toBe('about to fall over');
    expect(outputs.at(-1)).toMatchObject({
      type: 'turn-end',
      state: 'error',
      message: expect.stringMatching(/Test agent exited \(code 3\)[\s\S]*out of cheese/),
    });
    const next = await turn(session, 'after the fall');
    expect(
      agentLog()
        .filter((l) => l.method === 'session/load')
        .at(-1),
    ).toEqual({ method: 'session/load', sessionId: 'session-1' });
    expect(replyText(next), JSON.stringify(next)).toBe('echo: after the fall');
    expect(next[0]).toMatchObject({ type: 'session', agentSessionId: 'session-1' });
  });

  it('replaces an agent that ignores a cancel: the next turn loads the session in a new process', async () => {
    const outputs = started(session, 'ignore cancel');
    await until(() => outputs.some((o) => o.type === 'tool-start'), 'the slow tool', 10_000);
    session.interrupt();
    const loads = agentLog().filter((l) => l.method === 'session/load').length;
    const next = await turn(session, 'after the hang');
    expect(replyText(next)).toBe('echo: after the hang');
    expect(agentLog().filter((l) => l.method === 'session/load')).toHaveLength(loads + 1);
  }, 20_000);

  it('reports the model that really answered when the agent says, before the turn ends', async () => {
    const outputs = await turn(session, 'routed');
    expect(outputs.slice(-2)).toEqual([
      { type: 'session', agentSessionId: 'session-1', model: 'big-model', permissionMode: 'edits', effectiveRuntimeMode: 'auto-accept-edits' },
      { type: 'turn-end', state: 'done' },
    ]);
  });

  it("an error answer to the prompt ends the turn in error with the agent's message", async () => {
    const outputs = await turn(session, 'refuse');
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'error', message: 'Authentication required' });
  });

  it('a session the agent cannot load is said in a note, and the turn runs in a new one', async () => {
    const other = new AcpSession(spec(), context({ agentSessionId: 'gone' }), { clientVersion: '0.0.0' });
    try {
      const outputs = await turn(other, 'hello');
      expect(outputs[0]).toEqual({
        type: 'note',
        level: 'warning',
        text: 'Test agent could not continue its session gone (Resource not found: gone); this turn starts a new one',
      });
      expect(outputs[1]).toMatchObject({ type: 'session', agentSessionId: expect.stringMatching(/^session-\d+$/) });
      expect(replyText(outputs)).toBe('echo: hello');
    } finally {
      await other.kill();
    }
  });

  it('kill ends the process', async () => {
    await session.kill();
    expect(session.running).toBe(false);
  });
});
