// `npm start`'s own host: paired the way every host is (issue 15), so what a person tries first is the
// secure path. The host shows a pairing code; the person approves it in the web app, whose device key
// signs the approval (this host's key, the code); the host checks it and pins that person and device
// as its owner (trust.json), then runs requiring signatures, the default. Already paired with this
// relay and pinned: it starts at once. A code that expires is replaced by a new one; an approval
// without a device signature (a plain API call, a browser without Ed25519) pins nobody, so it is not
// taken: the host asks again rather than run believing the relay.
import path from 'node:path';
import { hostTokenSigner, readHostIdentity, type HostIdentity } from '../src/host/identity.ts';
import { startHost, type RunningHost } from '../src/host/index.ts';
import { PairingFailed, pairHost, relayBase, type PairOptions } from '../src/host/pairing.ts';
import type { HostLog } from '../src/host/chats/core.ts';
import type { PinnedOwner } from '../src/host/trust/book.ts';
import { readPinnedOwner } from '../src/host/trust/pinned.ts';

export interface LocalHostOptions {
  relayUrl: string;
  dataDir: string;
  name: string;
  /** How to approve each code shown (a new one after the last expired). */
  onCode: NonNullable<PairOptions['onCode']>;
  /** Lines for the person (who approved, why a code is shown again). */
  say: (line: string) => void;
  log: HostLog;
  signal?: AbortSignal;
}

export interface LocalHost {
  host: RunningHost;
  identity: HostIdentity;
  owner: PinnedOwner;
  /** Whether this start paired it (else it was paired and pinned before). */
  paired: boolean;
}

/** This machine's identity and pinned owner for `relayUrl`, pairing it first when it has none. */
export async function pairedLocalHost(options: Omit<LocalHostOptions, 'log'>): Promise<Omit<LocalHost, 'host'>> {
  const relayUrl = relayBase(options.relayUrl);
  const kept = readHostIdentity(options.dataDir);
  const pinned = readPinnedOwner(options.dataDir);
  if (kept && kept.relayUrl === relayUrl && pinned?.hostId === kept.hostId) return { identity: kept, owner: pinned.owner, paired: false };
  if (kept)
    options.say(
      `This machine's host (${kept.hostId}) has no owner pinned for ${relayUrl} (it was paired by the setup secret, or with another relay): pairing it again, signed.`,
    );
  for (;;) {
    let identity: HostIdentity;
    try {
      identity = await pairHost({
        relayUrl,
        name: options.name,
        dataDir: options.dataDir,
        say: options.say,
        onCode: options.onCode,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (error instanceof PairingFailed && error.reason === 'expired') {
        options.say('The pairing code expired before it was approved: here is a new one.');
        continue;
      }
      throw error;
    }
    const owner = readPinnedOwner(options.dataDir);
    if (owner?.hostId === identity.hostId) return { identity, owner: owner.owner, paired: true };
    options.say(
      'That approval carried no device signature, so this machine pins no owner and will not run believing the relay. Approve the new code in the web app (a browser with Ed25519).',
    );
  }
}

/** Pairs when needed, then starts the host requiring signatures (unless its own config.json says otherwise). */
export async function startLocalHost(options: LocalHostOptions): Promise<LocalHost> {
  const { identity, owner, paired } = await pairedLocalHost(options);
  const host = await startHost({
    dataDir: options.dataDir,
    relayUrl: identity.relayUrl,
    hostId: identity.hostId,
    token: hostTokenSigner(identity),
    log: options.log,
  });
  return { host, identity, owner, paired };
}

/** Where `npm run try` learns which relay and host `npm start` runs (and, while it pairs, where to approve it). */
export function localFile(root: string): string {
  return path.join(root, '.tether', 'local.json');
}
