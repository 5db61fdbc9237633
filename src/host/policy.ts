// The host's own allow-list. Running a CLI on someone's machine is the most dangerous thing Tether
// does, so this lives in the host's config and is checked here, whatever the relay asked for: chats
// may only work inside the allowed folder roots, never in a runtime mode wider than the ceiling, and
// an account (a client's record) may only hand a CLI the variables and config folders the owner named.
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { MODE_ORDER, narrowerMode } from '../contracts/index.ts';
import type { HostPolicySummary, RuntimeMode } from '../contracts/index.ts';
import { ProtocolError } from '../contracts/errors.ts';

/** The ceiling when the config names none: edits without asking, never commands without asking. */
export const DEFAULT_MODE_CEILING: RuntimeMode = 'auto-accept-edits';
/** The mode of a chat created without one (and without a remembered preference). */
export const DEFAULT_CHAT_MODE: RuntimeMode = 'supervised';

/**
 * Variables an account may set without the owner naming them: knobs that pick a model or turn
 * telemetry off. None of them loads code, names a file or folder, or sends traffic elsewhere; an
 * API key is left out too (it would move the owner's work into someone else's account). Anything
 * else (`NODE_OPTIONS`, `LD_PRELOAD`, `PATH`, `HOME`, `*_BASE_URL`, proxies, ...) needs the config's
 * `policy.accountEnv`, by name.
 */
export const SAFE_ACCOUNT_VARIABLES: readonly string[] = [
  'ANTHROPIC_MODEL',
  'ANTHROPIC_SMALL_FAST_MODEL',
  'CLAUDE_CODE_MAX_OUTPUT_TOKENS',
  'MAX_THINKING_TOKENS',
  'DISABLE_TELEMETRY',
  'DISABLE_ERROR_REPORTING',
  'DISABLE_AUTOUPDATER',
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
  'COPILOT_MODEL',
  'GEMINI_MODEL',
];

/** Longest working folder accepted (Linux's PATH_MAX), and longest name in it (NAME_MAX, in bytes). */
const FOLDER_MAX_BYTES = 4096;
const FOLDER_NAME_MAX_BYTES = 255;
/** Longest value of an account variable. */
const VARIABLE_VALUE_MAX = 4096;
// C0 controls, DEL and the C1 range: no folder a person means has them, and a newline in a path
// breaks every log line and prompt it reaches.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export interface HostPolicyOptions {
  /** Folders a chat may work in (and below). Default: the home folder. */
  roots?: readonly string[];
  /** The widest runtime mode a chat may ask for. Default: `auto-accept-edits`. */
  modeCeiling?: RuntimeMode;
  /** The folder relative paths resolve against. Default: `$HOME`, else the OS home. */
  home?: string;
  /** Variables accounts may set beyond SAFE_ACCOUNT_VARIABLES, by exact name. */
  accountEnv?: readonly string[];
  /** Folders an account's config folder may be in (and below). Default: none, so an account has no folder of its own. */
  accountHomes?: readonly string[];
  /** Folders no account's config folder may be in, whatever `accountHomes` says (the host's data folder). */
  private?: readonly string[];
  /** Hidden forks (`chat.summarize`, each its own CLI process) running at once: on the host, and per chat. */
  hiddenForks?: { host?: number; chat?: number };
}

/** Hidden forks at once when the config names no cap. */
export const DEFAULT_HIDDEN_FORKS = { host: 4, chat: 1 } as const;

export class HostPolicy {
  readonly roots: readonly string[];
  readonly modeCeiling: RuntimeMode;
  readonly home: string;
  /** Where a chat works when it names no folder: home when a root holds it, else the first root. */
  readonly defaultFolder: string;
  readonly accountEnv: ReadonlySet<string>;
  readonly accountHomes: readonly string[];
  readonly hiddenForks: { readonly host: number; readonly chat: number };
  private readonly privateFolders: readonly string[];

