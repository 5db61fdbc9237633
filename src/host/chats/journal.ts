// The request journal: a mutating request whose id was seen before is answered with the reply it got
// the first time and never runs twice. The relay resends queued `chat.send`s with the same id after a
// reconnect and relies on this, across host restarts too, so the journal is on disk
// (`requests.jsonl`, one `{key, reply}` a line) and keeps the newest `limit` ids.
import { mkdirSync, readFileSync } from 'node:fs';
import { appendFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface JournalReply {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
}

export class RequestJournal {
  private readonly file: string;
  private readonly limit: number;
  private readonly replies = new Map<string, JournalReply>();
  /** Requests still running: a retry that arrives meanwhile waits for the same reply. */
  private readonly running = new Map<string, Promise<JournalReply>>();
  private lines = 0;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string, limit = 2_000) {
    mkdirSync(dataDir, { recursive: true });
    this.file = path.join(dataDir, 'requests.jsonl');
    this.limit = limit;
    this.load();
  }

  /** The journal key: a request id means the same request only for the same verb. */
  static key(type: string, id: string): string {
    return `${type} ${id}`;
  }

  /** The earlier reply (or the one still being made) for this key, if any. */
  find(key: string): JournalReply | Promise<JournalReply> | undefined {
    return this.replies.get(key) ?? this.running.get(key);
  }

  /** Runs `work` once for `key`; its reply is remembered unless `keep` says it should not be (an internal failure may be retried). */
  async once(key: string, work: () => Promise<JournalReply>, keep: (reply: JournalReply) => boolean): Promise<JournalReply> {
    const earlier = this.find(key);
    if (earlier) return earlier;
    const pending = work();
    this.running.set(key, pending);
    try {
      const reply = await pending;
      if (keep(reply)) {
        this.remember(key, reply);
        // On disk before the answer leaves: a retry after a crash must find it.
        await this.chain;
      }
      return reply;
    } finally {
      this.running.delete(key);
    }
  }

  async flush(): Promise<void> {
    await this.chain;
  }

  private remember(key: string, reply: JournalReply): void {
    this.replies.set(key, reply);
    while (this.replies.size > this.limit) this.replies.delete(this.replies.keys().next().value as string);
    this.lines += 1;
    if (this.lines > this.limit * 2) {
      // Rewrite with just what is remembered, so the file stays bounded.
      const text = [...this.replies].map(([k, r]) => JSON.stringify({ key: k, reply: r }) + '\n').join('');
      this.lines = this.replies.size;
      this.enqueue(async () => {
        await writeFile(`${this.file}.tmp`, text);
        await rename(`${this.file}.tmp`, this.file);
      });
    } else {
      const line = JSON.stringify({ key, reply }) + '\n';
      this.enqueue(() => appendFile(this.file, line));
    }
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return;
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const entry = JSON.parse(line) as { key?: unknown; reply?: JournalReply };
        if (typeof entry.key === 'string' && entry.reply && typeof entry.reply.ok === 'boolean') {
          this.replies.delete(entry.key);
          this.replies.set(entry.key, entry.reply);
          this.lines += 1;
        }
      } catch {
        // a torn last line: the request it belonged to was answered after a crash, or never
      }
    }
    while (this.replies.size > this.limit) this.replies.delete(this.replies.keys().next().value as string);
  }

  private enqueue(op: () => Promise<unknown>): void {
    this.chain = this.chain.then(op).catch(() => undefined);
  }
}
