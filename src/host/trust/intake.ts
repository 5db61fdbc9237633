// Where signed trust statements enter this machine: the relay carries them over the link
// (`{ link: 'trust' }`, all current ones when the link connects, then each new one), and the host's
// own `tether host trust` adds recovered devices to the store while the host runs. Each statement is
// checked by the book; an accepted one that changed something is written to the store (synced) and
// to the host's audit; a refused one changes nothing and is audited with its `{code, message}` (once
// per statement per run: the relay sends the same set again on every connect).
//
// Statements are taken one batch at a time, in arrival order, and within a batch until nothing more
// is accepted (a vouch may come before the grant that makes its voucher count). The gate waits for
// the intake to be idle before it checks a request, so a request that follows a revocation on the
// link is judged after it.
import { watch, type FSWatcher } from 'node:fs';
import { SignedTrustStatementSchema, TRUST_STATEMENTS_PER_FRAME, type SignedTrustStatement, type WireErrorCode } from '../../contracts/index.ts';
import type { HostLog } from '../chats/core.ts';
import type { HostAudit } from './audit.ts';
import type { Accepted, TrustBook } from './book.ts';
import { appendTrust, readTrustFrom, trustStatementsFile, type StoredTrust } from './store.ts';

/** How a statement is named in the audit: its kind, and what it is about. */
function describe(signed: SignedTrustStatement): { type: string; id: string; chatId: string | null } {
  const { statement } = signed;
  switch (statement.kind) {
    case 'tether.grant/1':
      return { type: 'trust.grant', id: statement.grantId, chatId: statement.chatId };
    case 'tether.device/1':
      return { type: 'trust.device', id: statement.device.id, chatId: null };
    case 'tether.revocation/1':
      return {
        type: 'trust.revocation',
        id: statement.target.kind === 'grant' ? `grant:${statement.target.grantId}` : `device:${statement.target.deviceId}`,
        chatId: null,
      };
  }
}

export interface TrustIntakeOptions {
  book: TrustBook;
  dataDir: string;
  audit: HostAudit;
  log: HostLog;
  /** After anything the book counts changed (a grant withdrawn, a device revoked, a recovery). */
  onChanged?: () => void | Promise<void>;
  now?: () => number;
}

export class TrustIntake {
  private readonly options: TrustIntakeOptions;
  private chain: Promise<void> = Promise.resolve();
  /** Bytes of the store read so far: what the host's own commands append later is read from here. */
  private offset = 0;
  private readonly refused = new Set<string>();
  private watcher: FSWatcher | null = null;
  private readonly now: () => number;

