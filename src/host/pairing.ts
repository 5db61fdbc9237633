// Pairing this machine with a relay, like a TV app: the host makes its key, asks the relay for a user
// code (and a device code only it knows), shows the user code, and polls until a signed-in person
// approves it. The relay then has the host's public key under a host id it made; the host keeps the
// id and the key in identity.json (and, from a signed approval, its owner in trust.json). `npm start`'s
// local host pairs this way too (scripts/local-host.ts); the setup secret's pairing is for the bench.
import { rmSync } from 'node:fs';
import { z } from 'zod';
import { PairPollResultSchema, PairStartResultSchema, PairedHostSchema, type PairStartRequest, type PairStartResult } from '../contracts/hosts.ts';
import { newHostKey, readHostIdentity, writeHostIdentity, type HostIdentity } from './identity.ts';
import { HostAudit } from './trust/audit.ts';
import { approvedByLines, checkPairingApproval } from './trust/pairing-approval.ts';
import { trustFile, writePinnedOwner } from './trust/pinned.ts';

export interface PairOptions {
  relayUrl: string;
  name: string;
  dataDir: string;
  /** Where to tell the person what to do (the code, the URL). */
  say: (line: string) => void;
  /** Aborts the wait (Ctrl-C). */
  signal?: AbortSignal;
  /** Tells the person how to approve the code instead of the default lines (`npm start` links it from its setup link). */
  onCode?: (start: Pick<PairStartResult, 'userCode' | 'verificationUrl' | 'expiresInMs'>) => void;
}

/** Why pairing ended without a host: the message is for a person. */
export class PairingFailed extends Error {
  readonly reason: 'expired' | 'denied' | 'refused';
  constructor(reason: 'expired' | 'denied' | 'refused', message: string) {
    super(message);
    this.name = 'PairingFailed';
    this.reason = reason;
  }
}

const ErrorBodySchema = z.object({ code: z.string(), message: z.string(), retryAfterMs: z.number().optional() });

/**
 * The relay's base URL as the host keeps it: http(s), no trailing slash. Plain http only to this
 * machine (a local relay, tests): anywhere else the link token and every frame would cross the
 * network in clear, and anyone on the path could act as the relay.
 */
export function relayBase(relayUrl: string): string {
  const url = new URL(relayUrl);
  if (url.protocol === 'ws:') url.protocol = 'http:';
  else if (url.protocol === 'wss:') url.protocol = 'https:';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`Not a relay URL: ${relayUrl}`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new Error(`A relay on another machine needs https:// (${url.host} is not this machine); plain http:// is only for a relay on loopback`);
  }
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '');
}

/** Whether a URL's host is this machine: localhost names, 127.0.0.0/8 and ::1. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  return /^127(?:\.\d{1,3}){3}$/.test(host);
}

export async function pairHost(options: PairOptions): Promise<HostIdentity> {
  const relayUrl = relayBase(options.relayUrl);
  const key = await newHostKey();
  const start = PairStartResultSchema.parse(
    await post(relayUrl, '/api/pair/start', { name: options.name, publicKey: key.publicJwk } satisfies PairStartRequest, options.signal),
  );
  if (options.onCode) options.onCode(start);
  else {
    const minutes = Math.round(start.expiresInMs / 60_000);
    options.say(`To pair this machine with ${relayUrl}, approve this code while signed in:`);
    options.say('');
    options.say(`    ${start.userCode}`);
    options.say('');
    options.say(`  at   ${start.verificationUrl}`);
    options.say(`  or   POST ${relayUrl}/api/pair/approve {"userCode":"${start.userCode}"} with your access token`);
    options.say(`Waiting for approval (the code expires in ${minutes} minute${minutes === 1 ? '' : 's'})…`);
  }

  const deadline = Date.now() + start.expiresInMs;
  let wait = start.intervalMs;
  for (;;) {
    await pause(wait, options.signal);
    wait = start.intervalMs;
    let answer: unknown;
    try {
      answer = await post(relayUrl, '/api/pair/poll', { deviceCode: start.deviceCode }, options.signal);
    } catch (error) {
      if (error instanceof PairingFailed) throw error;
      if (options.signal?.aborted) throw error;
      if (error instanceof RateLimited) {
        wait = Math.max(wait, error.retryAfterMs);
        continue;
      }
      // The relay or the network hiccuped: the code is still good until it expires.
      if (Date.now() > deadline) throw new PairingFailed('expired', 'The pairing code expired before it was approved. Run `tether host pair` again.');
      options.say(`(could not reach the relay: ${error instanceof Error ? error.message : String(error)}; still waiting)`);
      continue;
    }
    const result = PairPollResultSchema.parse(answer);
    if (result.state === 'pending') continue;
    // The approving device's signature, checked here before anything is kept: this machine's trust root.
    let owner = null;
    if (result.approval) {
      try {
        owner = await checkPairingApproval(result.approval, { hostKey: key.publicJwk, userCode: start.userCode });
      } catch (error) {
        recordRefusedPairing(options.dataDir, start.userCode, result.approval);
        throw new PairingFailed('refused', `Not paired: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const identity: HostIdentity = { relayUrl, hostId: result.hostId, privateJwk: key.privateJwk, publicJwk: key.publicJwk };
    if (owner) {
      writePinnedOwner(options.dataDir, { hostId: result.hostId, owner, pinnedAt: Date.now() });
      for (const line of approvedByLines(owner)) options.say(line);
    } else {
      // An owner pinned by an earlier pairing of this folder is not this pairing's.
      rmSync(trustFile(options.dataDir), { force: true });
      options.say('Approved without a device signature: this machine pins no owner, so it cannot require signed requests.');
      options.say(
        'A host requires them by default (signatures.require): pair again approving from the web app or a signing SDK, or turn the requirement off in its config.',
      );
    }
    writeHostIdentity(options.dataDir, identity);
    return identity;
  }
}

/**
 * A pairing approval this machine refused goes into its own audit (`host.pair`, refused), with what
 * the approval claimed: who and which device a relay that swapped a key tried to make this machine's owner.
 */
