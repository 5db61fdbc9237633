// The request journal: a mutating request whose id was seen before is answered with the reply it got
// the first time and never runs twice. The relay resends the `chat.send`s it kept with the same id
// after a reconnect, and after a host restart too, so the journal is on disk (`requests.jsonl`) and
// keeps the newest `limit` ids.
//
// Each request leaves two lines, both written synchronously: `{key}` before it runs, `{key, reply}`
// once it has its reply and before the reply leaves. A kill -9 can land after a request changed a
// chat (its events are already in the chat's log) and before its reply line; the lone `{key}` line
// then tells the next process that the request may have run, and a retry gets INTERRUPTED rather than
// running a second time: a lost answer is better than a message sent twice.
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadLines, replaceFileSync } from '../disk.ts';

export interface JournalReply {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
}

/** The answer to a retry of a request the host was serving when it stopped. */
export const INTERRUPTED: JournalReply = {
  ok: false,
  error: { code: 'internal', message: 'The host stopped while it served this request; the chat shows what it did' },
};

export class RequestJournal {
  private readonly file: string;
  private readonly limit: number;
  private readonly replies = new Map<string, JournalReply>();
  /** Requests running now: a retry that arrives meanwhile waits for the same reply. */
  private readonly running = new Map<string, Promise<JournalReply>>();
  private lines = 0;

  constructor(dataDir: string, limit = 2_000) {
    mkdirSync(dataDir, { recursive: true });
    this.file = path.join(dataDir, 'requests.jsonl');
    this.limit = limit;
    loadLines(this.file, (value) => {
      const entry = value as { key?: unknown; reply?: JournalReply } | null;
      if (typeof entry?.key !== 'string') return false;
      const reply = entry.reply && typeof entry.reply.ok === 'boolean' ? entry.reply : INTERRUPTED;
      this.replies.delete(entry.key);
      this.replies.set(entry.key, reply);
      this.lines += 1;
      return true;
    });
    this.trim();
  }

  /** The journal key: a request id means the same request only for the same verb. */
  static key(type: string, id: string): string {
    return `${type} ${id}`;
  }

  /** Runs `work` once for `key`: a key seen before gets its first reply (or the one still being made). */
  async once(key: string, work: () => Promise<JournalReply>): Promise<JournalReply> {
    const earlier = this.replies.get(key) ?? this.running.get(key);
    if (earlier) return earlier;
    this.append({ key });
    const pending = work();
    this.running.set(key, pending);
    try {
      const reply = await pending;
      this.replies.set(key, reply);
      this.trim();
      this.append({ key, reply });
      return reply;
    } finally {
      this.running.delete(key);
    }
  }

  private append(line: { key: string; reply?: JournalReply }): void {
    this.lines += 1;
    if (this.lines <= this.limit * 2) {
      appendFileSync(this.file, `${JSON.stringify(line)}\n`);
      return;
    }
    // Rewrite with what is remembered and the requests still running (this one among them), so the file stays bounded.
    const texts = [...this.replies].map(([key, reply]) => JSON.stringify({ key, reply }));
    for (const key of this.running.keys()) if (!this.replies.has(key)) texts.push(JSON.stringify({ key }));
    if (!line.reply) texts.push(JSON.stringify(line));
    replaceFileSync(this.file, texts.map((text) => `${text}\n`).join(''));
    this.lines = texts.length;
  }

  private trim(): void {
    while (this.replies.size > this.limit) this.replies.delete(this.replies.keys().next().value as string);
  }
}
