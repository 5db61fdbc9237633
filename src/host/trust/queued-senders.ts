// Sends this host queued behind a running turn, with who sent them (the verified signer), so that a
// person who loses the right to send here before their message runs does not have it run anyway.
// When the trust book changes (a signed revocation, a grant withdrawn by a cascade or superseded by a
// lower one), every queued send whose sender may no longer `chat.send` on its chat is taken back by
// the host itself, through its own runtime (`chat.unqueue`, so everyone attached sees the queue
// change), and said in the host's audit.
//
// This replaces the relay's own take-back (an unsigned `chat.unqueue` on the sender's behalf) when
// signatures are required: the host's hello says it does not take `chat.unqueue` unsigned, so an
// honest relay sends none (one that does is refused like any unsigned request), and the host's own
// follow-up does the job with nothing but what it verified. Without signatures the host knows no
// verified senders, tracks nothing, and the relay's take-back goes through as before.
//
// Kept in `<data>/queued-senders.json` (rewritten on each change, small: one entry per queued send),
// so a restart does not forget whose queued messages are whose.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { requirementOf, ACCESS_ROLES } from '../../contracts/index.ts';
import type { HostCore, HostLog, ReplyFrame } from '../chats/core.ts';
import { replaceFileSync } from '../disk.ts';
import type { HostAudit } from './audit.ts';
import type { TrustBook } from './book.ts';

const FileSchema = z.object({ sends: z.array(z.object({ chatId: z.string(), turnId: z.string(), userId: z.string(), device: z.string() })) });
type Queued = z.output<typeof FileSchema>['sends'][number];

export interface QueuedSendersOptions {
  core: HostCore;
  book: TrustBook;
  audit: HostAudit;
  dataDir: string;
  /** Serves a request of the host's own through the runtime, past the gate. */
  serveOwn: (frame: { id: string; type: string; payload: unknown }) => Promise<ReplyFrame>;
  log: HostLog;
  now?: () => number;
}

export class QueuedSenders {
  private readonly options: QueuedSendersOptions;
  private readonly file: string;
  private readonly sends = new Map<string, Queued>();

  constructor(options: QueuedSendersOptions) {
    this.options = options;
    this.file = path.join(path.resolve(options.dataDir), 'queued-senders.json');
    if (existsSync(this.file)) {
      try {
        for (const send of FileSchema.parse(JSON.parse(readFileSync(this.file, 'utf8'))).sends) this.sends.set(send.turnId, send);
      } catch (error) {
        options.log.warn(`queued senders: ${this.file} unreadable (${error instanceof Error ? error.message : String(error)}); starting empty`);
      }
    }
  }

  /** After a verified chat.send: remembers its sender when the host queued it. */
  note(type: string, payload: unknown, sender: { userId: string; device: string } | null, reply: ReplyFrame): void {
    if (type !== 'chat.send' || !sender || !reply.ok) return;
    const result = reply.result as { queued?: unknown; turnId?: unknown } | null;
    const chatId = (payload as { chatId?: unknown } | null)?.chatId;
    if (result?.queued !== true || typeof result.turnId !== 'string' || typeof chatId !== 'string') return;
    this.sends.set(result.turnId, { chatId, turnId: result.turnId, userId: sender.userId, device: sender.device });
    this.save();
  }

  /** Takes back every queued send whose sender may no longer send on its chat; forgets those that left the queue. */
  async recheck(): Promise<void> {
    const { core, book } = this.options;
    const need = requirementOf('chat.send');
    let changed = false;
    for (const send of [...this.sends.values()]) {
      const message = core.sessions.get(send.chatId)?.info.queue?.find((m) => m.turnId === send.turnId);
      if (!message) {
        this.sends.delete(send.turnId);
        changed = true;
        continue;
      }
      const held = book.roleOf(send.userId, need.hostWide ? null : send.chatId);
      if (held !== null && ACCESS_ROLES.indexOf(held) >= ACCESS_ROLES.indexOf(need.role)) continue;
      const id = `host:unqueue:${send.turnId}`;
      const reply = await this.options.serveOwn({ id, type: 'chat.unqueue', payload: { chatId: send.chatId, messageId: message.id } });
      this.sends.delete(send.turnId);
      changed = true;
      try {
        this.options.audit.record({
          at: (this.options.now ?? Date.now)(),
          type: 'chat.unqueue',
          id,
          chatId: send.chatId,
          outcome: reply.ok ? 'done' : 'failed',
          ...(reply.ok ? {} : { code: reply.error.code }),
          message: `Taken back by this host: its sender no longer holds ${need.role} here (a signed revocation)`,
          userId: send.userId,
          device: send.device,
          signedAt: null,
          payload: null,
          relaySays: null,
        });
      } catch (error) {
        this.options.log.error(`audit: could not record the take-back of ${send.turnId}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (changed) this.save();
  }

  private save(): void {
    try {
      replaceFileSync(this.file, JSON.stringify({ sends: [...this.sends.values()] }));
    } catch (error) {
      this.options.log.error(`queued senders: could not write ${this.file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
