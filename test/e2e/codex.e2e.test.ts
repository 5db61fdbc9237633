// The real `codex app-server` (pinned @openai/codex) behind a real host process, the relay on
// workerd and an SDK client: the model is the scripted Responses server on loopback
// (test/host/fixtures/codex/scenario.ts), so nothing leaves this machine.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiServer } from '../support/openai-server.ts';
import { codexScenario, EDIT_MODEL, NOTES_FILE, RESET_AT_SECONDS, TEST_KEY_VARIABLE, writeCodexHome } from '../host/fixtures/codex/scenario.ts';
import { CliChat } from './cli-chat.ts';
import { until as poll } from '../support/until.ts';
import { HostProcess } from './peers.ts';

const root = path.resolve(import.meta.dirname, '../..');
const chat = new CliChat(new HostProcess('codex-host', 'codex-owner'), 'codex-chat');
// Not under /tmp: Codex's Linux sandbox makes /tmp writable and keeps each writable root's `.git`
// read-only by binding one there, so while another Codex (another test file, another run) runs a
// sandboxed command, an empty /tmp/.git exists. A Codex that then renders its turn diff takes /tmp
// for the repository of a folder under it and names the file `tether-codex-e2e-work-…/notes.txt`
// (a fresh-clone run failed so; an empty /tmp/.git made it every time). /dev/shm is no root of a sandbox.
const work = mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'tether-codex-e2e-work-'));
let model: OpenAiServer;

beforeAll(async () => {
  model = await OpenAiServer.start(codexScenario);
  const home = path.join(chat.host.dataDir, 'codex-home');
  mkdirSync(home, { recursive: true });
  writeCodexHome(home, model.url);
  const codex = { backend: 'codex', command: path.join(root, 'node_modules', '.bin', 'codex'), home, env: { [TEST_KEY_VARIABLE]: 'test-key' } };
  await chat.open(
    { providers: { codex }, policy: { roots: [work], modeCeiling: 'full-access' } },
    { provider: 'codex', cwd: work, runtimeMode: 'auto-accept-edits' },
  );
});

afterAll(async () => {
  await chat.close();
  await model?.close();
  rmSync(work, { recursive: true, force: true });
});

const turns = () => chat.items().filter((i) => i.kind === 'turn');
const inTurn = (turnId: string) => chat.inTurn(turnId);
const info = () => chat.info();
const until = (check: () => unknown, what: string) => chat.until(check, what);
const send = (text: string) => chat.send(text);

