import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatItem, ChatTurnItem } from '../../src/contracts/chat.ts';
import {
  abortedByMachine,
  attachmentBytes,
  attachmentImageMime,
  clipText,
  notResumedNote,
  resumeCommandFor,
  workflowAgentIdOf,
  workflowAgentRef,
} from '../../src/contracts/text.ts';
import { ITEMS } from './fixtures.ts';

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

describe('clipText', () => {
  it('returns text that already fits unchanged', () => {
    expect(clipText('hello', 5)).toBe('hello');
  });

  it('cuts to whole characters as a person sees them', () => {
    expect(clipText('ab😀cd', 3)).toBe('ab');
    expect(clipText('ab😀cd', 4)).toBe('ab😀');
    // A family emoji is one grapheme of 8 code units: all of it or none.
    const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}';
    expect(clipText(`x${family}y`, 8)).toBe('x');
    expect(clipText(`x${family}y`, 9)).toBe(`x${family}`);
    // An e with two combining accents is one character of 3 units.
    expect(clipText('e\u0301\u0301x', 2)).toBe('');
  });

  it('may answer an empty string when the first character alone is too long', () => {
    expect(clipText('😀', 1)).toBe('');
  });

  it('never exceeds max, answers a prefix, and never splits a surrogate pair', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-composite' })),
        fc.nat({ max: 40 }),
        (text, max) => {
          const clipped = clipText(text, max);
          expect(clipped.length).toBeLessThanOrEqual(max);
          expect(text.startsWith(clipped)).toBe(true);
          const end = clipped.length;
          if (end > 0 && end < text.length) {
            expect(isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))).toBe(false);
          }
        },
      ),
    );
  });

  it('keeps as much as fits: a grapheme-sized margin at most', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', minLength: 1 }), fc.nat({ max: 40 }), (text, max) => {
        // ASCII graphemes are one unit each (CR LF aside), so the cut is exact or one short.
        expect(clipText(text, max).length).toBeGreaterThanOrEqual(Math.min(text.length, max) - 1);
      }),
    );
  });
});

describe('attachmentBytes', () => {
  it('equals the decoded length of real base64', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const data = Buffer.from(bytes).toString('base64');
        expect(attachmentBytes(data)).toBe(Buffer.from(data, 'base64').length);
      }),
    );
  });

  it('counts from the length and padding alone', () => {
    expect(attachmentBytes('')).toBe(0);
    expect(attachmentBytes('AA==')).toBe(1);
    expect(attachmentBytes('AAA=')).toBe(2);
    expect(attachmentBytes('AAAA')).toBe(3);
  });
});

describe('attachmentImageMime', () => {
  it('trusts a declared image type, ignoring parameters and case', () => {
    expect(attachmentImageMime({ name: 'a.bin', mime: 'IMAGE/PNG; charset=binary' })).toBe('image/png');
    expect(attachmentImageMime({ name: 'x', mime: ' image/webp ' })).toBe('image/webp');
  });

  it('keeps a declared non-image a non-image whatever its name', () => {
    expect(attachmentImageMime({ name: 'scan.png', mime: 'application/pdf' })).toBeNull();
    expect(attachmentImageMime({ name: 'photo.svg', mime: 'image/svg+xml' })).toBeNull();
  });

  it('looks at the extension only for an empty or generic binary type', () => {
    expect(attachmentImageMime({ name: 'photo.JPG', mime: '' })).toBe('image/jpeg');
    expect(attachmentImageMime({ name: 'photo.jpeg', mime: 'application/octet-stream' })).toBe('image/jpeg');
    expect(attachmentImageMime({ name: 'a.b.gif', mime: 'binary/octet-stream' })).toBe('image/gif');
    expect(attachmentImageMime({ name: 'notes.txt', mime: '' })).toBeNull();
    expect(attachmentImageMime({ name: 'png', mime: '' })).toBeNull();
    expect(attachmentImageMime({ name: 'x.constructor', mime: '' })).toBeNull();
  });
});

