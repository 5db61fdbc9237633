// The Tether host, assembled: the chat runtime (HostCore), the outbox and the link to the relay.
// `startHost` is what `tether host start`, `npm start` and the tests use.
//
// Order matters on start: the runtime loads every chat, the link joins as the client attached to
// every chat (its events go through the outbox, so nothing it misses while offline is lost), and
// only then are interrupted turns taken up, so the relay hears about those too.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { HostCore } from './chats/core.ts';
import type { HostCoreOptions, HostLog } from './chats/core.ts';
import { formatAgents, planAgents, policyFrom, readHostConfig, signatureSettings } from './config.ts';
import type { HostSetup, RequestType } from '../contracts/index.ts';
import type { AgentPlan } from './config.ts';
import type { DiscoveryOptions } from './providers/discovery.ts';
import { replaceFile } from './disk.ts';
import type { HostConfig } from './config.ts';
import { Outbox } from './link/outbox.ts';
import { RelayLink } from './link/relay-link.ts';
import { serveRelayFrame } from './link/relay-requests.ts';
import type { LinkState, RelayLinkOptions } from './link/relay-link.ts';
import { openGate } from './trust/open.ts';
import { HOST_VERSION } from './version.ts';
import { hookTargetsFrom } from './terminal/targets.ts';
import { statusOnlyCommandsFrom } from './terminal/status-only.ts';
import type { HostPolicy } from './policy.ts';
import type { Provider } from './providers/provider.ts';

export { HostCore } from './chats/core.ts';
export type { HostLog, HostEventFrame, ReplyFrame } from './chats/core.ts';
export type { VisualInput } from './chats/visuals.ts';
export { HostPolicy } from './policy.ts';
export { Outbox } from './link/outbox.ts';
export { RelayLink } from './link/relay-link.ts';
export { ScriptProvider, loadScript, DEFAULT_SCRIPT_PATH } from './providers/script.ts';
export type { Provider, ProviderSession, ProviderOutput } from './providers/provider.ts';
export type { HostConfig } from './config.ts';

export { HOST_VERSION } from './version.ts';

/** The client id the relay link has on the runtime. */
export const RELAY_CLIENT_ID = 'relay';

export interface StartHostOptions {
  /** The host's data folder. */
  dataDir: string;
  /** The relay's base URL; without it the host runs without a link (local clients only). */
  relayUrl?: string;
  hostId?: string;
  /** The bearer token for the link, or where to get one on every connect. */
  token?: string | (() => string | Promise<string>);
  /** A config file (JSON, see config.ts); default `<dataDir>/config.json` when it exists. */
  configFile?: string;
  /** A config given directly (wins over the file). */
  config?: HostConfig;
  /** Providers given directly (win over the config). */
  providers?: Provider[];
  /** Where discovery looks when neither names providers (default: this process's PATH and home). */
  discovery?: DiscoveryOptions;
  policy?: HostPolicy;
  coalesceMs?: number;
  writeDelayMs?: number;
  log?: HostLog;
  /** Link tuning (backoff, heartbeat), mostly for tests. */
  link?: Partial<Pick<RelayLinkOptions, 'backoffBaseMs' | 'backoffMaxMs' | 'stableAfterMs' | 'heartbeatMs' | 'missedPongs'>>;
}

export interface RunningHost {
  core: HostCore;
  link: RelayLink | null;
  outbox: Outbox | null;
  /** What it serves and why (null when the providers were given directly). */
  agents: AgentPlan | null;
  /** Whether this host requires device signatures (with a relay link), and the types it lets through unsigned. */
  signatures: { require: boolean; allowUnsigned: RequestType[] };
  /** Closes the link and writes every chat; idempotent. */
  close(): Promise<void>;
}

/** What `provider.list` tells of how this host came to serve its agents, and where its owner changes it. */
function setupOf(plan: AgentPlan, configFile: string, dataDir: string): HostSetup {
  return { agents: plan.agents, source: plan.source, configFile: path.resolve(configFile), configExists: existsSync(configFile), dataDir };
}

