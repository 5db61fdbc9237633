// The host's hooks in a CLI's own hooks file: Claude Code's settings (`<config folder>/settings.json`,
// the folder the account hands the CLI as CLAUDE_CONFIG_DIR) or Codex's `<CODEX_HOME>/hooks.json`
// (the same shape: `{ hooks: { Event: [{ matcher, hooks: [{ type, command, timeout }] }] } }`; what
// Codex adds, the trust of the host's hook commands, is codex-hooks.ts). Installed only when the
// person asks (`tether host hooks install`, or the app's switch), beside whatever hooks they have,
// and removed without a trace.
//
// Each event gets one matcher group of ours holding one command: the host's hook client
// (hook-client.ts) with `--tether-hook` as its last word, which is how an entry is known to be ours.
// The person's own groups are never touched. Removal strips our groups; when what is left is what
// the file held before the install, the file's own bytes come back (formatting, key order and all),
// or the file goes when there was none.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { replaceFileSync } from '../disk.ts';

/** Set on the CLIs the host runs as chats: their hooks say nothing (hook-client.ts reads it by this name). */
export const HOOKS_OFF_VARIABLE = 'TETHER_HOOKS_OFF';

/** The word that marks a hook command as the host's. */
export const HOOK_MARK = '--tether-hook';

/** The events the host listens to, and how long Claude Code lets each hook run (seconds). */
export const CLAUDE_HOOK_EVENTS: Readonly<Record<string, number>> = {
  SessionStart: 10,
  UserPromptSubmit: 10,
  PreToolUse: 10,
  // Blocks until someone answers (or the host lets it go at the approval's expiry, before this).
  PermissionRequest: 600,
  PostToolUse: 10,
  PostToolUseFailure: 10,
  Notification: 10,
  Stop: 10,
  SessionEnd: 10,
};

/** How long a terminal approval waits for a client before the host leaves it to the terminal alone (ms). */
export const APPROVAL_WAIT_MS = (CLAUDE_HOOK_EVENTS.PermissionRequest - 15) * 1000;

/**
 * The events the host listens to in Codex 0.171 and how long it lets each run (seconds; Codex clamps
 * SessionEnd to 3). Codex has no Notification event, and fires SessionStart with the first prompt.
 */
export const CODEX_HOOK_EVENTS: Readonly<Record<string, number>> = {
  SessionStart: 10,
  UserPromptSubmit: 10,
  PreToolUse: 10,
  PermissionRequest: 600,
  PostToolUse: 10,
  Stop: 10,
  SessionEnd: 3,
};

/** Where one CLI's hooks go. */
export interface HookTarget {
  kind: 'claude' | 'codex';
  /** The account's config folder (absolute): CLAUDE_CONFIG_DIR, or CODEX_HOME. */
  configDir: string;
  /** Codex: the `codex` that trusts the host's hooks in this home (codex-hooks.ts). */
  command?: string;
}

/** The events of the target's CLI. */
export function hookEvents(target: HookTarget): Readonly<Record<string, number>> {
  return target.kind === 'codex' ? CODEX_HOOK_EVENTS : CLAUDE_HOOK_EVENTS;
}

/** The default account's folder when nothing names one: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function defaultClaudeConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.CLAUDE_CONFIG_DIR;
  return path.resolve(named && named.length > 0 ? named : path.join(os.homedir(), '.claude'));
}

/** The command the CLI runs for each event: this Node, the hook client, the CLI's kind, the host's data folder. */
export function hookCommand(dataDir: string, kind: HookTarget['kind'] = 'claude'): string {
  const client = path.join(import.meta.dirname, 'hook-client.ts');
  return [process.execPath, client, kind, path.resolve(dataDir)].map(shellWord).join(' ') + ` ${HOOK_MARK}`;
}

/** One word for `sh -c`: single-quoted, each `'` inside written as `'\''`. */
function shellWord(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

type Json = Record<string, unknown>;

export function settingsFile(target: HookTarget): string {
  return path.join(target.configDir, target.kind === 'codex' ? 'hooks.json' : 'settings.json');
}

/** Where the host keeps the file as it was before its install: per config folder, in its own data folder. */
export function beforeFile(dataDir: string, target: HookTarget): string {
  const key = createHash('sha256').update(target.configDir).digest('hex').slice(0, 16);
  return path.join(dataDir, 'hooks', `${target.kind}-${key}.before.json`);
}

/** The file's settings; null when there is none. A file that is not a JSON object is refused, never overwritten. */
function readSettings(file: string): { bytes: Buffer; settings: Json } | null {
  if (!existsSync(file)) return null;
  const bytes = readFileSync(file);
  let settings: unknown;
  try {
    settings = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new Error(`${file} is not JSON (${error instanceof Error ? error.message : String(error)}); it was left as it is`);
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) throw new Error(`${file} is not a JSON object; it was left as it is`);
  return { bytes, settings: settings as Json };
}

function isOurs(group: unknown): boolean {
  if (typeof group !== 'object' || group === null) return false;
  const hooks = (group as { hooks?: unknown }).hooks;
  return (
    Array.isArray(hooks) &&
    hooks.some(
      (hook) =>
        typeof hook === 'object' &&
        hook !== null &&
        typeof (hook as { command?: unknown }).command === 'string' &&
        (hook as { command: string }).command.endsWith(` ${HOOK_MARK}`),
    )
  );
}

/** The settings without the host's groups; an event left empty goes, unless `kept` names it (the person had it). */
function withoutOurs(settings: Json, kept: ReadonlySet<string> = new Set()): Json {
  const hooks = settings.hooks;
  if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks)) return settings;
  const left: Json = {};
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      left[event] = groups;
      continue;
    }
    const theirs = groups.filter((group) => !isOurs(group));
    if (theirs.length > 0 || groups.length === 0 || kept.has(event)) left[event] = theirs;
  }
  const next = { ...settings };
  if (Object.keys(left).length === 0 && !kept.has('')) delete next.hooks;
  else next.hooks = left;
  return next;
}

