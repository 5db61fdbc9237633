// Argument injection against the four real CLIs (the pinned binaries in node_modules/.bin, each
// pointed at its scripted model server on loopback as in the driver tests). A value from a client
// that is not the CLI's own shape is refused before any process starts: by the host's request
// handling (`chat.create {resume}`, a `bad-request` naming the field, no chat made), and by the
// driver itself for a value that got past it (a chat stored by an older host): the turn ends in an
// error naming the field, no process runs in the chat's folder and the model server hears nothing.
//
// For Claude Code the reproduced attack (`resume: '--settings={"apiKeyHelper":"<cmd>"}'`, which ran
// <cmd> when it was given as `--resume <value>`) is shown harmless at both layers: refused, and, as
// the `--resume=<value>` argument the driver now writes, taken by the real CLI as a session to look
// up, so its command never runs (the marker file is never made). One real start per CLI proves the
// `=` form where the driver tests do not already (Claude's --resume=/--model=/--effort= and Gemini's
// --model= run in claude-driver and gemini-driver; Copilot's --model= runs here; Codex's command
// line carries no client value).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import { claudeArgs } from '../../src/host/providers/claude/driver.ts';
import { flagValue } from '../../src/host/providers/cli-values.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import { CopilotProvider } from '../../src/host/providers/copilot/index.ts';
import { geminiProvider } from '../../src/host/providers/gemini/index.ts';
import type { Provider, ProviderOutput, ProviderSession } from '../../src/host/providers/provider.ts';
import { AnthropicServer } from '../support/anthropic-server.ts';
import { GeminiServer } from '../support/gemini-server.ts';
import { OpenAiServer } from '../support/openai-server.ts';
import { CLAUDE_BIN, claudeTestEnv, scenarioReply } from './claude-scenario.ts';
import { codexScenario, TEST_KEY_VARIABLE, writeCodexHome } from './fixtures/codex/scenario.ts';
import { copilotEnv, copilotScenario, GREETING, TEST_MODEL as COPILOT_MODEL } from './fixtures/copilot/scenario.ts';
import { geminiScenario, geminiTestEnv, TEST_MODEL as GEMINI_MODEL, writeGeminiHome } from './fixtures/gemini/scenario.ts';
import { ScriptProvider } from '../../src/host/providers/script.ts';
import { openCore, TEST_SCRIPT, TestClient, tempDir } from './harness.ts';

const bin = (name: string) => path.resolve(import.meta.dirname, '../../node_modules/.bin', name);
const UUID = '0199a213-81c0-7800-8aa1-bbab2a035a53';

let data: ReturnType<typeof tempDir>;
let anthropic: AnthropicServer;
/** Copilot's model: the same Anthropic API, its own script. */
let copilotModel: AnthropicServer;
let openai: OpenAiServer;
let google: GeminiServer;
let core: HostCore;
let client: TestClient;
let work = '';
let marker = '';
const providers: Record<'claude' | 'codex' | 'gemini' | 'copilot', Provider> = {} as never;
const sessions: ProviderSession[] = [];

/** The reproduced payload: a `--settings` whose apiKeyHelper makes the marker file. */
const attack = () => `--settings={"apiKeyHelper":"touch ${marker}; echo sk-x"}`;

beforeAll(async () => {
  data = tempDir('tether-injection-');
  work = path.join(data.dir, 'work');
  mkdirSync(work, { recursive: true });
  marker = path.join(data.dir, 'helper-ran');
  [anthropic, copilotModel, openai, google] = await Promise.all([
    AnthropicServer.start({ reply: scenarioReply }),
    AnthropicServer.start({ reply: copilotScenario }),
    OpenAiServer.start(codexScenario),
    GeminiServer.start(geminiScenario),
  ]);
  const home = (name: string) => {
    const dir = path.join(data.dir, `${name}-home`);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const codexHome = home('codex');
  writeCodexHome(codexHome, openai.url);
  const geminiHome = home('gemini');
  writeGeminiHome(geminiHome);
  providers.claude = new ClaudeProvider({ command: CLAUDE_BIN, env: claudeTestEnv(anthropic, home('claude')) });
  providers.codex = new CodexProvider({ command: bin('codex'), home: codexHome, env: { [TEST_KEY_VARIABLE]: 'k' }, clientVersion: '0.0.0' }, { probe: false });
  providers.gemini = geminiProvider(
    { command: bin('gemini'), home: geminiHome, env: geminiTestEnv(google.url, geminiHome), clientVersion: '0.0.0' },
    { probe: false },
  );
  providers.copilot = new CopilotProvider(
    { command: bin('copilot'), env: copilotEnv(copilotModel.url, home('copilot')), clientVersion: '0.0.0' },
    { probe: false },
  );
  core = await openCore(data.dir, { providers: Object.values(providers), policy: new HostPolicy({ home: data.dir }) });
  client = new TestClient(core);
}, 30_000);

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.kill()));
  await core?.close();
  await Promise.all([anthropic?.close(), copilotModel?.close(), openai?.close(), google?.close()]);
  data?.cleanup();
});

