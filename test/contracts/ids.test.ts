// Chat ids travel as they are (paths, internal headers, object names, logs): what fits and what is refused.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHAT_ID_MAX, ChatIdSchema } from '../../src/contracts/index.ts';

const visible = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));

describe('ChatIdSchema', () => {
  it('takes 1 to CHAT_ID_MAX visible ASCII characters (UUIDs, slugs, names with . - _ : @ /)', () => {
    fc.assert(fc.property(fc.array(visible, { minLength: 1, maxLength: CHAT_ID_MAX }), (chars) => ChatIdSchema.safeParse(chars.join('')).success));
    expect(ChatIdSchema.parse(crypto.randomUUID())).toMatch(/-/);
  });

  it('refuses an id with any character a header or a name cannot carry: controls, space, non-ASCII, lone surrogates', () => {
    const bad = fc.oneof(fc.integer({ min: 0, max: 0x20 }), fc.constant(0x7f), fc.integer({ min: 0x80, max: 0xffff })).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        bad,
        fc.string({ maxLength: 20 }),
        (before, char, after) => !ChatIdSchema.safeParse(`${before}${char}${after}`).success,
      ),
    );
    for (const id of ['', 'x'.repeat(CHAT_ID_MAX + 1), '\ud800', 'a\udc00', 'x\ny', 'café', 'a b'])
      expect(ChatIdSchema.safeParse(id).success, JSON.stringify(id)).toBe(false);
  });
});
