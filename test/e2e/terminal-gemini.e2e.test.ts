// A person's own Gemini CLI terminal session, listed with its status only: the real `gemini` TUI
// (pinned @google/gemini-cli 0.61.0) in tmux, talking to the scripted Gemini API server on loopback
// (a temporary GEMINI_CLI_HOME and HOME, so nothing touches the real home), with a real host whose
// config has a gemini backend, the relay on workerd, and a client on the SDK's socket. Tether reads
// no hooks of Gemini CLI: the host finds the process in /proc and says what it can know from that
// (its folder, running, then exited). The host's own gemini chat (`gemini --acp`, its child) is
// no terminal session.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeminiServer } from '../support/gemini-server.ts';
import { geminiScenario, geminiTestEnv, TEST_MODEL, writeGeminiHome } from '../host/fixtures/gemini/scenario.ts';
import { CliChat } from './cli-chat.ts';
import { HostProcess } from './peers.ts';
import { signedInPerson } from './browser.ts';
import { screenOf, tmuxOn, waitShowing, writeTerminalScript } from './person-terminal.ts';

const GEMINI_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/gemini');
const chat = new CliChat(new HostProcess('terminal-gemini-host', 'terminal-gemini-owner'), 'terminal-gemini-chat');
const chatFolder = realpathSync(mkdtempSync(path.join(tmpdir(), 'tether-terminal-gemini-chat-')));
const work = realpathSync(mkdtempSync(path.join(tmpdir(), 'tether-terminal-gemini-work-')));
const home = path.join(chat.host.dataDir, 'gemini-home');
const tmuxSocket = `tether-terminal-gemini-${process.pid}`;
let model: GeminiServer;

type Frame = Record<string, any>;

const tmux = tmuxOn(tmuxSocket);
const pane = () => screenOf(tmux);

const until = <T>(check: () => T | undefined | null | false, what: string, ms = 60_000): Promise<T> =>
  waitShowing(check, what, () => `--- host\n${chat.host.output.slice(-3000)}\n--- pane\n${pane()}`, ms);

const terminalStatuses = () => chat.lobby.frames.filter((f: Frame) => f.event === 'session.status').map((f: Frame) => f.payload);
const inWork = () => terminalStatuses().filter((s: Frame) => s.cwd === work);

beforeAll(async () => {
  model = await GeminiServer.start(geminiScenario);
  writeGeminiHome(home);
  mkdirSync(work, { recursive: true });
  await chat.open(
    { providers: { gemini: { backend: 'gemini', command: GEMINI_BIN, home, env: geminiTestEnv(model.url, home) } }, policy: { roots: [chatFolder] } },
    { provider: 'gemini', cwd: chatFolder, runtimeMode: 'supervised', selection: { model: TEST_MODEL, options: {} } },
  );
}, 120_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    /* already gone */
  }
  // A gemini the test started that is still there (it outlives its terminal): by the pid its session names, and its relaunched child.
  for (const { sessionId } of inWork()) {
    const pid = Number(/^gemini-(\d+)-/.exec(sessionId)?.[1]);
    if (!pid) continue;
    try {
      execFileSync('pkill', ['-P', String(pid)]);
    } catch {
      /* none */
    }
    try {
      process.kill(pid);
    } catch {
      /* gone */
    }
  }
  await chat.close();
  await model?.close();
});

