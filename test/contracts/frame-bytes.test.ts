// Frame limits stated in bytes count UTF-8 bytes: utf8Bytes against the encoder, overFrameLimit at its edges.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { overFrameLimit, utf8Bytes } from '../../src/contracts/index.ts';

describe('frame bytes', () => {
  it('counts what TextEncoder writes, lone surrogates (sent as U+FFFD) included', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => utf8Bytes(text) === new TextEncoder().encode(text).length));
    fc.assert(
      fc.property(
        fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) }),
        (text) => utf8Bytes(text) === new TextEncoder().encode(text).length,
      ),
    );
  });

  it('tells a frame over the limit in bytes though under it in characters', () => {
    expect(overFrameLimit('é'.repeat(60), 100)).toBe(true);
    expect(overFrameLimit('é'.repeat(50), 100)).toBe(false);
    expect(overFrameLimit('x'.repeat(101), 100)).toBe(true);
    expect(overFrameLimit('😀'.repeat(25), 100)).toBe(false);
    expect(overFrameLimit('😀'.repeat(26), 100)).toBe(true);
    expect(overFrameLimit(new ArrayBuffer(101), 100)).toBe(true);
  });
});
