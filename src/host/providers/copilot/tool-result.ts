// A finished Copilot tool as the chat shows it. Copilot's `rawOutput` is `{content,
// detailedContent}`: `content` is what the model was told ("Created file … with 12 characters", a
// shell's output), `detailedContent` for an edit is the whole git diff of the file. Its ACP `diff`
// content, by contrast, holds only the edited snippet (`old_str` → `new_str`), with no line numbers
// and a created file as an empty "before", so edits take their hunks from the git diff.
// `detailedContent` of a read is a diff-shaped copy of the file read: never a change.
import type { ChatFileChange } from '../../../contracts/index.ts';
import type { AcpToolCallView } from '../acp/index.ts';
import { fileChangesOf } from '../acp/file-changes.ts';
import { record } from '../acp/mapper.ts';

export function copilotToolResult(call: AcpToolCallView): { output: string | null; changes: ChatFileChange[] } | undefined {
  const raw = record(call.rawOutput);
  // A refused or failed call says `{message, code}`.
  const output = typeof raw.content === 'string' ? raw.content : typeof raw.message === 'string' ? raw.message : null;
  if (output === null) return undefined;
  const fromGit = call.kind === 'edit' && typeof raw.detailedContent === 'string' ? gitChanges(raw.detailedContent, knownPaths(call)) : [];
  return { output, changes: fromGit.length ? fromGit : fileChangesOf(call.content) };
}

/** Each file of a git diff as a change: its kind from the header, its hunks from the first `@@`. */
export function gitChanges(diff: string, paths: readonly string[]): ChatFileChange[] {
  const out: ChatFileChange[] = [];
  for (const section of diff.split(/^(?=diff --git )/m)) {
    const header = /^diff --git a\/(.*) b\/(.*)$/m.exec(section);
    const hunks = section.search(/^@@ /m);
    if (!header || hunks < 0) continue;
    const named = header[2]!;
    // Copilot writes an absolute path without its leading slash; the call's own path says which.
    const path = paths.find((p) => p === named || p.endsWith(`/${named}`)) ?? named;
    const head = section.slice(0, hunks);
    const kind: ChatFileChange['kind'] = /^(create|new) file mode/m.test(head) ? 'add' : /^delete(d)? file mode/m.test(head) ? 'delete' : 'update';
    const body = section.slice(hunks);
    out.push({ path, kind, diff: body.endsWith('\n') ? body : `${body}\n` });
  }
  return out;
}

function knownPaths(call: AcpToolCallView): string[] {
  const paths = call.locations.map((l) => l.path);
  for (const block of call.content) if (block.type === 'diff') paths.push(block.path);
  return paths;
}
