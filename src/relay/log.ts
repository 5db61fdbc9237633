// The relay's logs: one JSON object per line, each carrying the request id (`rid`) of the work it
// belongs to, so an operator can follow one HTTP request, or one socket frame, across the Worker and
// its Durable Objects (Workers Logs and `wrangler tail` read the fields of a JSON line).
//
// What a line may carry is decided here rather than at each call: flat fields of ids, codes, counts,
// route patterns and short reasons. Never a token, password, email, message or prompt text, file
// name, path or item content. Field values are primitives, so a payload cannot be dumped whole, and
// strings are cut short, so an error that quotes its input cannot spill much of it.
//
// The id travels with the work through AsyncLocalStorage (workerd's `nodejs_als` flag): the Worker
// opens a scope per HTTP request, every stub call hands the id on to the object it reaches
// (objects/scoped-calls.ts), and an object opens a scope of its own for the work it starts itself
// (a socket's frame, an alarm).
import { AsyncLocalStorage } from 'node:async_hooks';

export type LogFields = Record<string, string | number | boolean | null | undefined>;
type Level = 'info' | 'warn' | 'error';

/** The response header a person can quote: the id every log line of their request carries. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

const FIELD_MAX = 300;
// drizzle's error message quotes the statement and its parameters (hashes, emails); db/failures.ts
// reads D1's own reason instead, and this catches one that crossed an RPC call as plain text.
const STATEMENT = /Failed query:[\s\S]*/;
const scope = new AsyncLocalStorage<string>();

/** Runs `work` with `rid` as the id of every line it (and whatever it starts) logs. */
export function inScope<T>(rid: string, work: () => T): T {
  return scope.run(rid, work);
}

/** The id of the work running now; work outside any scope gets one of its own per line. */
export function currentRid(): string {
  return scope.getStore() ?? newRid();
}

export function newRid(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

// Events of one isolate numbered in turn: a frame's id costs no randomness, and the parent's id (random,
// per socket) already keeps ids apart across isolates.
let events = 0;

/** An id for one event of a longer-lived piece of work (a frame on a socket): the parent's id, then its own. */
export function childRid(parent: string): string {
  events = (events + 1) % 0x7fffffff;
  return `${parent}.${events.toString(36)}`;
}

// Cloudflare's ray id (16 hex digits, then the data centre): it ties our lines to Cloudflare's own.
const RAY = /^[0-9a-f]{16}(-[A-Z]{3,4})?$/i;

/** An HTTP request's id: its `cf-ray` when Cloudflare set one, else a fresh one (a client's own ids are not taken). */
export function httpRid(request: Request): string {
  const ray = request.headers.get('cf-ray');
  return ray !== null && RAY.test(ray) ? ray : newRid();
}

function write(level: Level, msg: string, fields: LogFields): void {
  const line: Record<string, unknown> = { level, msg, rid: currentRid() };
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || key in line) continue;
    line[key] = typeof value === 'string' ? safeText(value) : value;
  }
  const text = JSON.stringify(line);
  if (level === 'error') console.error(text);
  else if (level === 'warn') console.warn(text);
  else console.info(text);
}

function safeText(value: string): string {
  const text = value.replace(STATEMENT, 'Failed query (statement withheld)');
  return text.length > FIELD_MAX ? `${text.slice(0, FIELD_MAX)}…` : text;
}

export const log = {
  info: (msg: string, fields: LogFields = {}) => write('info', msg, fields),
  warn: (msg: string, fields: LogFields = {}) => write('warn', msg, fields),
  error: (msg: string, fields: LogFields = {}) => write('error', msg, fields),
};
