import fc from 'fast-check';
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  CANONICAL_MAX_DEPTH,
  CanonicalEncodingError,
  canonicalJson,
  DEVICE_KEY_ALGORITHM,
  deviceIdOf,
  digestOf,
  fromBase64Url,
  importDevicePublicKey,
  RequestSignatureSchema,
  requestStatement,
  settledRequestDigest,
  shortFingerprint,
  signStatement,
  toBase64Url,
  verifyStatement,
  type DevicePublicKey,
  type RequestStatement,
  type Signed,
} from '../../src/contracts/signing.ts';

async function newDevice(): Promise<{ keys: CryptoKeyPair; publicKey: DevicePublicKey; id: string }> {
  const keys = (await crypto.subtle.generateKey(DEVICE_KEY_ALGORITHM, false, ['sign', 'verify'])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', keys.publicKey);
  const publicKey = { kty: 'OKP', crv: 'Ed25519', x: jwk.x! } as const;
  return { keys, publicKey, id: await deviceIdOf(publicKey) };
}

/** Reorders every object's keys (by a seed) and respaces the text: the same JSON value, other bytes. */
function respelled(value: unknown, seed: number): string {
  const shuffle = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(shuffle);
    if (typeof v !== 'object' || v === null) return v;
    const entries = Object.entries(v).map(([k, x]) => [k, shuffle(x)] as const);
    entries.sort((a, b) => ((a[0].length * 31 + seed) % 7) - ((b[0].length * 17 + seed) % 5) || (seed % 2 ? 1 : -1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of entries) Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    return out;
  };
  return JSON.stringify(shuffle(value), null, seed % 4);
}

describe('canonical JSON (RFC 8785)', () => {
  it("writes the RFC's own example byte for byte", () => {
    const input = JSON.parse(String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`);
    expect(canonicalJson(input)).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it("sorts keys by UTF-16 code units, as the RFC's sorting example", () => {
    const input = JSON.parse(
      String.raw`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
    );
    // Compared as text: JSON.parse would list the integer-like key "1" first whatever the order.
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('writes numbers as ECMAScript does at their edges', () => {
    expect(canonicalJson([-0, 5e-324, -5e-324, 1.7976931348623157e308, 9007199254740992, 1e21, 1e-7, 0.000001, 123e-20])).toBe(
      '[0,5e-324,-5e-324,1.7976931348623157e+308,9007199254740992,1e+21,1e-7,0.000001,1.23e-18]',
    );
  });

  it('refuses what JSON cannot carry faithfully, with its own error', () => {
    // biome-ignore lint/suspicious/noSparseArray: a hole is one of the things JSON cannot carry, on purpose
    for (const bad of [NaN, Infinity, -Infinity, 1n, () => 1, Symbol('s'), new Date(0), new Map(), '\ud800', { ['\udc00']: 1 }, [undefined], [1, , 3]]) {
      expect(() => canonicalJson(bad), String(typeof bad)).toThrow(CanonicalEncodingError);
    }
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => canonicalJson(cycle)).toThrow(CanonicalEncodingError);
  });

  it('refuses nesting past its depth instead of exhausting the stack', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    expect(() => canonicalJson(deep)).toThrow(new CanonicalEncodingError(`Nested deeper than ${CANONICAL_MAX_DEPTH} levels`));
  });

  it('leaves out properties whose value is undefined, as the wire does', () => {
    expect(canonicalJson({ b: 1, a: undefined })).toBe('{"b":1}');
  });

  it('round-trips any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        // -0 is the one value JSON itself writes as 0.
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });

  it('gives one text whatever the key order and whitespace', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(1000), (value, seed) => {
        expect(canonicalJson(JSON.parse(respelled(value, seed)))).toBe(canonicalJson(value));
      }),
      { numRuns: 500 },
    );
  });

  it('is idempotent over its own output', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const once = canonicalJson(value);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips any well-formed string, astral planes and controls included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(JSON.parse(canonicalJson({ [a]: b, b: a }))).toEqual({ [a]: b, b: a });
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips any finite double exactly', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        expect(JSON.parse(canonicalJson(n))).toBe(n === 0 ? 0 : n);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('base64url', () => {
  it('round-trips any bytes and admits one spelling only', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const text = toBase64Url(bytes);
        expect(fromBase64Url(text)).toEqual(bytes);
        if (text.length % 4 >= 2) {
          // Setting an unused low bit spells the same bytes another way: refused.
          const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(text.at(-1)!);
          expect(fromBase64Url(text.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[last | 1])).toBe(last & 1 ? bytes : null);
        }
      }),
    );
    expect(fromBase64Url('a+b/')).toBeNull();
    expect(fromBase64Url('abcde')).toBeNull();
  });
});

describe('device ids', () => {
  it('are the RFC 7638 thumbprint of the public key', async () => {
    const device = await newDevice();
    expect(device.id).toBe(await calculateJwkThumbprint(device.publicKey, 'sha256'));
    expect(shortFingerprint(device.id)).toMatch(/^[A-Za-z0-9_-]{4}(-[A-Za-z0-9_-]{4}){3}$/);
  });
});

