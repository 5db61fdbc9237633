// The host's hooks in Codex (0.171): `<CODEX_HOME>/hooks.json` (hooks-file.ts writes and strips it,
// as for Claude Code), and Codex's trust of them. Codex runs a hook command that is not managed only
// once it was reviewed and trusted: it keeps `[hooks.state."<source>:<event>:<group>:<hook>"]
// trusted_hash = "sha256:…"` in `<CODEX_HOME>/config.toml`, the hash over the hook as written (its
// command, timeout, matcher), which `/hooks` in the TUI writes. An untrusted hook never runs.
//
// With the person's consent (the install itself), the host trusts its own hook commands, and only
// them: it asks a short-lived `codex app-server` of that home for its hooks (`hooks/list`), picks
// those from this hooks.json whose command is exactly the host's, and has Codex write their hashes
// (`config/batchWrite`, so Codex edits its own TOML and keeps the person's formatting). A hook of the
// person's is never trusted by the host, whatever it says. Remove takes the hooks out of hooks.json
// and those trust entries out of config.toml; if config.toml is still byte for byte what the install
// left, it gets its bytes from before the install back.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { replaceFileSync } from '../disk.ts';
import { withAppServer } from '../providers/codex/index.ts';
import type { CodexLaunch } from '../providers/codex/driver.ts';
import { hookCommand, hooksState, installHooks, removeHooks, settingsFile, type HookTarget, type HooksState } from './hooks-file.ts';

const CLIENT_VERSION = '0.0.0';

/** What the host keeps of one home's config.toml around its install (in its own data folder, 0600). */
interface Kept {
  /** config.toml before the trust was written (base64), or absent when there was none. */
  before: string | null;
  /** config.toml as the trust left it (its sha256): only then does remove give `before` back. */
  afterSha256: string;
  /** The trust entries the host wrote. */
  keys: string[];
}

