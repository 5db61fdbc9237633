import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeCommandFor } from '../../src/contracts/index.ts';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { PushEndpoint, type ReceivedPush } from '../support/push-endpoint.ts';
import { CLAUDE_BIN, startScenario } from '../host/claude-scenario.ts';
import { HostProcess, Peer, personCall, relayUrl } from './peers.ts';
import { signedInPerson } from './browser.ts';
import { screenOf, tmuxOn, waitShowing, writeTerminalScript } from './person-terminal.ts';

const OWNER = 'terminal-owner';
const root = path.resolve(import.meta.dirname, '../..');
const host = new HostProcess('terminal-host', OWNER);
const work = mkdtempSync(path.join(tmpdir(), 'tether-terminal-work-'));
const tmuxSocket = `tether-terminal-${process.pid}`;
let model: AnthropicServer;
let env: Record<string, string>;
let lobby: Peer;
/** A second client that asked not to get terminal approvals. */
let quiet: Peer;
let sessionId = '';
const pushEndpoint = new PushEndpoint();
/** The pushes about this session's approval `requestId` the owner's browser got. */
const pushesOf = (requestId: string) => pushEndpoint.received.filter((p) => p.payload.sessionId === sessionId && p.payload.action?.requestId === requestId);
const pushFor = (kind: string, test: (push: ReceivedPush) => boolean) =>
  pushEndpoint.waitFor((p) => p.payload.sessionId === sessionId && p.payload.kind === kind && test(p), `a ${kind} push`, 45_000);

type Frame = Record<string, any>;

const tmux = tmuxOn(tmuxSocket);

/** Opens a terminal window running `command` in the work folder, with the scenario's environment (and `claude` on PATH). */
function terminal(name: string, command: string): void {
  const script = path.join(env.HOME, `${name}.sh`);
  const vars = { ...env, PATH: `${path.dirname(CLAUDE_BIN)}:${process.env.PATH}`, TERM: 'xterm-256color' };
  writeTerminalScript(script, work, vars, command);
  const exists = (() => {
    try {
      tmux('has-session', '-t', 'term');
      return true;
    } catch {
      return false;
    }
  })();
  if (exists) tmux('new-window', '-t', 'term', '-n', name, `bash ${script}`);
  else tmux('new-session', '-d', '-s', 'term', '-n', name, '-x', '150', '-y', '50', `bash ${script}`);
}

const pane = (name: string) => tmux('capture-pane', '-p', '-t', `term:${name}`);

/** The text in the TUI's composer: its last line that starts with the prompt (none once the window closed, as /exit does). */
function composer(name: string, prompt: string): string | undefined {
  let text: string;
  try {
    text = pane(name);
  } catch {
    return undefined;
  }
  return text
    .split('\n')
    .filter((l) => l.startsWith(prompt))
    .at(-1)
    ?.slice(prompt.length)
    .trim();
}

/**
 * Types a line as the person would, and presses Enter only once the composer shows it. Sent in one
 * go with the text, the Enter was once taken as part of the typing (the line stayed in the composer
 * and the next one was appended to it: "KW-APPROVEKW-APPROVE").
 */
async function type(name: string, text: string, prompt = '❯'): Promise<void> {
  tmux('send-keys', '-t', `term:${name}`, '-l', text);
  await until(() => composer(name, prompt) === text, `${text} in the composer`);
  tmux('send-keys', '-t', `term:${name}`, 'Enter');
  await until(() => composer(name, prompt) !== text, `${text} sent`);
}

const until = <T>(check: () => T | undefined | null | false, what: string, ms = 45_000): Promise<T> =>
  waitShowing(check, what, () => `--- host\n${host.output.slice(-3000)}\n--- pane\n${safePane()}`, ms);

const safePane = () => screenOf(tmux);

const statuses = (peer: Peer) => peer.frames.filter((f) => f.event === 'session.status' && f.payload.sessionId === sessionId).map((f) => f.payload);
const lastStatus = (peer: Peer) => statuses(peer).at(-1);
const approvalsFrames = (peer: Peer) => peer.frames.filter((f) => f.event === 'session.approvals' && f.payload.sessionId === sessionId);
const pendingApprovals = (peer: Peer) => approvalsFrames(peer).at(-1)?.payload.approvals ?? [];
/** The session's items as a client folds them from `session.items` (upserts by id). */
function items(peer: Peer): Frame[] {
  const out = new Map<string, Frame>();
  for (const f of peer.frames) {
    if (f.event !== 'session.items' || f.payload.sessionId !== sessionId) continue;
    for (const item of f.payload.items) out.set(item.id, item);
  }
  return [...out.values()];
}