/** Processes (of anyone's, as far as /proc shows them) whose working folder is `dir`. */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === dir) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** Model-server requests so far, all three servers. */
const heard = () => anthropic.requests.length + copilotModel.requests.length + openai.requests.length + google.turns.length;

/** One turn on a driver opened directly (as for a stored chat): its outputs once it ended. */
function turnOn(session: ProviderSession, text = 'KW-HELLO'): Promise<ProviderOutput[]> {
  sessions.push(session);
  const outputs: ProviderOutput[] = [];
  return new Promise((resolve) => {
    session.startTurn({ turnId: 't1', text, attachments: [] }, (output) => {
      outputs.push(output);
      if (output.type === 'turn-end') resolve(outputs);
    });
  });
}

/** A driver for `kind` in its own fresh folder (so a process it started would show there). */
function driver(kind: keyof typeof providers, agentSessionId: string | null, model?: string): { session: ProviderSession; cwd: string } {
  const provider = providers[kind];
  const cwd = path.join(work, `${kind}-${sessions.length}`);
  mkdirSync(cwd, { recursive: true });
  const selection = model === undefined ? provider.normalizeSelection(undefined) : { model, options: {} };
  return { session: provider.open({ chatId: `direct-${kind}`, cwd, runtimeMode: 'supervised', selection, agentSessionId }), cwd };
}

/** The driver refused before starting anything: an error naming `field`, no process in its folder, no model request. */
async function refusedBeforeStart(kind: keyof typeof providers, field: string, agentSessionId: string | null, model?: string): Promise<void> {
  const before = heard();
  const { session, cwd } = driver(kind, agentSessionId, model);
  const outputs = await turnOn(session);
  // Checked the moment the turn ended: a CLI started for it would still be starting (each takes seconds).
  expect(processesIn(cwd)).toEqual([]);
  expect(session.running).toBe(false);
  expect(outputs.at(-1)).toMatchObject({ type: 'turn-end', state: 'error', message: expect.stringContaining(`${field} must be`) });
  expect(heard()).toBe(before);
}

