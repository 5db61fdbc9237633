// End-to-end peers: a real host process (`bin/tether.js host start`) and clients on the SDK socket.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { RelaySocket, relayPaths, type SessionTokens } from '../../src/client/index.ts';
import { readHostIdentity, type HostIdentity } from '../../src/host/identity.ts';

const root = path.resolve(import.meta.dirname, '../..');

export const relayUrl = () => inject('relayUrl');

/** The label of the relay's owner (claimed by the global setup); any other label is an invited person. */
export const RELAY_OWNER = 'relay-owner';
const PASSWORD = 'e2e-person-password-0123';

const tokens = new Map<string, Promise<{ accessToken: string; expiresAt: number }>>();
let peopleTeam: Promise<string> | null = null;

async function call(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${relayUrl()}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** `label`'s call to the relay's API with their access token, as an app makes it: the answer's body; throws on a refusal. */
export async function personCall(label: string, method: string, route: string, body?: unknown): Promise<any> {
  const res = await call(method, route, body, await userToken(label));
  if (res.status >= 300) throw new Error(`${method} ${route} as ${label}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * An access token of a real account, through the HTTP API as an app gets one. `label` names a person:
 * RELAY_OWNER signs in as the relay's owner; anyone else signs in as `<label>@e2e.test`, joining the
 * relay first (when new) by an invitation the owner makes and they accept. Kept until near expiry.
 */
export async function userToken(label: string): Promise<string> {
  const pending = tokens.get(label);
  if (pending) {
    const held = await pending.catch(() => null);
    if (held && held.expiresAt - Date.now() > 60_000) return held.accessToken;
    // Someone else started a new sign-in meanwhile: share it (a second invitation of one email fails).
    if (tokens.get(label) !== pending) return userToken(label);
  }
  const next = signIn(label);
  tokens.set(label, next);
  next.catch(() => tokens.delete(label));
  return (await next).accessToken;
}

/**
 * The user id of `label`'s account. Grants name e2e people by id: their accounts were made by
 * accepting an invitation, so their addresses are unverified and a grant by email does not reach them.
 */
export async function personId(label: string): Promise<string> {
  const me = await call('GET', '/api/me', undefined, await userToken(label));
  if (me.status !== 200) throw new Error(`who ${label} is: ${me.status} ${JSON.stringify(me.body)}`);
  return me.body.id;
}

/** The email and password of `label`'s account (it exists once `userToken(label)` resolved). */
export function personCredentials(label: string): { email: string; password: string } {
  return label === RELAY_OWNER ? { email: inject('ownerEmail'), password: inject('ownerPassword') } : { email: `${label}@e2e.test`, password: PASSWORD };
}

/**
 * A new session of `label`'s account (a device of its own), signed in through the API as an app signs
 * in; `userToken` makes the account first. The e2e tests' one password sign-in (the relay tests have
 * theirs in test/relay/people.ts: they run inside workerd, these in Node against `wrangler dev`).
 */
export async function personSession(label: string): Promise<SessionTokens> {
  await userToken(label);
  const signedIn = await passwordSignIn(label);
  if (signedIn.status !== 200) throw new Error(`signing in ${label} failed: ${signedIn.status} ${JSON.stringify(signedIn.body)}`);
  return signedIn.body;
}

/** `POST /api/auth/signin` with `label`'s email and password: the session's tokens (200), or the refusal. */
function passwordSignIn(label: string): Promise<{ status: number; body: any }> {
  return call('POST', '/api/auth/signin', personCredentials(label));
}

async function signIn(label: string): Promise<{ accessToken: string; expiresAt: number }> {
  const { email, password } = personCredentials(label);
  const signedIn = await passwordSignIn(label);
  if (signedIn.status === 200) return signedIn.body;
  if (label === RELAY_OWNER || signedIn.status !== 401) throw new Error(`sign-in of ${label} failed: ${signedIn.status} ${JSON.stringify(signedIn.body)}`);
  const owner = await userToken(RELAY_OWNER);
  const invitation = await call('POST', `/api/teams/${await (peopleTeam ??= newTeam(owner))}/invitations`, { role: 'member', email }, owner);
  if (invitation.status !== 201) throw new Error(`inviting ${label} failed: ${invitation.status} ${JSON.stringify(invitation.body)}`);
  const joined = await call('POST', `/api/invitations/${invitation.body.token}/accept`, { email, password, name: label });
  if (joined.status !== 201) throw new Error(`${label} could not accept the invitation: ${joined.status} ${JSON.stringify(joined.body)}`);
  return joined.body;
}

/** The team the owner invites e2e people into (a membership grants nothing by itself). */
async function newTeam(ownerToken: string): Promise<string> {
  const team = await call('POST', '/api/teams', { name: `e2e people ${crypto.randomUUID().slice(0, 8)}` }, ownerToken);
  if (team.status >= 300) throw new Error(`making the e2e team failed: ${team.status} ${JSON.stringify(team.body)}`);
  return team.body.id;
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
  /** The relay URL `host start` connects to when not the one it paired with (e.g. a LinkProxy in between). */
  linkVia: string | null = null;
  /** The relay URL `host pair` pairs through when not the relay itself (e.g. an adversary in between). */
  pairVia: string | null = null;
  /** Approves the code `host pair` shows (e.g. a person in a browser); the owner's API call when null. */
  approveWith: ((userCode: string) => Promise<void>) | null = null;
  /** What `tether host pair` printed, once it has paired (who approved, from which device). */
  pairOutput = '';
  /** The `tether` command (argv before `host …`): this repository's by default, or an installed package's. */
  tether: string[] = [process.execPath, path.join(root, 'bin', 'tether.js')];
  /** The environment its processes get (default: the test's). */
  env: NodeJS.ProcessEnv = process.env;

  constructor(name: string, ownerId: string) {
    this.name = name;
    this.ownerId = ownerId;
    this.dataDir = mkdtempSync(path.join(tmpdir(), `tether-${name}-`));
  }

  /**
   * Runs `tether host <args> --data <its folder>` to its end: its stdout. Never a *Sync call: a command
   * that blocks this process's event loop past the relay's 15 s keep-alive leaves the next fetch on a
   * socket the relay already closed ("other side closed"; a POST is not retried), which is how a slow
   * `hooks install` failed terminal-codex's setup in a CI run.
   */
  async cli(...args: string[]): Promise<string> {
    const { stdout } = await promisify(execFile)(this.tether[0]!, [...this.tether.slice(1), 'host', ...args, '--data', this.dataDir], {
      cwd: root,
      env: this.env,
    });
    return stdout;
  }

  async start(): Promise<this> {
    this.hostId = (readHostIdentity(this.dataDir) ?? (await this.pair())).hostId;
    optOutOfSignaturesUnlessSaid(this.dataDir);
    this.child = spawn(
      this.tether[0]!,
      [...this.tether.slice(1), 'host', 'start', '--data', this.dataDir, ...(this.linkVia ? ['--relay', this.linkVia] : [])],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: this.env },
    );
    const keep = (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-20_000);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    return this;
  }

  /** Runs `tether host pair`, approves the code it prints as the owner, and answers the identity it kept. */
  async pair(): Promise<HostIdentity> {
    // A test whose config names no policy keeps the host's former wide one (home, full-access), which
    // it was written for; pair writes it into the config and prints it.
    const wide = hasPolicy(this.dataDir) ? [] : ['--folder', homedir(), '--folder', tmpdir(), '--max-mode', 'full-access'];
    const child = spawn(
      this.tether[0]!,
      [...this.tether.slice(1), 'host', 'pair', this.pairVia ?? relayUrl(), '--data', this.dataDir, '--name', this.name, ...wide],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: this.env },
    );
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
    if (this.approveWith) await this.approveWith(userCode);
    else await approveAsOwner(userCode, this.ownerId);
    const code = await exited;
    this.pairOutput = output;
    if (code !== 0) throw new Error(`tether host pair exited ${code}:\n${output}`);
    if (!/Chats on this machine may work only in: .+\nThe widest runtime mode a chat may use: /.test(output))
      throw new Error(`tether host pair did not print its policy:\n${output}`);
    return readHostIdentity(this.dataDir)!;
  }

  /** Ends the process: SIGTERM lets it write everything; SIGKILL is a crash. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }
}

/**
 * A host requires device signatures by default, but most e2e hosts are here for other features and
 * their clients (SDK sockets without a device key, the web app, which does not sign requests yet)
 * sign nothing; so a config that does not name `signatures` gets `require: false` written into it
 * before each start, which the host warns about in its log. The suites about signing
 * (signed-requests, tampering-relay) name `signatures` in their config and get what they name.
 */
function optOutOfSignaturesUnlessSaid(dataDir: string): void {
  const file = path.join(dataDir, 'config.json');
  const config = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  if (config.signatures !== undefined) return;
  writeFileSync(file, JSON.stringify({ ...config, signatures: { require: false } }, null, 2));
}

function hasPolicy(dataDir: string): boolean {
  try {
    return JSON.parse(readFileSync(path.join(dataDir, 'config.json'), 'utf8')).policy !== undefined;
  } catch {
    return false;
  }
}

async function approveAsOwner(userCode: string, ownerId: string): Promise<void> {
  const approved = await fetch(`${relayUrl()}/api/pair/approve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await userToken(ownerId)}` },
    body: JSON.stringify({ userCode }),
  });
  if (!approved.ok) throw new Error(`approving ${userCode} failed: ${approved.status} ${await approved.text()}`);
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
      this.waiters.push({
        test,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
      });
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
