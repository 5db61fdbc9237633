// What `provider.list` says about each agent CLI a host can drive (Claude Code, Codex, Gemini CLI,
// Copilot CLI): the ones this host serves describe themselves (`Provider.info()`), and every other
// one is still listed, with whether it is installed here and its version, but no models and
// `chat: false`, because no chat can be made with it until the host's config names it. A client
// then shows what it could turn on instead of pretending the CLI is absent.
//
// Each CLI's capability profile is in its own folder (`<cli>/profile.ts`), a claim about how Tether
// drives that CLI (its provider's `info()` reads it too), and reaches the roster through the provider
// registry (registry.ts), so a new CLI is listed by being registered.
import { execFile } from 'node:child_process';
import type { AgentKind, ProviderInfo } from '../../contracts/index.ts';
import type { CliKind, Provider } from './provider.ts';
import { type CliPresence, versionIn } from './cli-version.ts';
import { findOnPath, personalPath } from './discovery.ts';
import { CLI_KINDS, CLI_PROFILES } from './registry.ts';

export { CLI_KINDS, CLI_PROFILES } from './registry.ts';
export { type CliPresence, readCliVersion, versionIn } from './cli-version.ts';

export type { CliKind, CliProfile } from './provider.ts';

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
    Promise.all(
      served.map(async (p) => {
        await p.probed;
        return p.info();
      }),
    ),
    Promise.all(others.map(async (kind) => unservedInfo(kind, await presence(CLI_PROFILES[kind].command)))),
  ]);
  return [...infos, ...unserved];
}
