// Claude Code's own transcript (`<config>/projects/<folder>/<session id>.jsonl`), read as it grows
// and mapped onto chat items, so a terminal session is drawn like a chat. Nothing is read from the
// terminal's screen.
//
// What it relies on, as Claude Code 2.1.197 writes it: one JSON object a line; `user` lines carry the
// person's prompt (`message.content` a string, or text blocks) or tool results (`tool_result` blocks
// naming their `tool_use_id`); `assistant` lines carry one content block each (`text`, `thinking`,
// `tool_use`) under the line's `uuid`; `isSidechain` lines are a subagent's, `isMeta` lines the CLI's
// own notes; other types (`mode`, `file-history-snapshot`, `system`, `attachment`, `last-prompt`)
// are bookkeeping. A line that is not JSON or not of these shapes is skipped.
import { open } from 'node:fs/promises';
import { TimeOrderedItems, type ChatItem, type ChatToolItem } from '../../contracts/index.ts';

type Json = Record<string, any>;

/** What one batch of new lines changed. */
export interface TranscriptChange {
  items: ChatItem[];
  /** Tool calls that got their result: any approval waiting on one of them is settled. */
  settledToolUseIds: string[];
  /** The title the CLI gave the session, when a line set one. */
  title?: string;
}

/** A CLI's transcript read line by line into items (Claude Code's here, Codex's in codex-transcript.ts). */
export interface TranscriptReader {
  /** Every item so far, by id, in the order they happened (not always the file's). */
  readonly items: TimeOrderedItems;
  /** Maps one line into `change`. */
  take(text: string, change: TranscriptChange): void;
}

export class ClaudeTranscript implements TranscriptReader {
  /** Every item so far, by id, in the order they happened (not always the file's). */
  readonly items = new TimeOrderedItems();
  private readonly tools = new Map<string, ChatToolItem>();

  /** Maps one line; answers what it changed. */
  take(text: string, change: TranscriptChange): void {
    let line: Json;
    try {
      line = JSON.parse(text) as Json;
    } catch {
      return;
    }
    if (typeof line !== 'object' || line === null) return;
    if (line.type === 'summary' && typeof line.summary === 'string') change.title = line.summary;
    if ((line.type === 'custom-title' || line.type === 'ai-title') && typeof (line.customTitle ?? line.aiTitle ?? line.title) === 'string') {
      change.title = line.customTitle ?? line.aiTitle ?? line.title;
    }
    if (line.isSidechain === true || line.isMeta === true) return;
    const createdAt = typeof line.timestamp === 'string' && Number.isFinite(Date.parse(line.timestamp)) ? Date.parse(line.timestamp) : Date.now();
    const id = typeof line.uuid === 'string' ? line.uuid : null;
    const content = line.message?.content;
    if (!id) return;
    if (line.type === 'user') this.user(id, content, createdAt, change);
    else if (line.type === 'assistant' && Array.isArray(content)) this.assistant(id, content, createdAt, change);
  }

  private put(item: ChatItem, change: TranscriptChange): void {
    this.items.set(item);
    change.items.push(item);
  }

  private user(id: string, content: unknown, createdAt: number, change: TranscriptChange): void {
    if (typeof content === 'string') {
      if (content.length > 0) this.put({ kind: 'user', id, createdAt, turnId: null, text: content }, change);
      return;
    }
    if (!Array.isArray(content)) return;
    const text: string[] = [];
    for (const block of content as Json[]) {
      if (block?.type === 'text' && typeof block.text === 'string') text.push(block.text);
      if (block?.type !== 'tool_result' || typeof block.tool_use_id !== 'string') continue;
      change.settledToolUseIds.push(block.tool_use_id);
      const tool = this.tools.get(block.tool_use_id);
      if (!tool) continue;
      const settled: ChatToolItem = { ...tool, output: resultText(block.content), state: block.is_error === true ? 'error' : 'done' };
      this.tools.set(tool.toolUseId, settled);
      this.put(settled, change);
    }
    if (text.length > 0) this.put({ kind: 'user', id, createdAt, turnId: null, text: text.join('\n') }, change);
  }

  private assistant(id: string, content: Json[], createdAt: number, change: TranscriptChange): void {
    content.forEach((block, index) => {
      // A line holds one block; an id per block keeps a line with several apart all the same.
      const itemId = index === 0 ? id : `${id}:${index}`;
      if (block?.type === 'text' && typeof block.text === 'string') {
        this.put({ kind: 'assistant', id: itemId, createdAt, turnId: null, text: block.text, streaming: false, parentToolUseId: null }, change);
      } else if (block?.type === 'thinking' && typeof block.thinking === 'string') {
        this.put({ kind: 'thinking', id: itemId, createdAt, turnId: null, text: block.thinking, streaming: false, endedAt: createdAt }, change);
      } else if (block?.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
        const tool: ChatToolItem = {
          kind: 'tool',
          id: block.id,
          createdAt,
          turnId: null,
          toolUseId: block.id,
          name: block.name,
          input: block.input,
          output: null,
          state: 'running',
          parentToolUseId: null,
        };
        this.tools.set(block.id, tool);
        this.put(tool, change);
      }
    });
  }
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b: Json) => b?.type === 'text' && typeof b.text === 'string')
    .map((b: Json) => b.text as string)
    .join('\n');
}

/**
 * Follows one transcript file: each `read()` takes the bytes added since the last one (never the
 * whole file again), keeps a torn last line for the next read, and maps the complete lines.
 */
export class TranscriptTail {
  readonly transcript: TranscriptReader;
  private offset = 0;
  /** The bytes of a line not yet complete (kept as bytes: a read may end inside a character). */
  private partial = Buffer.alloc(0);
  private chain: Promise<unknown> = Promise.resolve();
  private readonly file: string;

  constructor(file: string, transcript: TranscriptReader = new ClaudeTranscript()) {
    this.file = file;
    this.transcript = transcript;
  }

  /** Reads what was added; reads run one at a time, in order. */
  read(): Promise<TranscriptChange> {
    const next = this.chain.then(() => this.readNow());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async readNow(): Promise<TranscriptChange> {
    const change: TranscriptChange = { items: [], settledToolUseIds: [] };
    let handle;
    try {
      handle = await open(this.file, 'r');
    } catch {
      return change; // not written yet: the CLI makes it with the first message
    }
    try {
      const { size } = await handle.stat();
      if (size < this.offset) {
        // Rewritten from the start (never by 2.1.197, but a shorter file cannot be continued).
        this.offset = 0;
        this.partial = Buffer.alloc(0);
      }
      if (size === this.offset) return change;
      const buffer = Buffer.alloc(size - this.offset);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
      this.offset += bytesRead;
      const bytes = Buffer.concat([this.partial, buffer.subarray(0, bytesRead)]);
      const end = bytes.lastIndexOf(0x0a) + 1;
      this.partial = Buffer.from(bytes.subarray(end));
      for (const line of bytes.subarray(0, end).toString('utf8').split('\n')) if (line.length > 0) this.transcript.take(line, change);
    } finally {
      await handle.close();
    }
    // The same item may change twice in one batch: its last state is what counts.
    const last = new Map(change.items.map((item) => [item.id, item]));
    change.items = [...last.values()];
    return change;
  }
}
