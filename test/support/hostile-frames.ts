// Hostile frames for the fuzz suite (test/relay/fuzz.test.ts), made from a seed so a failing run can be
// made again: malformed JSON, binary and invalid UTF-8, deep nesting, sizes around every limit, a wrong
// type for every field of every request in the registry, unknown types, prototype keys, odd ids,
// broken envelopes and forged link frames. Each frame says whether the relay may carry it out
// (`mayServe`: a valid read-only request with an odd decoration) or must refuse it; none is a valid
// request that changes anything, so a baseline chat the frames are aimed at must come out unchanged.
import { AGENT_REQUEST_SCHEMAS, CHAT_ID_MAX, LINK_MAX_FRAME_BYTES, REQUEST_RULES, type AgentRequestType } from '../../src/contracts/index.ts';

export type FrameClass =
  | 'malformed-json'
  | 'binary'
  | 'invalid-utf8'
  | 'deep-nesting'
  | 'sizes'
  | 'wrong-type'
  | 'unknown-type'
  | 'prototype-keys'
  | 'odd-ids'
  | 'envelope'
  | 'flood'
  | 'forged-link';

export interface HostileFrame {
  cls: FrameClass;
  data: string | Uint8Array;
  /** A valid read-only request (decorated oddly): the relay may serve it. Anything else must be refused. */
  mayServe: boolean;
  /** What it is, for a failure's message. */
  what: string;
}

/** A small seeded generator (mulberry32): the same seed makes the same frames. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(below: number): number {
    return Math.floor(this.next() * below);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const REQUEST_TYPES = Object.keys(AGENT_REQUEST_SCHEMAS) as AgentRequestType[];

/** The top-level payload fields of a request type, read from its schema. */
export function fieldsOf(type: AgentRequestType): string[] {
  const schema = AGENT_REQUEST_SCHEMAS[type].payload as unknown as { shape?: Record<string, unknown> };
  return Object.keys(schema.shape ?? {});
}

/**
 * Request types whose valid forms only read (a relay may serve them with any decoration): nothing of
 * a chat changes. Attach and history are the relay's own reads of the thread.
 */
export const READ_ONLY = REQUEST_TYPES.filter(
  (type) => !REQUEST_RULES[type].actsOnMachine && REQUEST_RULES[type].servedBy === 'host' && fieldsOf(type).every((f) => f === 'chatId'),
).concat(['chat.attach'] as AgentRequestType[]);

/** Values of every JSON kind, and the odd ones of each, for a field that wants something else. */
function wrongValues(rng: Rng): unknown[] {
  return [
    null,
    true,
    false,
    0,
    -1,
    1.5,
    1e308,
    -0,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    ' ',
    '\u0000',
    'x'.repeat(rng.pick([127, 128, 129, 4096])),
    [],
    [null],
    [[[]]],
    {},
    { '': 1 },
    { __proto__: null },
    JSON.parse('{"__proto__":{"polluted":1}}'),
    nestArray(rng.pick([64, 513, 5000])),
    '\ud800',
    '../../etc/passwd',
    '%00',
    'x\ny',
    '<script>',
    '${HOME}',
    '$(id)',
  ];
}

