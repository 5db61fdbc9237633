// `tether host doctor`: what this machine can serve and whether the relay answers. It reads, it
// never changes anything: the agent CLIs found on PATH and their versions, the backend the config
// names for each kind, each provider account's state, and the relay's `/api/health`.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { AgentKind, ProviderAccountStatus } from '../contracts/index.ts';
import { AccountBook } from './chats/accounts.ts';
import { formatAgents, planAgents, policyFrom, readHostConfig } from './config.ts';
import type { AgentLine, HostConfig } from './config.ts';
import { discoverAgents, skippedPath, type SignIn } from './providers/discovery.ts';
import { HOST_VERSION } from './version.ts';

export { findOnPath } from './providers/discovery.ts';

export interface CliCheck {
  kind: AgentKind;
  command: string;
  /** Where it was found on the person's PATH (never a node_modules/.bin); null when it is not installed. */
  path: string | null;
  /** Its version; null when it gave none. */
  version: string | null;
  /** Its default account's sign-in, as its own files and variables say. */
  signIn: SignIn;
  /** The backend this host's config serves the kind with (`discovered` without a config); null when it serves no such kind. */
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
  /** What a host started now would serve, and why any agent is not served. */
  agents: AgentLine[];
  clis: CliCheck[];
  /** PATH folders discovery skipped (npm's and npx's `node_modules/.bin`: a project's own copies). */
  skippedPath: string[];
  accounts: ProviderAccountStatus[];
  relay: RelayCheck | null;
}

export interface DoctorOptions {
  dataDir: string;
  configFile?: string;
  relayUrl?: string;
  /** The PATH to look the CLIs up on. Default: the process's. */
  searchPath?: string;
  /** Where the CLIs keep their sign-ins. Default: the person's home. */
  home?: string;
  /** Per probe (version, health). Default 10 s. */
  timeoutMs?: number;
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const dataDir = path.resolve(options.dataDir);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const configFile = options.configFile ?? (existsSync(path.join(dataDir, 'config.json')) ? path.join(dataDir, 'config.json') : null);
  const { config, base }: { config: HostConfig; base: string } = configFile ? readHostConfig(configFile) : { config: {}, base: process.cwd() };
  const env = { ...process.env, PATH: options.searchPath ?? process.env.PATH ?? '' };
  const [found, relay] = await Promise.all([
    discoverAgents({ env, home: options.home ?? homedir(), timeoutMs }),
    options.relayUrl ? checkRelay(options.relayUrl, timeoutMs) : Promise.resolve(null),
  ]);
  const plan = await planAgents(config, base, HOST_VERSION, { configFile, found });
  const backendOf = (kind: AgentKind): string | null => {
    if (config.providers) return config.providers[kind]?.backend ?? null;
    return plan.agents.some((a) => a.kind === kind && a.served) ? (plan.source === 'demo' ? 'script (the demo agent)' : 'discovered') : null;
  };
  const clis = found.map(
    (agent): CliCheck => ({
      kind: agent.kind,
      command: path.basename(agent.executable ?? agent.kind),
      path: agent.executable,
      version: agent.version,
      signIn: agent.signIn,
      backend: backendOf(agent.kind),
    }),
  );
  const kinds = plan.providers.map((p) => p.kind);
  const accounts = new AccountBook(dataDir, kinds, policyFrom(config, { dataDir })).snapshot().statuses;
  return { dataDir, config: configFile, agents: plan.agents, clis, skippedPath: skippedPath(env.PATH), accounts, relay };
}

/** The report as the lines a person reads. */
export function formatDoctor(report: DoctorReport): string {
  const lines = [
    `data      ${report.dataDir}`,
    `config    ${report.config ?? `(none: ${path.join(report.dataDir, 'config.json')} does not exist, so the agents found on PATH are served)`}`,
    '',
    'agents',
    ...formatAgents(report, '  '),
    '',
    `agent CLIs on PATH${report.skippedPath.length ? ` (skipping ${report.skippedPath.join(', ')}: a project's own copies, which npm puts first)` : ''}`,
  ];
  for (const cli of report.clis) {
    const where = cli.path ? `${(cli.version ?? 'version unknown').padEnd(10)} ${cli.path}  ${cli.signIn.state}: ${cli.signIn.how}` : 'not installed';
    const served = cli.backend ? `  served by: ${cli.backend}` : '';
    lines.push(`  ${cli.kind.padEnd(8)} ${where}${served}`);
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
