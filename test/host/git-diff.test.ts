// The one reader of the CLIs' git-style diffs (src/host/providers/git-diff.ts): git's dialect, as
// Codex writes it, and Copilot's, each section kept as written.
import { describe, expect, it } from 'vitest';
import { readGitDiff } from '../../src/host/providers/git-diff.ts';

const GIT = [
  'diff --git a/new.txt b/new.txt',
  'new file mode 100644',
  'index 0000000..e69de29',
  '--- /dev/null',
  '+++ b/new.txt',
  '@@ -0,0 +1,2 @@',
  '+hi',
  '+there',
  'diff --git a/old.txt b/old.txt',
  'deleted file mode 100644',
  '--- a/old.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
  'diff --git a/src/x.ts b/src/x.ts',
  'index 1..2 100644',
  '--- a/src/x.ts',
  '+++ b/src/x.ts',
  '@@ -1,2 +1,2 @@',
  ' keep',
  '-was',
  '+is',
  'diff --git a/img.png b/img.png',
  'index 1..2 100644',
  'Binary files a/img.png and b/img.png differ',
  '',
].join('\n');

describe('reading a git diff', () => {
  it("git's dialect: one file per section, named by the side that exists, with its counts and its hunks", () => {
    const files = readGitDiff(GIT);
    expect(files.map(({ path, kind, added, deleted, binary }) => ({ path, kind, added, deleted, binary }))).toEqual([
      { path: 'new.txt', kind: 'add', added: 2, deleted: 0, binary: false },
      { path: 'old.txt', kind: 'delete', added: 0, deleted: 1, binary: false },
      { path: 'src/x.ts', kind: 'update', added: 1, deleted: 1, binary: false },
      { path: 'img.png', kind: 'update', added: 0, deleted: 0, binary: true },
    ]);
    expect(files.map((f) => f.section).join('')).toBe(GIT);
    expect(files[2]!.hunks).toBe('@@ -1,2 +1,2 @@\n keep\n-was\n+is\n');
    expect(files[3]!.hunks).toBe('');
  });

  it("Copilot's dialect: `create file mode` and `--- a/dev/null` make an added file; text before the first section is not a file", () => {
    const copilot =
      '\ndiff --git a/tmp/w/notes.md b/tmp/w/notes.md\ncreate file mode 100644\nindex 0000000..0000000\n--- a/dev/null\n+++ b/tmp/w/notes.md\n@@ -1,0 +1,1 @@\n+first notes\n';
    expect(readGitDiff(copilot)).toEqual([
      {
        path: 'tmp/w/notes.md',
        kind: 'add',
        added: 1,
        deleted: 0,
        binary: false,
        section: copilot.slice(1),
        hunks: '@@ -1,0 +1,1 @@\n+first notes\n',
      },
    ]);
  });

  it('a section whose hunk counts do not add up keeps its text and path, with no counts', () => {
    const bad = 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n-x\n';
    expect(readGitDiff(bad)).toEqual([{ path: 'a.txt', kind: 'update', added: 0, deleted: 0, binary: false, section: bad, hunks: '@@ -1,5 +1,5 @@\n-x\n' }]);
    expect(readGitDiff('no diff here')).toEqual([]);
  });
});
