// Codex's own transcript of a session, its rollout (`<CODEX_HOME>/sessions/<y>/<m>/<d>/rollout-<time>-<id>.jsonl`),
// read as it grows (TranscriptTail) and mapped onto chat items, so a Codex terminal session is drawn
// like a chat. Nothing is read from the terminal's screen.
//
// What it relies on, as Codex 0.171 writes it: one JSON object a line, `{ timestamp, type, payload }`.
// `event_msg` lines whose payload is `item_completed` carry the finished items of a turn in the
// rollout's own shape (`UserMessage` with `content[].text`, `AgentMessage` with `content[].text`,
// `Reasoning` with `summary_text`, `CommandExecution` with `command`, `status`, `aggregated_output`,
// `exit_code`, and other tools by their type); a call the model made shows first as a
// `response_item` `function_call` (`call_id`, `name`, `arguments` as JSON text), the tool then
// running until its `item_completed`. The rest (`response_item` messages, which include the CLI's own
// instructions and environment, `session_meta`, `turn_context`, token counts) is bookkeeping. A line
// that is not JSON or not of these shapes is skipped.
import { TimeOrderedItems, type ChatItem, type ChatToolItem } from '../../contracts/index.ts';
import type { TranscriptChange, TranscriptReader } from './claude-transcript.ts';

type Json = Record<string, any>;

export class CodexTranscript implements TranscriptReader {
  readonly items = new TimeOrderedItems();
  private readonly tools = new Map<string, ChatToolItem>();

  take(text: string, change: TranscriptChange): void {
    let line: Json;
    try {
      line = JSON.parse(text) as Json;
    } catch {
      return;
    }
    if (typeof line !== 'object' || line === null || typeof line.payload !== 'object' || line.payload === null) return;
    const createdAt = typeof line.timestamp === 'string' && Number.isFinite(Date.parse(line.timestamp)) ? Date.parse(line.timestamp) : Date.now();
    const payload = line.payload as Json;
    if (line.type === 'response_item' && payload.type === 'function_call') this.call(payload, createdAt, change);
    else if (line.type === 'event_msg' && payload.type === 'item_completed' && typeof payload.item === 'object' && payload.item !== null) {
      this.completed(payload.item as Json, createdAt, change);
    } else if (line.type === 'event_msg' && payload.type === 'thread_name_updated' && typeof payload.thread_name === 'string') {
      change.title = payload.thread_name;
    }
  }

  private put(item: ChatItem, change: TranscriptChange): void {
    this.items.set(item);
    change.items.push(item);
  }

  /** A call the model made: a running tool until its item completes. */
  private call(payload: Json, createdAt: number, change: TranscriptChange): void {
    const id = typeof payload.call_id === 'string' ? payload.call_id : null;
    if (!id || typeof payload.name !== 'string' || this.tools.has(id)) return;
    let args: unknown = payload.arguments;
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args);
      } catch {
        // Kept as the text the model wrote.
      }
    }
    const fields = typeof args === 'object' && args !== null ? (args as Json) : {};
    const shell = payload.name === 'exec_command' || payload.name === 'shell';
    const tool: ChatToolItem = {
      kind: 'tool',
      id,
      createdAt,
      turnId: null,
      toolUseId: id,
      name: shell ? 'Bash' : payload.name,
      input: shell ? { command: String(fields.cmd ?? fields.command ?? '') } : args,
      output: null,
      state: 'running',
      parentToolUseId: null,
    };
    this.tools.set(id, tool);
    this.put(tool, change);
  }

  private completed(item: Json, createdAt: number, change: TranscriptChange): void {
    const id = typeof item.id === 'string' ? item.id : null;
    if (!id) return;
    switch (item.type) {
      case 'UserMessage': {
        const text = texts(item.content);
        if (text) this.put({ kind: 'user', id, createdAt, turnId: null, text }, change);
        return;
      }
      case 'AgentMessage': {
        const text = texts(item.content);
        if (text) this.put({ kind: 'assistant', id, createdAt, turnId: null, text, streaming: false, parentToolUseId: null }, change);
        return;
      }
      case 'Reasoning': {
        const text = Array.isArray(item.summary_text) ? item.summary_text.filter((t: unknown) => typeof t === 'string').join('\n') : '';
        if (text) this.put({ kind: 'thinking', id, createdAt, turnId: null, text, streaming: false, endedAt: createdAt }, change);
        return;
      }
      default:
        return this.toolDone(id, item, createdAt, change);
    }
  }

  /** Any other completed item is a tool's end (a command, an edit, an MCP call, a search). */
  private toolDone(id: string, item: Json, createdAt: number, change: TranscriptChange): void {
    change.settledToolUseIds.push(id);
    const command = item.type === 'CommandExecution' ? commandOf(item) : null;
    const started =
      this.tools.get(id) ??
      ({
        kind: 'tool',
        id,
        createdAt,
        turnId: null,
        toolUseId: id,
        name: command !== null ? 'Bash' : String(item.type ?? 'tool'),
        input: command !== null ? { command } : item,
        output: null,
        state: 'running',
        parentToolUseId: null,
      } satisfies ChatToolItem);
    const failed =
      item.status === 'failed' || item.status === 'declined' || (typeof item.exit_code === 'number' && item.exit_code !== 0) || item.success === false;
    const output = typeof item.aggregated_output === 'string' ? item.aggregated_output : item.status === 'declined' ? 'Declined' : null;
    const done: ChatToolItem = { ...started, output, state: failed ? 'error' : 'done' };
    this.tools.set(id, done);
    this.put(done, change);
  }
}

function texts(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .filter((b: Json) => typeof b?.text === 'string')
    .map((b: Json) => b.text as string)
    .join('\n');
}

/** The command as the person would type it: the `-lc` script of Codex's shell wrapper, else the words joined. */
function commandOf(item: Json): string {
  const words = Array.isArray(item.command) ? (item.command.filter((w: unknown) => typeof w === 'string') as string[]) : [];
  const script = words.indexOf('-lc');
  if (script >= 0 && words[script + 1] !== undefined) return words[script + 1]!;
  return words.join(' ');
}