beforeAll(async () => {
  const scenario = await startScenario();
  model = scenario.server;
  env = scenario.env;
  // The person's own Claude Code setup: past onboarding, this folder trusted, the key approved, and a
  // hook of their own that must keep working beside the host's.
  mkdirSync(env.CLAUDE_CONFIG_DIR, { recursive: true });
  writeFileSync(
    path.join(env.CLAUDE_CONFIG_DIR, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: 'dark',
      customApiKeyResponses: { approved: [env.ANTHROPIC_API_KEY.slice(-20)], rejected: [] },
      projects: { [work]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    }),
  );
  writeFileSync(
    path.join(env.CLAUDE_CONFIG_DIR, 'settings.json'),
    JSON.stringify({
      hooks: { Stop: [{ matcher: '', hooks: [{ type: 'command', command: `touch ${JSON.stringify(path.join(env.HOME, 'own-hook-ran'))}` }] }] },
    }),
  );
  writeFileSync(
    path.join(host.dataDir, 'config.json'),
    JSON.stringify({
      providers: { claude: { backend: 'claude', command: CLAUDE_BIN, env } },
      policy: { roots: [work] },
    }),
  );
  await host.start();
  await pushEndpoint.start();
  pushEndpoint.vapidKey = ((await (await fetch(`${relayUrl()}/api/push/key`)).json()) as { publicKey: string }).publicKey;
  await personCall(OWNER, 'POST', '/api/push/subscriptions', pushEndpoint.subscribe('owner-phone'));
  const installed = await host.cli('hooks', 'install', '--yes');
  expect(installed).toContain('installed');
  lobby = await Peer.lobby(host.hostId, OWNER);
  quiet = await Peer.lobby(host.hostId, OWNER);
  await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
  await quiet.socket.request('session.approvalPreference', { enabled: false });
}, 120_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    /* already gone */
  }
  lobby?.close();
  quiet?.close();
  await host.stop();
  await model?.close();
  await pushEndpoint.stop();
});

