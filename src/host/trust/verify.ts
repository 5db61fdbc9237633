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
// and runs nothing, so the same (device, id, payload) passes on to it within the freshness window of
// the host first taking it; for any other, or later, a seen id is a replay and refused.
//
// Kept sends: the relay keeps a `chat.send` while the host is away and delivers it, with its original
// signature, when the host returns, which may be hours or days later. Such a send is accepted up to
// `FRESHNESS.keptMs` old, and only if this host has never taken that signed id: every signed request
// the host admits is written to `<data>/seen.jsonl` BEFORE it runs (SeenRequests.open), and kept there
// for as long as its time could still be accepted, so no restart reopens the door. Every other type
// keeps the 5-minute window: only sends are kept by the relay, and a stale approval must not settle
// whatever waits under its id later.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { replaceFileSync } from '../disk.ts';
import {
  REQUEST_RULES,
  RequestSignatureSchema,
  chatIdOfPayload,
  linkRequestId,
  digestOf,
  isRequestType,
  requirementOf,
  settledRequestDigest,
  switchesAccount,
  ACCESS_ROLES,
  type AccessRole,
  type DeviceId,
  type RequestType,
  type SettledRequest,
  type WireError,
  type WireErrorCode,
} from '../../contracts/index.ts';
import { verifyStatement } from '../../contracts/signing.ts';
import { z } from 'zod';
import type { TrustBook } from './book.ts';

/**
 * How old a signature may be (and how far ahead of this machine's clock, for skew); `keptMs` for the
 * types the relay keeps while a host is away (KEPT_TYPES), when this host never took that id.
 */
export const FRESHNESS = { pastMs: 5 * 60_000, futureMs: 60_000, keptMs: 7 * 24 * 60 * 60_000 } as const;

/** The request types the relay keeps for a host that is away and delivers later (relay/objects/chat-room/kept-sends.ts). */
export const KEPT_TYPES: ReadonlySet<string> = new Set(['chat.send']);

/** How long after its signature a request's id must be remembered: as long as its time could be accepted. */
function pastWindow(type: string): number {
  return KEPT_TYPES.has(type) ? FRESHNESS.keptMs : FRESHNESS.pastMs;
}

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
  { ok: true; sender: VerifiedSender | null; retry: boolean } | { ok: false; error: WireError };

/** What the verifier asks the host about the request's chat, from the host's own state. */
export interface HostView {
  /** The chat's provider and account now, or null when this host has no such chat. */
  chat(chatId: string): { provider: string; account?: string } | null;
  /** The waiting approval or question a settling request names, as the host presented it, or null. */
  settled(type: RequestType, payload: unknown): SettledRequest | null;
}

interface SeenEntry {
  /** The signature's time. */
  at: number;
  /** When this host first took it (its clock). */
  first: number;
  payload: string;
  /** Until when it must be remembered (past it, the time check refuses it anyway). */
  until: number;
}

const SeenLineSchema = z.object({ d: z.string(), i: z.string(), at: z.number(), first: z.number(), p: z.string(), u: z.number() });

/**
 * Request ids this host took with a signature, for as long as their signatures' time could still be
 * accepted. Opened on a data folder it is on disk (`seen.jsonl`): each id is appended, synchronously,
 * before its request runs, and what is past its time is dropped when the file is opened again.
 */
export class SeenRequests {
  private readonly seen = new Map<string, SeenEntry>();
  private readonly file: string | null;
  private added = 0;

  constructor(file: string | null = null) {
    this.file = file;
  }