  constructor(options: HostPolicyOptions = {}) {
    this.home = path.resolve(options.home ?? process.env.HOME ?? homedir());
    this.roots = (options.roots && options.roots.length > 0 ? options.roots : [this.home]).map((root) => this.resolve(root));
    this.modeCeiling = options.modeCeiling ?? DEFAULT_MODE_CEILING;
    this.defaultFolder = this.roots.some((root) => within(canonical(this.home), root)) ? this.home : this.roots[0];
    this.accountEnv = new Set([...SAFE_ACCOUNT_VARIABLES, ...(options.accountEnv ?? [])]);
    this.accountHomes = (options.accountHomes ?? []).map((folder) => this.resolve(folder));
    this.privateFolders = (options.private ?? []).map((folder) => this.resolve(folder));
    this.hiddenForks = { ...DEFAULT_HIDDEN_FORKS, ...options.hiddenForks };
  }

  /** What a host tells clients about its policy (Tether's addition to `provider.list`). */
  summary(): HostPolicySummary {
    return {
      roots: [...this.roots],
      defaultFolder: this.defaultFolder,
      modeCeiling: this.modeCeiling,
      defaultMode: narrowerMode(DEFAULT_CHAT_MODE, this.modeCeiling),
    };
  }

  /**
   * The folder a new chat gets, resolved and checked: a real folder (not a file, not missing),
   * inside a root, without control characters and within the OS's path limits; `folder-denied`
   * naming the allowed folders otherwise.
   */
  admitNewFolder(cwd: string | undefined): string {
    const folder = this.admitFolder(cwd);
    let isFolder = false;
    try {
      isFolder = statSync(folder).isDirectory();
    } catch {
      throw new ProtocolError('folder-denied', `There is no folder ${folder} on this host; ${this.allowedText()}`);
    }
    if (!isFolder) throw new ProtocolError('folder-denied', `${folder} is not a folder; ${this.allowedText()}`);
    return folder;
  }

  /** The folder a chat works in, resolved and checked against the roots now; `folder-denied` outside every root. */
  admitFolder(cwd: string | undefined): string {
    if (cwd !== undefined) checkPathText(cwd, 'folder-denied', 'A working folder');
    const asked = cwd === undefined || cwd.trim() === '' ? this.defaultFolder : expandHome(cwd, this.home);
    const folder = path.resolve(this.home, asked);
    // A symlink inside a root may point anywhere: judge where it really leads when it exists.
    const real = canonical(folder);
    if (!this.roots.some((root) => within(real, root))) {
      throw new ProtocolError('folder-denied', `This host does not allow chats in ${folder}; ${this.allowedText()}`);
    }
    return folder;
  }

  /**
   * An existing folder to read (the folder picker): its real path, once every symlink and `..` in it
   * is resolved, is a folder inside a root; `folder-denied` naming the allowed folders otherwise.
   * Unlike `admitFolder`, a path that does not exist (yet) is refused: nothing is read through it.
   */
  admitExistingFolder(cwd: string): string {
    const folder = this.admitFolder(cwd);
    let real: string;
    try {
      real = realpathSync.native(folder);
    } catch {
      throw new ProtocolError('folder-denied', `There is no folder ${folder} on this host; ${this.allowedText()}`);
    }
    if (!this.holds(real)) throw new ProtocolError('folder-denied', `This host does not allow chats in ${folder}; ${this.allowedText()}`);
    let isFolder = false;
    try {
      isFolder = statSync(real).isDirectory();
    } catch {
      // gone since
    }
    if (!isFolder) throw new ProtocolError('folder-denied', `${folder} is not a folder; ${this.allowedText()}`);
    return real;
  }

  /** Whether a real (already resolved) path is a root or inside one. */
  holds(real: string): boolean {
    return this.roots.some((root) => within(real, root));
  }

  /** Whether a root is this very folder (a real path). */
  isRoot(real: string): boolean {
    return this.roots.includes(real);
  }

