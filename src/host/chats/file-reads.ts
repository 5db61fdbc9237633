// The check every file a message makes a CLI read passes before anything reaches the CLI: `@path`
// mentions the CLI expands on its own (no tool call, no permission prompt), the `mentions` a client
// lists, the attachments the host hands over by path. A message may only make the agent read files
// inside the chat's folder, the host policy's roots, or the chat's own uploads; anything else is
// refused as `folder-denied` naming the path, and the message goes nowhere.
//
// Paths are judged where they really lead: the longest part that exists is resolved with realpath
// (so a symlink inside a root that points out of it is outside), the rest kept as text. The folders
// are resolved the same way, so a root that is itself a symlink still holds its files.
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { ProtocolError } from '../../contracts/index.ts';

/** Longest path text judged; longer is refused (no OS opens it, and it is no file a person means). */
const PATH_MAX = 4096;

/** Throws `folder-denied` naming the first of `files` (absolute paths) that lies outside every one of `folders`. */
export function admitFileReads(files: Iterable<string>, folders: readonly string[]): void {
  let real: string[] | null = null;
  for (const file of files) {
    real ??= folders.map(canonicalPath);
    const denied = outsideReason(file, real);
    if (denied !== null)
      throw new ProtocolError('folder-denied', `This message would make the agent read ${shown(file)}${denied}; it may read only in ${folders.join(', ')}`);
  }
}

/** Whether `file` (absolute) resolves inside one of `folders` (already canonical). */
export function readableIn(file: string, folders: readonly string[]): boolean {
  return outsideReason(file, folders) === null;
}

function outsideReason(file: string, folders: readonly string[]): string | null {
  if (file.includes('\0')) return ' (a path holding a NUL character)';
  if (file.length > PATH_MAX) return ' (a path too long for any file)';
  if (!path.isAbsolute(file)) return ' (not an absolute path)';
  const real = canonicalPath(file);
  if (folders.some((folder) => within(real, folder))) return null;
  return real === path.resolve(file) ? '' : ` (it leads to ${shown(real)})`;
}

/**
 * `file` with its existing part resolved (symlinks followed) and its missing rest kept as text. A
 * dangling symlink is followed too (its target may appear later); a loop resolves to itself, which
 * lies in no folder but its own.
 */
export function canonicalPath(file: string): string {
  let head = path.resolve(file);
  const tail: string[] = [];
  for (let hops = 0; ; ) {
    try {
      return path.join(realpathSync.native(head), ...tail.reverse());
    } catch {
      const target = hops < SYMLINK_HOPS ? danglingTarget(head) : null;
      if (target !== null) {
        hops += 1;
        head = target;
        continue;
      }
      const parent = path.dirname(head);
      if (parent === head) return path.join(head, ...tail.reverse());
      tail.push(path.basename(head));
      head = parent;
    }
  }
}

/** Symlinks followed by hand before giving up (Linux's own limit is 40). */
const SYMLINK_HOPS = 40;

function danglingTarget(link: string): string | null {
  try {
    if (!lstatSync(link).isSymbolicLink()) return null;
    return path.resolve(path.dirname(link), readlinkSync(link));
  } catch {
    return null;
  }
}

function within(file: string, folder: string): boolean {
  const rel = path.relative(folder, file);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** A path as a message may show it: control characters escaped, cut when long. */
function shown(file: string): string {
  const escaped = JSON.stringify(file.length > 300 ? `${file.slice(0, 300)}…` : file);
  return escaped;
}
