// Any ACP agent by its command line in the host config: the config's values that reach argv and
// the environment are checked when it is read (a hostile one is refused naming its field, nothing
// starts), and a configured agent is served on the ACP adapter with its own name, its modes as the
// config maps them, and a message that would run the agent's own commands refused. The agent here
// is the scripted ACP agent on the SDK's agent side (test/host/fixtures/acp/agent.ts), a real
// process over stdio; OpenCode and Qwen Code are acp-agents.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatItem } from '../../src/contracts/index.ts';
import { HostConfigSchema, readHostConfig } from '../../src/host/config.ts';
import { startHost, type RunningHost } from '../../src/host/index.ts';
import { fillModes } from '../../src/host/providers/acp/command-line.ts';
import { TestClient, tempDir, until } from './harness.ts';

const AGENT = path.resolve(import.meta.dirname, 'fixtures/acp/agent.ts');
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('the config of an ACP agent by its command line', () => {
  const base = { backend: 'acp', name: 'My agent', command: 'my-agent' };
  const problem = (entry: Record<string, unknown>): string => {
    const parsed = HostConfigSchema.safeParse({ providers: { gemini: { ...base, ...entry } } });
    if (parsed.success) throw new Error(`accepted ${JSON.stringify(entry)}`);
    return parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  };

  it('accepts a plain one, with its defaults', () => {
    const parsed = HostConfigSchema.parse({
      providers: { gemini: { ...base, args: ['acp', '--port=0'], env: { OPENCODE_X: 'a b\tc' }, modes: { supervised: 'plan' } } },
    });
    expect(parsed.providers!.gemini).toMatchObject({ name: 'My agent', args: ['acp', '--port=0'], slashCommands: false, modes: { supervised: 'plan' } });
  });

  it('refuses values that are not what they claim, naming the field', () => {
    expect(problem({ command: '-rf' })).toMatch(/^providers\.gemini\.command: a command is a path or a bare name/);
    expect(problem({ command: 'my agent; rm -rf ~' })).toMatch(/^providers\.gemini\.command:/);
    expect(problem({ command: '/usr/bin/agent\u0000--x' })).toMatch(/^providers\.gemini\.command: a command has no control characters/);
    expect(problem({ command: '' })).toMatch(/^providers\.gemini\.command:/);
    expect(problem({ args: ['ok', 'cut\u0000here'] })).toMatch(/^providers\.gemini\.args\.1: an argument has no NUL/);
    expect(problem({ args: Array.from({ length: 65 }, () => 'x') })).toMatch(/^providers\.gemini\.args:/);
    expect(problem({ env: { 'A=B': 'x' } })).toMatch(/^providers\.gemini\.env\.A=B:/);
    expect(problem({ env: { GOOD: 'line\nINJECTED=1' } })).toMatch(/^providers\.gemini\.env\.GOOD: a variable's value has no control characters/);
    expect(problem({ name: 'Open\u001b[31mCode' })).toMatch(/^providers\.gemini\.name: a name is 1 to 64 characters/);
    expect(problem({ name: '   ' })).toMatch(/^providers\.gemini\.name:/);
    expect(problem({ modes: { supervised: '--yolo' } })).toMatch(/^providers\.gemini\.modes\.supervised: a mode id/);
    expect(problem({ modes: { reckless: 'x' } })).toMatch(/^providers\.gemini\.modes/);
  });

  it("holds the other backends' command, args and env to the same rules", () => {
    expect(HostConfigSchema.safeParse({ providers: { claude: { backend: 'claude', args: ['a\u0000b'] } } }).success).toBe(false);
    expect(HostConfigSchema.safeParse({ providers: { codex: { backend: 'codex', env: { X: 'a\rb' } } } }).success).toBe(false);
    expect(HostConfigSchema.safeParse({ providers: { copilot: { backend: 'copilot', command: '--help' } } }).success).toBe(false);
    expect(
      HostConfigSchema.safeParse({ providers: { claude: { backend: 'claude', command: './bin/claude', args: ['--add-dir', '/srv'], env: { A: 'b' } } } })
        .success,
    ).toBe(true);
  });

  it("runs an unnamed runtime mode in the nearest narrower named one, and none named leaves the agent's own", () => {
    expect(fillModes({ supervised: 'ask', auto: 'all' })).toEqual({ supervised: 'ask', 'auto-accept-edits': 'ask', auto: 'all', 'full-access': 'all' });
    expect(fillModes({ 'auto-accept-edits': 'edits' })).toEqual({ supervised: '', 'auto-accept-edits': 'edits', auto: 'edits', 'full-access': 'edits' });
    expect(fillModes({})).toEqual({ supervised: '', 'auto-accept-edits': '', auto: '', 'full-access': '' });
  });
});

describe('a host serving an ACP agent by its command line', () => {
  let data: ReturnType<typeof tempDir>;
  let running: RunningHost;
  let client: TestClient;
  let log: string;

  beforeAll(async () => {
    data = tempDir('tether-acp-command-line-');
    log = path.join(data.dir, 'agent.log');
    const configFile = path.join(data.dir, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        providers: {
          copilot: {
            backend: 'acp',
            name: 'Scripted ACP agent',
            command: process.execPath,
            args: [AGENT],
            env: { AGENT_LOG: log },
            modes: { supervised: 'ask', 'auto-accept-edits': 'edits' },
          },
        },
        policy: { roots: [data.dir], modeCeiling: 'full-access' },
      }),
    );
    expect(readHostConfig(configFile).config.providers?.copilot).toMatchObject({ backend: 'acp' });
    running = await startHost({ dataDir: path.join(data.dir, 'host'), configFile, log: quiet });
    client = new TestClient(running.core);
  });

  afterAll(async () => {
    await running?.close();
    data?.cleanup();
  });

  const turnOf = (turnId: string) => client.threads.get('c')!.get(turnId) as Extract<ChatItem, { kind: 'turn' }> | undefined;
  const itemsOf = (turnId: string) => client.threads.get('c')!.items.filter((i) => i.turnId === turnId);

  it('lists it under its own name, says where it comes from, and runs a turn with an approval', { timeout: 60_000 }, async () => {
    const { providers } = await client.ok('provider.list', {});
    expect(providers[0]).toMatchObject({ kind: 'copilot', name: 'Scripted ACP agent', installed: true, capabilities: { chat: true, slashCommands: false } });
    expect(running.agents!.agents[0]).toMatchObject({
      name: 'Scripted ACP agent',
      served: true,
      from: process.execPath,
      why: expect.stringContaining('backend acp'),
    });

    await client.ok('chat.create', { chatId: 'c', provider: 'copilot', cwd: data.dir, runtimeMode: 'auto' });
    await client.attach('c');
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'ask permission to build' });
    await until(() => itemsOf(turnId).some((i) => i.kind === 'approval' && i.decision === 'pending'), 'the approval', 30_000);
    const approval = itemsOf(turnId).find((i): i is Extract<ChatItem, { kind: 'approval' }> => i.kind === 'approval')!;
    await client.ok('chat.approve', { chatId: 'c', requestId: approval.requestId, decision: 'allow' });
    await until(() => turnOf(turnId)?.state === 'done', 'the turn', 30_000);
    const entries = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { method: string; modeId?: string; outcome?: unknown });
    // `auto` is not named: the nearest narrower one the config names, `edits`.
    expect(entries.filter((e) => e.method === 'session/set_mode').map((e) => e.modeId)).toEqual(['edits']);
    expect(entries.find((e) => e.method === 'permission-outcome')).toMatchObject({ outcome: { outcome: { outcome: 'selected', optionId: 'yes' } } });
  });

  it("refuses a message that would run the agent's own command, and hands the agent nothing", { timeout: 30_000 }, async () => {
    const before = readFileSync(log, 'utf8');
    const reply = await client.request('chat.send', { chatId: 'c', text: '  /extensions install https://example.invalid/x' });
    expect(reply).toMatchObject({ ok: false, error: { code: 'bad-request', message: expect.stringContaining('Scripted ACP agent may run its own commands') } });
    expect((await client.request('chat.send', { chatId: 'c', text: '$restore' })).ok).toBe(false);
    expect(readFileSync(log, 'utf8')).toBe(before);
    // A slash later in the text is only text.
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text: 'hello, see src/a.ts' });
    await until(() => turnOf(turnId)?.state === 'done', 'the turn', 30_000);
    expect(itemsOf(turnId).some((i) => i.kind === 'assistant' && i.text.includes('echo: hello, see src/a.ts'))).toBe(true);
  });
});