describe('Codex through the host, the relay and a client', () => {
  it('lists Codex with its model catalog', async () => {
    // The catalog comes from a short-lived app-server the provider asks at start.
    const codex: Record<string, any> = await poll(
      async () => {
        const { providers } = await chat.lobby.socket.request('provider.list', {});
        const listed = providers.find((p: { kind: string }) => p.kind === 'codex');
        return listed?.version && listed;
      },
      'Codex listed with its version',
      { ms: 30_000, every: 100 },
    );
    expect(codex).toMatchObject({ name: 'Codex', installed: true, version: '0.171.0', defaultModel: 'default' });
    expect(codex!.models[0]).toMatchObject({ slug: 'default', isDefault: true });
    // Codex's own catalog follows, each with its reasoning efforts as an option.
    expect(codex!.models.length).toBeGreaterThan(1);
    expect(codex!.models[1].options[0]).toMatchObject({ id: 'effort', type: 'select' });
  });

  it('streams thinking and reply, reports tokens against the context window, and confirms the mode', async () => {
    const turnId = await send('hello there');
    await chat.settled(turnId);
    const turn = turns().find((t) => t.id === turnId)!;
    expect(turn.state).toBe('done');
    expect(turn.costUsd).toBe(0); // Codex reports no USD
    const kinds = inTurn(turnId).map((i) => i.kind);
    expect(kinds).toEqual(expect.arrayContaining(['user', 'thinking', 'assistant', 'turn']));
    expect(inTurn(turnId).find((i) => i.kind === 'assistant')!.text).toBe('Hello from the scripted model.');
    expect(inTurn(turnId).find((i) => i.kind === 'thinking')!.text).toBe('A greeting; answer briefly.');
    await until(() => info().usage.turns === 1, 'the settled info');
    const now = info();
    expect(now.usage).toMatchObject({ contextTokens: 1240, contextWindow: 190000, costUsd: 0 });
    expect(now.effectiveRuntimeMode).toBe('auto-accept-edits');
    expect(now.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(model.requests.at(-1)!.headers.authorization).toBe('Bearer test-key');
  });

  it("asks for a shell command's approval, decided from the client, then runs it", async () => {
    const turnId = await send('run the build');
    await until(() => inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending'), 'the approval');
    const approval = inTurn(turnId).find((i) => i.kind === 'approval')!;
    expect(approval).toMatchObject({ toolName: 'Bash', input: { command: 'echo built > build.txt' }, canAllowAlways: true });
    await until(() => info().requests?.[0]?.requestId === approval.requestId, "the approval in the chat's requests");
    await chat.request('chat.approve', { requestId: approval.requestId, decision: 'allow' });
    await chat.settled(turnId);
    const tool = inTurn(turnId).find((i) => i.kind === 'tool')!;
    expect(tool).toMatchObject({ name: 'Bash', state: 'done', toolUseId: approval.toolUseId });
    expect(readFileSync(path.join(work, 'build.txt'), 'utf8')).toBe('built\n');
    expect(inTurn(turnId).find((i) => i.kind === 'approval')!.decision).toBe('allow');
    expect(turns().find((t) => t.id === turnId)!.state).toBe('done');
  });

  it("puts Codex's requestUserInput question to the client and hands the answer back", async () => {
    const turnId = await send('ask me a question');
    await until(() => inTurn(turnId).find((i) => i.kind === 'question' && i.state === 'pending'), 'the question');
    const question = inTurn(turnId).find((i) => i.kind === 'question')!;
    expect(question.questions[0]).toMatchObject({ id: 'color', question: 'Which color should the button be?', choices: [{ label: 'Red' }, { label: 'Blue' }] });
    await chat.request('chat.answer', { requestId: question.requestId, answers: { color: 'Blue' } });
    await chat.settled(turnId);
    expect(inTurn(turnId).find((i) => i.kind === 'assistant')!.text).toContain('"answers":["Blue"]');
    expect(turns().find((t) => t.id === turnId)!.state).toBe('done');
  });

  it('ends a turn the model server refuses with 429 as an error carrying the usage limit and its reset', async () => {
    const turnId = await send('hit the limit');
    await chat.settled(turnId);
    const turn = turns().find((t) => t.id === turnId)!;
    expect(turn).toMatchObject({ state: 'error', limit: { kind: 'usage', resetsAt: RESET_AT_SECONDS * 1000 } });
    await until(() => info().limit, 'the limit on the chat');
    expect(info().limit).toEqual({ kind: 'usage', resetsAt: RESET_AT_SECONDS * 1000 });
    expect(inTurn(turnId).find((i) => i.kind === 'note' && i.level === 'error')!.text).toMatch(/usage limit/);
  });

  it('stops a running tool when the client interrupts: the turn ends aborted, and Codex resumes the thread in a wider mode', async () => {
    const before = info().agentSessionId;
    await chat.request('chat.configure', { runtimeMode: 'full-access' });
    const turnId = await send('sleep a while');
    await until(() => inTurn(turnId).find((i) => i.kind === 'tool' && i.state === 'running'), 'the sleeping tool');
    expect(inTurn(turnId).find((i) => i.kind === 'tool')!.input).toMatchObject({ command: 'sleep 30' });
    await chat.request('chat.cancel', {});
    await chat.settled(turnId);
    expect(turns().find((t) => t.id === turnId)!.state).toBe('aborted');
    await until(() => info().activeTurnId === null, 'the settled info');
    expect(info()).toMatchObject({ effectiveRuntimeMode: 'full-access', agentSessionId: before });
    // The thread goes on after the interrupt.
    const next = await send('hello there');
    await chat.settled(next);
    expect(turns().find((t) => t.id === next)!.state).toBe('done');
    expect(existsSync(path.join(work, 'build.txt'))).toBe(true);
  });

  it("asks for each apply_patch edit's approval, decided from the client: the file changes on disk and the turn carries its diff", async () => {
    // A model Codex's catalog knows gets its file-editing tool; supervised asks before every edit.
    await chat.request('chat.configure', { runtimeMode: 'supervised', selection: { model: EDIT_MODEL, options: {} } });
    const turnId = await send('write the notes');
    const decided = new Set<string>();
    for (const expected of ['add', 'update']) {
      const approval = await chat.until(
        () => inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending' && !decided.has(i.requestId)),
        `the ${expected} approval`,
      );
      expect(approval).toMatchObject({ toolName: 'Edit', canAllowAlways: true, input: { changes: [{ path: path.join(work, NOTES_FILE), kind: expected }] } });
      decided.add(approval.requestId);
      await chat.request('chat.approve', { requestId: approval.requestId, decision: 'allow' });
    }
    await chat.settled(turnId);
    expect(turns().find((t) => t.id === turnId)!.state).toBe('done');
    expect(readFileSync(path.join(work, NOTES_FILE), 'utf8')).toBe('alpha\ngamma\n');
    const tools = inTurn(turnId).filter((i) => i.kind === 'tool');
    expect(tools.map((t) => ({ name: t.name, state: t.state, kinds: t.changes?.map((c: { kind: string }) => c.kind) }))).toEqual([
      { name: 'Edit', state: 'done', kinds: ['add'] },
      { name: 'Edit', state: 'done', kinds: ['update'] },
    ]);
    expect(tools[1].changes[0].diff).toBe('@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n');
    expect(
      inTurn(turnId)
        .filter((i) => i.kind === 'approval')
        .map((i) => i.decision),
    ).toEqual(['allow', 'allow']);
    // The turn's diff is Codex's turn/diff/updated: the file is new in this turn, with its final lines.
    const diff = turns().find((t) => t.id === turnId)!.checkpointDiff;
    expect(diff.files.map(({ path: p, kind, added, deleted }: Record<string, unknown>) => ({ p, kind, added, deleted }))).toEqual([
      { p: NOTES_FILE, kind: 'add', added: 2, deleted: 0 },
    ]);
    expect(diff.files[0].diff).toContain('+alpha\n+gamma\n');
    expect(model.requests.at(-1)!.body.model).toBe(EDIT_MODEL);
  });

  it('forks the Codex chat: the fork runs on a thread of its own that carries the earlier conversation', async () => {
    const source = info().agentSessionId;
    const last = turns().at(-1)!;
    const forked = await chat.request('chat.fork', { turnId: last.id });
    expect(forked.info).toMatchObject({ provider: 'codex', agentSessionId: source, forkOf: { chatId: chat.chatId, turnId: last.id } });
    const fork = await chat.join(forked.info.chatId);
    const turnId = await fork.send('hello there');
    await fork.settled(turnId);
    expect(fork.turn(turnId)!.state).toBe('done');
    await fork.until(() => fork.info().agentSessionId !== source, "the fork's own thread");
    const branch = fork.info().agentSessionId;
    expect(branch).toMatch(/^[0-9a-f-]{36}$/);
    // What the model got for the fork's turn: the source's conversation, under the fork's thread.
    const request = model.requests.at(-1)!;
    expect(request.userText).toBe('hello there');
    expect(JSON.stringify(request.body.input)).toContain('write the notes');
    expect(JSON.stringify(request.body.input)).toContain('run the build');
    expect(request.body.prompt_cache_key).toBe(branch);
    expect(info().agentSessionId).toBe(source);
  });
});
