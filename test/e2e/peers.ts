// End-to-end peers: a real host process (`bin/tether.js host start`) and clients on the SDK socket.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { RelaySocket, relayPaths } from '../../src/client/index.ts';
import { readHostIdentity, type HostIdentity } from '../../src/host/identity.ts';
import { mintToken } from '../../src/relay/auth/tokens.ts';

const root = path.resolve(import.meta.dirname, '../..');

export const relayUrl = () => inject('relayUrl');

export function userToken(userId: string): Promise<string> {
  return mintToken(inject('tokenSecret'), { kind: 'user', userId });
}

/**
 * A real host process (`bin/tether.js host start`). The first start pairs it for real: `host pair`
 * shows its code, the owner approves it through the API, and the relay makes the host's id.
 */
export class HostProcess {
  /** The relay-made id, known once `start()` has paired the host. */
  hostId = '';
  readonly name: string;
  readonly ownerId: string;
  readonly dataDir: string;
  child: ChildProcess | null = null;
  output = '';

  constructor(name: string, ownerId: string) {
    this.name = name;
    this.ownerId = ownerId;
    this.dataDir = mkdtempSync(path.join(tmpdir(), `tether-${name}-`));
  }

  async start(): Promise<this> {
    this.hostId = (readHostIdentity(this.dataDir) ?? await this.pair()).hostId;
    this.child = spawn(process.execPath, [
      path.join(root, 'bin', 'tether.js'), 'host', 'start', '--data', this.dataDir,
    ], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (b: Buffer) => { this.output = (this.output + b.toString()).slice(-20_000); };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    return this;
  }

  /** Runs `tether host pair`, approves the code it prints as the owner, and answers the identity it kept. */
  private async pair(): Promise<HostIdentity> {
    const child = spawn(process.execPath, [
      path.join(root, 'bin', 'tether.js'), 'host', 'pair', relayUrl(), '--data', this.dataDir, '--name', this.name,
    ], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const userCode = await new Promise<string>((resolve, reject) => {
      const read = (b: Buffer) => {
        output += b.toString();
        const code = /^\s+([2-9A-Z]{4}-[2-9A-Z]{4})\s*$/m.exec(output)?.[1];
        if (code) resolve(code);
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      void exited.then((code) => reject(new Error(`tether host pair exited (${code}) before showing a code:\n${output}`)));
    });
    const approved = await fetch(`${relayUrl()}/api/pair/approve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await userToken(this.ownerId)}` },
      body: JSON.stringify({ userCode }),
    });
    if (!approved.ok) throw new Error(`approving ${userCode} failed: ${approved.status} ${await approved.text()}`);
    const code = await exited;
    if (code !== 0) throw new Error(`tether host pair exited ${code}:\n${output}`);
    return readHostIdentity(this.dataDir)!;
  }

  /** Ends the process: SIGTERM lets it write everything; SIGKILL is a crash. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }
}

type Frame = Record<string, any>;

/** A client: an SDK socket plus every frame it received, and waits by predicate. */
export class Peer {
  readonly socket: RelaySocket;
  readonly frames: Frame[] = [];
  private waiters: { test: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];

  constructor(socket: RelaySocket) {
    this.socket = socket;
    socket.onFrame((raw) => {
      const frame = raw as Frame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => (w.test(frame) ? (w.resolve(frame), false) : true));
    });
  }

  static async lobby(hostId: string, userId: string): Promise<Peer> {
    const peer = new Peer(new RelaySocket(relayPaths.lobby(relayUrl(), hostId), await userToken(userId)));
    await peer.socket.opened;
    return peer;
  }

  static async chat(hostId: string, chatId: string, userId: string): Promise<Peer> {
    const peer = new Peer(new RelaySocket(relayPaths.chat(relayUrl(), hostId, chatId), await userToken(userId)));
    await peer.socket.opened;
    return peer;
  }

  waitFor(test: (f: Frame) => boolean, what: string, ms = 30_000): Promise<Frame> {
    const seen = this.frames.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      this.waiters.push({ test, resolve: (f) => { clearTimeout(timer); resolve(f); } });
    });
  }

  /** The items of chat events this peer saw, folded by id (the last version of each). */
  items(): Map<string, Frame> {
    const out = new Map<string, Frame>();
    for (const f of this.frames) {
      if (f.event !== 'chat.event') continue;
      const e = f.payload.event;
      if (e.type === 'item') out.set(e.item.id, e.item);
    }
    return out;
  }

  seqs(): number[] {
    return this.frames.filter((f) => f.event === 'chat.event' && f.payload.seq !== undefined).map((f) => f.payload.seq);
  }

  close(): void {
    this.socket.close();
  }
}