function keptFile(dataDir: string, target: HookTarget): string {
  const key = createHash('sha256').update(target.configDir).digest('hex').slice(0, 16);
  return path.join(dataDir, 'hooks', `codex-${key}.trust.json`);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The home is one the host can name in Codex's config keys: an absolute path without `"`, `\` or a
 * control character (a trust key is written `hooks.state."<path>/hooks.json:…"`, quoted).
 */
export function codexHomeProblem(configDir: string): string | null {
  if (!path.isAbsolute(configDir)) return `CODEX_HOME ${JSON.stringify(configDir)} is not an absolute path`;
  if (/["\\\u0000-\u001f\u007f]/.test(configDir))
    return `CODEX_HOME ${JSON.stringify(configDir)} has a quote, a backslash or a control character; the host does not write hooks there`;
  return null;
}

function launchOf(target: HookTarget): CodexLaunch {
  return { command: target.command ?? 'codex', home: target.configDir, clientVersion: CLIENT_VERSION };
}

interface ListedHook {
  key: string;
  command: string;
  sourcePath: string;
  currentHash: string;
  trustStatus: string;
  isManaged: boolean;
}

/** Codex's own view of the home's hooks (`hooks/list`). */
async function listHooks(target: HookTarget): Promise<ListedHook[]> {
  return withAppServer(launchOf(target), undefined, 'hooks/list', async (peer) => {
    const answer = (await peer.request('hooks/list', { cwds: [target.configDir] })) as { data?: { hooks?: unknown[] }[] };
    const out: ListedHook[] = [];
    for (const entry of answer?.data ?? []) {
      for (const raw of entry.hooks ?? []) {
        const hook = raw as Record<string, unknown>;
        if (typeof hook.key === 'string' && typeof hook.command === 'string' && typeof hook.sourcePath === 'string' && typeof hook.currentHash === 'string') {
          out.push({
            key: hook.key,
            command: hook.command,
            sourcePath: hook.sourcePath,
            currentHash: hook.currentHash,
            trustStatus: String(hook.trustStatus),
            isManaged: hook.isManaged === true,
          });
        }
      }
    }
    return out;
  });
}

function realOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The host's own hooks in this home's hooks.json, as Codex lists them: exactly its command, from exactly that file. */
function ours(listed: readonly ListedHook[], dataDir: string, target: HookTarget): ListedHook[] {
  const command = hookCommand(dataDir, 'codex');
  const file = realOrSelf(settingsFile(target));
  return listed.filter((hook) => !hook.isManaged && hook.command === command && realOrSelf(hook.sourcePath) === file);
}

export interface CodexHooksState extends HooksState {
  /** Every hook of the host's that Codex lists is trusted (it runs). */
  trusted: boolean;
}

/** Adds the host's hooks to hooks.json and has Codex trust those (and only those). */
export async function installCodexHooks(dataDir: string, target: HookTarget): Promise<CodexHooksState> {
  const problem = codexHomeProblem(target.configDir);
  if (problem) throw new Error(problem);
  const config = path.join(target.configDir, 'config.toml');
  const kept = keptFile(dataDir, target);
  const previous = existsSync(kept) ? (JSON.parse(readFileSync(kept, 'utf8')) as Kept) : null;
  const before = previous ? previous.before : existsSync(config) ? readFileSync(config).toString('base64') : null;
  installHooks(dataDir, target);
  const mine = ours(await listHooks(target), dataDir, target);
  const value = Object.fromEntries(mine.map((hook) => [hook.key, { trusted_hash: hook.currentHash }]));
  if (mine.length > 0) {
    await withAppServer(launchOf(target), undefined, 'config/batchWrite', (peer) =>
      peer.request('config/batchWrite', {
        edits: [{ keyPath: 'hooks.state', value, mergeStrategy: 'upsert' }],
      }),
    );
  }
  const after = existsSync(config) ? readFileSync(config) : Buffer.alloc(0);
  mkdirSync(path.dirname(kept), { recursive: true, mode: 0o700 });
  const keys = [...new Set([...(previous?.keys ?? []), ...mine.map((hook) => hook.key)])];
  writeFileSync(kept, JSON.stringify({ before, afterSha256: sha256(after), keys } satisfies Kept), { mode: 0o600 });
  return codexHooksState(dataDir, target);
}

/** Takes the host's hooks out of hooks.json and their trust out of config.toml. */
export async function removeCodexHooks(dataDir: string, target: HookTarget): Promise<CodexHooksState> {
  const problem = codexHomeProblem(target.configDir);
  if (problem) throw new Error(problem);
  removeHooks(dataDir, target);
  const config = path.join(target.configDir, 'config.toml');
  const kept = keptFile(dataDir, target);
  if (existsSync(kept)) {
    const { before, afterSha256, keys } = JSON.parse(readFileSync(kept, 'utf8')) as Kept;
    const now = existsSync(config) ? readFileSync(config) : null;
    if (now && sha256(now) === afterSha256) {
      // Nothing else changed it since: its bytes from before the install come back.
      if (before === null) rmSync(config);
      else replaceFileSync(config, Buffer.from(before, 'base64'));
    } else if (now && keys.length > 0) {
      // The person (or Codex) changed it since: only the host's entries go, written by Codex.
      await withAppServer(launchOf(target), undefined, 'config/batchWrite', (peer) =>
        peer.request('config/batchWrite', {
          edits: keys.map((key) => ({ keyPath: `hooks.state.${JSON.stringify(key)}`, value: null, mergeStrategy: 'replace' })),
        }),
      );
    }
    rmSync(kept, { force: true });
  }
  return { ...hooksState(dataDir, target), trusted: false };
}

/** Whether the host's hooks are in hooks.json, and whether Codex trusts them all (asked of Codex). */
export async function codexHooksState(dataDir: string, target: HookTarget): Promise<CodexHooksState> {
  const state = hooksState(dataDir, target);
  if (!state.installed) return { ...state, trusted: false };
  const mine = ours(await listHooks(target), dataDir, target);
  return { ...state, trusted: mine.length > 0 && mine.every((hook) => hook.trustStatus === 'trusted') };
}
