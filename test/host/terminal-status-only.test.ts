// A CLI whose hooks Tether does not read (Gemini CLI, Copilot CLI) is listed with its status only,
// found by its process in /proc. The process here is a small long-running Node script named `gemini`
// in a temporary bin folder: it stands in for the CLI's binary only because what is tested is the
// host's discovery from /proc (the command line, the folder, the environment, the start time), which
// is the same for any process of that name. It is started the way a terminal would (through a shell
// that leaves it behind, so it is not a child of the host's process, as a person's terminal is not).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { TestClient, openCore, tempDir, until } from './harness.ts';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts `command` in `cwd` in the background of a shell that then exits; its pid. */
function startInTerminal(command: string, cwd: string, env: NodeJS.ProcessEnv = {}): number {
  const started = spawnSync('sh', ['-c', `"${command}" >/dev/null 2>&1 & echo $!`], { cwd, env: { ...process.env, ...env }, encoding: 'utf8' });
  const pid = Number(started.stdout.trim());
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`not started: ${started.stderr}`);
  cleanups.push(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  return pid;
}

describe.runIf(process.platform === 'linux')('a gemini run in a terminal, without hooks', () => {
  it('is listed running in its folder while its process runs, exited once it is gone; no items, and continuing it here is refused', async () => {
    const { dir, cleanup } = tempDir('tether-status-only-');
    cleanups.push(cleanup);
    const bin = path.join(dir, 'bin');
    const work = path.join(dir, 'project');
    const chats = path.join(dir, 'host-chat');
    mkdirSync(bin);
    mkdirSync(work);
    mkdirSync(chats);
    const gemini = path.join(bin, 'gemini');
    writeFileSync(gemini, '#!/usr/bin/env node\nsetInterval(() => {}, 1000);\n');
    chmodSync(gemini, 0o755);

    const core: HostCore = await openCore(dir, {
      statusOnlyCommands: [{ kind: 'gemini', command: 'gemini', configDir: path.join(dir, '.gemini') }],
      livenessIntervalMs: 100,
    });
    cleanups.push(() => core.close());
    const client = new TestClient(core, 'phone', true);
    await core.terminal.start();

    const pid = startInTerminal(gemini, work);
    // One the host runs as a chat has TETHER_HOOKS_OFF=1: it is no terminal session.
    const hostsOwn = startInTerminal(gemini, chats, { TETHER_HOOKS_OFF: '1' });
    const mine = () => core.terminal.list().sessions.find((s) => s.sessionId.startsWith(`gemini-${pid}-`));
    await until(() => mine() !== undefined, 'the gemini process listed');
    const session = mine()!;
    expect(session).toMatchObject({
      cwd: realpathSync(work),
      agent: { kind: 'gemini', status: 'running', live: true, transcriptPath: null, agentSessionId: session.sessionId },
    });
    expect(client.events('session.status').some((f) => (f.payload as { sessionId: string }).sessionId === session.sessionId)).toBe(true);
    // The scan that found the first found the second too, had it been listed; a window of three more scans (every 100 ms) for it to show up in: it must not.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(core.terminal.list().sessions.some((s) => s.sessionId.startsWith(`gemini-${hostsOwn}-`))).toBe(false);
    expect(core.terminal.list().sessions.some((s) => s.cwd === realpathSync(chats))).toBe(false);

    expect(await client.ok('session.history', { sessionId: session.sessionId })).toEqual({ items: [] });
    expect(await client.request('session.resume', { sessionId: session.sessionId })).toMatchObject({
      ok: false,
      error: { code: 'chat-unsupported', message: expect.stringContaining('by its process only') },
    });
    expect(core.terminal.list().approvals).toEqual([]);

    process.kill(pid, 'SIGKILL');
    await until(() => mine()?.agent?.status === 'exited', 'the session exited');
    expect(mine()!.agent).toMatchObject({ status: 'exited', live: true });
    const last = client
      .events('session.status')
      .filter((f) => (f.payload as { sessionId: string }).sessionId === session.sessionId)
      .at(-1);
    expect(last?.payload).toMatchObject({ agent: { status: 'exited' } });
    // Exited, it is still not a chat to continue.
    expect(await client.request('session.resume', { sessionId: session.sessionId })).toMatchObject({ ok: false, error: { code: 'chat-unsupported' } });

    // hooks.status names gemini as a CLI whose sessions show their status only.
    expect((await client.ok('hooks.status', {})).hooks).toContainEqual({
      kind: 'gemini',
      configDir: path.join(dir, '.gemini'),
      installed: false,
      supported: false,
    });
  });

  it("a CLI that runs itself again as a child (Copilot's loader, Gemini's relaunch) is one session, running until the last of its processes ends", async () => {
    const { dir, cleanup } = tempDir('tether-status-only-child-');
    cleanups.push(cleanup);
    const bin = path.join(dir, 'bin');
    const work = path.join(dir, 'project');
    mkdirSync(bin);
    mkdirSync(work);
    const copilot = path.join(bin, 'copilot');
    const childPid = path.join(dir, 'child.pid');
    writeFileSync(
      copilot,
      [
        '#!/usr/bin/env node',
        "if (process.argv[2] === 'child') require('node:fs').writeFileSync(process.argv[3], String(process.pid));",
        `else require('node:child_process').spawn(process.execPath, [__filename, 'child', ${JSON.stringify(childPid)}], { stdio: 'ignore' });`,
        'setInterval(() => {}, 1000);',
        '',
      ].join('\n'),
    );
    chmodSync(copilot, 0o755);
    const core = await openCore(dir, {
      statusOnlyCommands: [{ kind: 'copilot', command: 'copilot', configDir: path.join(dir, '.copilot') }],
      livenessIntervalMs: 100,
    });
    cleanups.push(() => core.close());
    await core.terminal.start();

    const pid = startInTerminal(copilot, work);
    await until(() => existsSync(childPid) && readFileSync(childPid, 'utf8').length > 0, 'the child started');
    const child = Number(readFileSync(childPid, 'utf8'));
    cleanups.push(() => {
      try {
        process.kill(child, 'SIGKILL');
      } catch {
        /* gone */
      }
    });
    const inWork = () => core.terminal.list().sessions.filter((s) => s.cwd === realpathSync(work));
    await until(() => inWork().length > 0, 'listed');
    // A window of three scans for the child to be listed as a second session: it must not be.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(inWork()).toHaveLength(1);
    expect(inWork()[0]).toMatchObject({ sessionId: expect.stringMatching(new RegExp(`^copilot-${pid}-\\d+$`)), agent: { kind: 'copilot', status: 'running' } });

    // The first process ends, its child runs on (reparented, as Copilot's binary does when its terminal closes).
    process.kill(pid, 'SIGKILL');
    // A window of five liveness checks for the session to end with its first process: it must not.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(inWork()).toHaveLength(1);
    expect(inWork()[0]!.agent).toMatchObject({ status: 'running', live: true });

    process.kill(child, 'SIGKILL');
    await until(() => inWork()[0]?.agent?.status === 'exited', 'exited with its last process');
    expect(inWork()).toHaveLength(1);
  });

  it('after a host restart is live again while its process still runs, and exited once it ran out while no host looked', async () => {
    const { dir, cleanup } = tempDir('tether-status-only-restart-');
    cleanups.push(cleanup);
    const bin = path.join(dir, 'bin');
    const work = path.join(dir, 'project');
    mkdirSync(bin);
    mkdirSync(work);
    const gemini = path.join(bin, 'gemini');
    writeFileSync(gemini, '#!/usr/bin/env node\nsetInterval(() => {}, 1000);\n');
    chmodSync(gemini, 0o755);
    const options = { statusOnlyCommands: [{ kind: 'gemini' as const, command: gemini, configDir: path.join(dir, '.gemini') }], livenessIntervalMs: 100 };
    const pid = startInTerminal(gemini, work);
    const mine = (core: HostCore) => core.terminal.list().sessions.find((s) => s.sessionId.startsWith(`gemini-${pid}-`));

    const first = await openCore(dir, options);
    await first.terminal.start();
    // (harness.ts's until waits only on false or a throw: an undefined session must read as false.)
    await until(() => mine(first)?.agent?.live === true, 'listed by the first host');
    const sessionId = mine(first)!.sessionId;
    await first.close();

    const second = await openCore(dir, options);
    expect(mine(second)?.agent).toMatchObject({ status: 'running', live: false });
    await second.terminal.start();
    await until(() => mine(second)?.agent?.live === true, 'seen again by the second host');
    expect(mine(second)).toMatchObject({ sessionId, agent: { status: 'running', live: true } });
    await second.close();

    process.kill(pid, 'SIGKILL');
    await until(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 'the process gone');
    const third = await openCore(dir, options);
    cleanups.push(() => third.close());
    await third.terminal.start();
    expect(mine(third)).toMatchObject({ sessionId, agent: { status: 'exited', live: false } });
  });
});
