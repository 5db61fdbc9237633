// Opens the request gate a running host puts in front of the relay: its audit always; the trust book
// whenever an owner is pinned (trust.json), rebuilt from the statements it accepted before
// (trust-statements.jsonl) and fed by the relay's `{link:'trust'}` frames through the intake; and the
// verifier when the host config requires signatures (then the pinned owner must exist, or the host
// refuses to start rather than run unchecked while believing it checks). Statements are taken even
// while signatures are not required, so turning the switch on later starts from what the owner signed.
import type { HostCore, HostLog, ReplyFrame } from '../chats/core.ts';
import { signatureSettings, type HostConfig } from '../config.ts';
import { HostAudit, readAudit } from './audit.ts';
import { TrustBook } from './book.ts';
import { coreView } from './core-view.ts';
import { RequestGate } from './gate.ts';
import { TrustIntake } from './intake.ts';
import { readPinnedOwner } from './pinned.ts';
import { QueuedSenders } from './queued-senders.ts';
import { RequestVerifier, SeenRequests } from './verify.ts';
import type { RequestType } from '../../contracts/index.ts';

export interface OpenedGate {
  gate: RequestGate;
  /** Where the link's trust frames go; null when no owner is pinned (nothing to check them against). */
  intake: TrustIntake | null;
  close: () => void;
}

export async function openGate(
  core: HostCore,
  dataDir: string,
  config: HostConfig,
  hostId: string,
  log: HostLog,
  /** Serves the host's own follow-up requests (taking back a revoked person's queued sends); without it there are none. */
  serveOwn?: (frame: { id: string; type: string; payload: unknown }) => Promise<ReplyFrame>,
): Promise<OpenedGate> {
  const settings = signatureSettings(config);
  const pinned = readPinnedOwner(dataDir);
  if (settings.require && !pinned) {
    throw new Error(
      'signatures.require is on (the default), but this host has no pinned owner (trust.json): pair it again, approving from a device that signs ' +
        '(the web app, or the SDK with a device key); or set "signatures": {"require": false} in its config, which lets whoever controls the relay act on this machine in anyone\'s name',
    );
  }
  if (pinned && pinned.hostId !== hostId) throw new Error(`trust.json pins an owner for host ${pinned.hostId}, not this host (${hostId})`);
  const audit = HostAudit.open(dataDir);
  let verifier: RequestVerifier | null = null;
  let intake: TrustIntake | null = null;
  let queued: QueuedSenders | undefined;
  if (pinned) {
    const book = await TrustBook.open(hostId, pinned.owner);
    if (settings.require) {
      if (serveOwn) queued = new QueuedSenders({ core, book, audit, dataDir, serveOwn, log });
      // A restart must not reopen the replay window: the ids this host took are on disk (seen.jsonl),
      // and what an older audit says ran is remembered too.
      const now = Date.now();
      const seen = SeenRequests.open(dataDir, now);
      seen.seed(readAudit(dataDir).entries, now);
      verifier = new RequestVerifier({ book, view: coreView(core), seen });
      log.info(`signatures required: owner ${pinned.owner.name} (${pinned.owner.userId}), device ${pinned.owner.device.id.slice(0, 16)}`);
      if (settings.allowUnsigned.length > 0) {
        log.warn(
          `signatures.allowUnsigned lets ${settings.allowUnsigned.join(', ')} through unsigned: for these, whoever controls the relay can ask in anyone's name`,
        );
      }
    }
    const follow = queued;
    intake = await TrustIntake.open({ book, dataDir, audit, log, ...(follow ? { onChanged: () => follow.recheck() } : {}) });
    intake.watchStore();
    // What the book believes after the restart may already take a queued send's right away.
    await follow?.recheck();
  }
  if (!settings.require) {
    log.warn("signatures.require is off: this host believes the relay about who asks, so whoever controls the relay can act on this machine in anyone's name");
  }
  const unsigned = new Set<RequestType>(settings.allowUnsigned);
  const opened = intake;
  const gate = new RequestGate({ audit, verifier, unsigned, log, ...(opened ? { trustSettled: () => opened.idle() } : {}), ...(queued ? { queued } : {}) });
  return {
    gate,
    intake,
    close: () => {
      opened?.close();
      audit.close();
    },
  };
}
