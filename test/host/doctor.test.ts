// `tether host doctor` against stand-in CLIs on a private PATH and a local /api/health.
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDoctor, runDoctor } from '../../src/host/doctor.ts';
import { tempDir } from './harness.ts';

const root = path.resolve(import.meta.dirname, '../..');
let data: ReturnType<typeof tempDir>;
let bin: string;
let server: Server;
let healthy = true;
let relayUrl: string;

beforeAll(async () => {
  data = tempDir('tether-doctor-');
  bin = path.join(data.dir, 'bin');
  mkdirSync(bin);
  const cli = (name: string, body: string) => {
    writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  };
  cli('claude', 'echo "2.1.197 (Claude Code)"');
  cli('codex', 'echo "codex-cli 0.80.0"; echo extra');
  cli('gemini', 'echo "broken" >&2; exit 3');
  writeFileSync(path.join(bin, 'copilot'), 'not executable');
  server = createServer((req, res) => {
    res.writeHead(req.url === '/api/health' && healthy ? 200 : 503, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  data.cleanup();
});

describe('tether host doctor', () => {
  it('reports the CLIs on PATH with their versions and sign-ins, what a host would serve and why not, the accounts and the relay health', async () => {
    const home = path.join(data.dir, 'home');
    const report = await runDoctor({ dataDir: path.join(data.dir, 'data'), relayUrl, searchPath: bin, home });
    const signedOut = { state: 'signed-out', how: expect.any(String) };
    expect(report.clis).toEqual([
      // The demo agent answers in claude's place (a chat's provider is one of the protocol's kinds).
      { kind: 'claude', command: 'claude', path: path.join(bin, 'claude'), version: '2.1.197', signIn: signedOut, backend: 'script (the demo agent)' },
      { kind: 'codex', command: 'codex', path: path.join(bin, 'codex'), version: '0.80.0', signIn: signedOut, backend: null },
      // It fails its --version: found, version unknown.
      { kind: 'gemini', command: 'gemini', path: path.join(bin, 'gemini'), version: null, signIn: signedOut, backend: null },
      // Not executable: not installed.
      { kind: 'copilot', command: 'copilot', path: null, version: null, signIn: { state: 'unknown', how: 'not installed' }, backend: null },
    ]);
    // Nothing signed in: the demo agent, and each CLI's reason.
    expect(report.agents.map((a) => [a.name, a.served])).toEqual([
      ['Demo agent (scripted)', true],
      ['Claude Code', false],
      ['Codex', false],
      ['Gemini CLI', false],
      ['Copilot CLI', false],
    ]);
    expect(report.accounts).toEqual([expect.objectContaining({ id: 'claude', kind: 'claude', state: 'ready' })]);
    expect(report.relay).toEqual({ url: relayUrl, reachable: true, status: 200 });
    const text = formatDoctor(report);
    expect(text).toContain('serving  Demo agent (scripted)');
    expect(text).toMatch(/not {6}Claude Code: signed out: run `claude`, then \/login/);
    expect(text).toContain('not      Copilot CLI: not on PATH (copilot)');
    expect(text).toContain('copilot  not installed');
    expect(text).toContain('reachable (health 200)');
  });

  it('with a config naming providers, says they are served from it and looks nothing up for them', async () => {
    const configFile = path.join(data.dir, 'config.json');
    writeFileSync(configFile, JSON.stringify({ providers: { codex: { backend: 'codex', command: '/opt/codex/bin/codex' } } }));
    const report = await runDoctor({ dataDir: path.join(data.dir, 'data'), configFile, searchPath: bin, home: path.join(data.dir, 'home') });
    expect(report.config).toBe(configFile);
    expect(report.agents[0]).toMatchObject({ kind: 'codex', served: true, from: '/opt/codex/bin/codex', why: expect.stringContaining(configFile) });
    expect(report.agents.filter((a) => !a.served).map((a) => a.kind)).toEqual(['claude', 'gemini', 'copilot']);
    expect(report.clis.map((c) => c.backend)).toEqual([null, 'codex', null, null]);
  });

  it('exits 2 when the relay does not answer healthy, from the real command', async () => {
    healthy = false;
    try {
      const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        execFile(
          process.execPath,
          [path.join(root, 'bin', 'tether.js'), 'host', 'doctor', '--relay', relayUrl, '--data', path.join(data.dir, 'data'), '--json'],
          {
            env: { PATH: bin, HOME: data.dir },
          },
          (error, out) => resolve({ code: error ? (error.code as number) : 0, stdout: out }),
        );
      });
      expect(code).toBe(2);
      const report = JSON.parse(stdout);
      expect(report.relay).toEqual({ url: relayUrl, reachable: false, status: 503 });
      expect(report.clis[0]).toMatchObject({ kind: 'claude', version: '2.1.197' });
      expect(report.agents[0]).toMatchObject({ name: 'Demo agent (scripted)', served: true });
    } finally {
      healthy = true;
    }
    // A port that was just free: nobody listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await runDoctor({ dataDir: path.join(data.dir, 'data'), relayUrl: `http://127.0.0.1:${port}`, searchPath: bin });
    expect(unreachable.relay).toMatchObject({ reachable: false, problem: expect.stringContaining('ECONNREFUSED') });
  });
});
