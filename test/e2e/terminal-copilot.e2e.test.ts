import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicServer } from '../support/anthropic-server.ts';
import { copilotEnv, copilotScenario } from '../host/fixtures/copilot/scenario.ts';
import { HostProcess, Peer } from './peers.ts';
import { screenOf, tmuxOn, waitShowing, writeTerminalScript } from './person-terminal.ts';

const COPILOT_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/copilot');
const host = new HostProcess('terminal-copilot-host', 'terminal-copilot-owner');
const work = realpathSync(mkdtempSync(path.join(tmpdir(), 'tether-terminal-copilot-work-')));
const home = path.join(host.dataDir, 'copilot-home');
const tmuxSocket = `tether-terminal-copilot-${process.pid}`;
let model: AnthropicServer;
let lobby: Peer;

type Frame = Record<string, any>;

const tmux = tmuxOn(tmuxSocket);
const pane = () => screenOf(tmux);

const until = <T>(check: () => T | undefined | null | false, what: string, ms = 60_000): Promise<T> =>
  waitShowing(check, what, () => `--- host\n${host.output.slice(-3000)}\n--- pane\n${pane()}`, ms);

const inWork = () => lobby.frames.filter((f: Frame) => f.event === 'session.status' && f.payload.cwd === work).map((f: Frame) => f.payload);
const sessionIds = () => new Set(inWork().map((s: Frame) => s.sessionId));
const latest = (sessionId: string) =>
  inWork()
    .filter((s: Frame) => s.sessionId === sessionId)
    .at(-1);

/** The processes of the test's copilot: those working in its folder (the loader, its native binary). */
function copilotPids(): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readlinkSync(`/proc/${name}/cwd`) === work && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('copilot')) out.push(Number(name));
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}

beforeAll(async () => {
  model = await AnthropicServer.start({ reply: copilotScenario });
  mkdirSync(home, { recursive: true });
  writeFileSync(
    path.join(host.dataDir, 'config.json'),
    JSON.stringify({
      providers: { copilot: { backend: 'copilot', command: COPILOT_BIN, home: path.join(home, '.copilot'), env: { HOME: home, COPILOT_OFFLINE: 'true' } } },
      policy: { roots: [work] },
    }),
  );
  await host.start();
  lobby = await Peer.lobby(host.hostId, host.ownerId);
  await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
}, 120_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    /* already gone */
  }
  for (const pid of copilotPids()) {
    try {
      process.kill(pid);
    } catch {
      /* gone */
    }
  }
  lobby?.close();
  await host.stop();
  await model?.close();
});

describe("a Copilot CLI session in the person's own terminal, status only", () => {
  let sessionId = '';

  it('appears once (its loader and native binary are one session), running in its folder', async () => {
    const script = path.join(home, 'term.sh');
    const env = { ...copilotEnv(model.url, home), TERM: 'xterm-256color' };
    writeTerminalScript(script, work, { ...env, PATH: `${path.dirname(COPILOT_BIN)}:${process.env.PATH}` }, 'copilot');
    tmux('new-session', '-d', '-s', 'term', '-x', '150', '-y', '50', `bash ${script}`);
    const started = await until(() => inWork()[0], "session.status of the terminal's copilot");
    sessionId = started.sessionId;
    expect(started).toMatchObject({ cwd: work, agent: { kind: 'copilot', status: 'running', live: true, transcriptPath: null, agentSessionId: sessionId } });
    expect(sessionId).toMatch(/^copilot-\d+-\d+$/);
    await until(() => copilotPids().length >= 2, 'the loader and its native binary');
    // A few scans later, still the one session.
    await new Promise((r) => setTimeout(r, 11_000));
    expect([...sessionIds()]).toEqual([sessionId]);
    const { sessions } = await lobby.socket.request('session.list', {});
    expect(sessions.filter((s: Frame) => s.cwd === work)).toHaveLength(1);
    expect(await lobby.socket.request('session.history', { sessionId })).toEqual({ items: [] });
    await expect(lobby.socket.request('session.resume', { sessionId })).rejects.toMatchObject({ code: 'chat-unsupported' });
  }, 90_000);

  it('is exited once its terminal closed, and was one session throughout', async () => {
    tmux('kill-server');
    // Should a process of it outlive its terminal (seen once by hand, with its model unreachable), it ends here.
    setTimeout(() => {
      for (const pid of copilotPids()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }, 5_000).unref();
    await until(() => latest(sessionId)?.agent.status === 'exited', 'exited', 30_000);
    expect(latest(sessionId)?.agent).toMatchObject({ status: 'exited', live: true });
    expect([...sessionIds()]).toEqual([sessionId]);
  }, 60_000);
});