describe("a Claude Code session in the person's own terminal, through hooks, the host and the relay", () => {
  it('appears to a client with its folder and status as soon as the CLI starts', async () => {
    terminal('claude', 'claude');
    const started = await lobby.waitFor((f) => f.event === 'session.status' && f.payload.cwd === work, 'session.status of the new session', 60_000);
    sessionId = started.payload.sessionId;
    expect(started.payload.agent).toMatchObject({ kind: 'claude', agentSessionId: sessionId, status: 'idle', live: true });
    expect(path.dirname(path.dirname(started.payload.agent.transcriptPath))).toBe(path.join(env.CLAUDE_CONFIG_DIR, 'projects'));
    expect(path.basename(started.payload.agent.transcriptPath)).toBe(`${sessionId}.jsonl`);
    const { sessions } = await lobby.socket.request('session.list', {});
    expect(sessions.find((s: Frame) => s.sessionId === sessionId)).toMatchObject({ cwd: work, agent: { status: 'idle', live: true } });
  });

  it('shows what is typed in the terminal and the reply, read from the transcript, with running then idle', async () => {
    await type('claude', 'KW-HELLO');
    await until(() => items(lobby).find((i) => i.kind === 'assistant' && i.text === 'Hello! How can I help today?'), 'the reply as an item');
    expect(items(lobby).find((i) => i.kind === 'user')).toMatchObject({ text: 'KW-HELLO' });
    expect(items(lobby).find((i) => i.kind === 'thinking')).toMatchObject({ text: 'The user greets me; I answer briefly.' });
    await until(() => lastStatus(lobby)?.agent.status === 'idle' && statuses(lobby).some((s) => s.agent.status === 'running'), 'running, then idle');
    expect(lastStatus(lobby).agent.suggestedTitle).toBe('KW-HELLO');
    const { items: history } = await lobby.socket.request('session.history', { sessionId });
    expect(history.map((i: Frame) => i.kind)).toEqual(['user', 'thinking', 'assistant']);
    // The person's own Stop hook ran beside the host's.
    expect(existsSync(path.join(env.HOME, 'own-hook-ran'))).toBe(true);
  });

  it('a tool that needs permission shows as an approval; allowed from the client, the terminal goes on and the file is written', async () => {
    await type('claude', 'KW-APPROVE');
    const [approval] = await until(() => (pendingApprovals(lobby).length > 0 ? pendingApprovals(lobby) : undefined), 'the approval');
    expect(approval).toMatchObject({ sessionId, toolName: 'Bash', summary: 'Bash: mkdir -p probe && date > probe/stamp.txt' });
    expect(approval.choices.map((c: Frame) => c.kind)).toEqual(['allow', 'remember', 'deny']);
    expect(approval.expiresAt).toBeGreaterThan(approval.createdAt);
    await until(() => lastStatus(lobby)?.agent.status === 'needs-you', 'needs-you');
    // The terminal shows its own prompt at the same time.
    await until(() => pane('claude').includes('Do you want to proceed?'), "the terminal's own prompt");
    // The owner's phone was told, with the approval's own choices as buttons.
    const asked = await pushFor('needs-you', (p) => p.payload.action?.requestId === approval.requestId);
    expect(asked.payload).toMatchObject({
      title: 'In your terminal',
      body: expect.stringMatching(/^Approval needed: Bash · /),
      chatId: '',
      buzz: true,
      url: `/hosts/${host.hostId}/sessions/${sessionId}`,
    });
    // Deny before remember: a browser may show only the first two buttons.
    expect(asked.payload.action && 'choices' in asked.payload.action && asked.payload.action.choices.map((c) => c.id)).toEqual(['allow', 'deny', 'remember']);
    expect(await lobby.socket.request('session.approve', { sessionId, requestId: approval.requestId, choiceId: 'allow' })).toEqual({ accepted: true });
    await until(() => existsSync(path.join(work, 'probe', 'stamp.txt')), 'the file the tool writes');
    await until(() => pendingApprovals(lobby).length === 0, 'the card settled');
    const settled = await pushFor('answered', (p) => p.payload.tag === asked.payload.tag);
    expect(settled.payload).toMatchObject({ body: expect.stringMatching(/^No longer waiting: Bash · /), buzz: false });
    expect(settled.payload.action).toBeUndefined();
    await until(() => items(lobby).find((i) => i.kind === 'tool' && i.toolUseId === approval.requestId && i.state === 'done'), 'the tool done');
    await until(() => lastStatus(lobby)?.agent.status === 'idle', 'idle after the turn');
    // A second answer to the same request is too late.
    expect(await lobby.socket.request('session.approve', { sessionId, requestId: approval.requestId, choiceId: 'deny' })).toEqual({ accepted: false });
    // The client that asked not to get approvals got none, but did get the session's status.
    expect(approvalsFrames(quiet)).toEqual([]);
    expect(statuses(quiet).some((s) => s.agent.status === 'needs-you')).toBe(true);
  });

  it("answered in the terminal, the client's card settles and a late client answer is not accepted", async () => {
    rmSync(path.join(work, 'probe'), { recursive: true, force: true });
    const before = approvalsFrames(lobby).length;
    await type('claude', 'KW-APPROVE');
    const [approval] = await until(
      () => (approvalsFrames(lobby).length > before && pendingApprovals(lobby).length > 0 ? pendingApprovals(lobby) : undefined),
      'the second approval',
    );
    await until(() => pane('claude').includes('Do you want to proceed?'), "the terminal's own prompt");
    tmux('send-keys', '-t', 'term:claude', '1');
    await until(() => existsSync(path.join(work, 'probe', 'stamp.txt')), 'the file, allowed in the terminal');
    await until(() => pendingApprovals(lobby).length === 0, 'the card settled by the terminal');
    const asked = await pushFor('needs-you', (p) => p.payload.action?.requestId === approval.requestId);
    await pushFor('answered', (p) => p.payload.tag === asked.payload.tag);
    // The notification's button pressed after the terminal answered: the host's `accepted: false` is the
    // relay's `request-not-found`, as for a chat's late press, in words.
    const late = await fetch(`${relayUrl()}/api/push/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: asked.payload.action!.token, choiceId: 'allow' }),
    });
    expect({ status: late.status, body: await late.json() }).toEqual({
      status: 404,
      body: { code: 'request-not-found', message: expect.stringContaining('already answered in the terminal') },
    });
    expect(pushesOf(approval.requestId).filter((p) => p.payload.kind === 'needs-you')).toHaveLength(1);
    expect(await lobby.socket.request('session.approve', { sessionId, requestId: approval.requestId, choiceId: 'allow' })).toEqual({ accepted: false });
    await until(() => lastStatus(lobby)?.agent.status === 'idle', 'idle');
  });

  it('the web app lists it under the machine, draws its items, and its approval card lets the terminal go on', async () => {
    const person = await signedInPerson('desktop', OWNER, { path: `/hosts/${host.hostId}` });
    try {
      const { page } = person;
      const card = page.getByTestId('terminal-sessions');
      await card
        .getByRole('link', { name: 'KW-HELLO' })
        .click({ timeout: 20_000 })
        .catch(async (error: unknown) => {
          throw new Error(`${String(error)}\n--- page\n${await page.locator('body').innerText()}\n--- errors\n${person.errors.join('\n')}`);
        });
      await page.getByText('Hello! How can I help today?').waitFor();
      await page.getByTestId('terminal-status').getByText('Idle').waitFor();
      rmSync(path.join(work, 'probe'), { recursive: true, force: true });
      await type('claude', 'KW-APPROVE');
      const approval = page.getByTestId('terminal-approval');
      await approval.getByText('Bash: mkdir -p probe && date > probe/stamp.txt').waitFor();
      await page.getByTestId('terminal-status').getByText('Needs you').waitFor();
      await approval.getByRole('button', { name: 'Allow once' }).click();
      await until(() => existsSync(path.join(work, 'probe', 'stamp.txt')), 'the file, allowed in the app');
      await approval.waitFor({ state: 'detached' });
      await page.getByTestId('terminal-status').getByText('Idle').waitFor();
      expect(person.errors).toEqual([]);
    } finally {
      await person.close();
    }
  });

  let chatId = '';
  it('is continued as a chat once the terminal let go, with its history whole', async () => {
    await expect(lobby.socket.request('session.resume', { sessionId })).rejects.toMatchObject({ code: 'chat-busy' });
    await type('claude', '/exit');
    await until(() => lastStatus(lobby)?.agent.status === 'exited', 'exited');
    const info = await lobby.socket.request('session.resume', { sessionId });
    chatId = info.chatId;
    expect(info).toMatchObject({ provider: 'claude', cwd: work, agentSessionId: sessionId });
    const client = await Peer.chat(host.hostId, chatId, OWNER);
    try {
      const attached = await client.socket.request('chat.attach', { chatId });
      const texts = attached.items.map((i: Frame) => `${i.kind}:${i.text ?? i.name ?? ''}`);
      expect(texts.slice(0, 3)).toEqual(['user:KW-HELLO', 'thinking:The user greets me; I answer briefly.', 'assistant:Hello! How can I help today?']);
      expect(attached.items.filter((i: Frame) => i.kind === 'tool' && i.name === 'Bash' && i.state === 'done')).toHaveLength(3);
      expect(attached.items.at(-1)).toMatchObject({ kind: 'note', text: expect.stringContaining('happened in the terminal') });
      const sent = await client.socket.request('chat.send', { chatId, text: 'KW-HELLO again' });
      await until(() => [...client.items().values()].find((i) => i.kind === 'turn' && i.id === sent.turnId && i.state === 'done'), "the chat's turn");
      // The CLI resumed the terminal's conversation: the model saw the terminal's messages before this one.
      const last = model.requests.at(-1)!;
      const said = JSON.stringify(last.body.messages);
      expect(said).toContain('KW-APPROVE');
      expect(said).toContain('KW-HELLO again');
      await client.socket.request('chat.kill', { chatId });
    } finally {
      client.close();
    }
  });

  it('is resumed in the terminal with the printed command', async () => {
    const { providers } = await lobby.socket.request('provider.list', {});
    const template = providers.find((p: Frame) => p.kind === 'claude')!.resumeCommand as string;
    const command = resumeCommandFor(template, sessionId);
    expect(command).toBe(`claude --resume='${sessionId}'`);
    const before = statuses(lobby).length;
    terminal('again', command);
    await until(
      () =>
        statuses(lobby)
          .slice(before)
          .some((s) => s.agent.live && s.agent.status !== 'exited'),
      'the session live again',
    );
    await until(() => pane('again').includes('Hello! How can I help today?'), 'the history in the terminal');
  });
});