describe('resumeCommandFor', () => {
  it('fills the documented example', () => {
    expect(resumeCommandFor('example-cli {flags} --resume {id}', "it's-1", ['--read-only'])).toBe("example-cli --read-only --resume 'it'\\''s-1'");
  });

  it('drops the {flags} word when there are none, leaving no double space', () => {
    expect(resumeCommandFor('example-cli {flags} --resume {id}', 'abc')).toBe("example-cli --resume 'abc'");
  });

  it('puts several flags in as separate words, verbatim', () => {
    expect(resumeCommandFor('cli {flags} {id}', 'x', ['-a', '--b=$HOME'])).toBe("cli -a --b=$HOME 'x'");
  });

  it('replaces only the first {id} of a word, inside a longer word too', () => {
    expect(resumeCommandFor('cli --session={id}{id}', 'x')).toBe("cli --session='x'{id}");
  });

  it('keeps String.replace semantics: $ patterns in an id are interpreted (documented caveat)', () => {
    expect(resumeCommandFor('cli {id}', 'a$&b')).toBe("cli 'a{id}b'");
    expect(resumeCommandFor('cli {id}', 'a$$b')).toBe("cli 'a$b'");
    // A trailing `$` plus the closing quote reads as `$'` (the text after the match).
    expect(resumeCommandFor('cli --x={id}.', 'a$')).toBe("cli --x='a..");
  });

  // `$$`, `$&`, `` $` `` and `$'` are replacement patterns by design (see above),
  // and a trailing `$` meets the closing quote as `$'`. NUL cannot travel in
  // argv. Every other id must survive a real shell.
  const shellSafe = (id: string) => !/\$[$&`']|\$$/.test(id) && !id.includes('\0');
  const runPrintf = (id: string) => {
    const command = resumeCommandFor('printf %s {id}', id);
    const run = spawnSync('sh', ['-c', command], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    return run.stdout;
  };

  it('quotes awkward ids so a shell hands them back unchanged', () => {
    for (const id of ["it's", "''", 'two words', 'line\nbreak', '$HOME', '`id`', '"q"', 'a\\b', '-n', '*', ';rm -rf /']) {
      expect(runPrintf(id)).toBe(id);
    }
  });

  it('quotes any printable id so a shell hands it back unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', minLength: 1 }).filter(shellSafe), (id) => {
        expect(runPrintf(id)).toBe(id);
      }),
      { numRuns: 100 },
    );
  });

  it('quotes any unicode id with quotes, spaces and newlines so a shell hands it back unchanged', () => {
    const odd = fc.string({
      unit: fc.oneof(fc.constantFrom("'", '"', ' ', '\n', '\t', '\\', '$', '`', '!', '{id}'), fc.string({ unit: 'binary', maxLength: 1 })),
      minLength: 1,
    });
    fc.assert(
      fc.property(odd.filter(shellSafe), (id) => {
        expect(runPrintf(id)).toBe(id);
      }),
      { numRuns: 100 },
    );
  });
});

describe('workflow agent references', () => {
  it('round-trip an agent id', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (agentId) => {
        expect(workflowAgentIdOf(workflowAgentRef(agentId))).toBe(agentId);
      }),
    );
  });

  it('read null from anything else', () => {
    expect(workflowAgentRef('a-1')).toBe('workflow-agent:a-1');
    expect(workflowAgentIdOf('workflow-agent:')).toBeNull();
    expect(workflowAgentIdOf('toolu_1')).toBeNull();
    expect(workflowAgentIdOf('Workflow-agent:a')).toBeNull();
  });
});

describe('abortedByMachine', () => {
  const turn: ChatTurnItem = { ...ITEMS.turn, id: 'turn-1', turnId: 'turn-1', state: 'aborted' };
  const note = (over: Partial<Extract<ChatItem, { kind: 'note' }>>): ChatItem => ({
    ...ITEMS.note,
    id: 'note-1',
    turnId: 'turn-1',
    level: 'warning',
    text: notResumedNote('the CLI exited'),
    ...over,
  });

  it('writes the documented note text', () => {
    expect(notResumedNote('x')).toBe('This turn could not be resumed after the machine restarted: x');
  });

  it('is true for an aborted turn with the host warning', () => {
    expect(abortedByMachine(turn, [turn, note({})])).toBe(true);
  });

  it('is false when a person stopped the turn', () => {
    expect(abortedByMachine(turn, [turn])).toBe(false);
    expect(abortedByMachine(turn, [note({ level: 'info' })])).toBe(false);
    expect(abortedByMachine(turn, [note({ turnId: 'turn-2' })])).toBe(false);
    expect(abortedByMachine(turn, [note({ text: 'Stopped by you' })])).toBe(false);
  });

  it('is false for a turn that did not abort', () => {
    expect(abortedByMachine({ ...turn, state: 'error' }, [note({})])).toBe(false);
  });
});
