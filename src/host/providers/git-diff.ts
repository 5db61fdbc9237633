// The one reader of git-style unified diffs the CLIs hand the host (Codex's whole-turn diff, Copilot's
// per-edit `detailedContent`): the text cut into one section per `diff --git`, each read by the `diff`
// package's parsePatch. Each section's own text is kept as the CLI wrote it; what is read from it is
// the file's path, whether it was added or deleted, and its line counts.
//
// Two dialects: git's (`new file mode`, `--- /dev/null`) and Copilot's (`create file mode`,
// `--- a/dev/null`). parsePatch knows git's; the mode lines of both are read here.
import { parsePatch } from 'diff';
import type { StructuredPatch } from 'diff';
import type { ChatFileChange } from '../../contracts/index.ts';

export interface GitDiffFile {
  /** The file as the diff names it (a deleted file by its old side), without git's `a/` or `b/`. */
  path: string;
  kind: ChatFileChange['kind'];
  added: number;
  deleted: number;
  binary: boolean;
  /** The whole section, `diff --git` line first. */
  section: string;
  /** The section from its first `@@` on ('' when it has none: a mode change, a binary file). */
  hunks: string;
}

export function readGitDiff(text: string): GitDiffFile[] {
  const files: GitDiffFile[] = [];
  for (const section of text.split(/^(?=diff --git )/m)) {
    if (section.startsWith('diff --git ')) files.push(readSection(section));
  }
  return files;
}

function readSection(section: string): GitDiffFile {
  const patch = parsed(section);
  const start = section.search(/^@@ /m);
  const head = start < 0 ? section : section.slice(0, start);
  const kind: ChatFileChange['kind'] =
    patch?.isCreate || /^(new|create) file mode/m.test(head) ? 'add' : patch?.isDelete || /^deleted? file mode/m.test(head) ? 'delete' : 'update';
  const named = kind === 'delete' ? patch?.oldFileName?.replace(/^a\//, '') : patch?.newFileName?.replace(/^b\//, '');
  const lines = patch?.hunks.flatMap((hunk) => hunk.lines) ?? [];
  return {
    path: named && named !== '/dev/null' && named !== 'dev/null' ? named : headerPath(section),
    kind,
    added: lines.filter((line) => line.startsWith('+')).length,
    deleted: lines.filter((line) => line.startsWith('-')).length,
    binary: patch?.isBinary === true,
    section,
    hunks: start < 0 ? '' : section.slice(start),
  };
}

/** A section as the `diff` package reads it; one it refuses (hunk counts that do not add up) reads as nothing, so has no counts. */
function parsed(section: string): StructuredPatch | undefined {
  try {
    return parsePatch(section)[0];
  } catch {
    return undefined;
  }
}

function headerPath(section: string): string {
  const header = /^diff --git a\/(.*) b\/(.*)$/m.exec(section);
  return header?.[2] ?? '';
}
