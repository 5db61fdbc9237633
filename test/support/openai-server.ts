// A scripted OpenAI Responses API server on loopback, for running real CLIs (Codex; Copilot with
// `COPILOT_PROVIDER_TYPE=openai`, `COPILOT_PROVIDER_WIRE_API=responses`) without the network.
// `POST /v1/responses` answers with the SSE stream of whichever reply `pick` chooses for that
// request; anything else answers 404 with a JSON body, so a CLI probing other endpoints fails fast
// instead of hanging.
//
// Replies are lists of output steps (reasoning summary, text, function or freeform tool call), optionally held open
// (`hold`: the stream stays open until `release()` or the client goes away) or answered with an HTTP
// error (e.g. a 429 with rate-limit headers). Every request is kept in `requests` for assertions.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ResponseStep =
  /** A reasoning item whose summary streams in `deltas` pieces. */
  | { type: 'reasoning'; text: string; deltas?: number }
  /** An assistant message streaming in `deltas` pieces. */
  | { type: 'text'; text: string; deltas?: number }
  /**
   * A function call, e.g. Codex's `exec_command` or `request_user_input`; `namespace` for a tool the
   * CLI offered inside a namespace (Codex 0.171's `multi_agent_v1` holds `spawn_agent`, `wait_agent` …).
   */
  | { type: 'call'; name: string; arguments: unknown; callId?: string; namespace?: string }
  /** A freeform (custom) tool call, e.g. Codex's `apply_patch` for a model its catalog knows: raw text input. */
  | { type: 'custom'; name: string; input: string; callId?: string };

export interface ScriptedReply {
  steps?: ResponseStep[];
  usage?: { input: number; output: number; cached?: number; reasoning?: number };
  /** Answer with this HTTP error instead of a stream. */
  error?: { status: number; body: unknown; headers?: Record<string, string> };
  /** Extra response headers on a stream (e.g. `x-codex-primary-used-percent`). */
  headers?: Record<string, string>;
}

/** What a reply is chosen by. */
export interface ResponsesRequest {
  body: Record<string, any>;
  headers: http.IncomingHttpHeaders;
  /** The text of the newest user message in `input`. */
  userText: string;
  /** The newest input item when it is a tool's output (the CLI is continuing after a call). */
  toolOutput: { callId: string; output: string } | null;
}

export type ReplyPicker = (request: ResponsesRequest) => ScriptedReply;

export class OpenAiServer {
  readonly requests: ResponsesRequest[] = [];
  /** Paths of requests that were not `POST /v1/responses`. */
  readonly strays: string[] = [];
  private readonly server: http.Server;
  private pick: ReplyPicker;
  private counter = 0;

