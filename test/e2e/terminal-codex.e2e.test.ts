// A person's own Codex terminal session: the real `codex` TUI (pinned @openai/codex 0.171.0) in tmux,
// against the scripted Responses server on loopback, with a real host (its hooks installed and
// trusted by `tether host hooks install --cli codex`) and the relay on workerd; clients on the SDK's
// socket. The host learns of the session through Codex's hooks and reads the conversation from its
// rollout; the test types into the terminal with tmux send-keys and looks at the pane only to see
// what the person sees.
//
// What Codex 0.171 does differently from Claude Code, and this test holds it to: its TUI runs its
// hooks from a managed app-server daemon, which fires SessionStart with the first prompt (not at
// launch) and SessionEnd once it unloads the thread after the TUI exits; and it shows its own
// approval prompt only after the PermissionRequest hook returned, so the terminal asks once the
// card's wait (here codexApprovalWaitSeconds: 8) ran out.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeCommandFor } from '../../src/contracts/index.ts';
import { OpenAiServer, type ScriptedReply } from '../support/openai-server.ts';
import { TEST_KEY_VARIABLE, writeCodexHome } from '../host/fixtures/codex/scenario.ts';
import { HostProcess, Peer } from './peers.ts';
import { screenOf, tmuxOn, waitShowing, writeTerminalScript } from './person-terminal.ts';

const OWNER = 'terminal-codex-owner';
const root = path.resolve(import.meta.dirname, '../..');
const CODEX_BIN = path.join(root, 'node_modules', '.bin', 'codex');
const host = new HostProcess('terminal-codex-host', OWNER);
const work = mkdtempSync(path.join(tmpdir(), 'tether-terminal-codex-work-'));
const home = mkdtempSync(path.join(tmpdir(), 'tether-terminal-codex-home-'));
const tmuxSocket = `tether-terminal-codex-${process.pid}`;
const COMMAND = 'mkdir -p probe && date > probe/stamp.txt';
let model: OpenAiServer;
let lobby: Peer;
let sessionId = '';

type Frame = Record<string, any>;

const reply = (...steps: NonNullable<ScriptedReply['steps']>): ScriptedReply => ({ steps, usage: { input: 100, output: 10 } });

const tmux = tmuxOn(tmuxSocket);

const termEnv = () => ({ CODEX_HOME: home, [TEST_KEY_VARIABLE]: 'test-key', TERM: 'xterm-256color' });

