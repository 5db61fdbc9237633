// The door every relay frame passes before the runtime serves it. For a request that acts on this
// machine (the registry's `actsOnMachine`, and whatever it audits) it asks the verifier when this
// host requires signatures, and writes one line to the host's own audit: carried out (done or
// failed, with the code) or refused (nothing ran). Reads pass straight through, unaudited and
// unverified: the per-frame cost of a read is one table look-up.
//
// Signatures are required unless the host config says otherwise (`signatures.require`, on by
// default; `signatures.allowUnsigned` lets named machine-acting types through unsigned): with them
// off, the audit still names each request, marked unverified, with whom the relay said it acted for.
import { REQUEST_RULES, chatIdOfPayload, isRequestType, type RequestType } from '../../contracts/index.ts';
import type { HostLog, ReplyFrame } from '../chats/core.ts';
import type { HostAudit } from './audit.ts';
import type { QueuedSenders } from './queued-senders.ts';
import type { RequestVerifier, VerifiedSender } from './verify.ts';

export interface GateOptions {
  audit: HostAudit;
  /** null: signatures not required (the host config's switch is off). */
  verifier: RequestVerifier | null;
  /** Request types the host config lets through unsigned even when signatures are required. */
  unsigned?: ReadonlySet<RequestType>;
  /** Settles once the trust statements that came before this request are in the book (trust/intake.ts). */
  trustSettled?: () => Promise<void>;
  /** Remembers who a queued send is from, so the host can take it back if they lose the right (trust/queued-senders.ts). */
  queued?: QueuedSenders;
  now?: () => number;
  log?: HostLog;
}

interface FrameFields {
  id: string;
  type: RequestType;
  payload?: unknown;
  by?: unknown;
  signature?: unknown;
}

/** The fields the gate reads, or null for a frame it leaves to the runtime (which answers bad-request or unknown-request). */
function fieldsOf(frame: unknown): FrameFields | null {
  if (typeof frame !== 'object' || frame === null) return null;
  const { id, type } = frame as { id?: unknown; type?: unknown };
  if (typeof id !== 'string' || id.length === 0 || typeof type !== 'string' || !isRequestType(type)) return null;
  return frame as FrameFields;
}

export class RequestGate {
  private readonly options: GateOptions;
  private readonly now: () => number;

  constructor(options: GateOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** Serves one relay frame through `serve` if it may run; never throws. */
  async serve(frame: unknown, serve: (frame: unknown) => Promise<ReplyFrame>): Promise<ReplyFrame> {
    const fields = fieldsOf(frame);
    if (!fields) return serve(frame);
    const rule = REQUEST_RULES[fields.type];
    if (!rule.actsOnMachine && !rule.audited) return serve(frame);

    const base = {
      type: fields.type,
      id: fields.id,
      chatId: chatIdOfPayload(fields.payload),
      relaySays: typeof fields.by === 'string' ? fields.by : null,
    };
    const { verifier, unsigned } = this.options;
    let sender: VerifiedSender | null = null;
    let retry = false;
    if (verifier && rule.actsOnMachine && !unsigned?.has(fields.type)) {
      // A revocation the relay sent before this request is judged before it.
      await this.options.trustSettled?.();
      const verdict = await verifier.check(fields, fields.signature);
      if (!verdict.ok) {
        this.record({
          ...base,
          outcome: 'refused',
          code: verdict.error.code,
          userId: null,
          device: null,
          signedAt: null,
          payload: null,
          claimed: verifier.claimOf(fields.signature),
        });
        return { id: fields.id, ok: false, error: verdict.error };
      }
      sender = verdict.sender;
      retry = verdict.retry;
    }
    // Who the runtime keeps as having asked (an approval's answeredBy, shown on every device's card) is
    // the person the signature verified, never the name the relay put beside it.
    const reply = await serve(sender ? { ...(frame as object), by: sender.userId } : frame);
    this.record({
      ...base,
      outcome: reply.ok ? 'done' : 'failed',
      ...(reply.ok ? {} : { code: reply.error.code }),
      userId: sender?.userId ?? null,
      device: sender?.device ?? null,
      signedAt: sender?.at ?? null,
      signedId: sender?.id ?? null,
      payload: sender?.payload ?? null,
      ...(retry ? { retry: true } : {}),
    });
    this.options.queued?.note(fields.type, fields.payload, sender, reply);
    return reply;
  }

  private record(entry: Omit<Parameters<HostAudit['record']>[0], 'at'>): void {
    try {
      this.options.audit.record({ at: this.now(), ...entry });
    } catch (error) {
      // A failed write (a full disk) must not stop the host answering; it is said in the log.
      this.options.log?.error(`audit: could not record ${entry.type} ${entry.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
