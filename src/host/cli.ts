// `tether`: the host's command line.
//
//   tether host pair <relay-url> [--name <name>] [--data <dir>] [--folder <dir>]... [--max-mode <mode>]
//   tether host start [--relay <url>] [--data <dir>] [--config <file>] [--verbose]
//   tether host status [--data <dir>] [--json]
//   tether host doctor [--relay <url>] [--data <dir>] [--config <file>] [--json]
//   tether host audit [--data <dir>] [--json] [--last <n>]
//   tether host install [--data <dir>] [--no-start]     (a systemd user unit / a launchd agent)
//   tether host uninstall [--data <dir>] [--no-stop]
//   tether host hooks install|remove|status [--data <dir>] [--config <file>] [--config-dir <dir>] [--yes]
//   tether host trust <code> [--data <dir>] [--relay <url>]
//
// `pair` makes this host's key and waits until a signed-in person approves the code it shows; `start`
// then links with that key (identity.json in the data folder). The relay URL and data folder also
// come from TETHER_RELAY_URL and TETHER_DATA_DIR. SIGINT/SIGTERM shut the host down cleanly: every thread
// written, every agent CLI ended (stdin closed, then SIGTERM to its process group after 3 s, SIGKILL
// 2 s later), the link closed, unacknowledged events kept in the outbox for the next start.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import path from 'node:path';
import { Command, Option } from 'commander';
import { recordChatId } from './chats/store.ts';
import { formatDoctor, runDoctor } from './doctor.ts';
import { hostTokenSigner, identityFile, readHostIdentity, type HostIdentity } from './identity.ts';
import { consoleLog, HOST_VERSION, startHost, statusFilePath } from './index.ts';
import type { HostStatus } from './index.ts';
import { createInterface } from 'node:readline/promises';
import { MODE_ORDER } from '../contracts/index.ts';
import { checkMode, checkRoot, defaultRoot, describePairPolicy, writePairPolicy } from './pair-policy.ts';
import type { PairPolicyAnswers } from './pair-policy.ts';
import { pairHost, relayBase } from './pairing.ts';
import { DEFAULT_MODE_CEILING } from './policy.ts';
import { formatAudit, readAudit } from './trust/audit.ts';
import { installedService, installService, serviceLogFile, uninstallService } from './service.ts';
import { policyFrom, readHostConfig } from './config.ts';
import { defaultClaudeConfigDir, settingsFile, type HookTarget } from './terminal/hooks-file.ts';
import { setHooks, stateOfHooks } from './terminal/hooks.ts';
import type { HooksState } from '../contracts/index.ts';
import { hookTargetsFrom, withAccountTargets } from './terminal/targets.ts';
import { statusOnlyCommandsFrom, statusOnlyHooksState, type StatusOnlyCommand } from './terminal/status-only.ts';
import { AccountBook } from './chats/accounts.ts';
import { recoverByCode, recoveredLines } from './trust/recover.ts';

export function defaultDataDir(): string {
  return process.env.TETHER_DATA_DIR ?? path.join(homedir(), '.tether');
}

// The options several subcommands share, written once.
const dataOption = () => new Option('--data <dir>', 'data folder (env TETHER_DATA_DIR)').default(defaultDataDir());
const configOption = () => new Option('--config <file>', 'host config file (default <data>/config.json)');
const relayOption = (fallback: string) =>
  new Option('--relay <url>', `relay base URL (env TETHER_RELAY_URL; default: ${fallback})`).default(process.env.TETHER_RELAY_URL);

