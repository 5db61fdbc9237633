// Codex's `turn/diff/updated` carries one git-style unified diff for the whole turn; a turn item
// keeps it as a file list (ChatCheckpointDiff), each file with its own hunk text and line counts.
import { parsePatch } from 'diff';
import type { StructuredPatch } from 'diff';
import type { ChatCheckpointDiff, ChatCheckpointFile } from '../../../contracts/index.ts';

/** Files kept per turn; more are counted as `truncated`. */
export const TURN_DIFF_MAX_FILES = 200;
/** A file's diff longer than this is left out (`omitted: 'too-large'`). */
export const TURN_DIFF_MAX_CHARS = 200_000;

export function parseUnifiedDiff(text: string): ChatCheckpointDiff {
  const files: ChatCheckpointFile[] = [];
  let truncated = false;
  for (const section of text.split(/^(?=diff --git )/m)) {
    if (!section.startsWith('diff --git ')) continue;
    if (files.length >= TURN_DIFF_MAX_FILES) {
      truncated = true;
      break;
    }
    files.push(fileOf(section));
  }
  return { files, truncated };
}

function fileOf(section: string): ChatCheckpointFile {
  // The `diff` package reads the section (git's headers, `new file mode`, `Binary files`, the hunks);
  // the section's own text is what the turn keeps, so the whole diff is split here, by `diff --git`.
  const patch = readSection(section);
  const kind: ChatCheckpointFile['kind'] = patch?.isCreate ? 'add' : patch?.isDelete ? 'delete' : 'update';
  // A deleted file is named by its old side (`+++ /dev/null`), every other by its new one.
  const named = kind === 'delete' ? patch?.oldFileName?.replace(/^a\//, '') : patch?.newFileName?.replace(/^b\//, '');
  const path = named && named !== '/dev/null' ? named : headerPath(section);
  const lines = patch?.hunks.flatMap((hunk) => hunk.lines) ?? [];
  const added = lines.filter((line) => line.startsWith('+')).length;
  const deleted = lines.filter((line) => line.startsWith('-')).length;
  if (patch?.isBinary) return { path, kind, added, deleted, diff: '', omitted: 'binary' };
  const diff = section.endsWith('\n') ? section : `${section}\n`;
  if (diff.length > TURN_DIFF_MAX_CHARS) return { path, kind, added, deleted, diff: '', omitted: 'too-large' };
  return { path, kind, added, deleted, diff };
}

/** One file's section as the `diff` package reads it; a section it refuses (hunk counts that do not add up) is kept with no counts. */
function readSection(section: string): StructuredPatch | undefined {
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
