// `folders.list`: the folders a new chat may work in, for the app's folder picker. Read-only, and
// only inside the policy's roots: the asked path goes through the policy first (control characters,
// length, `~`, `..`, and its real path with every symlink resolved must be inside a root), and every
// folder listed passes the same test (a symlink inside a root that leads out of it is left out). A
// huge folder costs at most FOLDER_SCAN_MAX directory entries and FOLDER_LIST_MAX `.git` checks.
// What it never does: follow a path the policy refused, read a file, or list hidden folders.
import { existsSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';
import path from 'node:path';
import { ProtocolError } from '../contracts/errors.ts';
import { FOLDER_LIST_MAX, FOLDER_RECENT_MAX, FOLDER_SCAN_MAX, type FolderEntry, type FoldersListResult } from '../contracts/index.ts';
import type { HostPolicy } from './policy.ts';

/** Where this host's chats worked and when, newest activity per chat. */
export interface FolderUse {
  cwd: string;
  at: number;
}

// A name no folder a person means holds (and none `chat.create` would take).
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** The top page: recent folders (still allowed, still there) and the roots. */
export function topFolders(policy: HostPolicy, uses: readonly FolderUse[]): FoldersListResult {
  const newest = new Map<string, number>();
  for (const use of uses) {
    const real = allowedFolder(policy, use.cwd);
    if (real !== null && (newest.get(real) ?? -1) < use.at) newest.set(real, use.at);
  }
  const recent = [...newest]
    .sort((a, b) => b[1] - a[1])
    .slice(0, FOLDER_RECENT_MAX)
    .map(([folder, at]): FolderEntry => ({ ...entryOf(policy, folder), usedAt: at }));
  const folders = policy.roots.filter((root) => isFolder(root)).map((root) => entryOf(policy, root));
  return { folder: null, parent: null, repository: false, recent, folders, truncated: false };
}

/** The folders in one folder inside the roots, by name; `folder-denied` for any path outside them. */
export async function listFolder(policy: HostPolicy, asked: string): Promise<FoldersListResult> {
  const real = policy.admitExistingFolder(asked);
  const found: FolderEntry[] = [];
  let truncated = false;
  let seen = 0;
  let dir;
  try {
    dir = await opendir(real);
  } catch {
    throw new ProtocolError('folder-denied', `This host cannot read the folder ${real}; ${policy.allowedText()}`);
  }
  try {
    for await (const dirent of dir) {
      if (++seen > FOLDER_SCAN_MAX) {
        truncated = true;
        break;
      }
      const child = childFolder(policy, real, dirent);
      if (child) found.push(child);
    }
  } catch {
    throw new ProtocolError('folder-denied', `This host cannot read the folder ${real}; ${policy.allowedText()}`);
  } finally {
    await dir.close().catch(() => undefined);
  }
  // The folder may have been swapped for a symlink while it was read: what was read must still be it.
  if (allowedFolder(policy, real) !== real) throw new ProtocolError('folder-denied', `The folder ${real} changed while it was read; ask again`);
  found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (found.length > FOLDER_LIST_MAX) truncated = true;
  const folders = found.slice(0, FOLDER_LIST_MAX).map((entry) => ({ ...entry, repository: holdsGit(entry.path) }));
  const up = path.dirname(real);
  const parent = !policy.isRoot(real) && up !== real && policy.holds(up) ? up : null;
  return { folder: real, parent, repository: holdsGit(real), recent: [], folders, truncated };
}

/** One entry of a folder as a listed folder, or null: hidden, not a folder, or (through a symlink) outside the roots. */
function childFolder(policy: HostPolicy, parent: string, dirent: Dirent): FolderEntry | null {
  const name = dirent.name;
  if (name.startsWith('.') || CONTROL.test(name)) return null;
  const at = path.join(parent, name);
  if (dirent.isDirectory()) return { path: at, name, repository: false, ...(policy.isRoot(at) ? { root: true } : {}) };
  if (!dirent.isSymbolicLink()) return null;
  const real = allowedFolder(policy, at);
  return real === null ? null : { path: real, name, repository: false, ...(policy.isRoot(real) ? { root: true } : {}) };
}

/** The real path of a folder that exists inside the roots, else null. */
function allowedFolder(policy: HostPolicy, folder: string): string | null {
  try {
    const real = realpathSync.native(folder);
    return policy.holds(real) && statSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

function entryOf(policy: HostPolicy, folder: string): FolderEntry {
  return { path: folder, name: path.basename(folder) || folder, repository: holdsGit(folder), ...(policy.isRoot(folder) ? { root: true } : {}) };
}

function isFolder(folder: string): boolean {
  try {
    return statSync(folder).isDirectory();
  } catch {
    return false;
  }
}

/** A `.git` (folder, or a worktree's file) in it: only its presence is looked at, never its content. */
function holdsGit(folder: string): boolean {
  return existsSync(path.join(folder, '.git'));
}