  private constructor(options: TrustIntakeOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** Rebuilds the book from the store: every line again, in order, nothing written or audited anew. */
  static async open(options: TrustIntakeOptions): Promise<TrustIntake> {
    const intake = new TrustIntake(options);
    await intake.readStore(false);
    return intake;
  }

  get book(): TrustBook {
    return this.options.book;
  }

  /** Settles once every batch taken so far has been checked. */
  idle(): Promise<void> {
    return this.chain;
  }

  /** Takes a batch from the link (each statement unchecked JSON); answers when it has been through the book. */
  take(statements: unknown[]): Promise<void> {
    // The relay sends at most this many in a frame; more is not an honest relay's, and each costs a verification.
    if (statements.length > TRUST_STATEMENTS_PER_FRAME) {
      this.options.log.warn(`trust: a frame of ${statements.length} statements; only the first ${TRUST_STATEMENTS_PER_FRAME} are read`);
      statements = statements.slice(0, TRUST_STATEMENTS_PER_FRAME);
    }
    const run = this.chain.then(() => this.takeNow(statements));
    this.chain = run.catch((error: unknown) => this.options.log.error(`trust: a batch failed: ${error instanceof Error ? error.message : String(error)}`));
    return this.chain;
  }

  /** Follows the store for lines the host's own commands append (a recovery) while it runs. */
  watchStore(): void {
    if (this.watcher) return;
    try {
      // The folder, not the file: the file may not exist yet, and watching a folder survives that.
      this.watcher = watch(this.options.dataDir, (_event, name) => {
        if (name === null || String(name) === 'trust-statements.jsonl') this.pickUpStore();
      });
      this.watcher.unref();
    } catch (error) {
      this.options.log.warn(
        `trust: cannot watch ${trustStatementsFile(this.options.dataDir)} (${error instanceof Error ? error.message : String(error)}); a recovery counts from the next start`,
      );
    }
  }

  /** Reads what was appended to the store since the last read (also what the watcher calls). */
  pickUpStore(): Promise<void> {
    const run = this.chain.then(() => this.readStore(true));
    this.chain = run.catch((error: unknown) =>
      this.options.log.error(`trust: reading the store failed: ${error instanceof Error ? error.message : String(error)}`),
    );
    return this.chain;
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  private async readStore(live: boolean): Promise<void> {
    const { entries, bad, offset } = readTrustFrom(this.options.dataDir, this.offset);
    this.offset = offset;
    if (bad > 0) this.options.log.warn(`trust: ${bad} line(s) of ${trustStatementsFile(this.options.dataDir)} are not statements; left out`);
    let changed = false;
    for (const entry of entries) {
      const result = await this.apply(entry);
      if (result.ok && result.changed && live && 'recovered' in entry) {
        this.options.log.info(`trust: the owner's device ${entry.recovered.device.id}, trusted on this machine, counts now`);
      }
      if (result.ok) changed ||= result.changed;
      // A line the book refuses now (written by hand, or by another version) is said, not trusted.
      else this.options.log.warn(`trust: a stored ${'recovered' in entry ? 'recovery' : 'statement'} no longer holds: ${result.message}`);
    }
    if (live && changed) await this.changed();
  }

  private apply(entry: StoredTrust): Promise<Accepted> {
    const { book } = this.options;
    if ('recovered' in entry) return book.addRecovered(entry.recovered);
    const signed = entry.statement;
    switch (signed.statement.kind) {
      case 'tether.grant/1':
        return book.addGrant(signed as Extract<SignedTrustStatement, { statement: { kind: 'tether.grant/1' } }>);
      case 'tether.device/1':
        return book.addDevice(signed as Extract<SignedTrustStatement, { statement: { kind: 'tether.device/1' } }>);
      case 'tether.revocation/1':
        return book.addRevocation(signed as Extract<SignedTrustStatement, { statement: { kind: 'tether.revocation/1' } }>);
    }
  }

  private async takeNow(raw: unknown[]): Promise<void> {
    let pending: { signed: SignedTrustStatement; last: { code: WireErrorCode; message: string } }[] = [];
    for (const item of raw) {
      const parsed = SignedTrustStatementSchema.safeParse(item);
      if (parsed.success) pending.push({ signed: parsed.data as SignedTrustStatement, last: { code: 'bad-request', message: '' } });
      else this.refuse(item, { code: 'bad-request', message: 'Not a signed grant, device vouch or revocation' });
    }
    let changed = false;
    for (let progress = true; progress && pending.length > 0; ) {
      progress = false;
      const next: typeof pending = [];
      for (const item of pending) {
        // Who signed, as the book knows them before the statement (a device's own revocation ends it).
        const signer = this.options.book.device(item.signed.statement.by)?.userId ?? null;
        const result = await this.apply({ statement: item.signed });
        if (!result.ok) {
          next.push({ signed: item.signed, last: { code: result.code, message: result.message } });
          continue;
        }
        progress = true;
        if (!result.changed) continue;
        changed = true;
        // Kept before it is said: a statement the host acted on is one it still holds after a crash.
        appendTrust(this.options.dataDir, { statement: item.signed });
        this.record(item.signed, 'done', undefined, signer);
      }
      pending = next;
    }
    for (const item of pending) this.refuse(item.signed, item.last);
    if (changed) await this.changed();
  }

  private async changed(): Promise<void> {
    try {
      await this.options.onChanged?.();
    } catch (error) {
      this.options.log.error(`trust: acting on a change failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private refuse(item: unknown, error: { code: WireErrorCode; message: string }): void {
    const parsed = SignedTrustStatementSchema.safeParse(item);
    const key = parsed.success ? parsed.data.sig : (JSON.stringify(item)?.slice(0, 200) ?? 'undefined');
    if (this.refused.has(key)) return;
    // Bounded: a relay sending endless junk gets it audited again rather than this set growing for ever.
    if (this.refused.size >= 10_000) this.refused.clear();
    this.refused.add(key);
    this.options.log.warn(`trust: refused a statement (${error.code}): ${error.message}`);
    if (parsed.success) this.record(parsed.data as SignedTrustStatement, 'refused', error);
    else
      this.write({
        type: 'trust.statement',
        id: 'unreadable',
        chatId: null,
        outcome: 'refused',
        code: error.code,
        message: error.message,
        userId: null,
        device: null,
        signedAt: null,
        payload: null,
        relaySays: null,
      });
  }

  private record(
    signed: SignedTrustStatement,
    outcome: 'done' | 'refused',
    error?: { code: WireErrorCode; message: string },
    signedBy: string | null = null,
  ): void {
    const { statement } = signed;
    const known = this.options.book.device(statement.by)?.userId ?? null;
    const what = describe(signed);
    this.write({
      ...what,
      outcome,
      ...(error ? { code: error.code, message: error.message } : {}),
      // Done: the signer the book verified. Refused: nobody verified; what it claimed, beside.
      userId: outcome === 'done' ? signedBy : null,
      device: outcome === 'done' ? statement.by : null,
      signedAt: statement.at,
      payload: null,
      relaySays: null,
      ...(outcome === 'refused' ? { claimed: { device: statement.by, person: known, at: statement.at, id: what.id } } : {}),
    });
  }

  private write(entry: Omit<Parameters<HostAudit['record']>[0], 'at'>): void {
    try {
      this.options.audit.record({ at: this.now(), ...entry });
    } catch (error) {
      this.options.log.error(`audit: could not record ${entry.type} ${entry.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