  /** The seen ids kept in `<dataDir>/seen.jsonl`: those still within their window are read back. */
  static open(dataDir: string, now: number): SeenRequests {
    const dir = path.resolve(dataDir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, 'seen.jsonl');
    const seen = new SeenRequests(file);
    let lines = 0;
    if (existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line) continue;
        lines += 1;
        let parsed;
        try {
          parsed = SeenLineSchema.safeParse(JSON.parse(line));
        } catch {
          continue; // a torn last line (a crash mid-write): its request had not run yet
        }
        if (!parsed.success || parsed.data.u < now) continue;
        const { d, i, at, first, p, u } = parsed.data;
        seen.seen.set(SeenRequests.key(d, i), { at, first, payload: p, until: u });
      }
    }
    // Rewritten only with what still counts, so the file holds about one window of requests.
    if (lines > seen.seen.size) {
      replaceFileSync(file, [...seen.seen].map(([key, e]) => `${SeenRequests.line(key, e)}\n`).join(''));
    }
    return seen;
  }

  private static key(device: string, id: string): string {
    return `${device}\u0000${id}`;
  }

  private static line(key: string, e: SeenEntry): string {
    const [d, i] = key.split('\u0000') as [string, string];
    return JSON.stringify({ d, i, at: e.at, first: e.first, p: e.payload, u: e.until });
  }

  /** Remembers what the host's audit says it carried out (after a restart, for an audit older than seen.jsonl). */
  seed(
    entries: Iterable<{
      type?: string;
      device: string | null;
      id: string;
      signedId?: string | null;
      signedAt: number | null;
      payload: string | null;
      at?: number;
    }>,
    now: number,
  ): void {
    for (const e of entries) {
      if (e.device === null || e.signedAt === null || e.payload === null) continue;
      const until = e.signedAt + pastWindow(e.type ?? '') + FRESHNESS.futureMs;
      const key = SeenRequests.key(e.device, e.signedId ?? e.id);
      if (until >= now && !this.seen.has(key)) this.seen.set(key, { at: e.signedAt, first: e.at ?? e.signedAt, payload: e.payload, until });
    }
  }

  get(device: string, id: string): SeenEntry | undefined {
    return this.seen.get(SeenRequests.key(device, id));
  }

  /** Remembers a request before it runs (on disk first, when opened on a folder). */
  remember(device: string, id: string, type: string, at: number, payload: string, now: number): void {
    const key = SeenRequests.key(device, id);
    const entry: SeenEntry = { at, first: now, payload, until: Math.max(at, now) + pastWindow(type) + FRESHNESS.futureMs };
    if (this.file) {
      // Synced before the request runs: after a power loss, not just a crash, the id is still known,
      // so a kept send the relay delivers again cannot run twice (one fsync per signed request, which
      // people make at their own pace).
      const fd = openSync(this.file, 'a', 0o600);
      try {
        writeSync(fd, `${SeenRequests.line(key, entry)}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    this.seen.set(key, entry);
    // Now and then, forget what the time check refuses anyway (windows differ by type, so not in order).
    if (++this.added % 256 === 0) {
      for (const [k, e] of this.seen) if (e.until < now) this.seen.delete(k);
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
    if (signature === undefined || signature === null)
      return refused('signature-required', `${type} acts on this machine: this host requires it signed by your device`);
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
    // A kept send may be old (the relay held it while this host was away), never from the future.
    if (statement.at < now - pastWindow(type) || statement.at > now + FRESHNESS.futureMs) {
      return refused('signature-expired', "The signature was made outside this host's freshness window (check the device's clock)");
    }

    // Keyed by the signed id: one statement is one request, whatever id the link gave it.
    const seen = this.seen.get(device.id, statement.id);
    if (seen) {
      // The same request again, soon after this host took it: the journal answers it once if the
      // registry says so. Anything else (another type, another payload, or later) is a replay.
      const resent = rule.answeredOnce && seen.payload === payloadDigest && now - seen.first <= FRESHNESS.pastMs + FRESHNESS.futureMs;
      if (!resent) return refused('signature-replayed', 'This signed request was carried out already');
    }

    const current = chatId === null ? null : this.view.chat(chatId);
    const switches =
      typeof frame.payload === 'object' && frame.payload !== null ? switchesAccount(frame.payload as { account?: string; provider?: string }, current) : false;
    const requirement = requirementOf(type, switches);
    const held = this.book.roleOf(device.userId, requirement.hostWide ? null : chatId);
    if (!atLeast(held, requirement.role)) {
      return refused(
        'forbidden',
        `${type} needs ${requirement.role} ${requirement.hostWide ? 'on this host' : 'on this chat'}; this host knows you as ${held ?? 'nobody'}`,
      );
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

    if (!seen) this.seen.remember(device.id, statement.id, type, statement.at, payloadDigest, now);
    return {
      ok: true,
      sender: { userId: device.userId, device: device.id, at: statement.at, payload: payloadDigest, id: statement.id },
      retry: seen !== undefined,
    };
  }
}