export function buildCli(): Command {
  const program = new Command('tether').description('Reach the coding agents on this machine through a Tether relay').version(HOST_VERSION);
  const host = program.command('host').description('Run or inspect the host agent on this machine');

  host
    .command('start')
    .description('Connect this machine to a relay and serve its chats (pair it first: tether host pair)')
    .addOption(relayOption('the relay it was paired with'))
    .addOption(dataOption())
    .addOption(configOption())
    .option('--verbose', 'log every frame on the link', false)
    .action(async (opts: { relay?: string; data: string; config?: string; verbose: boolean }) => {
      const identity = identityIn(opts.data);
      if (!identity) fail(`This host is not paired yet (no ${identityFile(opts.data)}). Run: tether host pair <relay-url> --data ${opts.data}`);
      const log = consoleLog(opts.verbose);
      const running = await startHost({
        dataDir: opts.data,
        relayUrl: opts.relay ?? identity.relayUrl,
        hostId: identity.hostId,
        token: hostTokenSigner(identity),
        configFile: opts.config,
        log,
      });
      let stopping = false;
      const stop = (signal: string): void => {
        if (stopping) return;
        stopping = true;
        log.info(`${signal}: shutting down`);
        running.close().then(
          () => process.exit(0),
          (error: unknown) => {
            log.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
    });

  host
    .command('pair')
    .description('Pair this machine with a relay: shows a code that a signed-in person approves')
    .argument('<relay-url>', "the relay's base URL (https://, or http:// on loopback)")
    .option('--name <name>', "how the host is called on the relay (default: this machine's name)", hostname())
    .option(
      '--folder <dir>',
      'a folder chats may work in (repeat for more; default: asked, else the folder pair runs in)',
      (value: string, list: string[]) => [...list, value],
      [] as string[],
    )
    .option('--max-mode <mode>', `the widest runtime mode a chat may use (${MODE_ORDER.join(', ')}; default: asked, else ${DEFAULT_MODE_CEILING})`)
    .addOption(dataOption())
    .addOption(configOption())
    .action(async (relayUrl: string, opts: { name: string; data: string; config?: string; folder: string[]; maxMode?: string }) => {
      const existing = identityIn(opts.data);
      if (existing) {
        fail(
          `This data folder is already paired: host ${existing.hostId} on ${existing.relayUrl}. To pair again, remove ${identityFile(opts.data)} (or use another --data).`,
        );
      }
      let answers: PairPolicyAnswers;
      try {
        relayBase(relayUrl);
        answers = { roots: opts.folder.map((folder) => checkRoot(folder)), ...(opts.maxMode ? { modeCeiling: checkMode(opts.maxMode) } : {}) };
        if (process.stdin.isTTY && opts.folder.length === 0 && !opts.maxMode) answers = await askPolicy();
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
      }
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort(new Error('Pairing cancelled')));
      try {
        const identity = await pairHost({
          relayUrl,
          name: opts.name,
          dataDir: opts.data,
          say: (line) => process.stdout.write(`${line}\n`),
          signal: abort.signal,
        });
        const policy = writePairPolicy(opts.config ?? path.join(opts.data, 'config.json'), answers);
        process.stdout.write(
          `Paired: this machine is host ${identity.hostId} on ${identity.relayUrl}.\n${describePairPolicy(policy).join('\n')}\nStart it with: tether host start --data ${opts.data}\n`,
        );
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
      }
    });

  host
    .command('status')
    .description('Show whether the host runs, its link and its backlog')
    .addOption(dataOption())
    .option('--json', 'print the status as JSON', false)
    .action((opts: { data: string; json: boolean }) => {
      const file = statusFilePath(opts.data);
      if (!existsSync(file)) {
        process.stdout.write(`No host has run with data in ${path.resolve(opts.data)}\n`);
        process.exitCode = 1;
        return;
      }
      const status = JSON.parse(readFileSync(file, 'utf8')) as HostStatus;
      const alive = status.link !== 'stopped' && processAlive(status.pid);
      const chats = countChats(opts.data);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ ...status, running: alive, chats }, null, 2)}\n`);
        return;
      }
      const lines = [
        `host      ${status.hostId ?? '(local)'} ${alive ? `running (pid ${status.pid})` : 'not running'}`,
        `relay     ${status.relayUrl ?? '-'}`,
        `link      ${alive ? status.link : 'down'} since ${new Date(status.since).toISOString()}`,
        `backlog   ${status.pendingEvents} event(s) not yet acknowledged`,
        `chats     ${chats}`,
        `version   ${status.version}`,
        serviceLine(opts.data),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      if (!alive) process.exitCode = 3;
    });

  host
    .command('doctor')
    .description('Check which agent CLIs are installed, the accounts, and whether the relay answers')
    .addOption(relayOption('the last one this host used'))
    .addOption(dataOption())
    .addOption(configOption())
    .option('--json', 'print the report as JSON', false)
    .action(async (opts: { relay?: string; data: string; config?: string; json: boolean }) => {
      const report = await runDoctor({ dataDir: opts.data, configFile: opts.config, relayUrl: opts.relay ?? lastRelayUrl(opts.data) });
      process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
      if (report.relay && !report.relay.reachable) process.exitCode = 2;
    });

  host
    .command('audit')
    .description("Print this machine's own audit: every request that acted on it, who sent it (verified or not) and how it ended")
    .addOption(dataOption())
    .option('--json', 'print the entries as JSON lines', false)
    .option('--last <n>', 'only the newest n entries', (raw) => {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1) fail('--last takes a whole number of at least 1');
      return n;
    })
    .action((opts: { data: string; json: boolean; last?: number }) => {
      const reading = readAudit(opts.data);
      const entries = opts.last === undefined ? reading.entries : reading.entries.slice(-opts.last);
      if (opts.json) {
        process.stdout.write(entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
        if (reading.broken) process.stderr.write(`The audit breaks at line ${reading.broken.line}: ${reading.broken.why}\n`);
      } else {
        process.stdout.write(formatAudit({ entries, broken: reading.broken }));
      }
      // A broken chain is a finding, not a detail: scripts see it in the exit code.
      if (reading.broken) process.exitCode = 4;
    });

  host
    .command('install')
    .description('Run the host as your user service: at login (and boot), restarted on failure, logs in <data>/logs/host.log')
    .addOption(dataOption())
    .option('--no-start', 'only write the service file; do not enable or start it')
    .action((opts: { data: string; start: boolean }) => {
      if (!identityIn(opts.data))
        fail(`This host is not paired yet (no ${identityFile(opts.data)}). Run first: tether host pair <relay-url> --data ${opts.data}`);
      let result;
      try {
        result = installService({ home: homedir(), dataDir: path.resolve(opts.data), start: opts.start });
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
      }
      const { files, ran } = result;
      const lines = [`Wrote ${files.file} (${files.kind}).`, `Logs: ${files.log}`];
      for (const step of ran)
        lines.push(`${step.status === 0 ? 'ran' : 'FAILED'}: ${step.argv.join(' ')}${step.status === 0 || !step.output ? '' : `\n  ${step.output}`}`);
      if (!opts.start) lines.push(`Start it with: ${files.start.map((argv) => argv.join(' ')).join(' && ')}`);
      if (files.kind === 'systemd') lines.push('To start it at boot before you log in: loginctl enable-linger');
      process.stdout.write(`${lines.join('\n')}\n`);
      if (ran.some((step) => step.status !== 0)) process.exitCode = 1;
    });

  host
    .command('uninstall')
    .description('Stop and remove the user service that install made (the data folder and the log stay)')
    .addOption(dataOption())
    .option('--no-stop', 'only remove the service file')
    .action((opts: { data: string; stop: boolean }) => {
      let result;
      try {
        result = uninstallService({ home: homedir(), dataDir: path.resolve(opts.data), stop: opts.stop });
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
      }
      const lines = [result.removed ? `Removed ${result.files.file}.` : `No service file at ${result.files.file}.`];
      for (const step of result.ran) lines.push(`${step.status === 0 ? 'ran' : 'failed (may not have been running)'}: ${step.argv.join(' ')}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    });

  const hooks = host.command('hooks').description('The hooks that let the host see the sessions you run in your own terminal (Claude Code, Codex)');
  const hookOptions = (command: Command) =>
    command
      .addOption(dataOption())
      .addOption(configOption())
      .option('--cli <kind>', 'only this CLI: claude or codex (default: each the host config names; Claude Code always)')
      .option(
        '--config-dir <dir>',
        "the CLI's config folder (default: the host config's account, else $CLAUDE_CONFIG_DIR or ~/.claude; Codex: $CODEX_HOME or ~/.codex)",
      );
  hookOptions(hooks.command('install'))
    .description("Add the host's hooks to the CLI's own hooks file, beside your own (asks first); Codex also trusts them")
    .option('--yes', 'do not ask', false)
    .action(async (opts: HookOpts & { yes: boolean }) => {
      for (const target of hookTargetsOf(opts)) {
        const file = settingsFile(target);
        const trust =
          target.kind === 'codex' ? ` and mark them trusted in ${path.join(target.configDir, 'config.toml')} (Codex runs no hook it has not trusted)` : '';
        if (
          !opts.yes &&
          !(await confirm(
            `Add Tether's hooks to ${file}${trust}? They tell the host running from ${path.resolve(opts.data)} about your sessions and let it ask you for permissions. [y/N] `,
          ))
        ) {
          process.stdout.write('Nothing changed.\n');
          continue;
        }
        await runHooks(() => setHooks(opts.data, target, true));
      }
    });
  hookOptions(hooks.command('remove'))
    .description("Take the host's hooks out of the CLI's hooks file (yours stay)")
    .action(async (opts: HookOpts) => {
      for (const target of hookTargetsOf(opts)) await runHooks(() => setHooks(opts.data, target, false));
    });
  hookOptions(hooks.command('status'))
    .description("Whether the host's hooks are in the CLI's hooks file")
    .option('--json', 'print as JSON', false)
    .action(async (opts: HookOpts & { json: boolean }) => {
      const states = await Promise.all(hookTargetsOf(opts).map((target) => stateOfHooks(opts.data, target)));
      if (opts.cli === undefined && opts.configDir === undefined) states.push(...statusOnlyOf(opts).map(statusOnlyHooksState));
      if (opts.json) process.stdout.write(`${JSON.stringify({ hooks: states }, null, 2)}\n`);
      else for (const state of states) printHooks(state);
    });

  host
    .command('trust')
    .description("Trust a new device of this host's owner by the code the app shows for it (recovery, on this machine only)")
    .argument('<code>', "the device's code from the app (Settings → Devices), four groups of four characters")
    .addOption(relayOption('the relay it was paired with'))
    .addOption(dataOption())
    .action(async (code: string, opts: { relay?: string; data: string }) => {
      const identity = identityIn(opts.data);
      if (!identity) fail(`This host is not paired yet (no ${identityFile(opts.data)}).`);
      try {
        const result = await recoverByCode({ dataDir: opts.data, identity, code, ...(opts.relay ? { relayUrl: opts.relay } : {}) });
        process.stdout.write(`${recoveredLines(result).join('\n')}\n`);
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
      }
    });

  return program;
}

