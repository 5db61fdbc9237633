// Sends a ChatRoom keeps while its host is away. A `chat.send` that cannot reach the host is kept in
// the room's storage and answered `{queued: true}`; everyone attached sees it in `info.queue` as
// `relay:<request id>`. When the host returns they go out in order, each under the link id of the
// person's own request, so a resend the host already took is answered from its journal, not run again.
// While any are kept, new sends queue behind them: the host gets messages in the order people sent them.
// A send the host refuses when it finally gets it is told to everyone attached (`chat.sendRefused`)
// and remembered, so that its sender, if away then, hears it when they attach again (`refusalsFor`):
// without that their device would take the send's leaving the queue for its delivery.
//
// A send runs on the machine later than it was made, so it must still be its sender's to make then: a
// kept send is delivered only while its sender may still send in this chat (else it is refused the
// same way), and a send the host queued is taken back (`chat.unqueue`, on the sender's behalf) when
// its sender loses that right before it ran (`recheckSenders`, on every access change). That last
// one only for a host that takes `chat.unqueue` unsigned (it said so in its hello): a host that
// requires signatures refuses a request the relay makes on its own, and takes a queued send back
// itself once the signed revocation reaches it (src/host/trust/queued-senders.ts), so the relay
// sends it nothing and tells nobody the send was refused (on that host it may still run: a change of
// access made on the relay alone, unsigned, does not bind it).
import { KEPT_SEND_PREFIX, withRequestLimit, type ChatInfo, type ChatQueuedMessage, type Reply, type WireError } from '../../../contracts/index.ts';
import { failureText } from '../../db/failures.ts';
import { log } from '../../log.ts';
import { eventFrame, linkId, relabel, replyError, replyOk, toHost, type SignedParts } from '../client-sockets.ts';
import type { LinkRequestInput } from '../host-link.ts';
import type { KeptPreview, RoomStore } from './room-store.ts';

/** Sends a chat keeps at most while its host is away, and the payload bytes they may take together. */
export const KEPT_SENDS_MAX = 20;
export const KEPT_BYTES_MAX = 64 * 1024 * 1024;

/** Replies after which a send is kept and sent again later. */
export const NOT_DELIVERED = new Set(['host-offline', 'host-timeout']);

/** What the kept sends need of their room. */
export interface KeptSendsRoom {
  chatId(): string;
  ask(input: LinkRequestInput): Promise<Reply>;
  isOnline(): Promise<boolean>;
  /** Whether the host said it carries out this request type unsigned (HostLink.takesUnsigned). */
  hostTakesUnsigned(type: string): Promise<boolean>;
  /** Asks HostLink to call `hostReturned` when the host is back; answers whether it is online now. */
  waitForHost(): Promise<boolean>;
  /** The queue changed: the room sends its (decorated) info again. */
  queueChanged(): Promise<void>;
  /** The room's seq now: the info event that follows a refusal is logged one past it. */
  seq(): number;
  fanOut(text: string): void;
  /** Why this person may not send in this chat now (their role read afresh), or null when they may. */
  senderRefusal(userId: string): Promise<WireError | null>;
  /** The host's queue as the room last saw it. */
  hostQueue(): readonly ChatQueuedMessage[];
  /** Records in the host's audit log that the relay took a person's queued message back from the host. */
  auditTakenBack(userId: string, requestId: string, messageId: string): void;
}

/** A host queue entry whose sender is gone is taken back under this id: stable, so a retry is answered once. */
const takenBackId = (userId: string, requestId: string) => linkId(userId, `taken-back:${requestId}`);
/** A sender row whose message is not in the host's queue is delivered after this long (not just not yet shown). */
const DELIVERED_AFTER_MS = 60_000;

export class KeptSends {
  private readonly store: RoomStore;
  private readonly room: KeptSendsRoom;
  private delivering: Promise<void> | null = null;

  constructor(store: RoomStore, room: KeptSendsRoom) {
    this.store = store;
    this.room = room;
  }

