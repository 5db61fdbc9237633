// Two real ACP agents served by their command lines alone (config `backend: "acp"`), on one host:
// OpenCode 1.18.33 (`opencode acp`) and Qwen Code 0.24.4 (`qwen --acp`), each against the scripted
// OpenAI Responses server on loopback (OpenCode through a provider of its own config on
// `@ai-sdk/openai`, Qwen Code with `--auth-type=openai-responses`). A turn asks to run a shell
// command: each asks permission, the approval reaches the client, allowed the file is written;
// denied, the folder is left alone. The binaries are the pinned ones scripts/acp-agents.ts installs.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatItem } from '../../src/contracts/index.ts';
import { startHost, type RunningHost } from '../../src/host/index.ts';
import { OpenAiServer } from '../support/openai-server.ts';
import { TestClient, tempDir, until } from './harness.ts';

const bin = path.resolve(import.meta.dirname, '../../node_modules/.bin');
const TURN_MS = 150_000;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

let data: ReturnType<typeof tempDir>;
let model: OpenAiServer;
let running: RunningHost;
let client: TestClient;

/** The shell tool each agent offers the model, and the file its command writes. */
const SHELL: Record<string, string> = { opencode: 'bash', qwen: 'run_shell_command' };

beforeAll(async () => {
  data = tempDir('tether-acp-agents-');
  model = await OpenAiServer.start((request) => {
    if (request.toolOutput) return { steps: [{ type: 'text', text: 'Done with the notes.' }] };
    const input = JSON.stringify(request.body.input ?? '');
    // Only the agent's own turn has tools (OpenCode also asks for a title without any).
    const tools = Array.isArray(request.body.tools) ? request.body.tools.map((t: { name?: string }) => t.name) : [];
    const agent = tools.includes('bash') ? 'opencode' : tools.includes('run_shell_command') ? 'qwen' : null;
    const file = /write the notes into (\S+?)\.txt/.exec(input)?.[1];
    if (agent && file) {
      return { steps: [{ type: 'call', name: SHELL[agent]!, arguments: { command: `echo from-${agent} > ${file}.txt`, description: 'Write the notes' } }] };
    }
    return { steps: [{ type: 'text', text: 'Hello from the scripted model.' }] };
  });
  const home = path.join(data.dir, 'home');
  mkdirSync(home, { recursive: true });
  const opencodeConfig = path.join(home, 'opencode.json');
  writeFileSync(
    opencodeConfig,
    JSON.stringify({
      provider: {
        local: { npm: '@ai-sdk/openai', name: 'Local', options: { baseURL: model.url, apiKey: 'sk-test' }, models: { scripted: { name: 'Scripted' } } },
      },
      model: 'local/scripted',
      // OpenCode asks before a shell command or an edit only when its config says so.
      permission: { bash: 'ask', edit: 'ask' },
      autoupdate: false,
      share: 'disabled',
    }),
  );
  const xdg = {
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_CACHE_HOME: `${home}/.cache`,
    XDG_STATE_HOME: `${home}/.local/state`,
  };
  const configFile = path.join(data.dir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      providers: {
        gemini: {
          backend: 'acp',
          name: 'OpenCode',
          command: path.join(bin, 'opencode'),
          args: ['acp'],
          env: { HOME: home, ...xdg, OPENCODE_CONFIG: opencodeConfig, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' },
          modes: { supervised: 'build' },
          resumeCommand: 'opencode {flags} --session={id}',
        },
        copilot: {
          backend: 'acp',
          name: 'Qwen Code',
          command: path.join(bin, 'qwen'),
          args: ['--acp', '--auth-type=openai-responses'],
          env: { HOME: home, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.url, OPENAI_MODEL: 'scripted' },
          modes: { supervised: 'default', 'auto-accept-edits': 'auto-edit', 'full-access': 'yolo' },
        },
      },
      policy: { roots: [data.dir] },
    }),
  );
  running = await startHost({ dataDir: path.join(data.dir, 'host'), configFile, log: quiet });
  client = new TestClient(running.core);
}, 60_000);

afterAll(async () => {
  await running?.close();
  await model?.close();
  data?.cleanup();
});

const items = (chatId: string, turnId: string) => client.threads.get(chatId)!.items.filter((i) => i.turnId === turnId);
const turnOf = (chatId: string, turnId: string) => client.threads.get(chatId)!.get(turnId) as Extract<ChatItem, { kind: 'turn' }> | undefined;

