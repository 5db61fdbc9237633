// The host's own allow-list. Running a CLI on someone's machine is the most dangerous thing Tether
// does, so this lives in the host's config and is checked here, whatever the relay asked for: chats
// may only work inside the allowed folder roots, and never in a runtime mode wider than the ceiling.
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { MODE_ORDER, narrowerMode } from '../contracts/index.ts';
import type { RuntimeMode } from '../contracts/index.ts';
import { ProtocolError } from '../contracts/errors.ts';

export interface HostPolicyOptions {
  /** Folders a chat may work in (and below). Default: the home folder. */
  roots?: readonly string[];
  /** The widest runtime mode a chat may ask for. Default: `full-access`. */
  modeCeiling?: RuntimeMode;
  /** The folder relative paths resolve against and the default root. Default: `$HOME`, else the OS home. */
  home?: string;
}

export class HostPolicy {
  readonly roots: readonly string[];
  readonly modeCeiling: RuntimeMode;
  readonly home: string;

  constructor(options: HostPolicyOptions = {}) {
    this.home = path.resolve(options.home ?? process.env.HOME ?? homedir());
    this.roots = (options.roots && options.roots.length > 0 ? options.roots : [this.home])
      .map((root) => canonical(path.resolve(this.home, expandHome(root, this.home))));
    this.modeCeiling = options.modeCeiling ?? 'full-access';
  }

  /** The folder a chat gets, resolved and checked; `folder-denied` outside every root. */
  admitFolder(cwd: string | undefined): string {
    const asked = cwd === undefined || cwd.trim() === '' ? this.home : expandHome(cwd, this.home);
    const folder = path.resolve(this.home, asked);
    // A symlink inside a root may point anywhere: judge where it really leads when it exists.
    const real = canonical(folder);
    if (!this.roots.some((root) => within(real, root))) {
      throw new ProtocolError('folder-denied', `This host does not allow chats in ${folder}`);
    }
    return folder;
  }

  /** A mode asked for explicitly must fit under the ceiling (`mode-denied`); none gives the default, narrowed. */
  admitMode(asked: RuntimeMode | undefined, fallback: RuntimeMode = 'full-access'): RuntimeMode {
    if (asked === undefined) return narrowerMode(fallback, this.modeCeiling);
    if (MODE_ORDER.indexOf(asked) > MODE_ORDER.indexOf(this.modeCeiling)) {
      throw new ProtocolError('mode-denied', `This host allows runtime modes up to ${this.modeCeiling}, not ${asked}`);
    }
    return asked;
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
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
