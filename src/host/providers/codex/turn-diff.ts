// Codex's `turn/diff/updated` carries one git-style unified diff for the whole turn; a turn item
// keeps it as a file list (ChatCheckpointDiff), each file with its own hunk text and line counts
// (read by git-diff.ts).
import type { ChatCheckpointDiff, ChatCheckpointFile } from '../../../contracts/index.ts';
import { type GitDiffFile, readGitDiff } from '../git-diff.ts';

/** Files kept per turn; more are counted as `truncated`. */
export const TURN_DIFF_MAX_FILES = 200;
/** A file's diff longer than this is left out (`omitted: 'too-large'`). */
export const TURN_DIFF_MAX_CHARS = 200_000;

export function parseUnifiedDiff(text: string): ChatCheckpointDiff {
  const files: ChatCheckpointFile[] = [];
  let truncated = false;
  for (const file of readGitDiff(text)) {
    if (files.length >= TURN_DIFF_MAX_FILES) {
      truncated = true;
      break;
    }
    files.push(fileOf(file));
  }
  return { files, truncated };
}

/** One file as the turn keeps it: the section's own text, or none past the size limit or for a binary file. */
function fileOf({ path, kind, added, deleted, binary, section }: GitDiffFile): ChatCheckpointFile {
  if (binary) return { path, kind, added, deleted, diff: '', omitted: 'binary' };
  const diff = section.endsWith('\n') ? section : `${section}\n`;
  if (diff.length > TURN_DIFF_MAX_CHARS) return { path, kind, added, deleted, diff: '', omitted: 'too-large' };
  return { path, kind, added, deleted, diff };
}
