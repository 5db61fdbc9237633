// A scripted Anthropic Messages API on loopback, for driving real CLIs (Claude Code, Copilot in its
// `COPILOT_PROVIDER_TYPE=anthropic` mode) with no network and no account.
//
// Every `POST /v1/messages` (query strings such as `?beta=true` ignored) is recorded and answered by
// the scenario's `reply` function: as SSE when the request asks to stream (`message_start`,
// `content_block_start/delta/stop` with text, thinking and tool_use input deltas, `message_delta`,
// `message_stop`), as one JSON message otherwise, or as an HTTP error (a 429, a 529). Requests the
// scenario should not have to think about — side requests without tools (titles, summaries) and
// `count_tokens` — get a short plain answer. Anything else gets a JSON 404, so a CLI never hangs on
// an endpoint nobody scripted; `unexpected` lists them for the test to look at.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use'; name: string; input: unknown; id?: string };

export interface ScriptedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/** A model reply: its content blocks, streamed in pieces of `chunk` characters. */
export interface ScriptedMessage {
  blocks: ScriptedBlock[];
  /** Default: `tool_use` when a block is one, else `end_turn`. */
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  usage?: ScriptedUsage;
  /** Characters per delta (default 8): real streams arrive in many small pieces. */
  chunk?: number;
  /** A pause after each delta (ms; default none): a reply that streams for a while, for faults that must land mid-stream. */
  delayMs?: number;
  /** Response headers beside the stream's own (e.g. the `anthropic-ratelimit-unified-*` ones a subscription's replies carry). */
  headers?: Record<string, string>;
}

/** An API error, e.g. `{ status: 429, errorType: 'rate_limit_error', … }` or a 529 overload. */
export interface ScriptedError {
  status: number;
  errorType: string;
  message: string;
  headers?: Record<string, string>;
}

export type ScriptedReply = ScriptedMessage | ScriptedError;

/** One request as the CLI sent it. */
export interface MessagesRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: MessagesBody;
}

export interface MessagesBody {
  model?: string;
  stream?: boolean;
  system?: unknown;
  tools?: Array<{ name: string }>;
  // Claude Code also sends `system` messages between the turns (agent lists, reminders).
  messages: Array<{ role: 'user' | 'assistant' | 'system'; content: string | Array<Record<string, unknown>> }>;
  [key: string]: unknown;
}

export interface AnthropicServerOptions {
  /** Answers every request that carries tools: the conversation the scenario plays. */
  reply(request: MessagesRequest): ScriptedReply | Promise<ScriptedReply>;
  /** Answers side requests (no tools); default: a short title-like text. */
  side?(request: MessagesRequest): ScriptedReply | Promise<ScriptedReply>;
}

export class AnthropicServer {
  readonly requests: MessagesRequest[] = [];
  /** Requests to endpoints nobody scripted (answered 404). */
  readonly unexpected: string[] = [];
  private readonly server: Server;
  private readonly options: AnthropicServerOptions;
  private port = 0;
  private messageCount = 0;

