// An adversary between a host and the real relay, for the tampering-relay e2e suite: whatever the
// relay sends the host passes through `onRelayFrame` first, which may rewrite it, drop it or pass it
// on, and `inject` sends the host frames the relay never sent. It is what a compromised relay (or
// anyone on its path with the TLS keys) can do, built OUTSIDE the Worker on purpose: no switch in the
// relay's code can turn it on in a deployment.
//
// It listens on loopback and speaks both of the relay's surfaces the host uses:
// - the link (a WebSocket upgrade): it opens its own socket to the relay with the host's
//   Authorization header (the host signs that token itself; the adversary only passes it on) and
//   relays messages both ways. The host's replies to injected frames are taken here and never reach
//   the relay, which would not know their ids.
// - HTTP (`tether host pair`): forwarded with fetch, `onHttp` may rewrite a JSON request body or a
//   JSON response body (a swapped host key at pair/start, a swapped approval at pair/poll).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { until } from './until.ts';

type Frame = Record<string, any>;

export interface HttpTamper {
  /** The JSON body the relay gets for `path` (default: the host's own). */
  request?(path: string, body: any): any;
  /** The JSON body the host gets back for `path` (default: the relay's own). */
  response?(path: string, body: any): any;
}

export class TamperingRelay {
  /** Every request frame the relay sent the host, as the relay sent it (before any rewrite). */
  readonly fromRelay: Frame[] = [];
  /** Every frame the host sent (replies and events), in order, injected ones' replies included. */
  readonly fromHost: Frame[] = [];
  /** Rewrites a relay → host request frame: answer the frame to send (changed or not), or null to drop it. */
  onRelayFrame: ((frame: Frame) => Frame | null) | null = null;
  /** Rewrites a host → relay frame (an event, a reply to a forwarded request): answer the frame to pass on. */
  onHostFrame: ((frame: Frame) => Frame) | null = null;
  /** Rewrites a relay → host link frame (`{link:'trust'}` and the like): answer the frame to send, or null to drop it. */
  onRelayLink: ((frame: Frame) => Frame | null) | null = null;
  onHttp: HttpTamper | null = null;
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly target: URL;
  private host: WebSocket | null = null;
  private hostWaiters: Array<() => void> = [];
  private readonly injected = new Set<string>();
  private replyWaiters = new Map<string, (frame: Frame) => void>();