  /** A mode asked for explicitly must fit under the ceiling (`mode-denied`); none gives the default, narrowed. */
  admitMode(asked: RuntimeMode | undefined, fallback: RuntimeMode = DEFAULT_CHAT_MODE): RuntimeMode {
    if (asked === undefined) return narrowerMode(fallback, this.modeCeiling);
    if (MODE_ORDER.indexOf(asked) > MODE_ORDER.indexOf(this.modeCeiling)) {
      throw new ProtocolError('mode-denied', `This host allows runtime modes up to ${this.modeCeiling}, not ${asked}`);
    }
    return asked;
  }

  /** An account variable: only a name the policy allows, with a value a process environment can hold; `invalid-account` otherwise. */
  admitVariable(name: string, value: string): void {
    if (!this.accountEnv.has(name)) {
      throw new ProtocolError('invalid-account', `This host does not let an account set ${name}; the host config's policy.accountEnv can allow it by name`);
    }
    if (value.length > VARIABLE_VALUE_MAX || value.includes('\0')) {
      throw new ProtocolError('invalid-account', `The value of ${name} is too long or holds a NUL character`);
    }
  }

  /**
   * An account's config folder (`home` or `shadowHome`), resolved: only inside a folder the config's
   * `policy.accountHomes` names, never inside a chat root (an agent could write hooks there) nor the
   * host's data folder (where uploads land); `invalid-account` otherwise.
   */
  admitAccountHome(folder: string, field = 'home', alsoPrivate: readonly string[] = []): string {
    checkPathText(folder, 'invalid-account', `An account's ${field}`);
    if (!path.isAbsolute(folder) && folder !== '~' && !folder.startsWith('~/')) {
      throw new ProtocolError('invalid-account', `An account's ${field} is an absolute folder or one under ~, not ${folder}`);
    }
    const resolved = path.resolve(expandHome(folder, this.home));
    const real = canonical(resolved);
    if (!this.accountHomes.some((allowed) => within(real, allowed))) {
      const where =
        this.accountHomes.length > 0 ? `only under ${this.accountHomes.join(', ')}` : "none (the host config's policy.accountHomes names where they may be)";
      throw new ProtocolError('invalid-account', `This host does not allow the config folder ${resolved}; account config folders: ${where}`);
    }
    const privateFolders = [...this.privateFolders, ...alsoPrivate.map((p) => this.resolve(p))];
    if (this.roots.some((root) => within(real, root) || within(root, real)) || privateFolders.some((p) => within(real, p) || within(p, real))) {
      throw new ProtocolError(
        'invalid-account',
        `The config folder ${resolved} is where agents or uploads can write; pick one outside the chat folders and the host's data folder`,
      );
    }
    return resolved;
  }

  allowedText(): string {
    return `allowed folders: ${this.roots.join(', ')}`;
  }

  private resolve(folder: string): string {
    return canonical(path.resolve(this.home, expandHome(folder, this.home)));
  }
}

/** Refuses path text no folder a person means holds: control characters, too long. */
function checkPathText(text: string, code: 'folder-denied' | 'invalid-account', what: string): void {
  if (CONTROL.test(text)) throw new ProtocolError(code, `${what} may not hold control characters (NUL, newline, ...)`);
  if (Buffer.byteLength(text) > FOLDER_MAX_BYTES) throw new ProtocolError(code, `${what} is longer than ${FOLDER_MAX_BYTES} bytes`);
  if (text.split('/').some((name) => Buffer.byteLength(name) > FOLDER_NAME_MAX_BYTES)) {
    throw new ProtocolError(code, `${what} has a name longer than ${FOLDER_NAME_MAX_BYTES} bytes`);
  }
}

function expandHome(p: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return p;
}

/** The real path of the deepest existing ancestor, with the rest appended: symlinks resolved where they exist. */
function canonical(folder: string): string {
  let head = folder;
  const tail: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync.native(head), ...tail.reverse());
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return folder;
      tail.push(path.basename(head));
      head = parent;
    }
  }
}

function within(folder: string, root: string): boolean {
  const rel = path.relative(root, folder);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