  /** `chat.send`: straight to the host when it is there and nothing waits before it, else kept. */
  async send(userId: string, id: string, payload: Record<string, unknown>, signed?: SignedParts): Promise<string> {
    if (this.store.kept().length === 0 && (await this.room.isOnline())) {
      const reply = await this.room.ask(toHost({ type: 'chat.send', payload, id, userId, ...(signed ? { signed } : {}) }));
      this.noteQueued(reply, userId, id);
      if (reply.ok || !NOT_DELIVERED.has(reply.error.code)) return relabel(reply, id);
      // The host went away mid-request: keep it; the host's journal answers a resend it already took.
    }
    // Bounded: a chat keeps at most KEPT_SENDS_MAX sends and KEPT_BYTES_MAX of payloads (one send may
    // carry 16 MiB of attachments). Past that the send is not kept, and its sender is told so now.
    const kept = this.store.kept().length;
    if (kept >= KEPT_SENDS_MAX || this.store.keptBytes() >= KEPT_BYTES_MAX) {
      return replyError(id, {
        code: 'host-offline',
        message: `The host is offline and ${kept} messages already wait for it here; send this one when it is back`,
      });
    }
    // A signed send keeps its first id and signature: delivered later, it is still the request the
    // device signed (the host's freshness window decides whether it is still fresh enough to run).
    this.store.keep(id, userId, payload as { text?: string }, signed);
    await this.room.queueChanged();
    if (await this.room.waitForHost()) void this.deliver();
    return replyOk(id, { queued: true });
  }

  /** Sends what is kept, in order, each once; one pass at a time. */
  deliver(): Promise<void> {
    this.delivering ??= this.deliverAll().finally(() => {
      this.delivering = null;
    });
    return this.delivering;
  }

  private async deliverAll(): Promise<void> {
    let failures = 0;
    // The first kept send is read again each time: one kept while this runs goes out in this pass too.
    for (let kept = this.store.kept()[0]; kept; kept = this.store.kept()[0]) {
      let lost: WireError | null;
      try {
        lost = await this.room.senderRefusal(kept.userId);
      } catch (error) {
        // Their access could not be read: the send stays kept for the next pass, never sent unchecked.
        log.warn('kept send sender unreadable', { chatId: this.room.chatId(), error: failureText(error) });
        return;
      }
      const reply: Reply = lost ? { id: kept.requestId, ok: false, error: lost } : await this.room.ask(this.keptRequest(kept));
      if (!reply.ok && NOT_DELIVERED.has(reply.error.code)) {
        // HostLink calls again when the host returns; if it is already back, this pass tries again
        // (the same link id: the host's journal takes it once), a few times before leaving it for then.
        if ((await this.room.waitForHost()) && ++failures < 3) continue;
        return;
      }
      failures = 0;
      this.noteQueued(reply, kept.userId, kept.requestId);
      // The sender was told `{queued: true}` long ago: everyone attached hears why it did not go, and
      // the refusal is kept (in the same step that drops the send) for a sender who is away now.
      if (!reply.ok)
        this.refused(`${KEPT_SEND_PREFIX}${kept.requestId}`, kept.requestId, kept.userId, reply.error, lost ? 'sender lost access' : 'refused by host');
      this.store.unkeep(kept.pos);
      await this.room.queueChanged();
    }
  }

  /** A kept send as it goes to the host: under its sender's link id, signed ones with their signature. */
  private keptRequest(kept: KeptPreview): LinkRequestInput {
    const payload = this.store.keptPayload(kept.pos);
    const signature = this.store.keptSignature(kept.pos);
    return { type: 'chat.send', payload, id: linkId(kept.userId, kept.requestId), by: kept.userId, ...(signature !== undefined ? { signature } : {}) };
  }

  /** Tells everyone attached that a send will not run, and keeps that for its sender. */
  private refused(messageId: string, requestId: string, userId: string, error: WireError, why: string): void {
    log.warn(`kept send ${why}`, { chatId: this.room.chatId(), code: error.code });
    const frame = eventFrame('chat.sendRefused', { chatId: this.room.chatId(), messageId, requestId, error });
    this.store.refuse(requestId, userId, this.room.seq() + 1, frame);
    this.room.fanOut(frame);
  }

