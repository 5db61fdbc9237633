// `tether host doctor`: what this machine can serve and whether the relay answers. It reads, it
// never changes anything: the agent CLIs found on PATH and their versions, the backend the config
// names for each kind, each provider account's state, and the relay's `/api/health`.
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { AgentKind, ProviderAccountStatus } from '../contracts/index.ts';
import { AccountBook } from './chats/accounts.ts';
import { policyFrom, readHostConfig } from './config.ts';
import type { HostConfig } from './config.ts';

/** The CLIs a host can drive, by the command each is run as. */
export const AGENT_COMMANDS: ReadonlyArray<{ kind: AgentKind; command: string }> = [
  { kind: 'claude', command: 'claude' },
  { kind: 'codex', command: 'codex' },
  { kind: 'gemini', command: 'gemini' },
  { kind: 'copilot', command: 'copilot' },
];

export interface CliCheck {
  kind: AgentKind;
  command: string;
  /** Where it was found on PATH; null when it is not installed. */
  path: string | null;
  /** The first line of `--version`; null when it gave none. */
  version: string | null;
  /** Why the version could not be read. */
  problem?: string;
  /** The backend this host's config serves the kind with; null when it serves no such kind. */
  backend: string | null;
}

export interface RelayCheck {
  url: string;
  reachable: boolean;
  /** The HTTP status of `/api/health`, when it answered at all. */
  status?: number;
  problem?: string;
}

export interface DoctorReport {
  dataDir: string;
  config: string | null;
  clis: CliCheck[];
  accounts: ProviderAccountStatus[];
  relay: RelayCheck | null;
}

export interface DoctorOptions {
  dataDir: string;
  configFile?: string;
  relayUrl?: string;
  /** The PATH to look the CLIs up on. Default: the process's. */
  searchPath?: string;
  /** Per probe (version, health). Default 10 s. */
  timeoutMs?: number;
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const dataDir = path.resolve(options.dataDir);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const configFile = options.configFile ?? (existsSync(path.join(dataDir, 'config.json')) ? path.join(dataDir, 'config.json') : null);
  const config: HostConfig = configFile ? readHostConfig(configFile).config : {};
  const backends = Object.entries(config.providers ?? { claude: { backend: 'script' } });
  const backendOf = (kind: AgentKind): string | null => backends.find(([k]) => k === kind)?.[1]?.backend ?? null;

  const [clis, relay] = await Promise.all([
    Promise.all(AGENT_COMMANDS.map(async ({ kind, command }): Promise<CliCheck> => {
      const found = findOnPath(command, options.searchPath ?? process.env.PATH ?? '');
      const check: CliCheck = { kind, command, path: found, version: null, backend: backendOf(kind) };
      if (!found) return check;
      const probe = await readVersion(found, timeoutMs);
      return { ...check, ...probe };
    })),
    options.relayUrl ? checkRelay(options.relayUrl, timeoutMs) : Promise.resolve(null),
  ]);
  const kinds = backends.map(([kind]) => kind as AgentKind);
  const accounts = new AccountBook(dataDir, kinds, policyFrom(config, { dataDir })).snapshot().statuses;
  return { dataDir, config: configFile, clis, accounts, relay };
}

/** The report as the lines a person reads. */
export function formatDoctor(report: DoctorReport): string {
  const lines = [`data      ${report.dataDir}`, `config    ${report.config ?? '(none: claude from the default script)'}`, '', 'agent CLIs'];
  for (const cli of report.clis) {
    const where = cli.path ? `${cli.version ?? `version unknown${cli.problem ? ` (${cli.problem})` : ''}`}  ${cli.path}` : 'not installed';
    const served = cli.backend ? `  served by: ${cli.backend}` : '';
    lines.push(`  ${cli.command.padEnd(8)} ${where}${served}`);
  }
  lines.push('', 'accounts');
  if (report.accounts.length === 0) lines.push('  (none)');
  for (const account of report.accounts) {
    lines.push(`  ${account.id.padEnd(16)} ${account.kind.padEnd(8)} ${account.state}${account.message ? `: ${account.message}` : ''}`);
  }
  lines.push('', 'relay');
  const relay = report.relay;
  if (!relay) lines.push('  (no relay given: --relay or TETHER_RELAY_URL)');
  else lines.push(`  ${relay.url}  ${relay.reachable ? `reachable (health ${relay.status})` : `NOT reachable: ${relay.problem ?? `health ${relay.status}`}`}`);
  return `${lines.join('\n')}\n`;
}

/** The executable `command` resolves to on `searchPath`, as a shell would find it. */
export function findOnPath(command: string, searchPath: string): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function readVersion(file: string, timeoutMs: number): Promise<{ version: string | null; problem?: string }> {
  return new Promise((resolve) => {
    execFile(file, ['--version'], { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      const first = `${stdout}`.trim().split('\n')[0]?.trim() || `${stderr}`.trim().split('\n')[0]?.trim() || '';
      if (error) resolve({ version: first || null, problem: error.killed ? 'no answer to --version' : error.message.split('\n')[0] });
      else resolve({ version: first || null });
    });
  });
}

async function checkRelay(url: string, timeoutMs: number): Promise<RelayCheck> {
  let target: URL;
  try {
    // The same base the link uses: ws(s) or http(s), with any path prefix kept.
    target = new URL(url);
    if (target.protocol === 'ws:') target.protocol = 'http:';
    else if (target.protocol === 'wss:') target.protocol = 'https:';
    target.pathname = `${target.pathname.replace(/\/+$/, '')}/api/health`;
  } catch {
    return { url, reachable: false, problem: 'not a URL' };
  }
  try {
    const response = await fetch(target, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return { url, reachable: response.ok, status: response.status };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : null;
    return { url, reachable: false, problem: cause ?? (error instanceof Error ? error.message : String(error)) };
  }
}