describe("a Gemini CLI session in the person's own terminal, status only", () => {
  it("appears with its folder, running, while the TUI runs; the host's own gemini chat is not listed", async () => {
    // The host's chat runs its gemini now (a turn is under way), so a scan meets it.
    const turnId = await chat.send('hello there');
    expect(await chat.settled(turnId)).toMatchObject({ state: 'done' });

    const script = path.join(home, 'term.sh');
    const env = { ...geminiTestEnv(model.url, home), GEMINI_CLI_HOME: home, TERM: 'xterm-256color' };
    writeTerminalScript(script, work, { ...env, PATH: `${path.dirname(GEMINI_BIN)}:${process.env.PATH}` }, `gemini -m ${TEST_MODEL}`);
    tmux('new-session', '-d', '-s', 'term', '-x', '150', '-y', '50', `bash ${script}`);

    const started = await until(() => inWork()[0], "session.status of the terminal's gemini", 60_000);
    expect(started).toMatchObject({ cwd: work, agent: { kind: 'gemini', status: 'running', live: true, transcriptPath: null } });
    expect(started.sessionId).toMatch(/^gemini-\d+-\d+$/);
    expect(started.agent.agentSessionId).toBe(started.sessionId);
    // The TUI is up and answers (the scripted model), and the host still says only "running".
    await until(() => pane().includes('Type your message'), 'the composer');
    tmux('send-keys', '-t', 'term', '-l', 'hello there');
    await until(() => pane().includes('hello there'), 'the typed prompt');
    tmux('send-keys', '-t', 'term', 'Enter');
    await until(() => pane().includes('Hello from the scripted Gemini.'), 'the reply in the terminal');
    const { sessions } = await chat.lobby.socket.request('session.list', {});
    expect(sessions.filter((s: Frame) => s.agent?.kind === 'gemini' && s.cwd === work)).toHaveLength(1);
    expect(sessions.find((s: Frame) => s.sessionId === started.sessionId)).toMatchObject({ agent: { status: 'running', live: true } });
    // Its chat's gemini (the host's child, in the chat's folder) is no terminal session.
    expect(sessions.some((s: Frame) => s.cwd === chatFolder)).toBe(false);
    expect(terminalStatuses().some((s: Frame) => s.cwd === chatFolder)).toBe(false);
    expect(await chat.lobby.socket.request('session.history', { sessionId: started.sessionId })).toEqual({ items: [] });
    await expect(chat.lobby.socket.request('session.resume', { sessionId: started.sessionId })).rejects.toMatchObject({ code: 'chat-unsupported' });
  }, 180_000);

  it('the web app lists it under the machine by its folder, running, with no conversation to continue', async () => {
    const person = await signedInPerson('desktop', chat.host.ownerId, { path: `/hosts/${chat.host.hostId}` });
    try {
      const { page } = person;
      await page
        .getByTestId('terminal-sessions')
        .getByRole('link', { name: work })
        .click({ timeout: 20_000 })
        .catch(async (error: unknown) => {
          throw new Error(`${String(error)}\n--- page\n${await page.locator('body').innerText()}\n--- errors\n${person.errors.join('\n')}`);
        });
      await page.getByTestId('terminal-status').getByText(`Running · ${work}`).waitFor();
      await page.getByTestId('status-only').getByText('by its process only').waitFor();
      expect(await page.getByRole('button', { name: 'Continue here' }).count()).toBe(0);
      expect(await page.getByTestId('resume-command').count()).toBe(0);
      expect(person.errors).toEqual([]);
    } finally {
      await person.close();
    }
  }, 60_000);

  it('hooks status, on the machine and from a client, says gemini is read without hooks', async () => {
    expect(await chat.host.cli('hooks', 'status')).toContain(
      `gemini  ${path.join(home, '.gemini')}  no hooks read: its terminal sessions show their status only`,
    );
    const { hooks } = await chat.lobby.socket.request('hooks.status', {});
    expect(hooks).toContainEqual({ kind: 'gemini', configDir: path.join(home, '.gemini'), installed: false, supported: false });
    await expect(chat.lobby.socket.request('hooks.set', { kind: 'gemini', installed: true })).rejects.toMatchObject({
      code: 'chat-unsupported',
      message: expect.stringContaining('status only'),
    });
  });

  it('is exited once the person quit it', async () => {
    const sessionId = inWork()[0].sessionId;
    // (Gemini CLI 0.61 outlives a closed terminal: with tmux's server killed it ran on, reparented;
    // the host then rightly says `running`, as the process runs.)
    tmux('send-keys', '-t', 'term', '-l', '/quit');
    await until(() => pane().includes('/quit'), 'the typed /quit');
    tmux('send-keys', '-t', 'term', 'Enter');
    await until(
      () =>
        inWork()
          .filter((s: Frame) => s.sessionId === sessionId)
          .at(-1)?.agent.status === 'exited',
      'exited',
      30_000,
    );
    const { sessions } = await chat.lobby.socket.request('session.list', {});
    expect(sessions.find((s: Frame) => s.sessionId === sessionId)).toMatchObject({ agent: { status: 'exited', live: true } });
  }, 60_000);
});