  private constructor(options: AnthropicServerOptions) {
    this.options = options;
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, apiError('api_error', String(error)));
        else res.end();
      });
    });
  }

  static async start(options: AnthropicServerOptions): Promise<AnthropicServer> {
    const server = new AnthropicServer(options);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    server.port = (server.server.address() as AddressInfo).port;
    return server;
  }

  /** What `ANTHROPIC_BASE_URL` should be. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The requests of the scenario itself (with tools), in arrival order. */
  get conversation(): MessagesRequest[] {
    return this.requests.filter((r) => r.path === '/v1/messages' && (r.body.tools?.length ?? 0) > 0);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const raw = await readBody(req);
    if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) {
      res.writeHead(200).end();
      return;
    }
    if (req.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')) {
      this.unexpected.push(`${req.method} ${req.url}`);
      sendJson(res, 404, apiError('not_found_error', `Not scripted: ${req.method} ${path}`));
      return;
    }
    let body: MessagesBody;
    try {
      body = JSON.parse(raw) as MessagesBody;
    } catch {
      sendJson(res, 400, apiError('invalid_request_error', 'Body is not JSON'));
      return;
    }
    const request: MessagesRequest = { path, headers: req.headers, body };
    this.requests.push(request);
    if (path === '/v1/messages/count_tokens') {
      sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
      return;
    }
    const hasTools = (body.tools?.length ?? 0) > 0;
    const reply = hasTools ? await this.options.reply(request) : await (this.options.side?.(request) ?? { blocks: [{ type: 'text', text: 'Scripted chat' }] });
    if ('status' in reply) {
      sendJson(res, reply.status, apiError(reply.errorType, reply.message), reply.headers);
      return;
    }
    this.messageCount += 1;
    const id = `msg_scripted_${this.messageCount}`;
    const model = body.model ?? 'claude-scripted';
    if (body.stream) await this.stream(res, id, model, reply);
    else sendJson(res, 200, fullMessage(id, model, reply));
  }

  private async stream(res: ServerResponse, id: string, model: string, reply: ScriptedMessage): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${id}`, ...reply.headers });
    const usage = usageOf(reply);
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    });
    const chunk = Math.max(1, reply.chunk ?? 8);
    const delay = reply.delayMs ?? 0;
    // Each delta is sent, then the stream pauses (when asked); a client that hung up ends it.
    const sendDelta = async (index: number, delta: Record<string, unknown>) => {
      send('content_block_delta', { type: 'content_block_delta', index, delta });
      if (delay > 0 && !res.destroyed) await new Promise((resolve) => setTimeout(resolve, delay));
    };
    for (const [index, block] of reply.blocks.entries()) {
      const full = blockOf(block, id, index);
      switch (block.type) {
        case 'text':
          send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
          for (const piece of pieces(block.text, chunk)) await sendDelta(index, { type: 'text_delta', text: piece });
          break;
        case 'thinking':
          send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
          for (const piece of pieces(block.thinking, chunk)) await sendDelta(index, { type: 'thinking_delta', thinking: piece });
          send('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'signature_delta', signature: (full as { signature: string }).signature },
          });
          break;
        case 'tool_use':
          send('content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { type: 'tool_use', id: (full as { id: string }).id, name: block.name, input: {} },
          });
          for (const piece of pieces(JSON.stringify(block.input ?? {}), chunk)) await sendDelta(index, { type: 'input_json_delta', partial_json: piece });
          break;
      }
      send('content_block_stop', { type: 'content_block_stop', index });
    }
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReasonOf(reply), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    send('message_stop', { type: 'message_stop' });
    res.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Reading a request: what a scenario decides its next reply by.

/** The last `user` message of the request: what the model answers (`system` notes may follow it). */
export function lastUserMessage(request: MessagesRequest): MessagesBody['messages'][number] | undefined {
  return request.body.messages.findLast((m) => m.role === 'user');
}

/** Every text of a message (tool results excluded). */
export function messageText(message: MessagesBody['messages'][number] | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text))
    .join('\n');
}

/** What the user said last (the CLI may prefix reminders, so match with `includes` or a pattern). */
export function lastUserText(request: MessagesRequest): string {
  return messageText(lastUserMessage(request));
}

/** What the first message said: which conversation this is (a subagent's starts with its prompt). */
export function firstUserText(request: MessagesRequest): string {
  return messageText(request.body.messages.find((m) => m.role === 'user'));
}

/** The tool results in the request's last user message, by tool_use id. */
export function toolResults(request: MessagesRequest): Map<string, { text: string; isError: boolean }> {
  const out = new Map<string, { text: string; isError: boolean }>();
  const last = lastUserMessage(request);
  if (!last || typeof last.content === 'string') return out;
  for (const block of last.content) {
    if (block.type !== 'tool_result') continue;
    const content = block.content;
    const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((c: { text?: string }) => c.text ?? '').join('') : '';
    out.set(String(block.tool_use_id), { text, isError: block.is_error === true });
  }
  return out;
}

/** The system prompt as one string (it arrives as a string or as text blocks). */
export function systemText(request: MessagesRequest): string {
  const system = request.body.system;
  if (typeof system === 'string') return system;
  if (Array.isArray(system)) return system.map((b: { text?: string }) => b.text ?? '').join('\n');
  return '';
}

/** Whether any message of the request holds an image block (attachments reach the model as these). */
export function hasImage(request: MessagesRequest): boolean {
  return request.body.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'image'));
}

// ---------------------------------------------------------------------------------------------

function usageOf(reply: ScriptedMessage): ScriptedUsage {
  return { cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...(reply.usage ?? { input_tokens: 100, output_tokens: 20 }) };
}

function stopReasonOf(reply: ScriptedMessage): string {
  return reply.stopReason ?? (reply.blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
}

function blockOf(block: ScriptedBlock, messageId: string, index: number): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: `sig-${messageId}-${index}` };
    case 'tool_use':
      return { type: 'tool_use', id: block.id ?? `toolu_${messageId}_${index}`, name: block.name, input: block.input ?? {} };
  }
}

function fullMessage(id: string, model: string, reply: ScriptedMessage): Record<string, unknown> {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: reply.blocks.map((b, i) => blockOf(b, id, i)),
    stop_reason: stopReasonOf(reply),
    stop_sequence: null,
    usage: usageOf(reply),
  };
}

function apiError(type: string, message: string): Record<string, unknown> {
  return { type: 'error', error: { type, message } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
