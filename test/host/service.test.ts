// `tether host install|uninstall`: the generated systemd user unit is checked by the real
// `systemd-analyze verify` (when the machine has it) and its ExecStart read back to the very argv,
// through a data folder whose name carries every character systemd's quoting treats specially; the
// launchd agent is read by a real plist parser (Python's plistlib, when present) and its keys
// checked. The real command writes the unit into a private HOME (`--no-start`: no user manager
// runs here), `status` names it and its log file, and `uninstall` removes it.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHostKey, writeHostIdentity } from '../../src/host/identity.ts';
import { installService, serviceFiles, serviceLogFile, SYSTEMD_UNIT, uninstallService } from '../../src/host/service.ts';
import { tempDir } from './harness.ts';

const root = path.resolve(import.meta.dirname, '../..');
const script = path.join(root, 'bin', 'tether.js');
const has = (command: string, args: string[]) => spawnSync(command, args, { encoding: 'utf8' }).status === 0;
const systemdAnalyze = has('systemd-analyze', ['--version']);
const plistlib = has('python3', ['-c', 'import plistlib']);

let data: ReturnType<typeof tempDir>;
beforeAll(() => {
  data = tempDir('tether-service-');
});
afterAll(() => data.cleanup());

/** ExecStart's words as systemd reads them: double-quoted, C escapes, %% and $$ for literal % and $. */
function systemdWords(line: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    const raw = m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!;
    words.push(raw.replace(/%%/g, '%').replace(/\$\$/g, '$'));
  }
  return words;
}

describe('the systemd user unit', () => {
  it('runs this Node and tether with the data folder, restarts on failure, appends its output to the log, and passes systemd-analyze verify', () => {
    const dataDir = path.join(data.dir, 'odd "name" 100% $HOME \\ here');
    const files = serviceFiles({
      home: path.join(data.dir, 'home'),
      dataDir,
      node: process.execPath,
      script,
      searchPath: '/usr/local/bin:/usr/bin:/bin',
      platform: 'linux',
    });
    expect(files.kind).toBe('systemd');
    expect(files.file).toBe(path.join(data.dir, 'home', '.config', 'systemd', 'user', SYSTEMD_UNIT));
    const lines = files.text.split('\n');
    const value = (key: string) => lines.filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1));
    expect(systemdWords(value('ExecStart')[0]!)).toEqual([process.execPath, script, 'host', 'start', '--data', dataDir]);
    expect(value('Environment').map((v) => systemdWords(v)[0])).toEqual(['PATH=/usr/local/bin:/usr/bin:/bin', `TETHER_DATA_DIR=${dataDir}`]);
    expect(value('Restart')).toEqual(['on-failure']);
    expect(value('WantedBy')).toEqual(['default.target']);
    // The rest of the line is the path (specifiers doubled), spaces and all.
    expect(value('StandardOutput')).toEqual([`append:${serviceLogFile(dataDir).replace(/%/g, '%%')}`]);
    expect(value('StandardError')).toEqual(value('StandardOutput'));
  });

  it.runIf(systemdAnalyze)('passes systemd-analyze verify, with every special character in its paths', () => {
    const dataDir = path.join(data.dir, 'odd "name" 100% $HOME \\ here');
    const { files } = installService({
      home: path.join(data.dir, 'home2'),
      dataDir,
      node: process.execPath,
      script,
      searchPath: '/usr/bin:/bin',
      platform: 'linux',
      start: false,
    });
    const verify = spawnSync('systemd-analyze', ['verify', files.file], { encoding: 'utf8' });
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
    expect(existsSync(path.dirname(serviceLogFile(dataDir)))).toBe(true);
    // A unit naming a program that is not there fails the same check: the verify is not a formality.
    const broken = path.join(data.dir, 'broken.service');
    writeFileSync(broken, files.text.replace(process.execPath, '/nonexistent/node'));
    expect(spawnSync('systemd-analyze', ['verify', broken], { encoding: 'utf8' }).status).not.toBe(0);
  });

  it('refuses a path with a control character, which no unit can carry', () => {
    expect(() => serviceFiles({ home: data.dir, dataDir: `${data.dir}/a\nExecStartPre=/bin/sh`, node: process.execPath, script, platform: 'linux' })).toThrow(
      /control character/,
    );
  });
});

