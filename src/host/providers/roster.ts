// What `provider.list` says about each agent CLI a host can drive (Claude Code, Codex, Gemini CLI,
// Copilot CLI): the ones this host serves describe themselves (`Provider.info()`), and every other
// one is still listed, with whether it is installed here and its version, but no models and
// `chat: false`, because no chat can be made with it until the host's config names it. A client
// then shows what it could turn on instead of pretending the CLI is absent.
//
// The capability profiles are here, in one table, because each is a claim about how Tether drives
// that CLI (and a served provider's `info()` reads its own entry), not about the CLI in general.
import { execFile } from 'node:child_process';
import type { AgentKind, ProviderCapabilities, ProviderInfo } from '../../contracts/index.ts';
import type { Provider } from './provider.ts';
import { findOnPath, personalPath } from './discovery.ts';

export type CliKind = Exclude<AgentKind, 'apple'>;

export interface CliProfile {
  name: string;
  /** The executable looked up on PATH. */
  command: string;
  capabilities: ProviderCapabilities;
  /**
   * What a person pastes into a terminal to go on with a chat. The id is glued to its flag (or
   * after `--`), so even an id that is not what it should be stays that flag's value in a shell.
   */
  resumeCommand: string;
}

export const CLI_PROFILES: Readonly<Record<CliKind, CliProfile>> = {
  claude: {
    name: 'Claude Code',
    command: 'claude',
    capabilities: {
      chat: true,
      terminal: false,
      hooks: false,
      // stream-json carries a tool's result whole, once it finished.
      streamsToolOutput: false,
      diffs: 'unified',
      attachments: true,
      mentions: true,
      denyReason: true,
      allowAlways: true,
      asyncQuestions: false,
      compaction: 'native',
      reportsCost: true,
      reportsContextWindow: true,
      reportsThinking: true,
      slashCommands: true,
    },
    resumeCommand: 'claude {flags} --resume={id}',
  },
  codex: {
    name: 'Codex',
    command: 'codex',
    capabilities: {
      chat: true,
      terminal: false,
      hooks: false,
      streamsToolOutput: true,
      diffs: 'unified',
      attachments: true,
      mentions: false,
      // A declined command or edit reaches Codex as a decision only.
      denyReason: false,
      allowAlways: true,
      // `requestUserInput` with `isBlocking: false`.
      asyncQuestions: true,
      compaction: 'native',
      // Tokens against the context window, never USD.
      reportsCost: false,
      reportsContextWindow: true,
      reportsThinking: true,
      slashCommands: false,
    },
    resumeCommand: 'codex {flags} resume -- {id}',
  },
  gemini: {
    name: 'Gemini CLI',
    command: 'gemini',
    capabilities: {
      chat: true,
      terminal: false,
      hooks: false,
      // A shell call's update carries no output at all, streamed or final.
      streamsToolOutput: false,
      diffs: 'unified',
      attachments: true,
      mentions: false,
      // ACP's `reject_once` carries no words.
      denyReason: false,
      allowAlways: true,
      asyncQuestions: false,
      compaction: 'none',
      // Token counts in the prompt result's `_meta.quota`, no window size and no USD.
      reportsCost: false,
      reportsContextWindow: false,
      reportsThinking: true,
      slashCommands: true,
    },
    resumeCommand: 'gemini {flags} --resume={id}',
  },
  copilot: {
    name: 'Copilot CLI',
    command: 'copilot',
    capabilities: {
      chat: true,
      terminal: false,
      hooks: false,
      // Copilot sends a running shell's output in `tool_call_update`s, but the ACP adapter shows a
      // tool's output once it ended.
      streamsToolOutput: false,
      diffs: 'unified',
      attachments: true,
      mentions: false,
      // ACP's `reject_once` carries no words.
      denyReason: false,
      // Its `allow_always` option holds for the rest of the session.
      allowAlways: true,
      // No ask-the-user tool over ACP.
      asyncQuestions: false,
      // Its own `/compact`, sent as a prompt.
      compaction: 'native',
      // `usage_update` has the context (used/size) but no cost, at least with your own model provider.
      reportsCost: false,
      reportsContextWindow: true,
      reportsThinking: true,
      slashCommands: true,
    },
    resumeCommand: 'copilot {flags} --resume={id}',
  },
};

export const CLI_KINDS = Object.keys(CLI_PROFILES) as CliKind[];