async function turnWithApproval(chatId: string, file: string, decision: 'allow' | 'deny'): Promise<Extract<ChatItem, { kind: 'approval' }>> {
  const { turnId } = await client.ok('chat.send', { chatId, text: `please write the notes into ${file}.txt` });
  await until(() => items(chatId, turnId).some((i) => i.kind === 'approval' && i.decision === 'pending'), `${chatId}'s approval`, TURN_MS);
  const approval = items(chatId, turnId).find((i): i is Extract<ChatItem, { kind: 'approval' }> => i.kind === 'approval')!;
  await client.ok('chat.approve', { chatId, requestId: approval.requestId, decision });
  await until(() => turnOf(chatId, turnId) !== undefined && turnOf(chatId, turnId)!.state !== 'running', `${chatId}'s turn`, TURN_MS);
  return approval;
}

describe('OpenCode by its command line', () => {
  it('is listed under its own name and version, and answers a turn from the scripted model', { timeout: TURN_MS * 2 }, async () => {
    const { providers } = await client.ok('provider.list', {});
    expect(providers.find((p: { kind: string }) => p.kind === 'gemini')).toMatchObject({
      name: 'OpenCode',
      installed: true,
      version: '1.18.33',
      capabilities: { chat: true },
    });
    const work = path.join(data.dir, 'work-opencode');
    mkdirSync(work, { recursive: true });
    await client.ok('chat.create', { chatId: 'opencode', provider: 'gemini', cwd: work });
    await client.attach('opencode');
    const { turnId } = await client.ok('chat.send', { chatId: 'opencode', text: 'hello there' });
    await until(() => turnOf('opencode', turnId) !== undefined && turnOf('opencode', turnId)!.state !== 'running', 'the turn', TURN_MS);
    expect(turnOf('opencode', turnId)!.state).toBe('done');
    expect(items('opencode', turnId).some((i) => i.kind === 'assistant' && i.text.includes('Hello from the scripted model.'))).toBe(true);
  });

  // (Until the scripted server sent a done function_call with `status: "completed"`, as the real API
  // does, OpenCode's AI SDK refused that chunk, the call never ran, and it ended "Tool execution aborted".)
  it('asks before it runs a shell command: allowed, the file is written', { timeout: TURN_MS * 2 }, async () => {
    const approval = await turnWithApproval('opencode', 'allowed', 'allow');
    expect(JSON.stringify(approval.input)).toContain('echo from-opencode > allowed.txt');
    expect(readFileSync(path.join(data.dir, 'work-opencode', 'allowed.txt'), 'utf8').trim()).toBe('from-opencode');
  });

  it('denied, the folder is left alone', { timeout: TURN_MS * 2 }, async () => {
    await turnWithApproval('opencode', 'denied', 'deny');
    expect(existsSync(path.join(data.dir, 'work-opencode', 'denied.txt'))).toBe(false);
  });
});

describe('Qwen Code by its command line', () => {
  const folder = () => path.join(data.dir, 'work-qwen');

  it('is listed under its own name and version', async () => {
    const { providers } = await client.ok('provider.list', {});
    expect(providers.find((p: { kind: string }) => p.kind === 'copilot')).toMatchObject({
      name: 'Qwen Code',
      installed: true,
      version: '0.24.4',
      capabilities: { chat: true },
    });
  });

  it('asks before it runs a shell command: allowed, the file is written', { timeout: TURN_MS * 2 }, async () => {
    mkdirSync(folder(), { recursive: true });
    await client.ok('chat.create', { chatId: 'qwen', provider: 'copilot', cwd: folder() });
    await client.attach('qwen');
    const approval = await turnWithApproval('qwen', 'allowed', 'allow');
    expect(JSON.stringify(approval.input)).toContain('echo from-qwen > allowed.txt');
    expect(readFileSync(path.join(folder(), 'allowed.txt'), 'utf8').trim()).toBe('from-qwen');
  });

  it('denied, the folder is left alone', { timeout: TURN_MS * 2 }, async () => {
    await turnWithApproval('qwen', 'denied', 'deny');
    expect(existsSync(path.join(folder(), 'denied.txt'))).toBe(false);
  });
});