  private constructor(pick: ReplyPicker) {
    this.pick = pick;
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  static async start(pick: ReplyPicker): Promise<OpenAiServer> {
    const server = new OpenAiServer(pick);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  /** The `base_url` a CLI's provider config takes. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  setPicker(pick: ReplyPicker): void {
    this.pick = pick;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      raw += chunk;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/responses')) {
        this.strays.push(`${req.method} ${req.url}`);
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not scripted', type: 'not_found' } }));
        return;
      }
      let body: Record<string, any>;
      try {
        body = JSON.parse(raw) as Record<string, any>;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'body is not JSON', type: 'invalid_request_error' } }));
        return;
      }
      const request = readRequest(body, req.headers);
      this.requests.push(request);
      let reply: ScriptedReply;
      try {
        reply = this.pick(request);
      } catch (error) {
        reply = { error: { status: 500, body: { error: { message: String(error), type: 'server_error' } } } };
      }
      if (reply.error) {
        res.writeHead(reply.error.status, { 'content-type': 'application/json', ...reply.error.headers });
        res.end(JSON.stringify(reply.error.body));
        return;
      }
      this.stream(res, reply);
    });
  }

  private stream(res: http.ServerResponse, reply: ScriptedReply): void {
    const n = ++this.counter;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers });
    // What `response.completed` repeats as the whole response's output (Copilot reads it; Codex the items).
    const output: unknown[] = [];
    const send = (event: Record<string, unknown>): void => {
      if (event.type === 'response.output_item.done') output.push(event.item);
      res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
    };
    const responseId = `resp_${n}`;
    send({ type: 'response.created', response: { id: responseId } });
    (reply.steps ?? []).forEach((step, index) => {
      const itemId = `${step.type}_${n}_${index}`;
      switch (step.type) {
        case 'reasoning': {
          send({ type: 'response.output_item.added', output_index: index, item: { type: 'reasoning', id: itemId, summary: [] } });
          send({
            type: 'response.reasoning_summary_part.added',
            item_id: itemId,
            output_index: index,
            summary_index: 0,
            part: { type: 'summary_text', text: '' },
          });
          for (const piece of pieces(step.text, step.deltas ?? 2)) {
            send({ type: 'response.reasoning_summary_text.delta', item_id: itemId, output_index: index, summary_index: 0, delta: piece });
          }
          send({ type: 'response.reasoning_summary_text.done', item_id: itemId, output_index: index, summary_index: 0, text: step.text });
          send({
            type: 'response.output_item.done',
            output_index: index,
            item: { type: 'reasoning', id: itemId, summary: [{ type: 'summary_text', text: step.text }] },
          });
          break;
        }
        case 'text': {
          send({ type: 'response.output_item.added', output_index: index, item: { type: 'message', id: itemId, role: 'assistant', content: [] } });
          send({ type: 'response.content_part.added', item_id: itemId, output_index: index, content_index: 0, part: { type: 'output_text', text: '' } });
          for (const piece of pieces(step.text, step.deltas ?? 2)) {
            send({ type: 'response.output_text.delta', item_id: itemId, output_index: index, content_index: 0, delta: piece });
          }
          send({ type: 'response.output_text.done', item_id: itemId, output_index: index, content_index: 0, text: step.text });
          send({
            type: 'response.output_item.done',
            output_index: index,
            item: { type: 'message', id: itemId, role: 'assistant', content: [{ type: 'output_text', text: step.text }] },
          });
          break;
        }
        case 'call': {
          const item = {
            type: 'function_call',
            id: itemId,
            call_id: step.callId ?? `call_${n}_${index}`,
            name: step.name,
            arguments: JSON.stringify(step.arguments),
            ...(step.namespace ? { namespace: step.namespace } : {}),
          };
          // With its `status`, as the real API sends it: the AI SDK (OpenCode's) refuses a done
          // function_call without `status: "completed"`, and the call then never runs nor asks.
          send({ type: 'response.output_item.added', output_index: index, item: { ...item, arguments: '', status: 'in_progress' } });
          send({ type: 'response.function_call_arguments.delta', item_id: itemId, output_index: index, delta: item.arguments });
          send({ type: 'response.function_call_arguments.done', item_id: itemId, output_index: index, arguments: item.arguments });
          send({ type: 'response.output_item.done', output_index: index, item: { ...item, status: 'completed' } });
          break;
        }
        case 'custom': {
          const item = { type: 'custom_tool_call', id: itemId, call_id: step.callId ?? `call_${n}_${index}`, name: step.name, input: step.input };
          send({ type: 'response.output_item.added', output_index: index, item: { ...item, input: '' } });
          send({ type: 'response.custom_tool_call_input.delta', item_id: itemId, output_index: index, delta: item.input });
          send({ type: 'response.custom_tool_call_input.done', item_id: itemId, output_index: index, input: item.input });
          send({ type: 'response.output_item.done', output_index: index, item });
          break;
        }
      }
    });
    const usage = reply.usage ?? { input: 1000, output: 50 };
    send({
      type: 'response.completed',
      response: {
        id: responseId,
        object: 'response',
        status: 'completed',
        output,
        usage: {
          input_tokens: usage.input,
          input_tokens_details: { cached_tokens: usage.cached ?? 0 },
          output_tokens: usage.output,
          output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
          total_tokens: usage.input + usage.output,
        },
      },
    });
    res.end();
  }
}

function readRequest(body: Record<string, any>, headers: http.IncomingHttpHeaders): ResponsesRequest {
  const input: any[] = Array.isArray(body.input) ? body.input : [];
  let userText = '';
  for (const item of input) {
    if (item?.type === 'message' && item.role === 'user' && Array.isArray(item.content)) {
      const text = item.content
        .filter((c: any) => c?.type === 'input_text')
        .map((c: any) => String(c.text))
        .join('');
      // Codex sends its environment context as a user message too; the person's words are the newest one.
      if (!text.startsWith('<environment_context>') && !text.startsWith('# AGENTS.md')) userText = text;
    }
  }
  const last = input.at(-1);
  const toolOutput =
    last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output'
      ? { callId: String(last.call_id), output: typeof last.output === 'string' ? last.output : JSON.stringify(last.output) }
      : null;
  return { body, headers, userText, toolOutput };
}

function pieces(text: string, n: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / Math.max(1, n)));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}
