// The terminal CLIs whose hooks Tether does not read (Gemini CLI 0.61, Copilot CLI 1.0.102): a
// `gemini` or `copilot` the person runs in their own terminal is listed with its status only, as the
// contracts' `hooks` capability says ("without them a terminal shows the session status only").
//
// The host finds them on Linux in /proc, on the liveness interval (sessions.ts): a process of the
// host's own user whose command line or executable is the configured backend's command, in the
// folder its /proc/<pid>/cwd names. Processes are only looked at, never signalled. The CLIs the host
// runs as chats are not terminal sessions and are left out: they descend from the host's own process,
// and those it gives TETHER_HOOKS_OFF=1 carry it in their environment (so do their children).
//
// A CLI that starts itself again as a child is one session, its matching descendants its members:
// Gemini CLI 0.61 relaunches itself under a larger heap (`node … gemini` under `node … gemini`), and
// Copilot CLI 1.0.102's `copilot` is a Node loader that runs the native `copilot` binary. The session
// lasts while any member runs, so a member that outlives the first (reparented: once seen with
// Copilot's binary after its terminal closed) is still that session (sessions.ts pairs it by its
// members), not a new one.
//
// Without hooks the host cannot know more than "the process runs", so such a session is `running`
// until its processes are gone, then `exited`; it has no items, no approvals, and no CLI session id
// the host could resume. Its id is the kind, the pid and the start time (/proc/<pid>/stat field 22)
// of the process it was first seen as, so a reused pid is a new session. Gemini and Copilot do keep their own session files
// (`~/.gemini/tmp/<project>/chats/`, `~/.copilot/session-state/`), but nothing in them names the
// process that writes them, and Gemini writes its file only once a conversation starts: tying one to
// a process would be a guess when two run in one folder, so the host does not.
import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HooksState } from '../../contracts/index.ts';
import type { HostConfig } from '../config.ts';
import { expandHome } from '../providers/codex/driver.ts';
import { HOOKS_OFF_VARIABLE } from './hooks-file.ts';

/** A CLI the host lists by its process alone: its kind and the command that starts it. */
export interface StatusOnlyCommand {
  kind: 'gemini' | 'copilot';
  /** A name looked up on PATH (`gemini`), or an absolute path. */
  command: string;
  /** Its config folder (`~/.gemini`, `~/.copilot`), for `hooks.status` to name. */
  configDir: string;
}

/** One such process as /proc shows it now. */
export interface StatusOnlyProcess {
  kind: StatusOnlyCommand['kind'];
  pid: number;
  /** Its start time in clock ticks (/proc/<pid>/stat field 22): with the pid, which process this is. */
  startedAt: string;
  cwd: string;
  /** It and its descendants that run the command too (the same CLI started again), each by pid and start. */
  members: Array<{ pid: number; startedAt: string }>;
}

/**
 * The status-only CLIs the host config names: each `gemini` or `copilot` backend, by its command, with
 * its default account's config folder (Gemini: `<GEMINI_CLI_HOME, else ~>/.gemini`; Copilot:
 * COPILOT_HOME, else `~/.copilot`).
 */
export function statusOnlyCommandsFrom(config: HostConfig, base: string, env: NodeJS.ProcessEnv = process.env): StatusOnlyCommand[] {
  const out: StatusOnlyCommand[] = [];
  for (const provider of Object.values(config.providers ?? {})) {
    if (provider?.backend !== 'gemini' && provider?.backend !== 'copilot') continue;
    const command = provider.command?.includes('/') ? path.resolve(base, provider.command) : (provider.command ?? provider.backend);
    const configDir =
      provider.backend === 'gemini'
        ? path.join(path.resolve(base, expandHome(provider.home ?? provider.env?.GEMINI_CLI_HOME ?? env.GEMINI_CLI_HOME ?? os.homedir())), '.gemini')
        : path.resolve(base, expandHome(provider.home ?? provider.env?.COPILOT_HOME ?? env.COPILOT_HOME ?? path.join(os.homedir(), '.copilot')));
    if (!out.some((known) => known.kind === provider.backend && known.command === command)) out.push({ kind: provider.backend, command, configDir });
  }
  return out;
}

/** What `hooks.status` says of such a CLI: the host reads no hooks of it, so its sessions show their status only. */
export function statusOnlyHooksState(command: StatusOnlyCommand): HooksState {
  return { kind: command.kind, configDir: command.configDir, installed: false, supported: false };
}