function nestArray(depth: number): unknown {
  let value: unknown = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** Ids no client should send: not strings, empty, huge, control characters, lone surrogates. */
const ODD_IDS: unknown[] = [
  null,
  0,
  -1,
  // biome-ignore lint/correctness/noPrecisionLoss: 1e400 is Infinity on purpose, a number no id can be
  1e400,
  true,
  [],
  {},
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  'x'.repeat(10_000),
  'id\nnext',
  '../x',
  '__proto__',
  'constructor',
  'toString',
  '%00',
  '\u202e',
  '😀'.repeat(300),
];

/** Chat ids a path or a payload may carry that cannot be one (see ChatIdSchema) and some that can. */
export const ODD_CHAT_IDS = [
  '',
  ' ',
  '\u0000',
  'x\ny',
  '\ud800',
  'é',
  '..',
  '../..',
  'a/b',
  'a\\b',
  '%00',
  '%2e%2e',
  'x'.repeat(CHAT_ID_MAX),
  'x'.repeat(CHAT_ID_MAX + 1),
  '__proto__',
  'constructor',
  'a b',
  '\t',
  '😀',
  'x'.repeat(5000),
];

const UNKNOWN_TYPES = [
  '',
  ' ',
  'chat',
  'chat.',
  '.send',
  'chat.send ',
  'CHAT.SEND',
  'chat.Send',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'attachment.read',
  'visual.page',
  'host.presence',
  'link',
  'hello',
  'ack',
  'chat.event',
  'x'.repeat(5000),
  '\u0000',
  '\ud800',
  'chat.send\u0000',
  'usage.summary.x',
];

function encode(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** A frame of exactly `bytes` UTF-8 bytes, a request whose text pads it out with `é` (two bytes each) and one `a` when odd. */
export function frameOfBytes(bytes: number, chatId: string): string {
  const head = `{"id":"size","type":"chat.attach","payload":{"chatId":${JSON.stringify(chatId)},"pad":"`;
  const tail = '"}}';
  const room = bytes - encode(head).length - encode(tail).length;
  return head + 'é'.repeat(Math.floor(room / 2)) + (room % 2 ? 'a' : '') + tail;
}

export interface Aim {
  /** The chat the frames name (the baseline). */
  chatId: string;
  /** The socket kind: which request types its frames use. */
  socket: 'lobby' | 'chat';
  /** Frames of a size near the frame limit (16 MiB each): how many to make in a run. */
  hugeFrames: number;
}

/**
 * The hostile client frames of a run, `count` of them, in an order the seed decides. The systematic
 * part (every field of every request with each wrong value) comes first, interleaved with the rest.
 */
export function* clientFrames(rng: Rng, count: number, aim: Aim): Generator<HostileFrame> {
  const { chatId } = aim;
  const systematic = wrongTypeFrames(rng, chatId);
  let huge = aim.hugeFrames;
  for (let i = 0; i < count; i++) {
    if (huge > 0 && i % Math.max(1, Math.floor(count / (aim.hugeFrames + 1))) === 0 && i > 0) {
      huge -= 1;
      // Right at the limit and just past it, counted in bytes (two-byte characters, so units undercount).
      const bytes = LINK_MAX_FRAME_BYTES + rng.pick([-1, 0, 1, 2]);
      // At the limit it is a valid attach (with a key the schema drops): served on the chat's socket.
      yield { cls: 'sizes', data: frameOfBytes(bytes, chatId), mayServe: bytes <= LINK_MAX_FRAME_BYTES, what: `a frame of ${bytes} bytes` };
      continue;
    }
    const next = systematic.next();
    if (!next.done && rng.chance(0.35)) {
      yield next.value;
      continue;
    }
    yield oneFrame(rng, chatId, i);
  }
}

function* wrongTypeFrames(rng: Rng, chatId: string): Generator<HostileFrame> {
  for (;;) {
    for (const type of REQUEST_TYPES) {
      const fields = fieldsOf(type);
      for (const field of fields) {
        for (const value of wrongValues(rng)) {
          const payload: Record<string, unknown> = { chatId, [field]: value };
          // Only what the schema refuses is a wrong type (`true` is right for a boolean): the rest is a request.
          if (AGENT_REQUEST_SCHEMAS[type].payload.safeParse(payload).success) continue;
          yield {
            cls: 'wrong-type',
            data: JSON.stringify({ id: `wt-${rng.int(1e9)}`, type, payload }),
            mayServe: false,
            what: `${type}.${field} = ${short(value)}`,
          };
        }
      }
      if (fields.length === 0) {
        // No field to get wrong: the payload itself is (null is not among them: the envelope takes a
        // null payload as an absent one, src/contracts/envelope.ts, which is an empty one here).
        for (const payload of [7, 'x', [], [1], true]) {
          yield {
            cls: 'wrong-type',
            data: JSON.stringify({ id: `wt-${rng.int(1e9)}`, type, payload }),
            mayServe: false,
            what: `${type} payload ${short(payload)}`,
          };
        }
      }
    }
  }
}

function short(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 40 ? `${text.slice(0, 40)}…(${text.length})` : text;
}

function oneFrame(rng: Rng, chatId: string, i: number): HostileFrame {
  const id = `f-${i}-${rng.int(1e9)}`;
  const cls = rng.pick<FrameClass>([
    'malformed-json',
    'binary',
    'invalid-utf8',
    'deep-nesting',
    'sizes',
    'unknown-type',
    'prototype-keys',
    'odd-ids',
    'envelope',
  ]);
  switch (cls) {
    case 'malformed-json': {
      const valid = JSON.stringify({ id, type: 'chat.send', payload: { chatId, text: 'never sent' } });
      const forms = [
        valid.slice(0, rng.int(valid.length - 1)), // truncated: every cut of it fails to parse
        `${valid}}`,
        `{${valid}`,
        valid.replace(/"/g, "'"),
        valid.replace(':', ''),
        '',
        ' ',
        '{',
        '[',
        'undefined',
        'NaN',
        '{"id":1,}',
        'pingx',
        'PING',
        'pong',
        '\u0000',
        '{"a":1e99999}',
        '[1,2',
        '"just a string"',
        '123',
        'true',
        'null',
        '[]',
        '{}',
        `[${valid},${valid}]`, // an array of requests: a client frame is one request
      ];
      const text = rng.pick(forms);
      // A well-formed request made malformed must never be served; the odd valid JSON values are not requests either.
      return { cls, data: text, mayServe: false, what: `malformed ${short(text)}` };
    }
    case 'binary': {
      const valid = JSON.stringify({ id, type: rng.pick(READ_ONLY), payload: { chatId } });
      // A request as bytes is still a request (the relay decodes binary frames): a read may be served.
      if (rng.chance(0.5)) return { cls, data: encode(valid), mayServe: true, what: 'a read-only request as bytes' };
      const bytes = new Uint8Array(rng.int(300));
      for (let b = 0; b < bytes.length; b++) bytes[b] = rng.int(256);
      return { cls, data: bytes, mayServe: false, what: `${bytes.length} random bytes` };
    }
    case 'invalid-utf8': {
      const inner = encode(JSON.stringify({ id, type: 'chat.send', payload: { chatId, text: 'XX' } }));
      const at = [...inner].findIndex((b, k) => b === 0x58 && inner[k + 1] === 0x58);
      const bad = rng.pick([
        [0xff, 0xfe],
        [0xc0, 0x80],
        [0xed, 0xa0],
        [0xe0, 0x80],
        [0xf8, 0x88],
      ]);
      const bytes = new Uint8Array(inner);
      bytes[at] = bad[0]!;
      bytes[at + 1] = bad[1]!;
      // Decoded leniently, bad bytes in a send's text make a valid send, which must not reach the chat:
      // the type carries them too (chat\xffsend), so the frame is no request whatever the decoder does.
      const typeAt = [...bytes].findIndex(
        (b, k) => b === 0x63 && bytes[k + 1] === 0x68 && bytes[k + 2] === 0x61 && bytes[k + 3] === 0x74 && bytes[k + 4] === 0x2e,
      );
      bytes[typeAt + 4] = bad[0]!;
      return { cls, data: bytes, mayServe: false, what: `invalid UTF-8 ${bad} in the type and the text` };
    }
    case 'deep-nesting': {
      const depth = rng.pick([100, 512, 513, 1000, 5000, 10_000, 50_000]);
      const where = rng.int(4);
      // Built as text: 50,000 levels is past what JSON.stringify recurses through on some stacks.
      const deepText = rng.chance(0.5) ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '{}' + '}'.repeat(depth);
      const text = [
        `{"id":${JSON.stringify(id)},"type":"chat.send","payload":{"chatId":${JSON.stringify(chatId)},"text":${deepText}}}`,
        `{"id":${deepText},"type":"chat.attach","payload":{"chatId":${JSON.stringify(chatId)}}}`,
        deepText,
        `{"id":${JSON.stringify(id)},"type":"chat.attach","payload":{"chatId":${JSON.stringify(chatId)}},"signature":${deepText}}`,
      ][where]!;
      return { cls, data: text, mayServe: false, what: `nested ${depth} deep (form ${where})` };
    }
    case 'sizes': {
      const length = rng.pick([CHAT_ID_MAX - 1, CHAT_ID_MAX, CHAT_ID_MAX + 1, 255, 256, 257, 1023, 1024, 1025, 65_535, 65_536, 65_537, 1_000_000]);
      const form = rng.int(4);
      const big = rng.pick(['x', 'é', '😀']).repeat(Math.ceil(length / 2));
      const frames = [
        { id, type: 'chat.attach', payload: { chatId: 'x'.repeat(length) } },
        { id: 'i'.repeat(length), type: 'chat.history', payload: { chatId, cursor: 7 } },
        { id, type: 'chat.addBookmark', payload: { chatId, itemId: 42, name: big } },
        { id, type: 'chat.send', payload: { chatId, text: 17, attachments: [{ big }] } },
      ];
      const frame = frames[form]!;
      // A chat id of up to its maximum names a chat this socket is not on: refused either way.
      // Form 0 names a chat this socket is not on (chat.attach is served only on its own chat's socket): refused like the others.
      return { cls, data: JSON.stringify(frame), mayServe: false, what: `size ${length} (form ${form})` };
    }
    case 'unknown-type': {
      const type = rng.pick(UNKNOWN_TYPES);
      return { cls, data: JSON.stringify({ id, type, payload: { chatId } }), mayServe: false, what: `type ${short(type)}` };
    }
    case 'prototype-keys': {
      const type = rng.pick(READ_ONLY);
      const forms = [
        `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"payload":{"chatId":${JSON.stringify(chatId)},"__proto__":{"admin":true,"chatId":"other"}}}`,
        `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"payload":{"chatId":${JSON.stringify(chatId)},"constructor":{"prototype":{"polluted":1}}}}`,
        `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"__proto__":{"type":"chat.kill"},"payload":{"chatId":${JSON.stringify(chatId)}}}`,
        `{"__proto__":{"id":${JSON.stringify(id)},"type":"chat.kill","payload":{"chatId":${JSON.stringify(chatId)}}}}`,
        `{"id":${JSON.stringify(id)},"type":"chat.send","payload":{"__proto__":{"chatId":${JSON.stringify(chatId)},"text":"inherited"}}}`,
        `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"payload":{"chatId":${JSON.stringify(chatId)},"hasOwnProperty":1,"toString":"x","valueOf":null}}`,
      ];
      const form = rng.int(forms.length);
      // Forms 3 and 4 carry what they would do only in inherited keys: refused. The others are valid reads.
      return { cls, data: forms[form]!, mayServe: form !== 3 && form !== 4, what: `prototype keys form ${form} on ${type}` };
    }
    case 'odd-ids': {
      const odd = rng.pick(ODD_IDS);
      const form = rng.int(3);
      const frame =
        form === 0
          ? { id: odd, type: 'chat.attach', payload: { chatId } }
          : form === 1
            ? { id, type: 'chat.attach', payload: { chatId: rng.pick(ODD_CHAT_IDS) } }
            : { id, type: 'chat.approve', payload: { chatId, requestId: odd, decision: 'allow' } };
      // An odd request id on a valid attach is still one the relay may answer; string ids of other forms may be fine too.
      const mayServe = form === 0 && typeof odd === 'string' && odd.length > 0;
      return { cls, data: JSON.stringify(frame), mayServe, what: `odd id form ${form}: ${short(odd)}` };
    }
    case 'envelope':
    default: {
      const forms: unknown[] = [
        { type: 'chat.attach', payload: { chatId } },
        { id },
        { id, payload: { chatId } },
        { id, type: 'chat.attach', payload: [chatId] },
        { id, type: 'chat.attach', payload: chatId },
        { id, type: 7, payload: { chatId } },
        { id, type: ['chat.attach'], payload: { chatId } },
        { id, type: 'chat.send', payload: { chatId, text: 'signed?' }, signature: 'forged' },
        { id, type: 'chat.send', payload: { chatId, text: 'signed?' }, signature: { device: 'x', sig: 'y' } },
        { id, ok: true, result: {} },
        { type: 'event', event: 'chat.event', payload: { chatId, seq: 1, event: { type: 'reset' } } },
        { link: 'hello', version: 'x', pending: 0 },
        { link: 'ack', n: [1, 2, 3] },
      ];
      const form = rng.int(forms.length);
      return { cls: 'envelope', data: JSON.stringify(forms[form]), mayServe: false, what: `envelope form ${form}` };
    }
  }
}

/** A burst of frames sent without waiting: more than a socket's budget holds, so some must be answered rate-limited. */
export function floodFrames(rng: Rng, count: number, chatId: string): HostileFrame[] {
  return Array.from({ length: count }, (_, i) => ({
    cls: 'flood' as const,
    data: JSON.stringify({ id: `flood-${i}-${rng.int(1e9)}`, type: 'chat.attach', payload: { chatId } }),
    mayServe: true,
    what: `flood ${i}`,
  }));
}

/**
 * Hostile frames from a host on its link: junk, replies nobody asked for, forged events (any chat id,
 * relay-owned event names, seqs out of range, unreadable events), control frames out of place, deep
 * nesting, arrays of them. `ownChat`: a chat of this host the frames may name only with unreadable
 * events (so a baseline there stays as it was); `elsewhere`: another host's chat, named freely.
 */
export function linkFrames(rng: Rng, count: number, ownChat: string, elsewhere: string): HostileFrame[] {
  const frames: HostileFrame[] = [];
  for (let i = 0; i < count; i++) frames.push(oneLinkFrame(rng, i, ownChat, elsewhere));
  return frames;
}

function oneLinkFrame(rng: Rng, i: number, ownChat: string, elsewhere: string): HostileFrame {
  const n = rng.chance(0.8) ? 1_000_000 + i : rng.pick([0, -1, 1.5, '7', null, 2 ** 60]);
  const unreadable = [
    { type: 'item' },
    { type: 'item', item: { kind: 'user' } },
    { type: 'delta', itemId: 7, text: 'x' },
    { type: 'reset', info: null, items: 'x' },
    { type: 'nope' },
    null,
    'event',
    [],
    { type: 'item', item: { kind: 'user', id: '', createdAt: 'now', turnId: null, text: 1 } },
  ];
  const form = rng.int(12);
  let frame: unknown;
  let what: string;
  switch (form) {
    case 0:
      frame = {
        type: 'event',
        event: 'chat.event',
        payload: { chatId: ownChat, seq: rng.pick([0, -1, 1, 2 ** 53, 'x', null]), event: rng.pick(unreadable) },
        n,
      };
      what = 'an unreadable chat.event for the own chat';
      break;
    case 1:
      frame = {
        type: 'event',
        event: 'chat.event',
        payload: {
          chatId: rng.pick([elsewhere, ...ODD_CHAT_IDS]),
          seq: rng.int(100),
          event: { type: 'item', item: { kind: 'user', id: `forged-${i}`, createdAt: 1, turnId: null, text: 'forged' } },
        },
        n,
      };
      what = "a valid-looking chat.event for a chat id that is not one of this host's";
      break;
    case 2:
      frame = {
        type: 'event',
        event: rng.pick(['host.presence', 'chat.bookmarks', 'chat.event ', 'relay.restart', '__proto__', 'constructor', '']),
        payload: { hostId: 'someone-else', online: true, chatId: ownChat },
        n,
      };
      what = 'a relay-owned or unknown event name';
      break;
    case 3:
      frame = {
        id: rng.pick([`nobody-${i}`, null, 7, '', '__proto__']),
        ok: rng.pick([true, false, 'yes']),
        result: { chats: [] },
        error: { code: 'internal' },
      };
      what = 'a reply nobody asked for';
      break;
    case 4:
      frame = rng.pick([
        { link: 'hello' },
        { link: 'hello', version: 7 },
        { link: 'ack', n: [1] },
        { link: 'bye' },
        { link: null },
        { link: 'hello', version: 'x', pending: -1 },
      ]);
      what = 'a control frame out of place';
      break;
    case 5: {
      const depth = rng.pick([513, 5000, 10_000]);
      const text = `{"type":"event","event":"chat.status","payload":{"chatId":${JSON.stringify(ownChat)},"info":${'['.repeat(depth)}${']'.repeat(depth)}},"n":${1_000_000 + i}}`;
      return { cls: 'deep-nesting', data: text, mayServe: false, what: `a chat.status nested ${depth} deep` };
    }
    case 6: {
      const text = rng.pick(['', '{', 'not json', '[', '[[]]', '[1,2,3]', 'null', '"x"', 'PING', '{"type":"event"}', '{"type":"event","event":7}']);
      return { cls: 'malformed-json', data: text, mayServe: false, what: `junk ${short(text)}` };
    }
    case 7: {
      const bytes = new Uint8Array(rng.int(200));
      for (let b = 0; b < bytes.length; b++) bytes[b] = rng.int(256);
      return { cls: 'binary', data: bytes, mayServe: false, what: 'random bytes' };
    }
    case 8:
      frame = Array.from({ length: rng.int(50) }, (_, k) => ({
        type: 'event',
        event: 'chat.event',
        payload: { chatId: ownChat, seq: k, event: rng.pick(unreadable) },
        n: 2_000_000 + i * 50 + k,
      }));
      what = 'an array of unreadable events';
      break;
    case 9:
      frame = { type: 'event', event: 'chat.status', payload: { chatId: rng.pick(ODD_CHAT_IDS), info: { chatId: 'x' } }, n };
      what = 'a chat.status with an odd chat id and a broken info';
      break;
    case 10:
      frame = JSON.parse(`{"type":"event","event":"chat.event","__proto__":{"payload":{"chatId":${JSON.stringify(ownChat)}}},"n":${1_000_000 + i}}`);
      what = 'an event whose payload is only inherited';
      break;
    default:
      frame = {
        type: 'event',
        event: rng.pick(['chat.visuals', 'visual.page', 'chat.subagentChanged']),
        payload: { chatId: ownChat, visuals: 'x', visualId: 7, html: 3, toolUseId: [] },
        n,
      };
      what = 'an unreadable chat-scoped side event';
  }
  return { cls: 'forged-link', data: JSON.stringify(frame), mayServe: false, what };
}