  /** Remembers who sent a message the host queued rather than ran, by the turn the host reserved for it. */
  private noteQueued(reply: Reply, userId: string, requestId: string): void {
    if (!reply.ok) return;
    const result = reply.result as { queued?: unknown; turnId?: unknown } | null;
    if (result?.queued === true && typeof result.turnId === 'string') this.store.hostQueued(result.turnId, userId, requestId);
  }

  /**
   * After an access change: every message the host still queues whose sender may no longer send here is
   * taken back from the host on the sender's behalf and refused (`chat.sendRefused`). The senders of
   * messages that left the queue are forgotten. Never throws: what fails here is tried at the next change.
   */
  async recheckSenders(): Promise<void> {
    const senders = this.store.hostQueuedSenders();
    if (senders.length === 0) return;
    if (!(await this.room.hostTakesUnsigned('chat.unqueue'))) {
      // Its own take-back would be refused and audited there as an unsigned request: noise. The host does it.
      for (const sender of senders) this.store.forgetHostQueued(sender.turnId);
      return;
    }
    const queue = new Map(this.room.hostQueue().flatMap((message) => (message.turnId ? [[message.turnId, message] as const] : [])));
    const now = Date.now();
    for (const sender of senders) {
      const message = queue.get(sender.turnId);
      if (!message) {
        if (now - sender.at > DELIVERED_AFTER_MS) this.store.forgetHostQueued(sender.turnId);
        continue;
      }
      try {
        const lost = await this.room.senderRefusal(sender.userId);
        if (!lost) continue;
        const reply = await this.room.ask({
          type: 'chat.unqueue',
          payload: { chatId: this.room.chatId(), messageId: message.id },
          id: takenBackId(sender.userId, sender.requestId),
          by: sender.userId,
        });
        // Already gone from the host's queue (it ran meanwhile): nothing to refuse.
        if (!reply.ok && reply.error.code !== 'request-not-found') {
          log.warn('queued send of a lost sender not taken back', { chatId: this.room.chatId(), code: reply.error.code });
          continue;
        }
        this.store.forgetHostQueued(sender.turnId);
        if (reply.ok) this.room.auditTakenBack(sender.userId, sender.requestId, message.id);
        if (reply.ok) this.refused(message.id, sender.requestId, sender.userId, lost, 'sender lost access');
      } catch (error) {
        log.warn('queued send recheck failed', { chatId: this.room.chatId(), error: failureText(error) });
      }
    }
  }

  /**
   * The refusals a person's client may have missed, to send it before answering its attach (so they
   * are known before the queue it gets is read): those after `since` when the attach replays from
   * there, else every one kept (a snapshot says nothing of what the client heard).
   */
  refusalsFor(userId: string, since: number | undefined): string[] {
    return this.store.refusals(userId, since ?? 0);
  }

  /** `chat.unqueue` takes a kept send back for editing; `chat.sendNow` cannot hurry a host that is away. */
  async queueRequest(type: 'chat.unqueue' | 'chat.sendNow', id: string, requestId: string): Promise<string> {
    const kept = this.store.kept().find((k) => k.requestId === requestId);
    if (!kept) return replyError(id, { code: 'request-not-found', message: 'That message already went to the host' });
    if (type === 'chat.sendNow') {
      return replyError(id, { code: 'host-offline', message: 'The host is offline; kept messages go first, in order, when it returns' });
    }
    this.store.unkeep(kept.pos);
    await this.room.queueChanged();
    return replyOk(id, { message: queued(kept) });
  }

  /** The host's info as clients see it: requests cut to the limit, kept sends at the end of the queue. */
  decorate(host: ChatInfo): ChatInfo {
    const info = withRequestLimit(host);
    const kept = this.store.kept();
    if (kept.length === 0) return info;
    return { ...info, queue: [...(info.queue ?? []), ...kept.map(queued)] };
  }
}

/** A kept send as a queue entry (its attachments stay with the relay until it is delivered). */
function queued(k: KeptPreview): ChatQueuedMessage {
  return {
    id: `${KEPT_SEND_PREFIX}${k.requestId}`,
    text: k.text,
    createdAt: k.at,
    ...(k.mentions ? { mentions: k.mentions } : {}),
    ...(k.skills ? { skills: k.skills } : {}),
    ...(k.chats ? { chats: k.chats } : {}),
  };
}