describe('the launchd agent', () => {
  it.runIf(plistlib)('is a property list with the argv, the environment, RunAtLoad, KeepAlive on failure and the log', () => {
    const dataDir = path.join(data.dir, 'mac <data> & "more"');
    const files = serviceFiles({
      home: path.join(data.dir, 'mac'),
      dataDir,
      node: '/opt/homebrew/bin/node',
      script: '/opt/homebrew/lib/node_modules/tether-host/bin/tether.js',
      searchPath: '/opt/homebrew/bin:/usr/bin',
      platform: 'darwin',
    });
    expect(files.file).toBe(path.join(data.dir, 'mac', 'Library', 'LaunchAgents', 'dev.tether.host.plist'));
    const parsed = spawnSync('python3', ['-c', 'import plistlib, json, sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))'], {
      input: files.text,
      encoding: 'utf8',
    });
    expect(parsed.stderr).toBe('');
    expect(JSON.parse(parsed.stdout)).toEqual({
      Label: 'dev.tether.host',
      ProgramArguments: ['/opt/homebrew/bin/node', '/opt/homebrew/lib/node_modules/tether-host/bin/tether.js', 'host', 'start', '--data', dataDir],
      EnvironmentVariables: { PATH: '/opt/homebrew/bin:/usr/bin', TETHER_DATA_DIR: dataDir },
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ThrottleInterval: 10,
      StandardOutPath: serviceLogFile(dataDir),
      StandardErrorPath: serviceLogFile(dataDir),
    });
  });
});

describe('tether host install, status and uninstall (the real command)', () => {
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [script, 'host', ...args], { env }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });

  it('writes the unit for a paired host, status says where it and its logs are, uninstall removes it', async () => {
    const home = path.join(data.dir, 'cli-home');
    const dataDir = path.join(data.dir, 'cli-data');
    mkdirSync(home, { recursive: true });
    const env = { PATH: `/usr/bin:/bin:${path.join(root, 'node_modules', '.bin')}`, HOME: home };
    // Not paired: refused, nothing written.
    const unpaired = await run(['install', '--data', dataDir, '--no-start'], env);
    expect(unpaired.code).toBe(1);
    expect(unpaired.stderr).toContain('not paired yet');
    const unit = path.join(home, '.config', 'systemd', 'user', SYSTEMD_UNIT);
    expect(existsSync(unit)).toBe(false);

    const key = await newHostKey();
    writeHostIdentity(dataDir, { relayUrl: 'http://127.0.0.1:9', hostId: 'h1', privateJwk: key.privateJwk, publicJwk: key.publicJwk });
    const installed = await run(['install', '--data', dataDir, '--no-start'], env);
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(`Wrote ${unit} (systemd).`);
    expect(installed.stdout).toContain(`Logs: ${serviceLogFile(dataDir)}`);
    const text = readFileSync(unit, 'utf8');
    // The service's PATH is the person's: the node_modules/.bin folder npm put on it is left out.
    expect(text).toContain('Environment="PATH=/usr/bin:/bin"');
    expect(
      systemdWords(
        text
          .split('\n')
          .find((l) => l.startsWith('ExecStart='))!
          .slice('ExecStart='.length),
      ),
    ).toEqual([process.execPath, script, 'host', 'start', '--data', dataDir]);

    writeFileSync(
      path.join(dataDir, 'host.status.json'),
      JSON.stringify({
        pid: 999_999_999,
        version: '0.1.0',
        hostId: 'h1',
        relayUrl: 'http://127.0.0.1:9',
        link: 'stopped',
        since: 0,
        pendingEvents: 0,
        chats: 0,
        updatedAt: 0,
      }),
    );
    const status = await run(['status', '--data', dataDir], env);
    expect(status.stdout).toContain(`service   ${unit}; logs in ${serviceLogFile(dataDir)}`);

    const removed = await run(['uninstall', '--data', dataDir, '--no-stop'], env);
    expect(removed.stdout).toContain(`Removed ${unit}.`);
    expect(existsSync(unit)).toBe(false);
    expect((await run(['status', '--data', dataDir], env)).stdout).toContain('service   not installed');
    expect(uninstallService({ home, dataDir, stop: false, platform: 'linux' }).removed).toBe(false);
  });
});
