// The check on every file a message makes a CLI read (src/host/chats/file-reads.ts), pushed with
// hostile paths: `..` walks, NUL, control characters, unicode, very long names, and real symlinks
// (into and out of the folder, dangling, looping). Also the mirror of Claude Code's `@` rule on text
// that holds no mention (mail addresses, code), which must pass untouched.
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/contracts/index.ts';
import { admitFileReads, canonicalPath, readableIn } from '../../src/host/chats/file-reads.ts';
import { claudeMentionedFiles, claudeMentions } from '../../src/host/providers/claude/mentions.ts';

const base = canonicalPath(mkdtempSync(path.join(tmpdir(), 'tether-file-reads-')));
const root = path.join(base, 'root');
const outside = path.join(base, 'outside');
mkdirSync(path.join(root, 'sub'), { recursive: true });
mkdirSync(outside, { recursive: true });
symlinkSync(outside, path.join(root, 'out'));
symlinkSync(path.join(root, 'sub'), path.join(root, 'in'));
symlinkSync(path.join(outside, 'not-yet'), path.join(root, 'dangling'));
symlinkSync(path.join(root, 'loop'), path.join(root, 'loop'));

const segment = fc.oneof(
  fc.constantFrom('..', '.', '', 'sub', 'a', 'out', 'in', 'dangling', 'loop', 'é', '日本', '\u202e', 'x'.repeat(255)),
  fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !s.includes('/')),
);

/** What the check must answer, from the path alone: the lexical path, then each symlink by what it is. */
function expected(file: string): boolean {
  if (file.includes('\0') || file.length > 4096) return false;
  const rel = path.relative(root, path.resolve(file));
  if (rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)) return false;
  const first = rel.split('/')[0];
  // `out` and `dangling` lead outside; `loop` and everything else stay in the root.
  return first !== 'out' && first !== 'dangling';
}

function denied(files: string[]): ProtocolError | null {
  try {
    admitFileReads(files, [root]);
    return null;
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
}

describe('admitFileReads', () => {
  it('admits exactly the paths that lead into the folder, whatever `..`, symlinks, unicode or length they hold', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 20 }), (segments) => {
        const file = [root, ...segments].join('/');
        expect(readableIn(file, [root])).toBe(expected(file));
      }),
      { numRuns: 2000 },
    );
  });

  it('a refusal is folder-denied, names the path with control characters escaped, and says where the agent may read', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.constantFrom(outside, `${root}/out`, `${root}/dangling`, `${root}/..`), (name, folder) => {
        const file = `${folder}/${name}`;
        const error = denied([path.join(root, 'sub', 'ok.txt'), file]);
        if (expected(file)) return expect(error).toBeNull();
        expect(error?.code).toBe('folder-denied');
        expect(error?.message).toContain(JSON.stringify(file.length > 300 ? `${file.slice(0, 300)}…` : file));
        expect(error?.message).toContain(`may read only in ${root}`);
        expect(error?.message).not.toMatch(/[\u0000-\u001f]/);
      }),
      { numRuns: 500 },
    );
  });

  it('NUL, relative and over-long paths are refused; a file through a link out of the folder says where it leads', () => {
    expect(denied([`${root}/sub/a\0b`])?.message).toContain('NUL');
    expect(denied(['sub/a.txt'])?.message).toContain('not an absolute path');
    expect(denied([`${root}/${'a/'.repeat(2100)}`])?.message).toContain('too long');
    expect(denied([`${root}/out/secret`])?.message).toContain(`it leads to ${JSON.stringify(`${outside}/secret`)}`);
    expect(denied([`${root}/dangling`])?.message).toContain(JSON.stringify(`${outside}/not-yet`));
    expect(denied([`${root}/in/x`, `${root}/loop`, `${root}/sub/../sub/y`])).toBeNull();
  });

  it('a folder that is itself a symlink still holds its files', () => {
    expect(readableIn(`${outside}/f`, [canonicalPath(`${root}/out`)])).toBe(true);
    expect(() => admitFileReads([`${outside}/f`], [`${root}/out`])).not.toThrow();
  });
});

describe("the mirror of Claude Code's @ rule", () => {
  const word = fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/);

  it('mail addresses and words glued to an @ are never mentions', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(word, word), { maxLength: 8 }), fc.constantFrom(' ', '\n', ', ', ' (', ':'), (pairs, gap) => {
        const text = pairs.map(([user, domain]) => `${user}@${domain}`).join(gap);
        expect(claudeMentions(text)).toEqual([]);
      }),
    );
  });

  it('a bare @Name (code, a handle) names a file in the chat folder, which the check admits', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{0,15}$/), (name) => {
        const files = claudeMentionedFiles(`class A { @${name} void run() {} }`, `${root}/sub`, outside);
        expect(files).toEqual([path.join(root, 'sub', name)]);
        expect(() => admitFileReads(files, [root])).not.toThrow();
      }),
    );
  });

  it('every mention of a path outside, in any of the forms the CLI reads, is named', () => {
    const target = `${outside}/secret.txt`;
    fc.assert(
      fc.property(
        fc.constantFrom(`@${target}`, `@"${target}"`, `@${target}.`, `@${target}#L2-9`, '@~/secret.txt', '@../../outside/secret.txt', `\u3002@${target}`),
        fc.constantFrom('', 'see ', 'x\n', 'a\u00a0', 'b\u3000'),
        (mention, before) => {
          const text = `${before}${mention}`;
          const files = claudeMentionedFiles(text, `${root}/sub`, outside);
          expect(files).toContain(target);
          expect(() => admitFileReads(files, [root])).toThrow(ProtocolError);
        },
      ),
    );
  });
});
