// A scripted Gemini API server on loopback, for running the real Gemini CLI without the network
// (`GOOGLE_GEMINI_BASE_URL=<url>`, any `GEMINI_API_KEY`). What @google/gemini-cli 0.61.0 calls:
//   - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` for every turn step: answered
//     with the SSE stream (`data: <GenerateContentResponse>` events) of the reply `pick` chooses;
//   - `POST /v1beta/models/<model>:generateContent` for side requests (with `-m auto`, the model
//     router asks which model to use): answered with `pickSide`, by default a JSON choice of flash;
//   - `POST /v1beta/models/<model>:countTokens`: a small count.
// Anything else answers 404 with a Google-shaped JSON error and is kept in `strays`, so a CLI
// probing other endpoints fails fast instead of hanging. Every model request is kept in `requests`.
//
// Replies are lists of parts (a thought, text streamed in pieces, a function call) or an HTTP error
// (e.g. a 429 with Google's `RESOURCE_EXHAUSTED` details).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';

export type GeminiStep =
  /** A thought summary (`thought: true`), which the CLI shows as its thinking. */
  | { type: 'thought'; text: string }
  /** Reply text streamed in `deltas` events. */
  | { type: 'text'; text: string; deltas?: number }
  /** A function call, e.g. `write_file`, `replace`, `run_shell_command`. */
  | { type: 'call'; name: string; args: Record<string, unknown> };

export interface GeminiReply {
  steps?: GeminiStep[];
  usage?: { input: number; output: number; thoughts?: number };
  /** Answer with this HTTP error instead of a stream. */
  error?: { status: number; body: unknown };
}

export interface GeminiRequest {
  model: string;
  /** `streamGenerateContent`, `generateContent` or `countTokens`. */
  method: string;
  body: Record<string, any>;
  headers: http.IncomingHttpHeaders;
  /** The text of the newest user turn (its last text part). */
  userText: string;
  /** The newest turn's function response, when the CLI is continuing after a call. */
  functionResponse: { name: string; response: unknown } | null;
  /** The text of every turn of the conversation, oldest first (what a resumed session carries). */
  history: string[];
}

export type GeminiPicker = (request: GeminiRequest) => GeminiReply;

/** The 429 the Gemini API gives once a free-tier daily quota is spent; the CLI does not retry it. */
export const DAILY_QUOTA_ERROR = {
  status: 429,
  body: {
    error: {
      code: 429,
      message: 'You exceeded your current quota, please check your plan and billing details.',
      status: 'RESOURCE_EXHAUSTED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
              quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
              quotaValue: '250',
            },
          ],
        },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '41s' },
      ],
    },
  },
};

const ROUTE = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)(?:\?.*)?$/;

export class GeminiServer {
  readonly requests: GeminiRequest[] = [];
  readonly strays: string[] = [];
  private readonly server: http.Server;
  private readonly pick: GeminiPicker;
  private readonly pickSide: GeminiPicker;

  private constructor(pick: GeminiPicker, pickSide?: GeminiPicker) {
    this.pick = pick;
    this.pickSide = pickSide ?? (() => ({ steps: [{ type: 'text', text: JSON.stringify({ reasoning: 'A simple request.', model_choice: 'flash' }) }] }));
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  static async start(pick: GeminiPicker, pickSide?: GeminiPicker): Promise<GeminiServer> {
    const server = new GeminiServer(pick, pickSide);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  /** What `GOOGLE_GEMINI_BASE_URL` takes. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The turn requests (not side requests or token counts). */
  get turns(): GeminiRequest[] {
    return this.requests.filter((r) => r.method === 'streamGenerateContent');
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    void text(req).then((raw) => {
      const route = req.method === 'POST' ? ROUTE.exec(req.url ?? '') : null;
      if (!route) {
        this.strays.push(`${req.method} ${req.url}`);
        return googleError(res, 404, 'NOT_FOUND', 'not scripted');
      }
      let body: Record<string, any>;
      try {
        body = JSON.parse(raw) as Record<string, any>;
      } catch {
        return googleError(res, 400, 'INVALID_ARGUMENT', 'body is not JSON');
      }
      const request = readRequest(route[1]!, route[2]!, body, req.headers);
      this.requests.push(request);
      if (request.method === 'countTokens') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ totalTokens: 100 }));
        return;
      }
      let reply: GeminiReply;
      try {
        reply = request.method === 'streamGenerateContent' ? this.pick(request) : this.pickSide(request);
      } catch (error) {
        reply = { error: { status: 500, body: { error: { code: 500, message: String(error), status: 'INTERNAL' } } } };
      }
      if (reply.error) {
        res.writeHead(reply.error.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.error.body));
        return;
      }
      if (request.method === 'generateContent') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(chunks(reply, request.model).reduce(joinChunks)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const chunk of chunks(reply, request.model)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end();
    });
  }
}

/** A reply as GenerateContentResponse chunks: one per thought or call, `deltas` per text; the last one finishes. */
function chunks(reply: GeminiReply, model: string): Array<Record<string, any>> {
  const parts: Array<Record<string, unknown>> = [];
  for (const step of reply.steps ?? []) {
    if (step.type === 'thought') parts.push({ text: step.text, thought: true });
    else if (step.type === 'call') parts.push({ functionCall: { name: step.name, args: step.args } });
    else for (const piece of pieces(step.text, step.deltas ?? 2)) parts.push({ text: piece });
  }
  if (parts.length === 0) parts.push({ text: '' });
  const usage = reply.usage ?? { input: 1000, output: 20 };
  return parts.map((part, index) => {
    const last = index === parts.length - 1;
    return {
      candidates: [{ content: { role: 'model', parts: [part] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
      ...(last
        ? {
            usageMetadata: {
              promptTokenCount: usage.input,
              candidatesTokenCount: usage.output,
              thoughtsTokenCount: usage.thoughts ?? 0,
              totalTokenCount: usage.input + usage.output + (usage.thoughts ?? 0),
            },
            modelVersion: model,
          }
        : {}),
    };
  });
}

function joinChunks(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const parts = [...a.candidates[0].content.parts, ...b.candidates[0].content.parts];
  return { ...b, candidates: [{ ...b.candidates[0], content: { role: 'model', parts } }] };
}

function readRequest(model: string, method: string, body: Record<string, any>, headers: http.IncomingHttpHeaders): GeminiRequest {
  const contents: any[] = Array.isArray(body.contents) ? body.contents : [];
  const texts = (turn: any): string =>
    (Array.isArray(turn?.parts) ? turn.parts.filter((p: any) => typeof p?.text === 'string').map((p: any) => p.text as string) : []).join('\n');
  const last = contents.at(-1);
  const lastParts: any[] = Array.isArray(last?.parts) ? last.parts : [];
  const response = lastParts.find((p) => p?.functionResponse)?.functionResponse;
  const userTexts = lastParts.filter((p) => typeof p?.text === 'string').map((p) => p.text as string);
  return {
    model,
    method,
    body,
    headers,
    userText: last?.role === 'user' ? (userTexts.at(-1) ?? '') : '',
    functionResponse: response ? { name: String(response.name), response: response.response } : null,
    history: contents.map(texts),
  };
}

function googleError(res: http.ServerResponse, code: number, status: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code, message, status } }));
}

/** `whole` cut into about `n` pieces (whole code points). */
function pieces(whole: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(Array.from(whole).length / Math.max(1, n)));
  return whole.match(new RegExp(`[\\s\\S]{1,${size}}`, 'gu')) ?? [];
}