describe('argument injection into the real CLIs', { timeout: 60_000 }, () => {
  it("chat.create refuses a resume that is not the CLI's own kind of session id, for every CLI; no chat is made", async () => {
    for (const provider of ['claude', 'codex', 'gemini', 'copilot'] as const) {
      for (const [chatId, resume] of [
        [`${provider}-flag`, attack()],
        [`${provider}-word`, 'latest'],
        [`${provider}-long`, `${UUID}x`],
      ] as const) {
        const reply = await client.request('chat.create', { chatId, provider, cwd: work, runtimeMode: 'supervised', resume });
        expect(reply.ok).toBe(false);
        if (reply.ok) continue;
        expect(reply.error.code).toBe('bad-request');
        expect(reply.error.message).toMatch(/resume/);
        expect(core.sessions.has(chatId)).toBe(false);
      }
      // A model that is a flag is refused the same way.
      expect(
        await client.fails('chat.create', {
          chatId: `${provider}-model`,
          provider,
          cwd: work,
          selection: { model: '--dangerously-skip-permissions', options: {} },
        }),
      ).toBe('bad-request');
      // And the CLI's own kind of id is taken as it is.
      const made = await client.ok('chat.create', { chatId: `${provider}-ok`, provider, cwd: work, runtimeMode: 'supervised', resume: UUID });
      expect(made.agentSessionId).toBe(UUID);
    }
    expect(existsSync(marker)).toBe(false);
    expect(heard()).toBe(0);
  });

  it('Claude Code: the reproduced --settings payload, past the boundary, is refused before the CLI starts and its helper never runs', async () => {
    await refusedBeforeStart('claude', 'resume', attack());
    await refusedBeforeStart('claude', 'resume', '--dangerously-skip-permissions');
    await refusedBeforeStart('claude', 'selection.model', null, '--settings={}');
    expect(existsSync(marker)).toBe(false);
  });

  it('Claude Code: given as --resume=<payload>, the real CLI reads the payload as a session to find, not as --settings; the helper never runs', async () => {
    // The layer under the check: what the driver's `=` form makes of the payload, run for real.
    const args = claudeArgs(
      { chatId: 'x', cwd: work, runtimeMode: 'supervised', selection: providers.claude.normalizeSelection(undefined), agentSessionId: null },
      null,
      [],
    ).concat(flagValue('--resume', attack()));
    const result = await run(CLAUDE_BIN, args, { ...process.env, ...claudeTestEnv(anthropic, path.join(data.dir, 'claude-home')) });
    expect(result.stderr).toContain('--resume requires a valid session ID');
    expect(result.stderr).toContain('is not a UUID and does not match any session title');
    expect(existsSync(marker)).toBe(false);
  });

  it('Codex: a thread id or model that is not its shape is refused before app-server starts', async () => {
    await refusedBeforeStart('codex', 'resume', '../../sessions/x');
    await refusedBeforeStart('codex', 'resume', '-c');
    await refusedBeforeStart('codex', 'selection.model', null, '--config=model_provider="x"');
  });

  it('Gemini CLI: a session id (its transcripts are named by it) or model that is not its shape is refused before it starts', async () => {
    await refusedBeforeStart('gemini', 'resume', '../../../.ssh/x');
    await refusedBeforeStart('gemini', 'selection.model', null, '--yolo');
    await refusedBeforeStart('gemini', 'selection.model', null, `${GEMINI_MODEL} --yolo`);
  });

  it('Copilot CLI: a session id or model that is not its shape is refused before it starts', async () => {
    await refusedBeforeStart('copilot', 'resume', 'latest');
    await refusedBeforeStart('copilot', 'selection.model', null, '--allow-all-tools');
  });

  // Without a model Copilot's own-provider mode exits ("BYOK providers require an explicit model"),
  // so a turn answered by that model shows the `=` form was read.
  it('Copilot CLI: the real binary takes the model as --model=<slug> (no COPILOT_MODEL to fall back on)', async () => {
    const home = path.join(data.dir, 'copilot-model-home');
    mkdirSync(home, { recursive: true });
    const { COPILOT_MODEL: _named, ...env } = copilotEnv(copilotModel.url, home);
    const provider = new CopilotProvider({ command: bin('copilot'), env, clientVersion: '0.0.0' }, { probe: false });
    const cwd = path.join(work, 'copilot-model');
    mkdirSync(cwd, { recursive: true });
    const asked = copilotModel.requests.length;
    const outputs = await turnOn(
      provider.open({ chatId: 'm', cwd, runtimeMode: 'supervised', selection: { model: COPILOT_MODEL, options: {} }, agentSessionId: null }),
      'hello there',
    );
    expect(outputs.at(-1)).toEqual({ type: 'turn-end', state: 'done' });
    expect(
      outputs
        .filter((o) => o.type === 'text')
        .map((o) => (o as { text: string }).text)
        .join(''),
    ).toBe(GREETING);
    const requests = copilotModel.requests.slice(asked).filter((r) => (r.body.tools?.length ?? 0) > 0);
    expect(requests.length).toBeGreaterThan(0);
    expect(new Set(requests.map((r) => r.body.model))).toEqual(new Set([COPILOT_MODEL]));
  });
});

describe('a selection is kept only as the provider made it', () => {
  it('chat.configure on a chat whose provider this host no longer has refuses a selection instead of keeping it raw for a later command line', async () => {
    const dir = tempDir('tether-injection-gone-');
    try {
      let host = await openCore(dir.dir, {
        providers: [new ScriptProvider({ kind: 'claude', script: TEST_SCRIPT }), new ScriptProvider({ kind: 'codex', script: TEST_SCRIPT })],
      });
      await new TestClient(host).ok('chat.create', { chatId: 'g', provider: 'codex' });
      await host.close();
      host = await openCore(dir.dir, { providers: [new ScriptProvider({ kind: 'claude', script: TEST_SCRIPT })] });
      const reply = await new TestClient(host).request('chat.configure', { chatId: 'g', selection: { model: 'gpt-5.1-codex', options: { effort: 'max' } } });
      expect(reply).toMatchObject({ ok: false, error: { code: 'account-unavailable' } });
      expect(host.session('g').info.selection.model).not.toBe('gpt-5.1-codex');
      await host.close();
    } finally {
      dir.cleanup();
    }
  });
});

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: work, env, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('exit', (code) => resolve({ code, stderr }));
    child.stdin.end(`${JSON.stringify({ type: 'user', message: { role: 'user', content: 'KW-HELLO' }, parent_tool_use_id: null, session_id: 'default' })}\n`);
  });
}