/** The session id of such a process: stable while it runs, new for a reused pid. */
export function statusOnlySessionId(found: Pick<StatusOnlyProcess, 'kind' | 'pid' | 'startedAt'>): string {
  return `${found.kind}-${found.pid}-${found.startedAt}`;
}

/** What such a session id says of its process, or null when it is not one. */
export function statusOnlyProcessOf(sessionId: string): { pid: number; startedAt: string } | null {
  const match = /^(?:gemini|copilot)-(\d+)-(\d+)$/.exec(sessionId);
  return match ? { pid: Number(match[1]), startedAt: match[2]! } : null;
}

/** Interpreters a CLI's script runs under: then the script is argv[1]. */
const INTERPRETERS = new Set(['node', 'nodejs', 'bun', 'deno', 'sh', 'bash', 'dash']);

/**
 * Every process of this user that runs one of the commands, outside the host's own chats. Linux
 * only: elsewhere (no /proc) there are none.
 */
export function scanStatusOnly(commands: readonly StatusOnlyCommand[]): StatusOnlyProcess[] {
  if (commands.length === 0 || typeof process.getuid !== 'function') return [];
  const uid = process.getuid();
  const wanted = commands.map((command) => ({ ...command, name: path.basename(command.command), real: commandFile(command.command) }));
  let pids: number[];
  try {
    pids = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
  const matched = new Map<number, { found: StatusOnlyProcess; parent: number }>();
  for (const pid of pids) {
    if (pid === process.pid) continue;
    try {
      if (statSync(`/proc/${pid}`).uid !== uid) continue;
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .filter((word) => word.length > 0);
      if (argv.length === 0) continue;
      const exe = readOrNull(() => readlinkSync(`/proc/${pid}/exe`));
      const script = argv.length > 1 && INTERPRETERS.has(path.basename(argv[0]!)) ? argv[1]! : null;
      const command = wanted.find(
        (want) =>
          path.basename(argv[0]!) === want.name ||
          (exe !== null && (path.basename(exe) === want.name || exe === want.real)) ||
          (script !== null && (path.basename(script) === want.name || (want.real !== null && realOrNull(script) === want.real))),
      );
      if (!command) continue;
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${HOOKS_OFF_VARIABLE}=1`)) continue;
      const fields = statFields(pid);
      const startedAt = fields?.[19];
      const parent = Number(fields?.[1]);
      // A zombie has ended (only its parent has not looked yet).
      if (!startedAt || fields?.[0] === 'Z' || descendsFromHost(parent)) continue;
      matched.set(pid, { found: { kind: command.kind, pid, startedAt, cwd: readlinkSync(`/proc/${pid}/cwd`), members: [{ pid, startedAt }] }, parent });
    } catch {
      // Gone meanwhile, or not ours to read: not a session the host can see.
    }
  }
  // Each match goes with its topmost matching ancestor: one session per CLI started.
  const top = (pid: number): number => {
    for (let step = 0; step < 64; step++) {
      const parent = matched.get(pid)!.parent;
      if (!matched.has(parent)) return pid;
      pid = parent;
    }
    return pid;
  };
  const out = new Map<number, StatusOnlyProcess>();
  for (const [pid] of matched) {
    const root = top(pid);
    const found = matched.get(root)!.found;
    out.set(root, found);
    if (root !== pid) found.members.push(...matched.get(pid)!.found.members);
  }
  return [...out.values()];
}

/** /proc/<pid>/stat from field 3 on (after the command's name, which may hold spaces), or null. */
function statFields(pid: number): string[] | null {
  const stat = readOrNull(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return stat === null ? null : stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Whether the process is the host's or one of its descendants (a chat's CLI, or what it started). */
function descendsFromHost(pid: number): boolean {
  for (let step = 0; step < 64 && pid > 1; step++) {
    if (pid === process.pid) return true;
    const parent = Number(statFields(pid)?.[1]);
    if (!Number.isInteger(parent)) return false;
    pid = parent;
  }
  return false;
}

function readOrNull(read: () => string): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}

function realOrNull(file: string): string | null {
  return file.includes('/') ? readOrNull(() => realpathSync(file)) : null;
}

/**
 * The command's own file, symlinks resolved: a name is looked up on PATH. So a CLI started through
 * its package's script (`node …/@google/gemini-cli/bundle/gemini.js`, which `gemini` on PATH links
 * to) is known too.
 */
function commandFile(command: string): string | null {
  if (command.includes('/')) return realOrNull(command);
  for (const folder of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!folder) continue;
    const real = realOrNull(path.join(path.resolve(folder), command));
    if (real !== null) return real;
  }
  return null;
}
