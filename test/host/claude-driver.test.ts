// The Claude Code driver with the real `claude` binary (the pinned devDependency) against the
// scripted model server on loopback: one process kept across turns, approvals and questions
// answered over the control channel, an interrupt mid-tool, images as content blocks, resume and
// fork by session id.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import type { ProviderOutput, ProviderSession } from '../../src/host/providers/provider.ts';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { toolResults } from '../support/anthropic-server.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { CLAUDE_BIN, COMPACT_SUMMARY, startScenario } from './claude-scenario.ts';
import { lastUserText } from '../support/anthropic-server.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

let server: AnthropicServer;
let provider: ClaudeProvider;
let cwd: string;
const sessions: ProviderSession[] = [];

beforeAll(async () => {
  const scenario = await startScenario();
  server = scenario.server;
  provider = new ClaudeProvider({ command: CLAUDE_BIN, env: scenario.env });
  cwd = mkdtempSync(path.join(tmpdir(), 'tether-claude-cwd-'));
});

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.kill()));
  await server?.close();
});

function open(agentSessionId: string | null = null, forkSession = false): ProviderSession {
  const session = provider.open({
    chatId: 'c1',
    cwd,
    runtimeMode: 'supervised',
    selection: provider.normalizeSelection(undefined),
    agentSessionId,
    forkSession,
  });
  sessions.push(session);
  return session;
}

/** A turn's outputs as they come, and a wait for one that matches. */
class TurnOutputs {
  readonly outputs: ProviderOutput[] = [];
  private waiters: Array<{ test: (o: ProviderOutput) => boolean; resolve: (o: ProviderOutput) => void }> = [];

  readonly emit = (output: ProviderOutput): void => {
    this.outputs.push(output);
    this.waiters = this.waiters.filter((w) => (w.test(output) ? (w.resolve(output), false) : true));
  };

  waitFor<T extends ProviderOutput['type']>(type: T): Promise<Extract<ProviderOutput, { type: T }>> {
    const seen = this.outputs.find((o) => o.type === type);
    if (seen) return Promise.resolve(seen as Extract<ProviderOutput, { type: T }>);
    return new Promise((resolve) => this.waiters.push({ test: (o) => o.type === type, resolve: resolve as (o: ProviderOutput) => void }));
  }

  of<T extends ProviderOutput['type']>(type: T): Extract<ProviderOutput, { type: T }>[] {
    return this.outputs.filter((o): o is Extract<ProviderOutput, { type: T }> => o.type === type);
  }
}

function turn(session: ProviderSession, text: string, attachments: Parameters<ProviderSession['startTurn']>[0]['attachments'] = []): TurnOutputs {
  const outputs = new TurnOutputs();
  session.startTurn({ turnId: `t-${Math.random()}`, text, attachments }, outputs.emit);
  return outputs;
}

