// `tether host install|uninstall`: the host as the person's own user service, started at login
// (and at boot, with lingering on Linux), restarted when it fails, its output appended to a log
// file `tether host status` names. Linux: a systemd user unit; macOS: a launchd agent. Nothing
// needs root, and nothing is written outside the person's home and the data folder.
//
// The service runs the very Node and `tether` script that ran `install`, with the PATH it had
// (without the node_modules/.bin folders npm puts first: the host looks for the person's own CLIs).
// Paths are written into the files quoted for their format; one with a control character is
// refused, since neither format can carry it faithfully.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { personalPath } from './providers/discovery.ts';

export const SYSTEMD_UNIT = 'tether-host.service';
export const LAUNCHD_LABEL = 'dev.tether.host';

export interface ServiceOptions {
  /** The person's home folder. */
  home: string;
  /** The host's data folder (absolute). */
  dataDir: string;
  /** The Node that runs the host (default: this one). */
  node?: string;
  /** The `tether` script (default: the one running now). */
  script?: string;
  /** The PATH the service runs with (default: this process's, without node_modules/.bin folders). */
  searchPath?: string;
  platform?: NodeJS.Platform;
}

export interface ServiceFiles {
  kind: 'systemd' | 'launchd';
  /** Where the unit or agent file goes. */
  file: string;
  text: string;
  /** Where the host's output goes. */
  log: string;
  /** What install runs after writing the file, and uninstall before removing it. */
  start: string[][];
  stop: string[][];
}

/** The service's log file for a data folder. */
export function serviceLogFile(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'logs', 'host.log');
}

/** The file the service would be in on this platform, and whether it is there. */
export function installedService(home: string, platform: NodeJS.Platform = process.platform): { file: string; installed: boolean } | null {
  const file = platform === 'darwin' ? launchdFile(home) : platform === 'linux' ? systemdFile(home) : null;
  return file ? { file, installed: existsSync(file) } : null;
}

function systemdFile(home: string): string {
  return path.join(home, '.config', 'systemd', 'user', SYSTEMD_UNIT);
}

function launchdFile(home: string): string {
  return path.join(home, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
}

export function serviceFiles(options: ServiceOptions): ServiceFiles {
  const platform = options.platform ?? process.platform;
  const node = options.node ?? process.execPath;
  const script = options.script ?? path.resolve(process.argv[1] ?? 'tether');
  const dataDir = path.resolve(options.dataDir);
  const searchPath = options.searchPath ?? personalPath(process.env.PATH ?? '');
  const log = serviceLogFile(dataDir);
  for (const [what, value] of Object.entries({ node, script, dataDir, PATH: searchPath, home: options.home })) {
    if (/[\u0000-\u001f\u007f]/.test(value)) throw new Error(`The ${what} has a control character; a service file cannot carry it: ${JSON.stringify(value)}`);
  }
  const argv = [node, script, 'host', 'start', '--data', dataDir];
  if (platform === 'linux') {
    const text = [
      '# Written by `tether host install`; `tether host uninstall` removes it.',
      '[Unit]',
      "Description=Tether host: this machine's coding agents, reached through a relay",
      'After=network-online.target',
      'Wants=network-online.target',
      '',
      '[Service]',
      'Type=simple',
      `ExecStart=${argv.map(systemdQuote).join(' ')}`,
      `Environment=${systemdQuote(`PATH=${searchPath}`)}`,
      `Environment=${systemdQuote(`TETHER_DATA_DIR=${dataDir}`)}`,
      'Restart=on-failure',
      'RestartSec=5',
      // SIGTERM is the host's clean shutdown (every thread written, every CLI ended within 5 s).
      'KillSignal=SIGTERM',
      'TimeoutStopSec=20',
      `StandardOutput=append:${systemdPath(log)}`,
      `StandardError=append:${systemdPath(log)}`,
      '',
      '[Install]',
      'WantedBy=default.target',
      '',
    ].join('\n');
    return {
      kind: 'systemd',
      file: systemdFile(options.home),
      text,
      log,
      start: [
        ['systemctl', '--user', 'daemon-reload'],
        ['systemctl', '--user', 'enable', '--now', SYSTEMD_UNIT],
      ],
      stop: [['systemctl', '--user', 'disable', '--now', SYSTEMD_UNIT]],
    };
  }
  if (platform === 'darwin') {
    const strings = (values: string[]) => values.map((v) => `    <string>${xml(v)}</string>`).join('\n');
    const text = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by \`tether host install\`; \`tether host uninstall\` removes it. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
${strings(argv)}
  </array>
  <key>EnvironmentVariables</key>
  <dict>
    <key>PATH</key>
    <string>${xml(searchPath)}</string>
    <key>TETHER_DATA_DIR</key>
    <string>${xml(dataDir)}</string>
  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>10</integer>
  <key>StandardOutPath</key>
  <string>${xml(log)}</string>
  <key>StandardErrorPath</key>
  <string>${xml(log)}</string>
</dict>
</plist>
`;
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    const file = launchdFile(options.home);
    return {
      kind: 'launchd',
      file,
      text,
      log,
      start: [['launchctl', 'bootstrap', `gui/${uid}`, file]],
      stop: [['launchctl', 'bootout', `gui/${uid}/${LAUNCHD_LABEL}`]],
    };
  }
  throw new Error(`tether host install knows systemd (Linux) and launchd (macOS), not ${platform}`);
}

/** A word of ExecStart= or an Environment= assignment: double-quoted, C-escaped, specifiers and variables kept literal. */
export function systemdQuote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$')}"`;
}

/** A path in a setting that takes the rest of its line unquoted (StandardOutput=append:…): specifiers kept literal. */
function systemdPath(value: string): string {
  // systemd trims a value's ends: a path ending in whitespace would name another file.
  if (value !== value.trim()) throw new Error(`The log path starts or ends with whitespace, which a unit cannot carry: ${JSON.stringify(value)}`);
  return value.replace(/%/g, '%%');
}

function xml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

export interface InstallResult {
  files: ServiceFiles;
  /** The commands run (or, with `start: false`, to run), each with how it ended. */
  ran: Array<{ argv: string[]; status: number | null; output: string }>;
}

/** Writes the service file and the log folder, then (with `start`) enables and starts it. */
export function installService(options: ServiceOptions & { start?: boolean }): InstallResult {
  const files = serviceFiles(options);
  mkdirSync(path.dirname(files.file), { recursive: true });
  mkdirSync(path.dirname(files.log), { recursive: true, mode: 0o700 });
  writeFileSync(files.file, files.text, { mode: 0o644 });
  const ran = options.start === false ? [] : files.start.map(run);
  return { files, ran };
}

/** Stops and disables the service (with `stop`) and removes its file; the log and the data folder stay. */
export function uninstallService(options: ServiceOptions & { stop?: boolean }): InstallResult & { removed: boolean } {
  const files = serviceFiles(options);
  const ran = options.stop === false ? [] : files.stop.map(run);
  const removed = existsSync(files.file);
  rmSync(files.file, { force: true });
  if (options.stop !== false && files.kind === 'systemd') ran.push(run(['systemctl', '--user', 'daemon-reload']));
  return { files, ran, removed };
}

function run(argv: string[]): { argv: string[]; status: number | null; output: string } {
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 30_000 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? result.error.message : ''}`.trim();
  return { argv, status: result.status, output };
}
