// The routing of a host's events: each frame goes to the object it names (its chat's ChatRoom, or
// the Lobby for host-wide events), in the order the host sent it, batched per target, and its outbox
// position is acknowledged to the host only once that target has stored it. It knows no socket and
// no Durable Object: the link hands it the call to the target (`ingest`) and the ack sending.
//
// - Targets do not wait on one another; within one target a batch goes only when the one before it
//   is answered.
// - What the target did not store is not acknowledged: the host keeps it in its outbox and sends it
//   again after a reconnect, and the ChatRoom drops what it already has by `seq`.
// - One frame the runtime cannot carry to its object fails its whole batch: the batch goes again one
//   frame at a time, so only that frame stays behind, and it is dropped for good (and acknowledged).
// Nothing survives a restart: what was queued and not acknowledged is still in the host's outbox.
import { RELAY_COUNTERS, type LinkEventFrame } from '../../contracts/index.ts';
import { log } from '../log.ts';

/** What one ingest call carries at most, in frames. */
const BATCH = 256;
/** What one ingest call may carry at most (one frame alone may be larger): RPC calls are not meant for tens of MiB. */
const BATCH_BYTES = 8 * 1024 * 1024;
/** Events that belong to one chat and go to its ChatRoom; everything else is host-wide. */
const CHAT_EVENTS = new Set(['chat.event', 'chat.visuals', 'chat.subagentChanged', 'visual.page']);

/** Where a host's event is stored: the Lobby, or the ChatRoom of one chat. */
export type RouteTarget = 'lobby' | `chat:${string}`;

/** What the routing asks of its link. */
export interface RouteDelivery {
  /**
   * Hands `frames` to `target`'s object; answers how many of them, from the first, it stored, and why
   * it stopped. Throws when the call itself failed (the object was not reached, or the frames could
   * not be copied to it).
   */
  ingest(hostId: string, target: RouteTarget, frames: LinkEventFrame[]): Promise<{ stored: number; error?: string }>;
  /** Sends the host the outbox positions now stored, in one frame, on its socket of the moment. */
  ack(n: number[]): void;
  /** A frame refused for good because it cannot cross to its object (acknowledged all the same); the link counts and logs it. */
  drop(why: string, size: number): void;
  /** Counts one of RELAY_COUNTERS (events in, frames dropped, ingest failures). */
  count(counter: string): void;
}

interface Route {
  frames: LinkEventFrame[];
  /** The size of each queued frame on the wire (estimated for frames that came joined in an array). */
  sizes: number[];
  running: boolean;
  /** Frames at the head of the queue to hand over one at a time: a batch of them failed to cross. */
  alone: number;
}

/**
 * Deeper than this, a host's frame is taken to be one that cannot cross between the objects (the
 * runtime's copy between them recurses, and gives up far below JSON.parse's own depth). No event of
 * the protocol comes near it; a tool's input nesting a few dozen levels is already unusual.
 */
const CROSSING_DEPTH = 512;

/** Whether `value` nests deeper than `limit` objects or arrays (walked without recursion, so it cannot overflow). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * A frame that failed on its own to reach its object, and will never get there: too deep, or the
 * runtime cannot copy it. Asked only after a failure, never on the frame's way in.
 */
function cannotCross(frame: LinkEventFrame): boolean {
  if (nestsDeeperThan(frame, CROSSING_DEPTH)) return true;
  try {
    structuredClone(frame);
    return false;
  } catch {
    return true;
  }
}

export class LinkRoutes {
  private readonly routes = new Map<RouteTarget, Route>();
  private acks: number[] = [];
  private ackScheduled = false;
  private readonly delivery: RouteDelivery;

  constructor(delivery: RouteDelivery) {
    this.delivery = delivery;
  }