function recordRefusedPairing(dataDir: string, userCode: string, approval: { statement: { device: string; userId: string; at: number } }): void {
  try {
    const audit = HostAudit.open(dataDir);
    try {
      audit.record({
        at: Date.now(),
        type: 'host.pair',
        id: userCode,
        chatId: null,
        outcome: 'refused',
        code: 'signature-invalid',
        userId: null,
        device: null,
        signedAt: null,
        payload: null,
        relaySays: null,
        claimed: { device: approval.statement.device, person: approval.statement.userId, at: approval.statement.at, id: userCode },
      });
    } finally {
      audit.close();
    }
  } catch {
    // The refusal itself stands; only its record is lost (the terminal says why it did not pair).
  }
}

/**
 * Registers a host under the relay's owner, authorized by the setup secret (the benchmarks' hosts): with
 * the key already in the data folder when there is one (the relay answers the host it knows for it, or
 * meets it anew if its state was wiped), else with a new key. Keeps identity.json up to date. No
 * person's device approves it, so it pins no owner and can run only with signatures off.
 */
export async function pairWithSetupSecret(options: { relayUrl: string; secret: string; name: string; dataDir: string }): Promise<HostIdentity> {
  const relayUrl = relayBase(options.relayUrl);
  const kept = readHostIdentity(options.dataDir);
  const key = kept ?? (await newHostKey());
  const paired = PairedHostSchema.parse(await post(relayUrl, '/api/pair/setup', { secret: options.secret, name: options.name, publicKey: key.publicJwk }));
  const identity: HostIdentity = { relayUrl, hostId: paired.hostId, privateJwk: key.privateJwk, publicJwk: key.publicJwk };
  if (kept?.hostId !== identity.hostId || kept.relayUrl !== relayUrl) writeHostIdentity(options.dataDir, identity);
  return identity;
}

class RateLimited extends Error {
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

async function post(relayUrl: string, route: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
  const res = await fetch(`${relayUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // A proxy's HTML error page, say: reported below with the status.
  }
  if (res.ok) return json;
  const error = ErrorBodySchema.safeParse(json);
  const message = error.success ? error.data.message : `${res.status} ${text.slice(0, 200)}`;
  if (res.status === 429) throw new RateLimited(message, error.success ? (error.data.retryAfterMs ?? 5_000) : 5_000);
  if (res.status === 410) throw new PairingFailed('expired', 'The pairing code expired before it was approved. Run `tether host pair` again.');
  if (res.status === 403 && route === '/api/pair/poll') throw new PairingFailed('denied', 'The pairing was denied on the relay.');
  if (res.status >= 400 && res.status < 500) throw new PairingFailed('refused', `The relay refused: ${message}`);
  throw new Error(`The relay answered ${message}`);
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
