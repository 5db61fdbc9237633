// The host's check of a request that acts on this machine, before anything runs: the signature that
// travels beside the frame must be a device's the host trusts (trust/book.ts), over exactly this
// host, chat, type, id and payload, made within the freshness window, not seen before, by a person
// whose role here is what the request registry asks; an approval or answer must also name the exact
// request it settles as this host presented it. Anything else is `{ code, message }` and nothing runs.
//
// Only requests the registry says act on the machine are checked (signing is per request, not per
// frame): reads pass unsigned, so the hot path of reading a thread costs nothing here.
//
// A retried id: the relay resends kept sends with their first id and signature after a reconnect.
// For a request the registry answers once, the host's journal answers the retry with its first reply
// and runs nothing, so the same (device, id, payload) passes on to it; for any other, a seen id is a
// replay and refused. Seen ids are remembered for the freshness window, past which the time refuses.
import {
  REQUEST_RULES, RequestSignatureSchema, chatIdOfPayload, linkRequestId, digestOf, isRequestType, requirementOf, settledRequestDigest,
  switchesAccount, ACCESS_ROLES,
  type AccessRole, type DeviceId, type RequestType, type SettledRequest, type WireError, type WireErrorCode,
} from '../../contracts/index.ts';
import { verifyStatement } from '../../contracts/signing.ts';
import type { TrustBook } from './book.ts';

/** How old a signature may be (and how far ahead of this machine's clock, for skew). */
export const FRESHNESS = { pastMs: 5 * 60_000, futureMs: 60_000 } as const;

export interface VerifiedSender {
  userId: string;
  device: DeviceId;
  /** The signature's time. */
  at: number;
  /** The signed payload's digest. */
  payload: string;
  /** The id the device signed (the link's id puts the person's id before it). */
  id: string;
}

export type Verdict =
  /** `sender` null: a request that needs no signature (it does not act on the machine). */
  | { ok: true; sender: VerifiedSender | null; retry: boolean }
  | { ok: false; error: WireError };

/** What the verifier asks the host about the request's chat, from the host's own state. */
export interface HostView {
  /** The chat's provider and account now, or null when this host has no such chat. */
  chat(chatId: string): { provider: string; account?: string } | null;
  /** The waiting approval or question a settling request names, as the host presented it, or null. */
  settled(type: RequestType, payload: unknown): SettledRequest | null;
}

/** Request ids seen with a signature, for the freshness window. */
export class SeenRequests {
  private readonly seen = new Map<string, { at: number; payload: string }>();
  private readonly windowMs: number;

  constructor(windowMs = FRESHNESS.pastMs + FRESHNESS.futureMs) {
    this.windowMs = windowMs;
  }

  private static key(device: string, id: string): string {
    return `${device}\u0000${id}`;
  }

  /** Remembers what the host's audit says it carried out within the window (after a restart). */
  seed(entries: Iterable<{ device: string | null; id: string; signedId?: string | null; signedAt: number | null; payload: string | null }>, now: number): void {
    for (const e of entries) {
      if (e.device !== null && e.signedAt !== null && e.payload !== null && e.signedAt >= now - this.windowMs) {
        this.seen.set(SeenRequests.key(e.device, e.signedId ?? e.id), { at: e.signedAt, payload: e.payload });
      }
    }
  }

  get(device: string, id: string): { at: number; payload: string } | undefined {
    return this.seen.get(SeenRequests.key(device, id));
  }

  remember(device: string, id: string, at: number, payload: string, now: number): void {
    this.seen.set(SeenRequests.key(device, id), { at, payload });
    // Insertion order is arrival order, so the oldest are first: drop what the time check refuses anyway.
    for (const [key, entry] of this.seen) {
      if (entry.at >= now - this.windowMs) break;
      this.seen.delete(key);
    }
  }
}

const refused = (code: WireErrorCode, message: string): Verdict => ({ ok: false, error: { code, message } });

function atLeast(held: AccessRole | null, needed: AccessRole): boolean {
  return held !== null && ACCESS_ROLES.indexOf(held) >= ACCESS_ROLES.indexOf(needed);
}

export interface VerifierOptions {
  book: TrustBook;
  view: HostView;
  seen?: SeenRequests;
  now?: () => number;
}

export class RequestVerifier {
  private readonly book: TrustBook;
  private readonly view: HostView;
  private readonly seen: SeenRequests;
  private readonly now: () => number;

  constructor(options: VerifierOptions) {
    this.book = options.book;
    this.view = options.view;
    this.seen = options.seen ?? new SeenRequests();
    this.now = options.now ?? Date.now;
  }