/** Whether the host is installed as a user service, and where its logs are. */
function serviceLine(dataDir: string): string {
  const service = installedService(homedir());
  if (!service?.installed) return `service   not installed (tether host install); logs where it was started`;
  return `service   ${service.file}; logs in ${serviceLogFile(dataDir)}`;
}

interface HookOpts {
  data: string;
  config?: string;
  configDir?: string;
  cli?: string;
}

function hookTargetsOf(opts: HookOpts): HookTarget[] {
  if (opts.cli !== undefined && opts.cli !== 'claude' && opts.cli !== 'codex') fail(`--cli takes claude or codex, not ${JSON.stringify(opts.cli)}`);
  const file = opts.config ?? path.join(opts.data, 'config.json');
  let targets: HookTarget[];
  if (!existsSync(file)) targets = hookTargetsFrom({}, process.cwd());
  else {
    try {
      const { config, base } = readHostConfig(file);
      // The accounts made in the app, each folder as the host's policy admits it, beside the config's.
      const accounts = new AccountBook(opts.data, ['claude', 'codex'], policyFrom(config, { dataDir: opts.data }));
      targets = withAccountTargets(hookTargetsFrom(config, base), accounts);
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error));
    }
  }
  const kind = (opts.cli ?? (opts.configDir ? 'claude' : undefined)) as HookTarget['kind'] | undefined;
  if (kind) {
    const named = targets.find((target) => target.kind === kind) ?? { kind, configDir: '', ...(kind === 'codex' ? { command: 'codex' } : {}) };
    targets = [{ ...named, ...(opts.configDir ? { configDir: path.resolve(opts.configDir) } : {}) }];
    if (!targets[0]!.configDir)
      targets[0]!.configDir = kind === 'codex' ? path.resolve(process.env.CODEX_HOME || path.join(homedir(), '.codex')) : defaultClaudeConfigDir();
  }
  return targets;
}

