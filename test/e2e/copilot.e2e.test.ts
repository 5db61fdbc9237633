// The real `copilot` (pinned @github/copilot) behind a real host process, the relay on workerd and
// SDK clients. Copilot runs on "your own model provider" (BYOK) with no GitHub sign-in: the
// provider settings are the variables of a Copilot account a client makes and saves through the
// relay, the model is the scripted Anthropic server on loopback, and HOME and every COPILOT_HOME
// are temporary folders, so nothing leaves this machine or touches a real home.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicServer } from '../support/anthropic-server.ts';
import { copilotScenario, GREETING, TEST_MODEL } from '../host/fixtures/copilot/scenario.ts';
import { CliChat } from './cli-chat.ts';
import { until } from '../support/until.ts';
import { HostProcess, Peer } from './peers.ts';

const root = path.resolve(import.meta.dirname, '../..');
const chat = new CliChat(new HostProcess('copilot-host', 'copilot-owner'), 'copilot-chat');
const work = mkdtempSync(path.join(tmpdir(), 'tether-copilot-e2e-work-'));
// Its own folder: the host's policy allows an account's config folder only where it names, never in its data folder.
const accountHome = mkdtempSync(path.join(tmpdir(), 'tether-copilot-e2e-byok-'));
let model: AnthropicServer;

beforeAll(async () => {
  model = await AnthropicServer.start({ reply: copilotScenario });
  const home = path.join(chat.host.dataDir, 'home');
  mkdirSync(home, { recursive: true });
  // The host's default Copilot account is a bare one: no model provider, so only the account below can talk to a model.
  const copilot = {
    backend: 'copilot',
    command: path.join(root, 'node_modules', '.bin', 'copilot'),
    home: path.join(home, '.copilot'),
    env: { HOME: home, COPILOT_OFFLINE: 'true' },
  };
  // As CliChat.open, with an account made and saved by a client before the chat is created.
  const { host } = chat;
  writeFileSync(
    path.join(host.dataDir, 'config.json'),
    JSON.stringify({
      providers: { copilot },
      // The account's model provider is a base URL: only a host that names it lets an account set it.
      policy: { roots: [work], accountEnv: ['COPILOT_PROVIDER_BASE_URL', 'COPILOT_PROVIDER_TYPE'], accountHomes: [accountHome] },
    }),
  );
  await host.start();
  chat.lobby = await Peer.lobby(host.hostId, host.ownerId);
  await chat.lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
  const made = await chat.lobby.socket.request('accounts.create', { kind: 'copilot', label: 'BYOK' });
  await chat.lobby.socket.request('accounts.save', {
    accounts: {
      ...made.accounts,
      [made.id]: {
        kind: 'copilot',
        label: 'BYOK',
        home: accountHome,
        env: [
          { name: 'COPILOT_PROVIDER_BASE_URL', value: model.url, sensitive: false },
          { name: 'COPILOT_PROVIDER_TYPE', value: 'anthropic', sensitive: false },
          { name: 'COPILOT_MODEL', value: TEST_MODEL, sensitive: false },
        ],
      },
    },
  });
  await chat.lobby.socket.request('chat.create', { chatId: chat.chatId, provider: 'copilot', account: made.id, cwd: work, runtimeMode: 'supervised' });
  chat.client = await Peer.chat(host.hostId, chat.chatId, host.ownerId);
  await chat.client.socket.request('chat.attach', { chatId: chat.chatId });
});

afterAll(async () => {
  await chat.close();
  await model?.close();
});

const inTurn = (turnId: string) => chat.inTurn(turnId);