function terminal(name: string, command: string): void {
  const script = path.join(home, `${name}.sh`);
  writeTerminalScript(script, work, { ...termEnv(), PATH: `${path.dirname(CODEX_BIN)}:${process.env.PATH}` }, command);
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
const safePane = () => screenOf(tmux);

const until = <T>(check: () => T | undefined | null | false, what: string, ms = 60_000): Promise<T> =>
  waitShowing(check, what, () => `--- host\n${host.output.slice(-3000)}\n--- pane\n${safePane()}`, ms);

/** Types a line into the TUI once its composer is there, then Enter. */
async function type(window: string, text: string): Promise<void> {
  await until(() => pane(window).includes('›'), 'the composer');
  tmux('send-keys', '-t', `term:${window}`, '-l', text);
  await until(() => pane(window).includes(text), `the typed ${text}`);
  tmux('send-keys', '-t', `term:${window}`, 'Enter');
}

const statuses = (peer: Peer) => peer.frames.filter((f) => f.event === 'session.status' && f.payload.sessionId === sessionId).map((f) => f.payload);
const lastStatus = (peer: Peer) => statuses(peer).at(-1);
const approvalsFrames = (peer: Peer) => peer.frames.filter((f) => f.event === 'session.approvals' && f.payload.sessionId === sessionId);
const pendingApprovals = (peer: Peer) => approvalsFrames(peer).at(-1)?.payload.approvals ?? [];
function items(peer: Peer): Frame[] {
  const out = new Map<string, Frame>();
  for (const f of peer.frames) {
    if (f.event !== 'session.items' || f.payload.sessionId !== sessionId) continue;
    for (const item of f.payload.items) out.set(item.id, item);
  }
  return [...out.values()];
}

beforeAll(async () => {
  model = await OpenAiServer.start((request) => {
    if (request.userText.includes('KW-APPROVE')) {
      if (request.toolOutput) return reply({ type: 'text', text: 'Stamp written.' });
      // Outside the sandbox: Codex asks the person (approval_policy on-request) before it runs.
      return reply({
        type: 'call',
        name: 'exec_command',
        arguments: { cmd: COMMAND, sandbox_permissions: 'require_escalated', justification: 'Write the stamp file' },
      });
    }
    if (request.userText.includes('Generate a concise')) return reply({ type: 'text', text: 'Greet the model' });
    return reply({ type: 'reasoning', text: 'A greeting; answer briefly.' }, { type: 'text', text: 'Hello from Codex in the terminal.' });
  });
  // The person's Codex: signed in with a key, this folder trusted, no update check, typed Enter taken as Enter.
  writeCodexHome(home, model.url);
  appendFileSync(
    path.join(home, 'config.toml'),
    `check_for_update_on_startup = false\ndisable_paste_burst = true\n[projects.${JSON.stringify(work)}]\ntrust_level = "trusted"\n`,
  );
  writeFileSync(
    path.join(host.dataDir, 'config.json'),
    JSON.stringify({
      providers: { codex: { backend: 'codex', command: CODEX_BIN, home, env: { [TEST_KEY_VARIABLE]: 'test-key' } } },
      policy: { roots: [work], modeCeiling: 'full-access' },
      terminal: { codexApprovalWaitSeconds: 8 },
    }),
  );
  await host.start();
  const installed = await host.cli('hooks', 'install', '--cli', 'codex', '--yes');
  expect(installed).toContain(`codex  ${path.join(home, 'hooks.json')}  installed, trusted`);
  lobby = await Peer.lobby(host.hostId, OWNER);
  await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
}, 120_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    /* already gone */
  }
  // The TUI started Codex's managed daemon in this home; it outlives the TUI unless stopped.
  try {
    execFileSync(CODEX_BIN, ['app-server', 'daemon', 'stop'], { env: { ...process.env, ...termEnv() }, stdio: 'ignore', timeout: 20_000 });
  } catch {
    /* not running */
  }
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(home)) process.kill(Number(pid));
    } catch {
      /* gone */
    }
  }
  lobby?.close();
  await host.stop();
  await model?.close();
});

