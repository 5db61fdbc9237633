// ACP reports an edit as before/after text (`{type: "diff", path, oldText, newText}`); the chat's
// file changes are unified hunks, as Codex and Claude Code give them, so every client draws one kind.
import { OMIT_HEADERS, formatPatch, structuredPatch } from 'diff';
import type { ChatFileChange } from '../../../contracts/index.ts';
import type { ToolCallContent } from '@agentclientprotocol/sdk';

/** The diff contents of a tool call as file changes (other contents are not changes). */
export function fileChangesOf(content: readonly ToolCallContent[]): ChatFileChange[] {
  const out: ChatFileChange[] = [];
  for (const block of content) {
    if (block.type !== 'diff' || typeof block.path !== 'string' || typeof block.newText !== 'string') continue;
    const before = typeof block.oldText === 'string' ? block.oldText : null;
    const kind = changeKind(block._meta?.kind, before, block.newText);
    out.push({ path: block.path, kind, diff: hunks(block.path, before ?? '', kind === 'delete' ? '' : block.newText) });
  }
  return out;
}

/** An agent may say what the change is in `_meta.kind` (Gemini does); otherwise a missing before is a new file. */
function changeKind(said: unknown, before: string | null, after: string): ChatFileChange['kind'] {
  if (said === 'add' || said === 'update' || said === 'delete') return said;
  if (before === null) return 'add';
  if (after === '' && before !== '') return 'delete';
  return 'update';
}

function hunks(path: string, before: string, after: string): string {
  const patch = structuredPatch(path, path, before, after, undefined, undefined, { context: 3 });
  // Hunks only, each `@@` header as diff(1) writes it (an empty side starts at line 0: `@@ -0,0 +1,2 @@`
  // for a new file); formatPatch would answer a lone newline for no hunks.
  return patch.hunks.length === 0 ? '' : formatPatch(patch, OMIT_HEADERS);
}