describe('Copilot through the host, the relay and a client', () => {
  it("runs on the account's own model provider: its variables reach Copilot, its folder holds the session", async () => {
    const turnId = await chat.send('hello there');
    expect(await chat.settled(turnId)).toMatchObject({ state: 'done' });
    expect(inTurn(turnId).find((i) => i.kind === 'assistant')).toMatchObject({ text: GREETING, streaming: false });
    expect(model.conversation.length).toBeGreaterThan(0);
    expect(model.unexpected).toEqual([]);
    const info = await chat.until(() => (chat.info().usage.turns === 1 ? chat.info() : undefined), 'info after the first turn');
    expect(info).toMatchObject({ account: 'byok', model: TEST_MODEL, effectiveRuntimeMode: 'supervised', usage: { contextWindow: 168000 } });
    expect(readdirSync(path.join(accountHome, 'session-state'))).toContain(info.agentSessionId);
  });

  it('an approval decided from the client runs the real command', async () => {
    const turnId = await chat.send('run the build');
    const approval = await chat.until(() => inTurn(turnId).find((i) => i.kind === 'approval' && i.decision === 'pending'), 'approval card');
    const tool = inTurn(turnId).find((i) => i.kind === 'tool')!;
    expect(approval).toMatchObject({ toolName: 'Bash', toolUseId: tool.toolUseId, canAllowAlways: true, input: { command: 'echo built > build.txt' } });
    await chat.until(() => chat.info().status === 'needs-you', 'status needs-you');
    expect(existsSync(path.join(work, 'build.txt'))).toBe(false);
    await chat.request('chat.approve', { requestId: approval.requestId, decision: 'allow' });
    expect(await chat.settled(turnId)).toMatchObject({ state: 'done' });
    expect(inTurn(turnId).find((i) => i.kind === 'tool')).toMatchObject({ name: 'Bash', state: 'done' });
    expect(readFileSync(path.join(work, 'build.txt'), 'utf8')).toBe('built\n');
  });

  it('a denial from the client: the command does not run', async () => {
    const turnId = await chat.send('run both');
    await chat.until(() => inTurn(turnId).filter((i) => i.kind === 'approval' && i.decision === 'pending').length === 2, 'two approval cards');
    const [first, second] = inTurn(turnId).filter((i) => i.kind === 'approval');
    await chat.request('chat.approve', { requestId: first!.requestId, decision: 'deny' });
    await chat.request('chat.approve', { requestId: second!.requestId, decision: 'allow' });
    await chat.settled(turnId);
    // Each decision reached its own command.
    const denied = (first!.input.command as string).includes('one') ? 'one.txt' : 'two.txt';
    const allowed = denied === 'one.txt' ? 'two.txt' : 'one.txt';
    expect(existsSync(path.join(work, denied))).toBe(false);
    expect(existsSync(path.join(work, allowed))).toBe(true);
  });

  // Last, so the probes the host started with have long answered even on a loaded machine (the relay
  // here waits 10 s for a host's answer; a first list waits for a served CLI's own --version).
  it("provider.list reports all four CLIs: Copilot served, the others not installed (their copies in node_modules/.bin are the project's, not the person's)", async () => {
    let { providers } = await chat.lobby.socket.request('provider.list', {});
    // The served CLI's version, when slow to print, comes with a later list (the first one waits for it only briefly).
    if (providers[0]?.version === null) {
      providers = await until(
        async () => {
          ({ providers } = await chat.lobby.socket.request('provider.list', {}));
          return providers[0]?.version !== null && providers;
        },
        "the served CLI's version listed",
        { ms: 100_000, every: 200 },
      );
    }
    const pinned = (JSON.parse(readFileSync(path.join(root, 'node_modules/@github/copilot/package.json'), 'utf8')) as { version: string }).version;
    expect(providers.map((p: { kind: string }) => p.kind)).toEqual(['copilot', 'claude', 'codex', 'gemini']);
    expect(providers[0]).toMatchObject({
      name: 'Copilot CLI',
      installed: true,
      version: pinned,
      defaultModel: 'default',
      capabilities: { chat: true, allowAlways: true, denyReason: false },
    });
    // The host looks for the others on the person's PATH and skips node_modules/.bin (issue 19): the
    // project's pinned copies never stand in for a person's own CLI.
    for (const other of providers.slice(1)) expect(other).toMatchObject({ installed: false, version: null, models: [], capabilities: { chat: false } });
  }, 120_000);
});