  private constructor(target: string) {
    this.target = new URL(target);
    this.server = createServer((req, res) => void this.forwardHttp(req, res));
    this.server.on('upgrade', (req, socket, head) => {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.link(ws, req));
    });
  }

  static async start(target: string): Promise<TamperingRelay> {
    const relay = new TamperingRelay(target);
    await new Promise<void>((resolve, reject) => {
      relay.server.once('error', reject);
      relay.server.listen(0, '127.0.0.1', resolve);
    });
    return relay;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once a host's link is open through here. */
  linked(): Promise<void> {
    if (this.host?.readyState === WebSocket.OPEN) return Promise.resolve();
    return new Promise((resolve) => this.hostWaiters.push(resolve));
  }

  /** Sends the host a frame of the adversary's own making; answers the host's reply (kept from the relay). */
  inject(frame: Frame): Promise<Frame> {
    const host = this.host;
    if (!host || host.readyState !== WebSocket.OPEN) throw new Error('no host is linked through the adversary');
    this.injected.add(frame.id);
    // The reply to this frame, not one the host gave an earlier frame of the same id (a resend).
    const reply = this.replyTo(frame.id, this.fromHost.length);
    host.send(JSON.stringify(frame));
    return reply;
  }

  /** Sends the host a link frame of the adversary's own making (`{link:'trust'}` and the like); nothing answers those. */
  sendLink(frame: Frame): void {
    const host = this.host;
    if (!host || host.readyState !== WebSocket.OPEN) throw new Error('no host is linked through the adversary');
    host.send(JSON.stringify(frame));
  }

  /**
   * Cuts the host's link (as a relay restarting or a network fault would); resolves once the host has
   * linked through here again, when the relay has sent it every current statement anew (hello, all).
   */
  async relink(): Promise<void> {
    const host = this.host;
    this.host = null;
    host?.terminate();
    await this.linked();
  }

  /** The host's reply to request `id` (injected or forwarded), when it comes: the first at or after index `from` of `fromHost`. */
  replyTo(id: string, from = 0): Promise<Frame> {
    const seen = this.fromHost.slice(from).find((f) => f.id === id && 'ok' in f);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.replyWaiters.set(id, resolve));
  }

  /** The first relay → host request of `type` matching `test`, as the relay sent it. */
  nextFromRelay(test: (frame: Frame) => boolean, ms = 30_000): Promise<Frame> {
    return until(() => this.fromRelay.find(test), 'a relay → host request the test picks', ms);
  }

  private link(host: WebSocket, req: IncomingMessage): void {
    const upstream = new WebSocket(new URL(req.url ?? '/', this.target.href.replace(/^http/, 'ws')), {
      headers: req.headers.authorization ? { authorization: req.headers.authorization } : {},
      maxPayload: 17 * 1024 * 1024,
    });
    const early: RawData[] = [];
    host.on('message', (data) => {
      const text = data.toString();
      const kept = this.fromHostMessage(text);
      if (kept === null) return;
      if (upstream.readyState === WebSocket.OPEN) upstream.send(kept);
      else early.push(Buffer.from(kept));
    });
    upstream.on('open', () => {
      for (const data of early.splice(0)) upstream.send(data.toString());
      this.host = host;
      for (const resolve of this.hostWaiters.splice(0)) resolve();
    });
    upstream.on('message', (data) => {
      const text = data.toString();
      let frame: Frame | null = null;
      try {
        frame = JSON.parse(text);
      } catch {
        // ping / pong and anything else that is not JSON pass as they are.
      }
      if (frame && typeof frame === 'object' && !Array.isArray(frame) && 'link' in frame && this.onRelayLink) {
        const out = this.onRelayLink(structuredClone(frame));
        if (out) host.send(JSON.stringify(out));
        return;
      }
      if (!frame || typeof frame !== 'object' || Array.isArray(frame) || 'link' in frame || !this.onRelayFrame) {
        if (frame && typeof frame === 'object' && !('link' in frame)) this.fromRelay.push(frame);
        host.send(text);
        return;
      }
      this.fromRelay.push(structuredClone(frame));
      const out = this.onRelayFrame(frame);
      if (out) host.send(JSON.stringify(out));
    });
    const closeBoth = () => {
      if (this.host === host) this.host = null;
      host.terminate();
      upstream.terminate();
    };
    host.on('close', closeBoth);
    upstream.on('close', closeBoth);
    host.on('error', closeBoth);
    upstream.on('error', closeBoth);
  }

  /** Records a host message (one frame or an array of them) and answers what goes on to the relay, or null for nothing. */
  private fromHostMessage(text: string): string | null {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return text;
    }
    const frames = (Array.isArray(value) ? value : [value]) as Frame[];
    const onward: Frame[] = [];
    let changed = false;
    for (const frame of frames) {
      if (!frame || typeof frame !== 'object') {
        onward.push(frame);
        continue;
      }
      this.fromHost.push(frame);
      if (typeof frame.id === 'string' && 'ok' in frame) {
        this.replyWaiters.get(frame.id)?.(frame);
        this.replyWaiters.delete(frame.id);
        if (this.injected.has(frame.id)) {
          changed = true;
          continue;
        }
      }
      if (this.onHostFrame) {
        const before = JSON.stringify(frame);
        const after = this.onHostFrame(structuredClone(frame));
        if (JSON.stringify(after) !== before) changed = true;
        onward.push(after);
      } else {
        onward.push(frame);
      }
    }
    if (onward.length === 0) return null;
    if (!changed) return text;
    return JSON.stringify(Array.isArray(value) ? onward : onward[0]);
  }

  private async forwardHttp(req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = req.url ?? '/';
    let body: string | undefined = chunks.length ? Buffer.concat(chunks).toString() : undefined;
    if (body !== undefined && this.onHttp?.request) body = JSON.stringify(this.onHttp.request(path, JSON.parse(body)));
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'authorization']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const answer = await fetch(new URL(path, this.target), { method: req.method, headers, body });
    let text = await answer.text();
    if (this.onHttp?.response && (answer.headers.get('content-type') ?? '').includes('json')) {
      text = JSON.stringify(this.onHttp.response(path, JSON.parse(text)));
    }
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    res.end(text);
  }

  async close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.host?.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
