// OpenCode 1.18.33 and Qwen Code 0.24.4 behind a real host process, served by their command lines
// (`backend: "acp"`), driven through the real relay: a turn asks to run a shell command, the
// approval reaches the client over the relay, allowed the file is written, denied it is not. Both
// talk to the scripted OpenAI Responses server on loopback (test/support/openai-server.ts); the
// binaries are the pinned ones scripts/acp-agents.ts installs.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiServer } from '../support/openai-server.ts';
import { CliChat } from './cli-chat.ts';
import { HostProcess } from './peers.ts';

const bin = path.resolve(import.meta.dirname, '../../node_modules/.bin');
const TURN_MS = 150_000;
const SHELL: Record<string, string> = { opencode: 'bash', qwen: 'run_shell_command' };

const host = new HostProcess('acp-agents-host', 'acp-agents-owner');
const work = path.join(host.dataDir, 'work');
let model: OpenAiServer;
const opencode = new CliChat(host, 'opencode-chat');
let qwen: CliChat;

beforeAll(async () => {
  model = await OpenAiServer.start((request) => {
    if (request.toolOutput) return { steps: [{ type: 'text', text: 'Done with the notes.' }] };
    const input = JSON.stringify(request.body.input ?? '');
    const tools = Array.isArray(request.body.tools) ? request.body.tools.map((t: { name?: string }) => t.name) : [];
    const agent = tools.includes('bash') ? 'opencode' : tools.includes('run_shell_command') ? 'qwen' : null;
    const file = /write the notes into (\S+?)\.txt/.exec(input)?.[1];
    if (agent && file)
      return { steps: [{ type: 'call', name: SHELL[agent]!, arguments: { command: `echo from-${agent} > ${file}.txt`, description: 'Write the notes' } }] };
    return { steps: [{ type: 'text', text: 'Hello from the scripted model.' }] };
  });
  const home = path.join(host.dataDir, 'agent-home');
  for (const dir of [home, path.join(work, 'opencode'), path.join(work, 'qwen')]) mkdirSync(dir, { recursive: true });
  const opencodeConfig = path.join(home, 'opencode.json');
  writeFileSync(
    opencodeConfig,
    JSON.stringify({
      provider: {
        local: { npm: '@ai-sdk/openai', name: 'Local', options: { baseURL: model.url, apiKey: 'sk-test' }, models: { scripted: { name: 'Scripted' } } },
      },
      model: 'local/scripted',
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
  await opencode.open(
    {
      providers: {
        gemini: {
          backend: 'acp',
          name: 'OpenCode',
          command: path.join(bin, 'opencode'),
          args: ['acp'],
          env: { HOME: home, ...xdg, OPENCODE_CONFIG: opencodeConfig, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' },
          modes: { supervised: 'build' },
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
      policy: { roots: [work] },
    },
    { provider: 'gemini', cwd: path.join(work, 'opencode') },
  );
  await opencode.lobby.socket.request('chat.create', { chatId: 'qwen-chat', provider: 'copilot', cwd: path.join(work, 'qwen') });
  qwen = await opencode.join('qwen-chat');
}, 120_000);

afterAll(async () => {
  await opencode?.close();
  await model?.close();
});

/** A turn that asks to write `file`: the approval arrives through the relay and is answered there. */
async function turnWithApproval(chat: CliChat, file: string, decision: 'allow' | 'deny'): Promise<Record<string, any>> {
  const turnId = await chat.send(`please write the notes into ${file}.txt`);
  const approval = await chat.until(
    () => chat.inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending'),
    `${chat.chatId}'s approval`,
    TURN_MS,
  );
  await chat.request('chat.approve', { requestId: approval.requestId, decision });
  const turn = await chat.until(
    () => {
      const t = chat.turn(turnId);
      return t && t.state !== 'running' ? t : undefined;
    },
    `${chat.chatId}'s turn`,
    TURN_MS,
  );
  expect(turn.state).toBe('done');
  return approval;
}

describe.each([
  ['OpenCode', 'opencode', () => opencode],
  ['Qwen Code', 'qwen', () => qwen],
] as const)('%s through the relay', (_name, agent, chat) => {
  it('asks before its shell command; allowed, the file is written', { timeout: TURN_MS * 2 }, async () => {
    const approval = await turnWithApproval(chat(), 'allowed', 'allow');
    expect(JSON.stringify(approval.input)).toContain(`echo from-${agent} > allowed.txt`);
    expect(readFileSync(path.join(work, agent, 'allowed.txt'), 'utf8').trim()).toBe(`from-${agent}`);
  });

  it('denied, the folder is left alone', { timeout: TURN_MS * 2 }, async () => {
    await turnWithApproval(chat(), 'denied', 'deny');
    expect(existsSync(path.join(work, agent, 'denied.txt'))).toBe(false);
  });
});