export async function startHost(options: StartHostOptions): Promise<RunningHost> {
  const dataDir = path.resolve(options.dataDir);
  const log = options.log ?? consoleLog(false);
  let config: HostConfig = options.config ?? {};
  let base = process.cwd();
  const configFile = options.configFile ?? (existsSync(path.join(dataDir, 'config.json')) ? path.join(dataDir, 'config.json') : undefined);
  if (!options.config && configFile) ({ config, base } = readHostConfig(configFile));
  const plan = options.providers
    ? null
    : await planAgents(config, base, HOST_VERSION, { configFile: options.config ? null : (configFile ?? null), discovery: options.discovery });
  const coreOptions: HostCoreOptions = {
    dataDir,
    providers: options.providers ?? plan!.providers,
    policy: options.policy ?? policyFrom(config, { dataDir }),
    coalesceMs: options.coalesceMs ?? config.coalesceMs,
    writeDelayMs: options.writeDelayMs,
    log,
    hookTargets: hookTargetsFrom(config, base),
    statusOnlyCommands: statusOnlyCommandsFrom(config, base),
    ...(config.terminal?.codexApprovalWaitSeconds !== undefined ? { codexApprovalWaitMs: config.terminal.codexApprovalWaitSeconds * 1000 } : {}),
    // The gate verifies hooks.set only when signatures are required and hooks.set is not let through unsigned.
    // (The gate stands only in front of a relay link.)
    hooksInstallVerified: Boolean(options.relayUrl) && signatureSettings(config).require && !signatureSettings(config).allowUnsigned.includes('hooks.set'),
    ...(plan ? { setup: setupOf(plan, configFile ?? path.join(dataDir, 'config.json'), dataDir) } : {}),
  };
  const core = await HostCore.open(coreOptions);
  // The terminal's hooks find the host on its local socket (only its data folder's; never the relay).
  try {
    await core.terminal.start();
  } catch (error) {
    log.warn(`terminal sessions: hooks socket not opened (${error instanceof Error ? error.message : String(error)}); terminals show nothing`);
  }

  let link: RelayLink | null = null;
  let outbox: Outbox | null = null;
  let closeGate = (): void => undefined;
  const status = new StatusFile(dataDir, options);
  if (options.relayUrl) {
    if (!options.hostId) throw new Error('A relay link needs a host id');
    const token = options.token;
    if (token === undefined) throw new Error('A relay link needs a token');
    // Every relay frame passes the gate: the host's own audit, and signatures when its config requires them.
    const opened = await openGate(core, dataDir, config, options.hostId, log, (frame) => serveRelayFrame(core, frame, RELAY_CLIENT_ID));
    closeGate = opened.close;
    const { gate, intake } = opened;
    outbox = Outbox.open(dataDir);
    const box = outbox;
    link = new RelayLink({
      relayUrl: options.relayUrl,
      hostId: options.hostId,
      token: typeof token === 'function' ? token : () => token,
      outbox: box,
      onRequest: (frame) => gate.serve(frame, (admitted) => serveRelayFrame(core, admitted, RELAY_CLIENT_ID)),
      // Signed grants, vouches and revocations the relay carries; checked by the book (trust/intake.ts).
      onTrust: (statements) => {
        if (intake) void intake.take(statements);
        else log.warn('link: trust statements ignored: this host pinned no owner to check them against (pair it from a device that signs)');
      },
      version: HOST_VERSION,
      unsigned: signatureSettings(config).require ? signatureSettings(config).allowUnsigned : 'all',
      log,
      ...options.link,
      onState: (state) => status.update(state, box.pendingCount, core.sessions.size),
    });
    const live = link;
    core.connect(
      RELAY_CLIENT_ID,
      (frame) => {
        live.sendEvent(frame);
      },
      { allChats: true },
    );
  }
  core.resume();
  link?.start();
  status.update(link ? link.state : 'closed', outbox?.pendingCount ?? 0, core.sessions.size);
  const refresh = setInterval(() => {
    void status.update(link ? link.state : 'closed', outbox?.pendingCount ?? 0, core.sessions.size);
  }, 5_000);
  refresh.unref();
  log.info(
    `host ${options.hostId ?? '(local)'} ready: ${core.sessions.size} chat(s), providers ${[...core.providers.keys()].join(', ')}, data in ${dataDir}, config ${plan?.configFile ?? '(none)'}`,
  );
  if (plan) for (const line of formatAgents(plan, '')) log.info(line);

  let closing: Promise<void> | null = null;
  return {
    core,
    link,
    outbox,
    agents: plan,
    signatures: signatureSettings(config),
    close: () => {
      closing ??= (async () => {
        clearInterval(refresh);
        // The runtime stops taking requests and flushes its text into the outbox at once; the link
        // closes while the backends end (seconds, for a CLI that needs signals).
        const runtime = core.close();
        const linkClosed = link?.close();
        try {
          await runtime;
        } finally {
          await linkClosed;
          closeGate();
          outbox?.close();
          await status.stopped(outbox?.pendingCount ?? 0, core.sessions.size);
        }
      })();
      return closing;
    },
  };
}

/** Readable log lines on stderr; `verbose` adds frame traces. */
export function consoleLog(verbose: boolean): HostLog {
  const line = (level: string, message: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${level.padEnd(5)} ${message}\n`);
  };
  return {
    info: (message) => line('info', message),
    warn: (message) => line('warn', message),
    error: (message) => line('error', message),
    ...(verbose ? { debug: (message: string) => line('debug', message) } : {}),
  };
}

/** What `tether host status` reads: `<dataDir>/host.status.json`, rewritten on every link change. */
export interface HostStatus {
  pid: number;
  version: string;
  hostId: string | null;
  relayUrl: string | null;
  link: LinkState | 'stopped';
  since: number;
  pendingEvents: number;
  chats: number;
  updatedAt: number;
}

export function statusFilePath(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'host.status.json');
}

class StatusFile {
  private readonly file: string;
  private readonly options: StartHostOptions;
  private state: LinkState | 'stopped' = 'closed';
  private since = Date.now();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string, options: StartHostOptions) {
    this.file = statusFilePath(dataDir);
    this.options = options;
  }

  update(state: LinkState | 'stopped', pendingEvents: number, chats: number): Promise<void> {
    if (state !== this.state) {
      this.state = state;
      this.since = Date.now();
    }
    const status: HostStatus = {
      pid: process.pid,
      version: HOST_VERSION,
      hostId: this.options.hostId ?? null,
      relayUrl: this.options.relayUrl ?? null,
      link: state,
      since: this.since,
      pendingEvents,
      chats,
      updatedAt: Date.now(),
    };
    const text = JSON.stringify(status, null, 2);
    const next = this.chain.then(() => replaceFile(this.file, text));
    this.chain = next.catch(() => undefined);
    return next.catch(() => undefined);
  }

  stopped(pendingEvents: number, chats: number): Promise<void> {
    return this.update('stopped', pendingEvents, chats);
  }
}
