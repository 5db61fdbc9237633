// Opens the request gate a running host puts in front of the relay: its audit always, and the
// verifier when the host config requires signatures (then the pinned owner must exist, or the host
// refuses to start rather than run unchecked while believing it checks).
import type { HostCore, HostLog } from '../chats/core.ts';
import { signatureSettings, type HostConfig } from '../config.ts';
import { HostAudit, readAudit } from './audit.ts';
import { TrustBook } from './book.ts';
import { coreView } from './core-view.ts';
import { RequestGate } from './gate.ts';
import { readPinnedOwner } from './pinned.ts';
import { RequestVerifier, SeenRequests } from './verify.ts';
import type { RequestType } from '../../contracts/index.ts';

export async function openGate(
  core: HostCore, dataDir: string, config: HostConfig, hostId: string, log: HostLog,
): Promise<{ gate: RequestGate; close: () => void }> {
  let verifier: RequestVerifier | null = null;
  const settings = signatureSettings(config);
  if (settings.require) {
    const pinned = readPinnedOwner(dataDir);
    if (!pinned) {
      throw new Error('signatures.require is on (the default), but this host has no pinned owner (trust.json): pair it again, approving from a device that signs '
        + '(the web app, or the SDK with a device key); or set "signatures": {"require": false} in its config, which lets whoever controls the relay act on this machine in anyone\'s name');
    }
    if (pinned.hostId !== hostId) throw new Error(`trust.json pins an owner for host ${pinned.hostId}, not this host (${hostId})`);
    const book = await TrustBook.open(hostId, pinned.owner);
    const seen = new SeenRequests();
    // A restart must not reopen the replay window: what the audit says ran within it is remembered.
    seen.seed(readAudit(dataDir).entries, Date.now());
    verifier = new RequestVerifier({ book, view: coreView(core), seen });
    log.info(`signatures required: owner ${pinned.owner.name} (${pinned.owner.userId}), device ${pinned.owner.device.id.slice(0, 16)}`);
    if (settings.allowUnsigned.length > 0) {
      log.warn(`signatures.allowUnsigned lets ${settings.allowUnsigned.join(', ')} through unsigned: for these, whoever controls the relay can ask in anyone's name`);
    }
  } else {
    log.warn('signatures.require is off: this host believes the relay about who asks, so whoever controls the relay can act on this machine in anyone\'s name');
  }
  const audit = HostAudit.open(dataDir);
  const unsigned = new Set<RequestType>(settings.allowUnsigned);
  return { gate: new RequestGate({ audit, verifier, unsigned, log }), close: () => audit.close() };
}
