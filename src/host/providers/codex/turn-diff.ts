// Codex's `turn/diff/updated` carries one git-style unified diff for the whole turn; a turn item
// keeps it as a file list (ChatCheckpointDiff), each file with its own hunk text and line counts.
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
  const lines = section.split('\n');
  const header = /^diff --git a\/(.*) b\/(.*)$/.exec(lines[0] ?? '');
  let path = header?.[2] ?? header?.[1] ?? '';
  let kind: ChatCheckpointFile['kind'] = 'update';
  let added = 0;
  let deleted = 0;
  let binary = false;
  let inHunks = false;
  for (const line of lines.slice(1)) {
    if (!inHunks) {
      if (line.startsWith('new file mode')) kind = 'add';
      else if (line.startsWith('deleted file mode')) kind = 'delete';
      else if (line.startsWith('Binary files')) binary = true;
      else if (line.startsWith('+++ ') && line !== '+++ /dev/null') path = line.slice(4).replace(/^b\//, '');
      else if (line.startsWith('--- ') && kind === 'delete' && line !== '--- /dev/null') path = line.slice(4).replace(/^a\//, '');
      else if (line.startsWith('@@')) inHunks = true;
      continue;
    }
    if (line.startsWith('+')) added += 1;
    else if (line.startsWith('-')) deleted += 1;
  }
  if (binary) return { path, kind, added, deleted, diff: '', omitted: 'binary' };
  const diff = section.endsWith('\n') ? section : `${section}\n`;
  if (diff.length > TURN_DIFF_MAX_CHARS) return { path, kind, added, deleted, diff: '', omitted: 'too-large' };
  return { path, kind, added, deleted, diff };
}