describe('signed request statements', () => {
  const frame = { id: 'request-1', type: 'chat.send', payload: { chatId: 'chat-1', text: 'ls -la', attachments: [] } };

  it('name the host, chat, type, id, payload digest, time and device', async () => {
    const device = await newDevice();
    const statement = await requestStatement(frame, { hostId: 'host-1', device: device.id, at: 1_700_000_000_000 });
    expect(statement).toEqual({
      kind: 'tether.request/1',
      hostId: 'host-1',
      chatId: 'chat-1',
      type: 'chat.send',
      id: 'request-1',
      payload: await digestOf(frame.payload),
      at: 1_700_000_000_000,
      device: device.id,
    });
    expect(
      (await requestStatement({ id: 'r', type: 'accounts.save', payload: { accounts: [] } }, { hostId: 'h', device: device.id, at: 0 })).chatId,
    ).toBeNull();
    const signed = await signStatement(device.keys.privateKey, statement);
    expect(RequestSignatureSchema.parse(signed)).toEqual(signed);
    expect(await verifyStatement(await importDevicePublicKey(device.publicKey), signed)).toBe(true);
  });

  it('verify whatever way the statement was respelled in transit', async () => {
    const device = await newDevice();
    const key = await importDevicePublicKey(device.publicKey);
    const signed = await signStatement(device.keys.privateKey, await requestStatement(frame, { hostId: 'host-1', device: device.id, at: 5 }));
    await fc.assert(
      fc.asyncProperty(fc.nat(1000), async (seed) => {
        const arrived = JSON.parse(respelled(signed, seed)) as Signed<RequestStatement>;
        expect(await verifyStatement(key, arrived)).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it('fail for any changed byte of the statement or of the signature', async () => {
    const device = await newDevice();
    const key = await importDevicePublicKey(device.publicKey);
    const signed = await signStatement(
      device.keys.privateKey,
      await requestStatement(frame, { hostId: 'host-1', device: device.id, at: 5, settles: await digestOf('x') }),
    );
    const statementText = canonicalJson(signed.statement);
    await fc.assert(
      fc.asyncProperty(fc.nat(statementText.length - 1), fc.integer({ min: 1, max: 0x7e }), async (at, code) => {
        const changed = statementText.slice(0, at) + String.fromCharCode(code) + statementText.slice(at + 1);
        fc.pre(changed !== statementText);
        let statement: unknown;
        try {
          statement = JSON.parse(changed);
        } catch {
          return; // not JSON any more: it never reaches a verifier
        }
        // A change that respells the same value (a digit written another way) is the same statement.
        fc.pre(canonicalJson(statement) !== statementText);
        expect(await verifyStatement(key, { statement: statement as RequestStatement, sig: signed.sig })).toBe(false);
      }),
      { numRuns: 300 },
    );
    const sigBytes = fromBase64Url(signed.sig)!;
    await fc.assert(
      fc.asyncProperty(fc.nat(63), fc.integer({ min: 1, max: 255 }), async (i, flip) => {
        const bytes = sigBytes.slice();
        bytes[i] ^= flip;
        expect(await verifyStatement(key, { statement: signed.statement, sig: toBase64Url(bytes) })).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it("fail under another device's key, and for a payload that changed after signing", async () => {
    const [mine, theirs] = [await newDevice(), await newDevice()];
    const signed = await signStatement(mine.keys.privateKey, await requestStatement(frame, { hostId: 'host-1', device: mine.id, at: 5 }));
    expect(await verifyStatement(await importDevicePublicKey(theirs.publicKey), signed)).toBe(false);
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (other) => {
        fc.pre(canonicalJson(other) !== canonicalJson(frame.payload));
        expect(await digestOf(other)).not.toBe(signed.statement.payload);
      }),
      { numRuns: 200 },
    );
  });

  it('never throw on a malformed signature or a statement with no canonical form', async () => {
    const device = await newDevice();
    const key = await importDevicePublicKey(device.publicKey);
    const statement = await requestStatement(frame, { hostId: 'h', device: device.id, at: 1 });
    for (const sig of ['', 'x', '!'.repeat(86), 'A'.repeat(85), 'A'.repeat(88)]) expect(await verifyStatement(key, { statement, sig })).toBe(false);
    const signed = await signStatement(device.keys.privateKey, statement);
    expect(await verifyStatement(key, { statement: { ...statement, at: NaN }, sig: signed.sig })).toBe(false);
  });
});

describe('settled-request digests', () => {
  it('bind a decision to the tool and input the host presented', async () => {
    const asked = { kind: 'approval', requestId: 'req-1', toolName: 'Bash', input: { command: 'ls' } } as const;
    const digest = await settledRequestDigest(asked);
    expect(await settledRequestDigest({ ...asked, input: JSON.parse('{ "command" : "ls" }') })).toBe(digest);
    expect(await settledRequestDigest({ ...asked, input: { command: 'rm -rf ~' } })).not.toBe(digest);
    expect(await settledRequestDigest({ ...asked, toolName: 'Write' })).not.toBe(digest);
    expect(await settledRequestDigest({ ...asked, requestId: 'req-2' })).not.toBe(digest);
    expect(await settledRequestDigest({ kind: 'question', requestId: 'req-1', questions: [{ command: 'ls' }] })).not.toBe(digest);
  });
});