function withOurs(settings: Json, command: string, target: HookTarget): Json {
  const base = withoutOurs(settings);
  const hooks: Json = typeof base.hooks === 'object' && base.hooks !== null && !Array.isArray(base.hooks) ? { ...(base.hooks as Json) } : {};
  for (const [event, timeout] of Object.entries(hookEvents(target))) {
    const groups = Array.isArray(hooks[event]) ? [...(hooks[event] as unknown[])] : [];
    // Claude Code's `*` matches every tool; Codex reads a matcher as a regular expression, and none matches all.
    groups.push({ ...(target.kind === 'claude' ? { matcher: '*' } : {}), hooks: [{ type: 'command', command, timeout }] });
    hooks[event] = groups;
  }
  return { ...base, hooks };
}

function writeSettings(file: string, settings: Json, mode: number | null): void {
  mkdirSync(path.dirname(file), { recursive: true });
  replaceFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
  if (mode !== null) chmodSync(file, mode);
}

export interface HooksState {
  kind: HookTarget['kind'];
  configDir: string;
  installed: boolean;
  supported: true;
}

export function hooksState(dataDir: string, target: HookTarget): HooksState {
  const read = readSettings(settingsFile(target));
  const command = hookCommand(dataDir, target.kind);
  const hooks = read?.settings.hooks as Record<string, unknown> | undefined;
  const installed =
    hooks !== undefined &&
    Object.keys(hookEvents(target)).every((event) => {
      const groups = hooks[event];
      return (
        Array.isArray(groups) &&
        groups.some((group) => isOurs(group) && (group as { hooks: { command?: string }[] }).hooks.some((hook) => hook.command === command))
      );
    });
  return { kind: target.kind, configDir: target.configDir, installed, supported: true };
}

/** Adds the host's hooks (again, if an older command of ours is there); the person's own stay as they are. */
export function installHooks(dataDir: string, target: HookTarget): HooksState {
  const file = settingsFile(target);
  const read = readSettings(file);
  const before = beforeFile(dataDir, target);
  // The file as the person had it, kept once: a second install must not take our own entries for theirs.
  if (!existsSync(before)) {
    mkdirSync(path.dirname(before), { recursive: true, mode: 0o700 });
    writeFileSync(before, JSON.stringify(read ? { bytes: read.bytes.toString('base64') } : { absent: true }), { mode: 0o600 });
  }
  const mode = read ? statSync(file).mode & 0o777 : null;
  writeSettings(file, withOurs(read?.settings ?? {}, hookCommand(dataDir, target.kind), target), mode);
  return hooksState(dataDir, target);
}

/** Takes the host's hooks out. When nothing else changed since the install, the file is byte for byte what it was. */
export function removeHooks(dataDir: string, target: HookTarget): HooksState {
  const file = settingsFile(target);
  const read = readSettings(file);
  const before = beforeFile(dataDir, target);
  const kept = existsSync(before) ? (JSON.parse(readFileSync(before, 'utf8')) as { bytes?: string; absent?: boolean }) : null;
  if (read) {
    const original = kept?.bytes !== undefined ? Buffer.from(kept.bytes, 'base64') : null;
    const originalSettings = original ? (JSON.parse(original.toString('utf8')) as Json) : kept?.absent ? {} : null;
    // What the person had stays, empty lists and an empty `hooks` included ('' stands for `hooks` itself).
    const theirHooks = originalSettings?.hooks;
    const had = new Set(typeof theirHooks === 'object' && theirHooks !== null ? ['', ...Object.keys(theirHooks)] : []);
    const stripped = withoutOurs(read.settings, had);
    if (originalSettings !== null && isDeepStrictEqual(stripped, originalSettings)) {
      if (original) replaceFileSync(file, original);
      else rmSync(file);
    } else if (!isDeepStrictEqual(stripped, read.settings)) {
      // The person changed the file since: only our groups go.
      writeSettings(file, stripped, statSync(file).mode & 0o777);
    }
  }
  rmSync(before, { force: true });
  return hooksState(dataDir, target);
}
