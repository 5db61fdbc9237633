// CliProcess against real children: tiny Node programs that cooperate, ignore stdin closing, or
// ignore SIGTERM. Each test waits for the exit and checks how it ended, never how long it took.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess } from '../../src/host/providers/cli-process.ts';
import type { CliProcessOptions } from '../../src/host/providers/cli-process.ts';
import { tempDir, until } from './harness.ts';

let data: ReturnType<typeof tempDir>;

const PROGRAMS = {
  // Echoes each line back upper-cased; exits when stdin ends.
  echo: `
    const rl = require('node:readline').createInterface({ input: process.stdin });
    rl.on('line', (line) => process.stdout.write(line.toUpperCase() + '\\n'));
    rl.on('close', () => process.exit(0));
    process.stderr.write('ready on stderr\\n');
  `,
  // Writes partial lines, CRLF endings and a very long line, then waits for stdin to end.
  chunks: `
    process.stdout.write('par');
    setTimeout(() => {
      process.stdout.write('tial\\r\\nsecond\\n' + 'x'.repeat(200000) + '\\n');
      process.stdin.resume();
      process.stdin.on('end', () => process.exit(0));
    }, 10);
  `,
  // Keeps running when stdin closes; SIGTERM (default action) ends it.
  deaf: `
    process.stdin.resume();
    process.stdin.on('end', () => process.stdout.write('stdin closed, staying\\n'));
    setInterval(() => undefined, 1000);
    process.stdout.write('up\\n');
  `,
  // Ignores stdin closing and SIGTERM: only SIGKILL ends it.
  stubborn: `
    process.on('SIGTERM', () => process.stdout.write('ignoring SIGTERM\\n'));
    process.stdin.resume();
    process.stdin.on('end', () => undefined);
    setInterval(() => undefined, 1000);
    process.stdout.write('up\\n');
  `,
  // Starts a grandchild in its group that ignores SIGTERM, reports its pid, and exits on stdin end.
  parent: `
    const { spawn } = require('node:child_process');
    const child = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => undefined); setInterval(() => undefined, 1000)"], { stdio: 'ignore' });
    process.stdout.write('grandchild ' + child.pid + '\\n');
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
  `,
};

beforeAll(() => {
  data = tempDir('tether-cli-process-');
  for (const [name, source] of Object.entries(PROGRAMS)) writeFileSync(path.join(data.dir, `${name}.cjs`), source);
});

afterAll(() => data.cleanup());

function run(program: keyof typeof PROGRAMS, extra: Partial<CliProcessOptions> = {}): { cli: CliProcess; lines: string[] } {
  const lines: string[] = [];
  const cli = new CliProcess({
    command: process.execPath,
    args: [path.join(data.dir, `${program}.cjs`)],
    cwd: data.dir,
    onLine: (line) => lines.push(line),
    // Short graces keep the suite quick; the assertions read the signal that ended the child.
    stdinGraceMs: 300,
    termGraceMs: 300,
    ...extra,
  });
  return { cli, lines };
}

/** Alive and not a zombie (an orphan's zombie may wait for a reaper that never comes in a sandbox). */
function living(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('CliProcess', () => {
  it('speaks lines both ways, keeps stderr and ends on stdin closing alone', async () => {
    const exits: unknown[] = [];
    const { cli, lines } = run('echo', { onExit: (exit) => exits.push(exit) });
    expect(cli.writeLine('hello')).toBe(true);
    cli.writeLine('two words');
    await until(() => lines.length === 2, 'two echoed lines');
    expect(lines).toEqual(['HELLO', 'TWO WORDS']);
    await until(() => cli.stderr.includes('ready on stderr'), 'stderr');
    const exit = await cli.end();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exits).toEqual([{ code: 0, signal: null }]);
    expect(cli.alive).toBe(false);
    expect(cli.writeLine('late')).toBe(false);
    // Idempotent: the same end.
    expect(await cli.end()).toBe(exit);
  });

  it('joins partial chunks into lines, drops CR and has no line-length limit', async () => {
    const { cli, lines } = run('chunks');
    await until(() => lines.length === 3, 'three lines');
    expect(lines[0]).toBe('partial');
    expect(lines[1]).toBe('second');
    expect(lines[2]).toHaveLength(200_000);
    expect((await cli.end()).code).toBe(0);
  });

  it('sends SIGTERM to the group when closing stdin is not enough', async () => {
    const { cli, lines } = run('deaf');
    await until(() => lines.includes('up'), 'the child to start');
    const exit = await cli.end();
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(lines).toContain('stdin closed, staying');
  });

  it('sends SIGKILL when SIGTERM is ignored', async () => {
    const { cli, lines } = run('stubborn');
    await until(() => lines.includes('up'), 'the child to start');
    const exit = await cli.end();
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(lines).toContain('ignoring SIGTERM');
  });

  it('ends what the CLI left running in its group, even past SIGTERM', async () => {
    const { cli, lines } = run('parent');
    await until(() => lines.some((l) => l.startsWith('grandchild ')), 'the grandchild pid');
    const grandchild = Number(lines[0].split(' ')[1]);
    expect(living(grandchild)).toBe(true);
    expect(await cli.end()).toEqual({ code: 0, signal: null });
    await until(() => !living(grandchild), 'the grandchild to be ended');
  });

  it('reports a CLI that cannot start as an exit with the error', async () => {
    const cli = new CliProcess({ command: path.join(data.dir, 'no-such-cli'), args: [], cwd: data.dir, onLine: () => undefined });
    const exit = await cli.exited;
    expect(exit.code).toBeNull();
    expect(exit.error).toBeInstanceOf(Error);
    expect((exit.error as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(await cli.end()).toBe(exit);
  });
});
