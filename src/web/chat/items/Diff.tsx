// File changes as diffs: a unified diff as the host reported it, or one made here from an edit's
// before and after (`diff`'s structuredPatch) when a tool call carries only those.
import { structuredPatch } from 'diff';
import type { ChatFileChange } from '../../../contracts/index.ts';

/** Past this many lines a diff shows its start and says how much more there is. */
const MAX_LINES = 400;

type Line = { kind: 'add' | 'del' | 'hunk' | 'ctx' | 'meta'; text: string };

function classify(text: string): Line {
  if (text.startsWith('@@')) return { kind: 'hunk', text };
  if (text.startsWith('+++') || text.startsWith('---') || text.startsWith('diff ') || text.startsWith('index ')) return { kind: 'meta', text };
  if (text.startsWith('+')) return { kind: 'add', text };
  if (text.startsWith('-')) return { kind: 'del', text };
  if (text.startsWith('\\')) return { kind: 'meta', text };
  return { kind: 'ctx', text };
}

export function DiffLines({ diff, label }: { diff: string; label: string }) {
  const all = diff.replace(/\n$/, '').split('\n');
  const shown = all.slice(0, MAX_LINES).map(classify);
  return (
    <div class="diff" role="group" aria-label={label}>
      <pre>
        {shown.map((line, i) => (
          <span key={i} class={`diff-${line.kind}`}>
            {line.text}
            {'\n'}
          </span>
        ))}
      </pre>
      {all.length > MAX_LINES ? <p class="diff-more">{all.length - MAX_LINES} more lines not shown</p> : null}
    </div>
  );
}

const KIND_LABEL = { add: 'added', update: 'changed', delete: 'deleted' } as const;

/**
 * Counts of added and removed lines of one file's unified diff: the lines of its hunks, so a `+++` line
 * inside a hunk counts as the added line it is, and file headers before the first `@@` do not count.
 * Not the `diff` package's parsePatch, which the host reads the CLIs' diffs with
 * (src/host/providers/git-diff.ts): here it would add 1.5 KB (gzip) to the first load, past its budget
 * (web-shell.e2e), for a count that needs no more than this.
 */
export function diffStat(diff: string): { added: number; deleted: number } {
  let added = 0;
  let deleted = 0;
  let inHunk = false;
  for (const line of diff.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (line.startsWith('diff --git ')) inHunk = false;
    else if (!inHunk) continue;
    else if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) deleted++;
  }
  return { added, deleted };
}

export function FileChanges({ changes }: { changes: readonly ChatFileChange[] }) {
  return (
    <ul class="file-changes" aria-label="File changes">
      {changes.map((change, i) => {
        const stat = diffStat(change.diff);
        return (
          <li key={`${change.path}:${i}`} class="file-change">
            <p class="file-change-head">
              <span class={`change-kind change-${change.kind}`}>{KIND_LABEL[change.kind]}</span>
              <code class="file-path">{change.path}</code>
              {change.diff ? (
                <span class="diff-stat">
                  <span class="diff-added">+{stat.added}</span> <span class="diff-deleted">−{stat.deleted}</span>
                </span>
              ) : null}
            </p>
            {change.diff ? <DiffLines diff={change.diff} label={`Diff of ${change.path}`} /> : null}
          </li>
        );
      })}
    </ul>
  );
}

/** A unified diff of an edit's before and after (`old_string`/`new_string` style inputs). */
export function editPatch(path: string, before: string, after: string): string {
  const patch = structuredPatch(path, path, before, after, undefined, undefined, { context: 2 });
  return patch.hunks.map((hunk) => [`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`, ...hunk.lines].join('\n')).join('\n');
}
