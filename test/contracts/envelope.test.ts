import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ErrorSchema,
  EventSchema,
  parseRequest,
  parseServerFrame,
  ReplyErrorSchema,
  ReplyOkSchema,
  ReplySchema,
  RequestSchema,
  ServerFrameSchema,
} from '../../src/contracts/envelope.ts';

describe('request frames', () => {
  it('accept an id, a type and any payload', () => {
    expect(RequestSchema.parse({ id: 'request-1', type: 'chat.send', payload: { chatId: 'c' } })).toEqual({
      id: 'request-1',
      type: 'chat.send',
      payload: { chatId: 'c' },
    });
  });

  it('accept a missing payload, since the payload is unknown', () => {
    expect(RequestSchema.safeParse({ id: 'request-1', type: 'chat.list' }).success).toBe(true);
  });

  it('refuse an empty id or type', () => {
    expect(RequestSchema.safeParse({ id: '', type: 'chat.list', payload: {} }).success).toBe(false);
    expect(RequestSchema.safeParse({ id: 'request-1', type: '', payload: {} }).success).toBe(false);
  });

  it('strip unknown keys', () => {
    expect(RequestSchema.parse({ id: 'r', type: 't', payload: 1, extra: true })).not.toHaveProperty('extra');
  });
});

describe('reply frames', () => {
  it('tell success from failure by ok', () => {
    const ok = ReplySchema.parse({ id: 'r', ok: true, result: { queued: false } });
    const failed = ReplySchema.parse({ id: 'r', ok: false, error: { code: 'chat-busy', message: 'Busy' } });
    expect(ok.ok).toBe(true);
    expect(failed.ok).toBe(false);
  });

  it('allow a null id only on a failure', () => {
    expect(ReplyErrorSchema.safeParse({ id: null, ok: false, error: { code: 'bad-request', message: '' } }).success).toBe(true);
    expect(ReplyOkSchema.safeParse({ id: null, ok: true, result: {} }).success).toBe(false);
  });

  it('require the failure id key even when it is null', () => {
    expect(ReplyErrorSchema.safeParse({ ok: false, error: { code: 'internal', message: 'Request failed' } }).success).toBe(false);
  });

  it('refuse an error without a code', () => {
    expect(ErrorSchema.safeParse({ code: '', message: 'x' }).success).toBe(false);
    expect(ErrorSchema.safeParse({ message: 'x' }).success).toBe(false);
  });
});

describe('event frames', () => {
  it('need the literal type "event" and a name', () => {
    expect(EventSchema.safeParse({ type: 'event', event: 'chat.status', payload: {} }).success).toBe(true);
    expect(EventSchema.safeParse({ type: 'events', event: 'chat.status', payload: {} }).success).toBe(false);
    expect(EventSchema.safeParse({ type: 'event', event: '', payload: {} }).success).toBe(false);
  });
});

describe('parseServerFrame', () => {
  it('reads replies and events apart', () => {
    const reply = parseServerFrame({ id: 'r', ok: true, result: {} });
    const event = parseServerFrame({ type: 'event', event: 'usage.changed', payload: { scannedAt: 1 } });
    expect(reply.ok && 'ok' in reply.value && !('type' in reply.value)).toBe(true);
    expect(event.ok && 'type' in event.value && event.value.type === 'event').toBe(true);
  });

  it('answers the prettified zod message for a bad frame', () => {
    const parsed = parseServerFrame({ id: 'r', ok: 'yes' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(/✖/);
  });

  it('does not check payloads: an unknown event name still parses', () => {
    expect(parseServerFrame({ type: 'event', event: 'made.up', payload: 42 }).ok).toBe(true);
  });

  it('never throws, whatever arrives', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true, withTypedArray: true }), (frame) => {
        const parsed = parseServerFrame(frame);
        expect(typeof parsed.ok).toBe('boolean');
        if (parsed.ok) expect(ServerFrameSchema.safeParse(parsed.value).success).toBe(true);
      }),
    );
  });

  it('never throws on a frame whose getters throw', () => {
    const hostile = Object.defineProperty({ type: 'event', payload: 1 }, 'event', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(parseServerFrame(hostile).ok).toBe(false);
    expect(parseRequest(hostile).ok).toBe(false);
  });
});

describe('parseRequest', () => {
  it('accepts an unknown request name; the host refuses it later', () => {
    expect(parseRequest({ id: 'r', type: 'chat.teleport', payload: {} })).toEqual({
      ok: true,
      value: { id: 'r', type: 'chat.teleport', payload: {} },
    });
  });

  it('refuses a reply sent as a request', () => {
    expect(parseRequest({ id: 'r', ok: true, result: {} }).ok).toBe(false);
  });

  it('never throws, whatever arrives', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withNullPrototype: true }), (frame) => {
        const parsed = parseRequest(frame);
        if (!parsed.ok) expect(parsed.message.length).toBeGreaterThan(0);
      }),
    );
  });

  it('accepts every well-formed request', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), fc.jsonValue(), (id, type, payload) => {
        const parsed = parseRequest({ id, type, payload });
        expect(parsed.ok).toBe(true);
      }),
    );
  });
});
