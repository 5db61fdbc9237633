// A finished Copilot tool as the chat shows it. Copilot's `rawOutput` is `{content,
// detailedContent}`: `content` is what the model was told ("Created file … with 12 characters", a
// shell's output), `detailedContent` for an edit is the whole git diff of the file. Its ACP `diff`
// content, by contrast, holds only the edited snippet (`old_str` → `new_str`), with no line numbers
// and a created file as an empty "before", so edits take their hunks from the git diff.
// `detailedContent` of a read is a diff-shaped copy of the file read: never a change.
import type { ChatFileChange } from '../../../contracts/index.ts';
import type { AcpToolCallView } from '../acp/index.ts';
import { fileChangesOf } from '../acp/file-changes.ts';
import { readGitDiff } from '../git-diff.ts';
import { record } from '../acp/mapper.ts';

export function copilotToolResult(call: AcpToolCallView): { output: string | null; changes: ChatFileChange[] } | undefined {
  const raw = record(call.rawOutput);
  // A refused or failed call says `{message, code}`.
  const output = typeof raw.content === 'string' ? raw.content : typeof raw.message === 'string' ? raw.message : null;
  if (output === null) return undefined;
  const fromGit = call.kind === 'edit' && typeof raw.detailedContent === 'string' ? gitChanges(raw.detailedContent, knownPaths(call)) : [];
  return { output, changes: fromGit.length ? fromGit : fileChangesOf(call.content) };
}

/** Each file of a git diff (git-diff.ts reads Copilot's dialect) as a change: its hunks from the first `@@`. */
export function gitChanges(diff: string, paths: readonly string[]): ChatFileChange[] {
  return readGitDiff(diff)
    .filter((file) => file.hunks !== '')
    .map(({ path: named, kind, hunks }) => ({
      // Copilot writes an absolute path without its leading slash; the call's own path says which.
      path: paths.find((p) => p === named || p.endsWith(`/${named}`)) ?? named,
      kind,
      diff: hunks.endsWith('\n') ? hunks : `${hunks}\n`,
    }));
}

function knownPaths(call: AcpToolCallView): string[] {
  const paths = call.locations.map((l) => l.path);
  for (const block of call.content) if (block.type === 'diff') paths.push(block.path);
  return paths;
}
