// The added and removed counts a file change shows (src/web/chat/items/Diff.tsx): the lines of its hunks.
import { describe, expect, it } from 'vitest';
import { diffStat } from '../../src/web/chat/items/Diff.tsx';

describe('a file change counts its lines', () => {
  it('counts the lines of every hunk, with or without file headers', () => {
    expect(diffStat('@@ -1,2 +1,3 @@\n a\n-b\n+c\n+d\n')).toEqual({ added: 2, deleted: 1 });
    expect(diffStat('--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,2 @@\n+one\n+two')).toEqual({ added: 2, deleted: 0 });
    expect(diffStat('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n@@ -9 +9 @@\n-gone\n+here\n')).toEqual({ added: 2, deleted: 2 });
  });

  it('an added line that starts with "++" is an added line, not a header', () => {
    expect(diffStat('@@ -1 +1,2 @@\n a\n+++ counter\n')).toEqual({ added: 1, deleted: 0 });
  });

  it('headers before the first hunk are not lines; a text with no hunk counts none', () => {
    expect(diffStat('diff --git a/x b/x\nindex 1..2\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n')).toEqual({ added: 1, deleted: 1 });
    expect(diffStat('+not a hunk\n-nor this\n')).toEqual({ added: 0, deleted: 0 });
  });
});