/** The first `x.y.z` (with any pre-release tail) a `--version` printed: `GitHub Copilot CLI 1.0.102.` → `1.0.102`. */
export function versionIn(text: string): string | null {
  return /\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]*[0-9A-Za-z])?/.exec(text)?.[0] ?? null;
}

export interface CliPresence {
  installed: boolean;
  version: string | null;
}

/**
 * Asks `command --version` (found on the PATH of `env`, default the host's). A CLI that cannot be
 * run, or fails to answer, is not installed; one that answers without a version has version null.
 * Asynchronous: a CLI may take seconds to start and the host's link keeps its heartbeat meanwhile.
 */
export function readCliVersion(command: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 15_000): Promise<CliPresence> {
  return new Promise((resolve) => {
    execFile(command, ['--version'], { encoding: 'utf8', timeout: timeoutMs, env, windowsHide: true }, (error, stdout) => {
      resolve(error ? { installed: false, version: null } : { installed: true, version: versionIn(stdout) });
    });
  });
}

/**
 * How long `provider.list` waits for a CLI it does not serve to print its version. Whether it is
 * installed is known at once (it starts, or there is no such file); its version may take seconds
 * (Gemini CLI's `--version` loads its whole bundle), longer than a relay waits for an answer under
 * load. Past this wait the version is null, "not known yet", and a later list has it.
 */
const VERSION_WAIT_MS = 2_000;

interface Probe {
  installed: Promise<boolean>;
  presence: Promise<CliPresence>;
}

/** Probes of CLIs this host does not serve, once per command and PATH for the life of the process. */
const probes = new Map<string, Probe>();

function probe(command: string): Probe {
  const key = `${command}\0${process.env.PATH ?? ''}`;
  let found = probes.get(key);
  // Looked up on the person's PATH: a project's node_modules/.bin (first under npm and npx) holds its
  // own test copies, which are not this person's CLIs.
  const executable = found ? null : findOnPath(command, personalPath(process.env.PATH ?? ''));
  if (!found && !executable) {
    found = { installed: Promise.resolve(false), presence: Promise.resolve({ installed: false, version: null }) };
    probes.set(key, found);
  }
  if (!found) {
    let started!: (yes: boolean) => void;
    const installed = new Promise<boolean>((resolve) => {
      started = resolve;
    });
    const presence = new Promise<CliPresence>((resolve) => {
      const child = execFile(executable!, ['--version'], { encoding: 'utf8', timeout: 30_000, windowsHide: true }, (error, stdout) => {
        // Not startable at all (no such file, not executable): not installed. Started but failed: installed, version unknown.
        const ran = !error || typeof error.code === 'number' || error.killed === true;
        started(ran);
        resolve({ installed: ran, version: error ? null : versionIn(stdout) });
        // One that did not answer in time (a loaded machine) is asked again by a later list.
        if (error?.killed) probes.delete(key);
      });
      child.once('spawn', () => started(true));
    });
    found = { installed, presence };
    probes.set(key, found);
  }
  return found;
}

/** What is known of a CLI this host does not serve, its version waited for a short while. */
async function presence(command: string): Promise<CliPresence> {
  const { installed, presence: full } = probe(command);
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), VERSION_WAIT_MS);
  });
  try {
    return (await Promise.race([full, waited])) ?? { installed: await installed, version: null };
  } finally {
    clearTimeout(timer);
  }
}

/** The entry of a CLI this host does not serve: as installed as it is here, but with nothing to chat with. */
export function unservedInfo(kind: CliKind, found: CliPresence): ProviderInfo {
  const profile = CLI_PROFILES[kind];
  return {
    kind,
    name: profile.name,
    installed: found.installed,
    version: found.version,
    models: [],
    defaultModel: null,
    capabilities: { ...profile.capabilities, chat: false },
    resumeCommand: profile.resumeCommand,
  };
}

/** Every CLI, the served ones first in the host's order (the first is the default), then the rest. */
export async function listProviders(served: readonly Provider[]): Promise<ProviderInfo[]> {
  const kinds = new Set<AgentKind>(served.map((p) => p.kind));
  const others = CLI_KINDS.filter((kind) => !kinds.has(kind));
  const [infos, unserved] = await Promise.all([
    Promise.all(served.map(async (p) => {
      await p.probed;
      return p.info();
    })),
    Promise.all(others.map(async (kind) => unservedInfo(kind, await presence(CLI_PROFILES[kind].command)))),
  ]);
  return [...infos, ...unserved];
}