  /** An event frame from the host (`size`: its share of the message on the wire), sent on to its target. */
  event(hostId: string, frame: LinkEventFrame, size: number): void {
    this.delivery.count(RELAY_COUNTERS.eventsIn);
    // An outbox position that is not one would spoil the whole ack it joins; such a frame is not acked.
    if (frame.n !== undefined && !(Number.isSafeInteger(frame.n) && frame.n > 0)) frame = { ...frame, n: undefined };
    const payload = frame.payload as { chatId?: unknown } | null;
    const chatId = payload && typeof payload.chatId === 'string' ? payload.chatId : null;
    if (CHAT_EVENTS.has(frame.event)) {
      if (!chatId) {
        // unroutable: nothing would ever store it
        this.delivery.count(RELAY_COUNTERS.hostFramesDropped);
        return this.ackLater(frame.n);
      }
      this.route(hostId, `chat:${chatId}`, frame, size);
    } else {
      this.route(hostId, 'lobby', frame, size);
    }
  }

  /** Queues a frame for its target; each target gets its frames in order, in batches. */
  private route(hostId: string, target: RouteTarget, frame: LinkEventFrame, size: number): void {
    let route = this.routes.get(target);
    if (!route) this.routes.set(target, (route = { frames: [], sizes: [], running: false, alone: 0 }));
    route.frames.push(frame);
    route.sizes.push(size);
    if (!route.running) void this.drain(hostId, target, route);
  }

  private async drain(hostId: string, target: RouteTarget, route: Route): Promise<void> {
    route.running = true;
    try {
      while (route.frames.length > 0) {
        let count = 0;
        if (route.alone > 0) {
          count = 1;
          route.alone -= 1;
        } else {
          for (let bytes = 0; count < Math.min(BATCH, route.frames.length); count++) {
            bytes += route.sizes[count]!;
            if (count > 0 && bytes > BATCH_BYTES) break;
          }
        }
        const batch = route.frames.splice(0, count);
        const sizes = route.sizes.splice(0, count);
        let stored = 0;
        let error: string | undefined;
        try {
          ({ stored, error } = await this.delivery.ingest(hostId, target, batch));
        } catch (thrown) {
          // The call itself failed. One frame the runtime cannot carry to the object (a payload nested
          // thousands deep) fails the whole call: the batch goes again one frame at a time, so only
          // that frame stays behind and the valid ones around it are stored and acknowledged.
          if (batch.length > 1) {
            route.frames.unshift(...batch);
            route.sizes.unshift(...sizes);
            route.alone = batch.length;
            continue;
          }
          if (cannotCross(batch[0]!)) {
            // It would fail the same way on every reconnect and sit in the host's outbox for ever:
            // refused for good, and acknowledged so the host lets it go, like any frame the relay drops.
            this.delivery.drop('cannot cross to its object', sizes[0]!);
            this.ackLater(batch[0]!.n);
            continue;
          }
          error = String(thrown);
        }
        // What was not stored is not acknowledged: the host keeps it and sends it again on its next connection.
        if (error !== undefined) {
          log.error('ingest failed', { hostId, target, stored, of: batch.length, error });
          this.delivery.count(RELAY_COUNTERS.ingestFailed);
        }
        for (const frame of batch.slice(0, stored)) this.ackLater(frame.n);
      }
    } finally {
      route.running = false;
      if (route.frames.length === 0) this.routes.delete(target);
    }
  }

  /**
   * Acknowledges the positions gathered in this turn in one frame. The link sends it on the host's
   * socket of the moment, not the one the frame came by: outbox positions outlive a connection, and a
   * host that reconnected while its frames were being stored must still hear of them, or it keeps them
   * for ever.
   */
  private ackLater(n: number | undefined): void {
    if (n === undefined) return;
    this.acks.push(n);
    if (this.ackScheduled) return;
    this.ackScheduled = true;
    queueMicrotask(() => {
      this.ackScheduled = false;
      const n = this.acks;
      this.acks = [];
      this.delivery.ack(n);
    });
  }
}
