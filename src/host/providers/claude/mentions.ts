// Which files Claude Code reads on its own for a user message: its `@path` mentions. Claude Code
// (2.1.197, checked against the pinned binary in test/host/file-reads.test.ts) attaches every file a
// mention names to the message before the model sees it, with no tool call and no permission prompt
// (only a Read *deny* rule stops it), so a message is a file read. There is no switch for this alone:
// CLAUDE_CODE_DISABLE_ATTACHMENTS also drops plan-mode, skill and todo reminders. So the host reads
// the message the way the CLI does and checks every path it names (chats/file-reads.ts).
//
// The CLI's rule, mirrored exactly (a looser one would let a path by, a stricter one refuse mail):
// - a mention starts at the start of the text or after whitespace (JavaScript's `\s`, so also NBSP,
//   U+2028, U+3000 …) or one of 。、？！; `a@b.com`, `(@x)`, `foo:@x` are no mentions;
// - `@"any text but quotes"` (not one ending in ` (agent)`), or `@` then non-whitespace cut back to
//   the last ASCII word boundary (`@/etc/passwd.` names `/etc/passwd`; `@/tmp/` names `/tmp`);
// - `#L10-20` or any one `#…` at the end is a line range, not part of the name;
// - the name is trimmed; `~` and `~/…` are the CLI's home, a relative name is under the chat's folder,
//   `..` is resolved as text (the OS follows symlinks afterwards, which the check does too);
// - a directory is read as its listing; globs are not expanded (`@*.env` names a file called so).
import path from 'node:path';

const QUOTED = /(^|[\s\u3002\u3001\uFF1F\uFF01])@"([^"]+)"/g;
const BARE = /(^|[\s\u3002\u3001\uFF1F\uFF01])@([^\s]+)\b/g;
const LINE_RANGE = /^([^#]+)(?:#L(\d+)(?:-(\d+))?)?(?:#[^#]*)?$/;

/** The names a message mentions, as Claude Code extracts them (before its line-range suffix is cut). */
export function claudeMentions(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(QUOTED)) {
    if (match[2] && !match[2].endsWith(' (agent)')) names.push(match[2]);
  }
  for (const match of text.match(BARE) ?? []) {
    const name = match.slice(match.indexOf('@') + 1);
    if (!name.startsWith('"')) names.push(name);
  }
  return [...new Set(names)];
}

/**
 * The files Claude Code reads for `text`, as absolute paths the way it resolves them (`home` is the
 * process's HOME, `cwd` the chat's folder). A name holding a NUL is answered as is: the check refuses it.
 */
export function claudeMentionedFiles(text: string, cwd: string, home: string): string[] {
  return claudeMentions(text).map((name) => resolveMention(fileOf(name), cwd, home));
}

function fileOf(name: string): string {
  const match = LINE_RANGE.exec(name);
  return match?.[1] ?? name;
}

function resolveMention(name: string, cwd: string, home: string): string {
  if (name.includes('\0')) return name;
  const trimmed = name.trim();
  if (trimmed === '') return path.normalize(cwd);
  if (trimmed === '~') return home;
  if (trimmed.startsWith('~/')) return path.join(home, trimmed.slice(2));
  if (path.isAbsolute(trimmed)) return path.normalize(trimmed);
  return path.resolve(cwd, trimmed);
}