  /**
   * What a signature claims, for the audit of a refusal: its device (and the person this host knows
   * it as), time and id, none of it verified. Null when it is not even shaped like a signature.
   */
  claimOf(signature: unknown): { device: string; person: string | null; at: number; id: string } | null {
    const parsed = RequestSignatureSchema.safeParse(signature);
    if (!parsed.success) return null;
    const { device, at, id } = parsed.data.statement;
    return { device, person: this.book.device(device)?.userId ?? null, at, id };
  }

  /** Whether this host may carry out `frame`, signed by `signature` (what travelled beside it). Never throws. */
  async check(frame: { id: string; type: string; payload?: unknown }, signature: unknown): Promise<Verdict> {
    try {
      return await this.decide(frame, signature);
    } catch {
      return refused('signature-invalid', 'The signature could not be checked');
    }
  }

  private async decide(frame: { id: string; type: string; payload?: unknown }, signature: unknown): Promise<Verdict> {
    // An unknown type runs nothing: the runtime answers unknown-request.
    if (!isRequestType(frame.type)) return { ok: true, sender: null, retry: false };
    const type = frame.type;
    const rule = REQUEST_RULES[type];
    if (!rule.actsOnMachine) return { ok: true, sender: null, retry: false };
    if (signature === undefined || signature === null) return refused('signature-required', `${type} acts on this machine: this host requires it signed by your device`);
    const parsed = RequestSignatureSchema.safeParse(signature);
    if (!parsed.success) return refused('signature-invalid', 'The signature beside the request is not a signed request statement');
    const signed = parsed.data;
    const { statement } = signed;

    // The statement must name exactly this request on this host: a signature for anything else is not one for this.
    if (statement.hostId !== this.book.hostId) return refused('signature-invalid', 'The signature is for another host');
    if (statement.type !== type) return refused('signature-invalid', 'The signature is for another request');
    const chatId = chatIdOfPayload(frame.payload);
    if (statement.chatId !== chatId) return refused('signature-invalid', 'The signature is for another chat');
    let payloadDigest: string;
    try {
      payloadDigest = await digestOf(frame.payload);
    } catch {
      return refused('bad-request', 'The payload has no canonical JSON form, so it cannot be checked');
    }
    if (statement.payload !== payloadDigest) return refused('signature-invalid', 'The payload is not the one that was signed');

    const device = this.book.device(statement.device);
    if (!device) return refused('signature-invalid', 'The signing device is not one this host trusts (unknown or revoked)');
    // The relay puts its person's id before the client's (linkRequestId): that person must be the device's.
    if (frame.id !== statement.id && frame.id !== linkRequestId(device.userId, statement.id)) {
      return refused('signature-invalid', 'The signature is for another request');
    }
    if (!(await verifyStatement(device.key, signed))) return refused('signature-invalid', 'The signature does not verify');

    const now = this.now();
    if (statement.at < now - FRESHNESS.pastMs || statement.at > now + FRESHNESS.futureMs) {
      return refused('signature-expired', 'The signature was made outside this host\'s freshness window (check the device\'s clock)');
    }

    // Keyed by the signed id: one statement is one request, whatever id the link gave it.
    const seen = this.seen.get(device.id, statement.id);
    if (seen) {
      // The same request again: the journal answers it once if the registry says so; else it is a replay.
      if (!rule.answeredOnce || seen.payload !== payloadDigest) return refused('signature-replayed', 'This signed request was carried out already');
    }

    const current = chatId === null ? null : this.view.chat(chatId);
    const switches = typeof frame.payload === 'object' && frame.payload !== null
      ? switchesAccount(frame.payload as { account?: string; provider?: string }, current)
      : false;
    const requirement = requirementOf(type, switches);
    const held = this.book.roleOf(device.userId, requirement.hostWide ? null : chatId);
    if (!atLeast(held, requirement.role)) {
      return refused('forbidden', `${type} needs ${requirement.role} ${requirement.hostWide ? 'on this host' : 'on this chat'}; this host knows you as ${held ?? 'nobody'}`);
    }

    if (rule.settles) {
      const asked = this.view.settled(type, frame.payload);
      // No such waiting request: the runtime answers request-not-found and settles nothing.
      if (asked) {
        if (statement.settles === undefined) return refused('signature-invalid', 'An answer must name the request it settles');
        if (statement.settles !== (await settledRequestDigest(asked))) {
          return refused('signature-invalid', 'The answer was signed for another request than the one waiting here');
        }
      }
    }

    if (!seen) this.seen.remember(device.id, statement.id, statement.at, payloadDigest, now);
    return { ok: true, sender: { userId: device.userId, device: device.id, at: statement.at, payload: payloadDigest, id: statement.id }, retry: seen !== undefined };
  }
}
