// A push service on loopback for the tests, playing the browser's side too: it hands out subscriptions
// (a fresh ECDH P-256 key pair and auth secret each, as a browser makes them), takes the relay's pushes
// on them, checks each push the way a push service and a browser would, independently of the relay's
// code, and keeps what it decrypted:
// - the VAPID `Authorization: vapid t=<JWT>, k=<key>` (RFC 8292): an ES256 JWT verified against the
//   key in `k` (jose), audience the endpoint's origin, at most 24 hours to live, a contact subject;
//   `k` must be the relay's published key when the test set one;
// - the body: `Content-Encoding: aes128gcm`, decrypted with the `http_ece` package (RFC 8291/8188);
// - TTL, Urgency and Topic headers kept for the test to read.
// A push that fails a check is answered 400 and kept in `rejected`. Each subscription answers 201, or
// the status a test sets (404/410 to play a subscription that is gone).
import { createECDH, randomBytes, type ECDH } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { base64url, decodeJwt, importJWK, jwtVerify } from 'jose';
import type { PushPayload } from '../../src/contracts/index.ts';

interface Ece {
  decrypt(buffer: Buffer, params: { version: 'aes128gcm'; privateKey: ECDH; authSecret: string }): Buffer;
}
const ece = createRequire(import.meta.url)('http_ece') as Ece;

export interface BrowserSubscription {
  endpoint: string;
  expirationTime: null;
  keys: { p256dh: string; auth: string };
}

export interface ReceivedPush {
  /** The name the test gave the subscription. */
  name: string;
  payload: PushPayload;
  ttl: number;
  urgency: string | null;
  topic: string | null;
  vapid: { aud: string; sub: string; exp: number; key: string };
  /** The encrypted body's length: RFC 8291 pads, so this says nothing of the payload's size. */
  bodyBytes: number;
}

interface Held {
  name: string;
  ecdh: ECDH;
  auth: string;
  status: number;
}

export class PushEndpoint {
  private server: Server | null = null;
  url = '';
  /** The relay's VAPID public key (from GET /api/push/key): every push must be signed by it. */
  vapidKey: string | null = null;
  readonly received: ReceivedPush[] = [];
  readonly rejected: { name: string; reason: string }[] = [];
  private readonly subscriptions = new Map<string, Held>();
  private waiters: { test: (push: ReceivedPush) => boolean; resolve: (push: ReceivedPush) => void }[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.take(req).then(
        (status) => res.writeHead(status).end(),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A new subscription, as `PushSubscription.toJSON()` gives it in a browser. */
  subscribe(name: string, status = 201): BrowserSubscription {
    const id = randomBytes(12).toString('base64url');
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const auth = randomBytes(16).toString('base64url');
    this.subscriptions.set(id, { name, ecdh, auth, status });
    return { endpoint: `${this.url}/push/${id}`, expirationTime: null, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth } };
  }

  /** What the subscription of this endpoint answers from now on. */
  answer(endpoint: string, status: number): void {
    this.subscriptions.get(endpoint.split('/').pop()!)!.status = status;
  }

  of(name: string): ReceivedPush[] {
    return this.received.filter((push) => push.name === name);
  }

  waitFor(test: (push: ReceivedPush) => boolean, what: string, ms = 30_000): Promise<ReceivedPush> {
    const seen = this.received.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; rejected: ${JSON.stringify(this.rejected)}`)), ms);
      this.waiters.push({
        test,
        resolve: (push) => {
          clearTimeout(timer);
          resolve(push);
        },
      });
    });
  }

  private async take(req: IncomingMessage): Promise<number> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const held = req.method === 'POST' && req.url?.startsWith('/push/') ? this.subscriptions.get(req.url.slice('/push/'.length)) : undefined;
    if (!held) return 404;
    let push: ReceivedPush;
    try {
      push = await this.check(held, req, body);
    } catch (error) {
      this.rejected.push({ name: held.name, reason: error instanceof Error ? error.message : String(error) });
      return 400;
    }
    if (held.status < 300) {
      this.received.push(push);
      this.waiters = this.waiters.filter((w) => (w.test(push) ? (w.resolve(push), false) : true));
    }
    return held.status;
  }

  private async check(held: Held, req: IncomingMessage, body: Buffer): Promise<ReceivedPush> {
    const vapid = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(req.headers.authorization ?? '');
    if (!vapid) throw new Error(`no VAPID authorization: ${req.headers.authorization}`);
    const [, jwt, key] = vapid as unknown as [string, string, string];
    if (this.vapidKey !== null && key !== this.vapidKey) throw new Error('signed by a key other than the relay published');
    const point = base64url.decode(key);
    if (point.length !== 65 || point[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
    const publicKey = await importJWK(
      { kty: 'EC', crv: 'P-256', x: base64url.encode(point.subarray(1, 33)), y: base64url.encode(point.subarray(33)) },
      'ES256',
    );
    const { payload: claims } = await jwtVerify(jwt, publicKey, { audience: this.url, algorithms: ['ES256'], requiredClaims: ['exp', 'sub'] });
    if (claims.exp! * 1000 - Date.now() > 24 * 60 * 60 * 1000) throw new Error('VAPID JWT lives longer than 24 hours');
    if (!/^(mailto:|https:)/.test(String(claims.sub))) throw new Error(`VAPID subject is no contact: ${claims.sub}`);
    if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`content-encoding ${req.headers['content-encoding']}`);
    const ttl = Number(req.headers.ttl);
    if (!Number.isInteger(ttl) || ttl < 0) throw new Error('no TTL');
    const plain = ece.decrypt(body, { version: 'aes128gcm', privateKey: held.ecdh, authSecret: held.auth });
    return {
      name: held.name,
      payload: JSON.parse(plain.toString('utf8')) as PushPayload,
      ttl,
      urgency: (req.headers.urgency as string | undefined) ?? null,
      topic: (req.headers.topic as string | undefined) ?? null,
      vapid: { aud: String(decodeJwt(jwt).aud), sub: String(claims.sub), exp: claims.exp!, key },
      bodyBytes: body.length,
    };
  }
}
