// What `tether host pair` settles before a machine is reachable: the folders and the widest mode,
// written into the host config and printed; plain http:// only to a relay on this machine.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readHostConfig, policyFrom } from '../../src/host/config.ts';
import { checkMode, checkRoot, defaultRoot, describePairPolicy, writePairPolicy } from '../../src/host/pair-policy.ts';
import { isLoopback, relayBase } from '../../src/host/pairing.ts';
import { tempDir } from './harness.ts';

const root = path.resolve(import.meta.dirname, '../..');
let data: ReturnType<typeof tempDir>;
beforeEach(() => {
  data = tempDir('tether-pair-policy-');
});
afterEach(() => data.cleanup());

function tether(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, 'bin', 'tether.js'), ...args], { cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe('the policy pair writes', () => {
  it('without an answer: the folder pair ran in and auto-accept-edits, printed, and read back by the host as its policy', () => {
    const work = path.join(data.dir, 'work');
    mkdirSync(work);
    const file = path.join(data.dir, 'host', 'config.json');
    const policy = writePairPolicy(file, { roots: [] }, work);
    expect(policy).toEqual({ roots: [work], modeCeiling: 'auto-accept-edits', file, kept: false });
    expect(describePairPolicy(policy).join('\n')).toContain(`may work only in: ${work}`);
    const host = policyFrom(readHostConfig(file).config, { home: data.dir });
    expect(host.summary()).toMatchObject({ roots: [work], modeCeiling: 'auto-accept-edits', defaultMode: 'supervised', defaultFolder: work });
  });

  it('keeps the rest of a config, keeps a policy it already has, and answers given win', () => {
    const file = path.join(data.dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({ providers: { claude: { backend: 'script' } }, policy: { roots: ['/srv/code'], modeCeiling: 'supervised', accountEnv: ['X'] } }),
    );
    expect(writePairPolicy(file, { roots: [] })).toMatchObject({ roots: ['/srv/code'], modeCeiling: 'supervised', kept: true });
    expect(writePairPolicy(file, { roots: [data.dir], modeCeiling: 'auto' })).toMatchObject({ roots: [data.dir], modeCeiling: 'auto', kept: false });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      providers: { claude: { backend: 'script' } },
      policy: { roots: [data.dir], modeCeiling: 'auto', accountEnv: ['X'] },
    });
  });

  it('takes only real folders and known modes as answers; `/` is never the folder offered', () => {
    expect(checkRoot('~', data.dir)).toBe(data.dir);
    expect(() => checkRoot('relative', data.dir)).toThrow(/absolute/);
    expect(() => checkRoot(path.join(data.dir, 'missing'))).toThrow(/no folder/);
    expect(() => checkRoot(`${data.dir}\n`)).not.toThrow();
    expect(() => checkRoot(`${data.dir}/a\0b`)).toThrow(/Not a folder/);
    expect(() => checkMode('yolo')).toThrow(/supervised, auto-accept-edits, auto, full-access/);
    expect(defaultRoot('/', data.dir)).toBe(data.dir);
  });

  it('`tether host pair --folder --max-mode` refuses a folder or mode it cannot use before reaching any relay', async () => {
    const bad = await tether(['host', 'pair', 'http://127.0.0.1:9', '--data', data.dir, '--folder', path.join(data.dir, 'nope')], data.dir);
    expect(bad.code).toBe(1);
    expect(bad.output).toContain('There is no folder');
    const mode = await tether(['host', 'pair', 'http://127.0.0.1:9', '--data', data.dir, '--max-mode', 'everything'], data.dir);
    expect(mode.output).toContain('The widest mode is one of');
  });
});

describe('relay URLs', () => {
  it('refuses plain http:// to another machine, at pair and in the kept base', async () => {
    expect(() => relayBase('http://relay.example')).toThrow(/needs https:\/\//);
    expect(() => relayBase('ws://10.0.0.5:8787')).toThrow(/needs https:\/\//);
    expect(() => relayBase('http://127.0.0.1.example.com')).toThrow(/needs https:\/\//);
    expect(relayBase('http://localhost:8787/')).toBe('http://localhost:8787');
    expect(relayBase('http://[::1]:8787')).toBe('http://[::1]:8787');
    expect(relayBase('https://relay.example')).toBe('https://relay.example');
    expect([isLoopback('127.3.4.5'), isLoopback('app.localhost'), isLoopback('localhost.evil.com')]).toEqual([true, true, false]);
    const run = await tether(['host', 'pair', 'http://relay.example', '--data', data.dir], data.dir);
    expect(run.code).toBe(1);
    expect(run.output).toContain('needs https://');
  });
});