describe("a Codex session in the person's own terminal, through its hooks, the host and the relay", () => {
  it('appears with its folder and status once the first prompt is sent, its reply read from the rollout', async () => {
    terminal('codex', 'codex');
    await type('codex', 'KW-HELLO');
    const started = await lobby.waitFor((f) => f.event === 'session.status' && f.payload.cwd === work, 'session.status of the new session', 60_000);
    sessionId = started.payload.sessionId;
    expect(started.payload.agent).toMatchObject({ kind: 'codex', agentSessionId: sessionId, live: true });
    expect(started.payload.agent.transcriptPath.startsWith(path.join(home, 'sessions') + path.sep)).toBe(true);
    expect(path.basename(started.payload.agent.transcriptPath)).toMatch(new RegExp(`^rollout-.*-${sessionId}\\.jsonl$`));
    await until(() => items(lobby).find((i) => i.kind === 'assistant' && i.text === 'Hello from Codex in the terminal.'), 'the reply as an item');
    expect(items(lobby).find((i) => i.kind === 'user')).toMatchObject({ text: 'KW-HELLO' });
    expect(items(lobby).find((i) => i.kind === 'thinking')).toMatchObject({ text: 'A greeting; answer briefly.' });
    await until(() => lastStatus(lobby)?.agent.status === 'idle' && statuses(lobby).some((s) => s.agent.status === 'running'), 'running, then idle');
    expect(lastStatus(lobby).agent.suggestedTitle).toBe('KW-HELLO');
  });

  it('a command that needs permission shows as an approval while the terminal waits; allowed from the client, Codex runs it', async () => {
    await type('codex', 'KW-APPROVE');
    const [approval] = await until(() => (pendingApprovals(lobby).length > 0 ? pendingApprovals(lobby) : undefined), 'the approval');
    expect(approval).toMatchObject({ sessionId, toolName: 'Bash', summary: `Bash: ${COMMAND}` });
    expect(approval.choices.map((c: Frame) => c.kind)).toEqual(['allow', 'deny']);
    await until(() => lastStatus(lobby)?.agent.status === 'needs-you', 'needs-you');
    await until(() => pane('codex').includes('Running hook'), 'the terminal waiting on the hook');
    expect(await lobby.socket.request('session.approve', { sessionId, requestId: approval.requestId, choiceId: 'allow' })).toEqual({ accepted: true });
    await until(() => existsSync(path.join(work, 'probe', 'stamp.txt')), 'the file the command writes');
    await until(() => pendingApprovals(lobby).length === 0, 'the card settled');
    await until(() => items(lobby).find((i) => i.kind === 'tool' && i.toolUseId === approval.requestId && i.state === 'done'), 'the tool done');
    await until(() => items(lobby).find((i) => i.kind === 'assistant' && i.text === 'Stamp written.'), 'the reply after it');
    await until(() => lastStatus(lobby)?.agent.status === 'idle', 'idle after the turn');
    expect(pane('codex')).not.toContain('Would you like to run the following command?');
    expect(await lobby.socket.request('session.approve', { sessionId, requestId: approval.requestId, choiceId: 'deny' })).toEqual({ accepted: false });
  });

  it('unanswered, the card expires, the terminal asks, is answered there, and a late client answer is not accepted', async () => {
    rmSync(path.join(work, 'probe'), { recursive: true, force: true });
    const before = approvalsFrames(lobby).length;
    await type('codex', 'KW-APPROVE again');
    const [approval] = await until(
      () => (approvalsFrames(lobby).length > before && pendingApprovals(lobby).length > 0 ? pendingApprovals(lobby) : undefined),
      'the second approval',
    );
    await until(() => pane('codex').includes('Would you like to run the following command?'), "the terminal's own prompt, once the card expired");
    await until(() => pendingApprovals(lobby).length === 0, 'the card gone');
    tmux('send-keys', '-t', 'term:codex', '1');
    await until(() => existsSync(path.join(work, 'probe', 'stamp.txt')), 'the file, allowed in the terminal');
    expect(await lobby.socket.request('session.approve', { sessionId, requestId: approval.requestId, choiceId: 'allow' })).toEqual({ accepted: false });
    await until(() => lastStatus(lobby)?.agent.status === 'idle', 'idle');
  });

  let chatId = '';
  it('is continued as a chat once Codex let go of it, with its history whole', async () => {
    await expect(lobby.socket.request('session.resume', { sessionId })).rejects.toMatchObject({ code: 'chat-busy' });
    await type('codex', '/exit');
    // Codex's daemon ends the session (SessionEnd) once it unloads the thread, a while after the TUI exits.
    await until(() => lastStatus(lobby)?.agent.status === 'exited', 'exited', 120_000);
    const info = await lobby.socket.request('session.resume', { sessionId });
    chatId = info.chatId;
    expect(info).toMatchObject({ provider: 'codex', cwd: work, agentSessionId: sessionId });
    const client = await Peer.chat(host.hostId, chatId, OWNER);
    try {
      const attached = await client.socket.request('chat.attach', { chatId });
      const texts = attached.items.map((i: Frame) => `${i.kind}:${i.text ?? i.name ?? ''}`);
      expect(texts.slice(0, 3)).toEqual(['user:KW-HELLO', 'thinking:A greeting; answer briefly.', 'assistant:Hello from Codex in the terminal.']);
      expect(attached.items.filter((i: Frame) => i.kind === 'tool' && i.name === 'Bash' && i.state === 'done')).toHaveLength(2);
      expect(attached.items.at(-1)).toMatchObject({ kind: 'note', text: expect.stringContaining('happened in the terminal') });
      const sent = await client.socket.request('chat.send', { chatId, text: 'KW-HELLO again' });
      await until(
        () => [...client.items().values()].find((i) => i.kind === 'turn' && i.id === sent.turnId && i.state !== 'running'),
        "the chat's turn",
        90_000,
      );
      const said = JSON.stringify(model.requests.at(-1)!.body.input);
      expect(said).toContain('KW-APPROVE');
      expect(said).toContain('KW-HELLO again');
      await client.socket.request('chat.kill', { chatId });
    } finally {
      client.close();
    }
  }, 240_000);

  it('is resumed in the terminal with the printed command', async () => {
    const { providers } = await lobby.socket.request('provider.list', {});
    const command = resumeCommandFor(providers.find((p: Frame) => p.kind === 'codex')!.resumeCommand as string, sessionId);
    expect(command).toBe(`codex resume -- '${sessionId}'`);
    terminal('again', command);
    await until(() => pane('again').includes('Hello from Codex in the terminal.'), 'the history in the terminal');
  });
});
