// A loopback TCP proxy between a process and the relay, for faults a test makes on purpose: `cut()`
// resets every connection through it at once, as a network that drops would (a TCP reset both ways,
// no WebSocket close frame). New connections go on being accepted, so whatever reconnects by itself
// comes back through it. `stall()` is a black hole: nothing moves either way, on the open connections
// and on new ones, until `flow()`, when what was held moves on (TCP would retransmit it).
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

type Count = 'accepted' | 'asked' | 'answered';

export class LinkProxy {
  /** Connections accepted so far (a reconnect after a cut shows as one more). */
  accepted = 0;
  /** Connections whose first bytes (e.g. a WebSocket upgrade request) were handed to the target. */
  asked = 0;
  /** Connections the target has answered on (sent its first bytes, e.g. a WebSocket's 101). */
  answered = 0;
  /** Bytes passed on the TCP streams toward the target and back from it, over every connection (the benchmark's wire figures). */
  bytesToTarget = 0;
  bytesFromTarget = 0;
  private waiters: Array<{ count: Count; after: number; resolve(): void }> = [];
  private readonly server: Server;
  private readonly open = new Set<Socket>();
  private port = 0;
  /** While set, new connections are reset at once: the network is down (see offline()). */
  private refusing = false;
  /** While set, no byte moves on any connection (see stall()). */
  private stalled = false;

  private constructor(target: URL) {
    this.server = createServer((inbound) => {
      if (this.refusing) {
        inbound.resetAndDestroy();
        return;
      }
      const outbound = connect(Number(target.port), target.hostname);
      for (const [socket, other] of [
        [inbound, outbound],
        [outbound, inbound],
      ] as const) {
        this.open.add(socket);
        socket.setNoDelay(true);
        socket.on('error', () => other.destroy());
        socket.on('close', () => {
          this.open.delete(socket);
          other.destroy();
        });
      }
      // Toward the target by hand, to know when the first bytes have left for it.
      let first = true;
      inbound.on('data', (chunk: Buffer) => {
        const written = first ? () => this.count('asked') : undefined;
        first = false;
        this.bytesToTarget += chunk.length;
        if (!outbound.write(chunk, written)) inbound.pause();
      });
      outbound.on('data', (chunk: Buffer) => {
        this.bytesFromTarget += chunk.length;
      });
      outbound.on('drain', () => {
        if (!this.stalled) inbound.resume();
      });
      outbound.once('data', () => this.count('answered'));
      outbound.pipe(inbound);
      if (this.stalled) {
        inbound.pause();
        outbound.pause();
      }
      this.count('accepted');
    });
  }

  /** Listens on 127.0.0.1 (a free port) and forwards every connection to `target`'s host and port. */
  static async start(target: string): Promise<LinkProxy> {
    const url = new URL(target);
    if (!url.port) throw new Error(`the proxy needs a target with a port: ${target}`);
    const proxy = new LinkProxy(url);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', resolve);
    });
    proxy.port = (proxy.server.address() as AddressInfo).port;
    return proxy;
  }

  /** The proxy as a base URL (what a host is given as `--relay`). */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Connections open right now (both sides of each count once). */
  get connections(): number {
    return this.open.size / 2;
  }

  /**
   * Resolves the moment `count` goes past `after`: a connection accepted (the target has seen no byte
   * of it), asked (its first bytes have left for the target, which has not answered yet), or answered
   * (the target's first bytes, e.g. a 101, are passing through).
   */
  past(count: Count, after: number): Promise<void> {
    if (this[count] > after) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, after, resolve }));
  }

  private count(what: Count): void {
    this[what] += 1;
    this.waiters = this.waiters.filter((w) => (w.count === what && this[what] > w.after ? (w.resolve(), false) : true));
  }

  /** Resets every open connection on both sides at once; answers how many there were. */
  cut(): number {
    const count = this.connections;
    for (const socket of this.open) socket.resetAndDestroy();
    this.open.clear();
    return count;
  }

  /** The network goes down: every open connection is reset and new ones are refused until online(). */
  offline(): number {
    this.refusing = true;
    return this.cut();
  }

  online(): void {
    this.refusing = false;
  }

  /** A black hole: every connection, open or new, stops moving bytes both ways (nothing is reset). */
  stall(): void {
    this.stalled = true;
    for (const socket of this.open) socket.pause();
  }

  /** The black hole ends: what was held moves on. */
  flow(): void {
    this.stalled = false;
    for (const socket of this.open) socket.resume();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