// Each process start of the real CLI takes a second or more on a busy machine.
describe('Claude Code driver with the real CLI', { timeout: 60_000 }, () => {
  let session: ProviderSession;
  let sessionId = '';

  it('runs a turn: session, thinking, text, cost and context, done; the process stays for the next', async () => {
    session = open();
    const first = turn(session, 'KW-HELLO');
    expect(await first.waitFor('turn-end')).toEqual({ type: 'turn-end', state: 'done' });
    const [announced] = first.of('session');
    expect(announced).toMatchObject({ permissionMode: 'default', effectiveRuntimeMode: 'supervised' });
    sessionId = announced.agentSessionId;
    expect(
      first
        .of('thinking')
        .map((o) => o.text)
        .join(''),
    ).toBe('The user greets me; I answer briefly.');
    expect(
      first
        .of('text')
        .map((o) => o.text)
        .join(''),
    ).toBe('Hello! How can I help today?');
    // `--model opus` runs the 200k-context Opus; the context is the last request's input, cache and output.
    expect(first.of('usage')[0]).toMatchObject({ contextTokens: 2030, contextWindow: 200_000 });
    expect(first.of('usage')[0].costUsd).toBeGreaterThan(0);
    expect(session.running).toBe(true);
  });

  it('asks for approval; allow runs the real tool', async () => {
    const outputs = turn(session, 'KW-APPROVE');
    const approval = await outputs.waitFor('approval');
    expect(approval).toMatchObject({ toolName: 'Bash', canAllowAlways: true });
    session.answerApproval(approval.requestId, 'allow');
    expect(await outputs.waitFor('turn-end')).toEqual({ type: 'turn-end', state: 'done' });
    expect(outputs.of('tool-end')[0]).toMatchObject({ error: false });
    expect(existsSync(path.join(cwd, 'probe', 'stamp.txt'))).toBe(true);
  });

  it('a denial reaches the model with its reason', async () => {
    writeFileSync(path.join(cwd, 'probe', 'stamp.txt'), 'kept');
    const outputs = turn(session, 'KW-APPROVE again');
    const approval = await outputs.waitFor('approval');
    session.answerApproval(approval.requestId, 'deny', 'Not on a Friday');
    await outputs.waitFor('turn-end');
    expect(outputs.of('tool-end')[0]).toMatchObject({ error: true });
    const refused = server.conversation.flatMap((r) => [...toolResults(r).values()]).find((r) => r.isError);
    expect(refused?.text).toContain('Not on a Friday');
  });

  it('a question is answered back by question text', async () => {
    const outputs = turn(session, 'KW-QUESTION');
    const question = await outputs.waitFor('question');
    expect(question.questions[0]).toMatchObject({ id: 'q1', question: 'Which color?' });
    session.answerQuestion(question.requestId, { q1: 'Blue' });
    await outputs.waitFor('turn-end');
    expect(
      outputs
        .of('text')
        .map((o) => o.text)
        .join(''),
    ).toContain('"Which color?"="Blue"');
  });

  it('an interrupt mid-tool leaves nothing of that turn for the next one', async () => {
    const sleeping = turn(session, 'KW-SLEEP');
    await sleeping.waitFor('tool-start');
    session.interrupt();
    const next = turn(session, 'KW-HELLO');
    expect(await next.waitFor('turn-end')).toEqual({ type: 'turn-end', state: 'done' });
    expect(next.of('tool-end')).toEqual([]);
    expect(
      next
        .of('text')
        .map((o) => o.text)
        .join(''),
    ).toBe('Hello! How can I help today?');
    expect(sleeping.of('turn-end')).toEqual([]);
  });

  it('hands an image to the CLI as an image block', async () => {
    const file = path.join(cwd, 'dot.png');
    // A 1×1 PNG.
    writeFileSync(file, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'));
    const outputs = turn(session, 'KW-IMAGE', [{ id: 'a1', name: 'dot.png', mime: 'image/png', size: 70, path: file }]);
    await outputs.waitFor('turn-end');
    expect(
      outputs
        .of('text')
        .map((o) => o.text)
        .join(''),
    ).toBe('I see an image.');
    const image = server.conversation
      .at(-1)!
      .body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .find((b) => b.type === 'image');
    expect(image).toMatchObject({ source: { type: 'base64', media_type: 'image/png' } });
  });

  it('resumes the conversation by session id in a new process, and forks it under a new id', async () => {
    await session.kill();
    expect(session.running).toBe(false);
    const resumed = open(sessionId);
    const again = turn(resumed, 'KW-HELLO');
    await again.waitFor('turn-end');
    expect(again.of('session')[0].agentSessionId).toBe(sessionId);
    // The model saw the earlier turns.
    expect(server.conversation.at(-1)!.body.messages.length).toBeGreaterThan(4);
    await resumed.kill();

    const forked = open(sessionId, true);
    const branch = turn(forked, 'KW-HELLO');
    await branch.waitFor('turn-end');
    const forkId = branch.of('session')[0].agentSessionId;
    expect(forkId).not.toBe(sessionId);
    // Once forked, a new process resumes the fork, not the original.
    const second = turn(forked, 'KW-HELLO');
    await second.waitFor('turn-end');
    expect(second.of('session')[0].agentSessionId).toBe(forkId);
  });

  it('lists itself with its version and models', () => {
    const info = provider.info();
    expect(info).toMatchObject({ kind: 'claude', installed: true, version: '2.1.197', defaultModel: 'opus' });
    expect(provider.normalizeSelection({ model: 'claude-sonnet-5', options: { effort: 'turbo', extra: true } })).toEqual({
      model: 'sonnet',
      options: { effort: 'high' },
    });
    expect(new ClaudeProvider({ command: '/nonexistent/claude' }).info()).toMatchObject({ installed: false, version: null, models: [] });
  });

  it('forks at the last turn by continuing the session id (the driver branches it), and refuses an earlier turn', async () => {
    await expect(provider.fork({ agentSessionId: 's-1', cwd, turnId: 't-9', latest: true })).resolves.toBe('s-1');
    await expect(provider.fork({ agentSessionId: 's-1', cwd, turnId: 't-2', latest: false })).rejects.toMatchObject({ code: 'chat-unsupported' });
  });
});

// `chat.compact` through the runtime: Claude Code's own `/compact`, its summary request answered by the
// scripted model, and its `compact_boundary` as the compaction item the client holds.
describe('Claude Code through the host: compaction, and a CLI that dies', { timeout: 60_000 }, () => {
  let data: ReturnType<typeof tempDir>;
  let core: HostCore;
  let client: TestClient;

  beforeAll(async () => {
    data = tempDir('tether-claude-compact-');
    core = await openCore(data.dir, { providers: [provider], policy: new HostPolicy({ home: data.dir }) });
    client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'k', cwd: data.dir, runtimeMode: 'supervised' });
    await client.attach('k');
  });

  afterAll(async () => {
    await core?.close();
    data?.cleanup();
  });

  const thread = () => client.threads.get('k')!;
  const settled = (turnId: string) => {
    const turn = thread().get(turnId);
    return turn?.kind === 'turn' && turn.state !== 'running';
  };

  it('an empty chat has nothing to fold and starts no CLI', async () => {
    expect(await client.ok('chat.compact', { chatId: 'k' })).toEqual({});
    expect(thread().items).toEqual([]);
    expect(core.session('k').info.running).toBe(false);
  });

  it('folds the conversation as the CLI does; the client holds the compaction in a turn of its own', async () => {
    for (const text of ['KW-HELLO', 'KW-HELLO again']) {
      const { turnId } = await client.ok('chat.send', { chatId: 'k', text });
      await until(() => settled(turnId), text, 30_000);
    }
    const asked = server.requests.length;
    expect(await client.ok('chat.compact', { chatId: 'k' })).toEqual({});
    // A send while it folds waits behind it.
    const after = await client.ok('chat.send', { chatId: 'k', text: 'KW-HELLO after' });
    expect(after).toMatchObject({ queued: true });
    await until(() => thread().items.some((i) => i.kind === 'turn' && i.label === 'Compact' && i.state !== 'running'), 'the compaction turn', 30_000);
    const turn = thread().items.find((i) => i.kind === 'turn' && i.label === 'Compact')!;
    expect(turn).toMatchObject({ state: 'done' });
    const compaction = thread().items.find((i) => i.kind === 'compaction');
    expect(compaction).toMatchObject({ turnId: turn.id });
    expect(compaction?.kind === 'compaction' && compaction.preTokens).toBeGreaterThan(0);
    // No user message for it, and the context meter starts again.
    expect(thread().items.filter((i) => i.kind === 'user' && i.turnId === turn.id)).toEqual([]);
    // The model was asked for the summary, and the queued turn goes on from it.
    expect(server.requests.slice(asked).some((r) => lastUserText(r).includes('summary of the conversation'))).toBe(true);
    await until(() => settled(after.turnId), 'the turn after', 30_000);
    expect(thread().items.findIndex((i) => i.id === after.turnId)).toBeGreaterThan(thread().items.indexOf(compaction!));
    expect(JSON.stringify(server.conversation.at(-1)!.body.messages)).toContain(COMPACT_SUMMARY);
  });

  it('a CLI killed mid-turn ends the turn error with a note; a late approval is request-not-found; the next send resumes', async () => {
    await client.ok('chat.create', { chatId: 'x', cwd: data.dir, runtimeMode: 'supervised' });
    await client.attach('x');
    const crashed = client.threads.get('x')!;
    const before = new Set(children());
    const first = await client.ok('chat.send', { chatId: 'x', text: 'KW-HELLO' });
    await until(() => stateOf(crashed, first.turnId) === 'done', 'the first turn', 30_000);
    const sessionId = core.session('x').info.agentSessionId;
    // This chat's CLI: the child of this process its first send started.
    const [cli] = children().filter((pid) => !before.has(pid));
    const { turnId } = await client.ok('chat.send', { chatId: 'x', text: 'KW-APPROVE' });
    await until(() => crashed.items.some((i) => i.kind === 'approval' && i.decision === 'pending'), 'the approval', 30_000);
    const approval = crashed.items.find((i) => i.kind === 'approval')!;
    process.kill(-cli, 'SIGKILL');
    await until(() => stateOf(crashed, turnId) === 'error', 'the turn to fail', 30_000);
    expect(crashed.items.find((i) => i.kind === 'note' && i.turnId === turnId)).toMatchObject({
      level: 'error',
      text: expect.stringContaining('Claude Code stopped'),
    });
    expect(crashed.get(approval.id)).toMatchObject({ decision: 'cancelled' });
    expect(core.session('x').info).toMatchObject({ running: false, status: 'error' });
    expect(await client.fails('chat.approve', { chatId: 'x', requestId: approval.kind === 'approval' ? approval.requestId : '', decision: 'allow' })).toBe(
      'request-not-found',
    );
    expect(await client.ok('chat.cancel', { chatId: 'x' })).toEqual({});
    // This wait timed out twice in whole host runs (never alone, nor in a fresh clone) with nothing to
    // go on: a timeout now says what the chat held (an error note carries the CLI's stderr) and what
    // the resumed CLI asked the model.
    const asked = server.requests.length;
    const next = await client.ok('chat.send', { chatId: 'x', text: 'KW-HELLO' });
    await until(() => stateOf(crashed, next.turnId) === 'done', 'the turn after', 30_000).catch((error: unknown) => {
      const items = crashed.items.map((i) => ({
        kind: i.kind,
        id: i.id,
        turnId: i.turnId,
        ...('state' in i ? { state: i.state } : {}),
        ...('text' in i ? { text: i.text.slice(0, 200) } : {}),
      }));
      const requests = server.requests.slice(asked).map((r) => ({ path: r.path, tools: r.body.tools?.length ?? 0, last: lastUserText(r).slice(0, 200) }));
      throw new Error(
        `${String(error)}\nitems: ${JSON.stringify(items)}\ninfo: ${JSON.stringify(core.session('x').info)}\nrequests since the send: ${JSON.stringify(requests)}`,
      );
    });
    expect(core.session('x').info).toMatchObject({ agentSessionId: sessionId, running: true, status: 'idle' });
  });
});

/** The pids of this process's children (each CLI leads its own group). */
function children(): number[] {
  const rows = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n');
  return rows
    .map((row) => row.trim().split(/\s+/))
    .filter(([, command]) => command && command !== 'ps')
    .map(([pid]) => Number(pid));
}

function stateOf(thread: { get(id: string): unknown }, turnId: string): string | undefined {
  const item = thread.get(turnId) as { kind?: string; state?: string } | undefined;
  return item?.kind === 'turn' ? item.state : undefined;
}
