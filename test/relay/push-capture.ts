// Pushes caught inside workerd, playing the browser's side: subscriptions with a fresh ECDH P-256 key
// pair and auth secret each (as a browser makes them), and a stand-in for the push service in front of
// `fetch` that takes the relay's pushes to those endpoints and decrypts each (RFC 8291 / RFC 8188
// aes128gcm) with WebCrypto, written here from the RFCs, independently of the relay's encryption.
// The relay and its Durable Objects run in the test's isolate, so replacing `fetch` reaches theirs.
// (test/e2e/push.e2e.test.ts does the same against the real relay with a push service on loopback.)
import { env } from 'cloudflare:test';
import { afterAll, beforeAll, vi } from 'vitest';
import { generateSigningKey } from '../../src/relay/auth/keys.ts';
import type { PushPayload } from '../../src/contracts/index.ts';

const ORIGIN = 'https://fcm.googleapis.com';

export interface CaughtPush {
  /** The name the test gave the subscription. */
  name: string;
  payload: PushPayload;
  topic: string | null;
  urgency: string | null;
}

type Bytes = Uint8Array<ArrayBuffer>;

interface Held {
  name: string;
  keys: CryptoKeyPair;
  publicKey: Bytes;
  auth: Bytes;
}

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const utf8 = (text: string): Bytes => new TextEncoder().encode(text);
const concat = (...parts: Bytes[]): Bytes => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

async function hkdf(salt: Bytes, ikm: Bytes, info: Bytes, bytes: number): Promise<Bytes> {
  const key = await crypto.subtle.importKey('raw', ikm, 'HKDF', false, ['deriveBits']);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info }, key, bytes * 8));
}

/** RFC 8291 §3.4 and RFC 8188 §2: one aes128gcm record, to the subscription's private key. */
async function decrypt(held: Held, body: Bytes): Promise<string> {
  const salt = body.subarray(0, 16);
  const idLength = body[20]!;
  const senderPublic = body.subarray(21, 21 + idLength);
  const record = body.subarray(21 + idLength);
  const sender = await crypto.subtle.importKey('raw', senderPublic, { name: 'ECDH', namedCurve: 'P-256' }, false, []);
  const shared = new Uint8Array(await crypto.subtle.deriveBits({ name: 'ECDH', public: sender }, held.keys.privateKey, 256));
  const ikm = await hkdf(held.auth, shared, concat(utf8('WebPush: info\0'), held.publicKey, senderPublic), 32);
  const cek = await hkdf(salt, ikm, utf8('Content-Encoding: aes128gcm\0'), 16);
  const nonce = await hkdf(salt, ikm, utf8('Content-Encoding: nonce\0'), 12);
  const key = await crypto.subtle.importKey('raw', cek, 'AES-GCM', false, ['decrypt']);
  const plain = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonce }, key, record));
  // The last record ends in the delimiter 2, then padding zeros.
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end -= 1;
  if (plain[end] !== 2) throw new Error('not a last record');
  return new TextDecoder().decode(plain.subarray(0, end));
}

export class PushCatcher {
  readonly caught: CaughtPush[] = [];
  private readonly held = new Map<string, Held>();
  private original: typeof fetch | null = null;

  /** Puts the stand-in in front of `fetch`; other requests pass on. */
  start(): this {
    const original = globalThis.fetch;
    this.original = original;
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = input instanceof Request ? input.url : String(input);
      const held = url.startsWith(`${ORIGIN}/`) ? this.held.get(url) : undefined;
      if (!held) return original(input, init);
      const body = new Uint8Array(await new Response(init?.body).arrayBuffer());
      const headers = new Headers(init?.headers);
      const payload = JSON.parse(await decrypt(held, body)) as PushPayload;
      this.caught.push({ name: held.name, payload, topic: headers.get('Topic'), urgency: headers.get('Urgency') });
      return new Response(null, { status: 201 });
    });
    return this;
  }

  stop(): void {
    if (this.original) vi.mocked(globalThis.fetch).mockRestore();
  }

  /** A new subscription, as `PushSubscription.toJSON()` gives it in a browser. */
  async subscribe(name: string): Promise<{ endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } }> {
    const keys = (await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])) as CryptoKeyPair;
    const publicKey = new Uint8Array((await crypto.subtle.exportKey('raw', keys.publicKey)) as ArrayBuffer);
    const auth = crypto.getRandomValues(new Uint8Array(16));
    const endpoint = `${ORIGIN}/fcm/send/${name}-${crypto.randomUUID()}`;
    this.held.set(endpoint, { name, keys, publicKey, auth });
    return { endpoint, expirationTime: null, keys: { p256dh: b64url(publicKey), auth: b64url(auth) } };
  }

  of(name: string): CaughtPush[] {
    return this.caught.filter((push) => push.name === name);
  }
}

/**
 * A catcher for this test file, with push keys on its relay while the file runs: the Lobby and the
 * rooms send pushes only on a relay with them, the shared test bindings have none, and the objects
 * of the file's isolate read the same env object, so setting them there reaches this file's relay.
 */
export async function catchPushesForThisFile(label: string): Promise<PushCatcher> {
  const vapid = JSON.stringify([await generateSigningKey(label)]);
  const catcher = new PushCatcher();
  const bindings = env as unknown as { TETHER_VAPID_KEYS?: string };
  beforeAll(() => {
    bindings.TETHER_VAPID_KEYS = vapid;
    catcher.start();
  });
  afterAll(() => {
    catcher.stop();
    delete bindings.TETHER_VAPID_KEYS;
  });
  return catcher;
}