async function runHooks(change: () => Promise<HooksState>): Promise<void> {
  try {
    printHooks(await change());
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

/** The configured CLIs whose hooks the host does not read (status-only.ts). */
function statusOnlyOf(opts: HookOpts): StatusOnlyCommand[] {
  const file = opts.config ?? path.join(opts.data, 'config.json');
  if (!existsSync(file)) return [];
  const { config, base } = readHostConfig(file);
  return statusOnlyCommandsFrom(config, base);
}

function printHooks(state: HooksState): void {
  if (!state.supported) {
    process.stdout.write(`${state.kind}  ${state.configDir}  no hooks read: its terminal sessions show their status only\n`);
    return;
  }
  const trust = state.trusted === undefined ? '' : state.trusted ? ', trusted' : ', not trusted by Codex (it runs none of them)';
  const file = path.join(state.configDir, state.kind === 'codex' ? 'hooks.json' : 'settings.json');
  process.stdout.write(`${state.kind}  ${file}  ${state.installed ? 'installed' : 'not installed'}${state.installed ? trust : ''}\n`);
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** Asks the person on the terminal which folders and which widest mode this machine allows. */
async function askPolicy(): Promise<PairPolicyAnswers> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const here = defaultRoot();
    const roots: string[] = [];
    for (;;) {
      const answer = (await rl.question(`Folders chats may work in, comma-separated [${here}]: `)).trim();
      try {
        roots.push(...(answer === '' ? [here] : answer.split(',')).map((folder) => checkRoot(folder)));
        break;
      } catch (error) {
        process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
    for (;;) {
      const answer = (await rl.question(`Widest runtime mode (${MODE_ORDER.join(', ')}) [${DEFAULT_MODE_CEILING}]: `)).trim();
      try {
        return { roots, modeCeiling: answer === '' ? DEFAULT_MODE_CEILING : checkMode(answer) };
      } catch (error) {
        process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  } finally {
    rl.close();
  }
}

/** The identity kept in the data folder; a damaged one ends the command with what is wrong. */
function identityIn(dataDir: string): HostIdentity | null {
  try {
    return readHostIdentity(dataDir);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** The relay the last host run with this data folder linked to, if any. */
function lastRelayUrl(dataDir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(statusFilePath(dataDir), 'utf8')) as HostStatus).relayUrl ?? undefined;
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function countChats(dataDir: string): number {
  try {
    return readdirSync(path.join(dataDir, 'chats')).filter((name) => recordChatId(name) !== null).length;
  } catch {
    return 0;
  }
}

export async function main(argv: string[] = process.argv): Promise<void> {
  await buildCli().parseAsync(argv);
}
