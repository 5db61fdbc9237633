// Rate limits. Doors people knock on (sign-in, pairing, tickets) take a token from a RateGate per key
// (per IP, per email, per session…), so every isolate counts against one bucket. Socket frames are
// counted in the object that serves them (FrameBudget), in memory: a frame must cost no extra round
// trip, and a socket lives in exactly one object anyway. Every limit is "max/perSeconds", configurable
// by an env var, with the defaults below.
import type { Context, MiddlewareHandler } from 'hono';
import { ProtocolError, type WireError } from '../../contracts/index.ts';
import type { Env } from '../env.ts';
import { TokenBucket, type RateLimit } from './token-bucket.ts';

export type { RateLimit } from './token-bucket.ts';

/** A `rate-limited` failure that knows when to try again. */
export class RateLimited extends ProtocolError {
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super('rate-limited', `Try again in ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s`);
    this.retryAfterMs = retryAfterMs;
  }
  /** The protocol's `{code, message}` plus `retryAfterMs`, which a client may ignore. */
  override toWire(): WireError & { retryAfterMs: number } {
    return { code: this.code, message: this.message, retryAfterMs: this.retryAfterMs };
  }
}

const parsed = new Map<string, RateLimit>();

/** Parses "max/perSeconds" once per isolate; a malformed setting fails loudly, naming the variable. */
function limitFrom(name: string, value: string | undefined, fallback: string): RateLimit {
  const text = value?.trim() || fallback;
  let limit = parsed.get(text);
  if (!limit) {
    const match = /^(\d+)\s*\/\s*(\d+)$/.exec(text);
    if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) throw new Error(`${name} must look like "10/60" (max per seconds), not "${text}"`);
    limit = { max: Number(match[1]), perSeconds: Number(match[2]) };
    parsed.set(text, limit);
  }
  return limit;
}

/** The configured limits, each read from its env var (see env.ts) or its default. */
export const LIMITS = {
  /** Sign-in attempts (password, Access, OIDC, setup), per IP: past it, refused. */
  signin: (env: Env) => limitFrom('RATE_SIGNIN', env.RATE_SIGNIN, '10/60'),
  /**
   * Password attempts on one account from anywhere: past it, each attempt is slowed (SIGNIN_SLOWDOWN_MS),
   * never refused, so failures from one place cannot lock the account's owner out from another.
   */
  signinAccount: (env: Env) => limitFrom('RATE_SIGNIN_ACCOUNT', env.RATE_SIGNIN_ACCOUNT, '30/60'),
  /** Pairing starts and approvals, per IP and per user. */
  pairing: (env: Env) => limitFrom('RATE_PAIRING', env.RATE_PAIRING, '10/60'),
  /** Socket tickets (and refreshes), per session and per IP. */
  tickets: (env: Env) => limitFrom('RATE_TICKETS', env.RATE_TICKETS, '60/60'),
  /** Frames on one client socket. */
  frames: (env: Env) => limitFrom('RATE_FRAMES', env.RATE_FRAMES, '300/60'),
  /** Frames of one person across all their sockets on one host's lobby or one chat. */
  framesPerUser: (env: Env) => limitFrom('RATE_FRAMES_USER', env.RATE_FRAMES_USER, '600/60'),
  /** Frames a host's link sends that the relay drops (bad, unknown, a repeated hello): past it, no longer logged one by one. */
  linkFrames: (env: Env) => limitFrom('RATE_LINK_FRAMES', env.RATE_LINK_FRAMES, '60/60'),
} satisfies Record<string, (env: Env) => RateLimit>;

function gateOf(env: Env, bucket: string) {
  return env.RATE_GATE.get(env.RATE_GATE.idFromName(bucket));
}

/** Takes one unit from the bucket `key` (e.g. `signin:ip:1.2.3.4`); throws RateLimited (`rate-limited`, with retryAfterMs) when empty. */
export async function takeToken(env: Env, key: string, limit: RateLimit): Promise<void> {
  const answer = await gateOf(env, key).take(limit);
  if (!answer.ok) throw new RateLimited(answer.retryAfterMs);
}

/** The 429 answer: the protocol's body with `retryAfterMs`, and `Retry-After` in whole seconds. */
export function rateLimitedResponse(c: Context, error: RateLimited): Response {
  c.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))));
  return c.json(error.toWire(), 429);
}

type KeyList = (string | null | undefined | false)[];

/**
 * hono middleware: takes a token from `<name>:<key>` for each key (empty ones are skipped, so
 * `[ip && \`ip:${ip}\`]` works when the IP is unknown); if any bucket is empty, answers 429
 * `{code:'rate-limited', message, retryAfterMs}` with Retry-After. `keys` may read the body (hono
 * caches it, so the route reads it again for free).
 */
export function rateLimit(
  name: string,
  limit: RateLimit | ((env: Env) => RateLimit),
  keys: (c: Context<{ Bindings: Env }>) => KeyList | Promise<KeyList>,
): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    const resolved = typeof limit === 'function' ? limit(c.env) : limit;
    const buckets = [...new Set((await keys(c)).filter((k): k is string => typeof k === 'string' && k.length > 0))];
    const answers = await Promise.all(buckets.map((k) => gateOf(c.env, `${name}:${k}`).take(resolved)));
    const waitMs = Math.max(0, ...answers.filter((a) => !a.ok).map((a) => a.retryAfterMs));
    if (waitMs > 0) return rateLimitedResponse(c, new RateLimited(waitMs));
    await next();
  };
}

/** The longest an attempt on a busy account is held back before it is checked. */
export const SIGNIN_SLOWDOWN_MS = 2_000;

/**
 * hono middleware for a door whose key an attacker can name (an account's email): takes a token from
 * `<name>:<key>`, and when the bucket is empty holds the request back (up to `capMs`) instead of
 * refusing it. A refusal here would let anyone lock anyone out by naming them; a wait costs an
 * attacker time on every attempt while the account's owner still gets in. The hard limit sits on what
 * the caller cannot choose (their IP: `rateLimit`).
 */
export function slowDown(
  name: string,
  limit: (env: Env) => RateLimit,
  key: (c: Context<{ Bindings: Env }>) => string | null | Promise<string | null>,
  capMs = SIGNIN_SLOWDOWN_MS,
): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    const which = await key(c);
    if (which) {
      const answer = await gateOf(c.env, `${name}:${which}`).take(limit(c.env));
      if (!answer.ok) await new Promise((resolve) => setTimeout(resolve, Math.min(capMs, answer.retryAfterMs)));
    }
    await next();
  };
}

/**
 * The frame budget of one client-facing object: a bucket per socket and one per person across the
 * object's sockets. In memory only: a socket that hibernated was idle, so its bucket was full anyway.
 */
export class FrameBudget {
  private readonly sockets = new WeakMap<WebSocket, TokenBucket>();
  private readonly people = new Map<string, TokenBucket>();
  private readonly perSocket: RateLimit;
  private readonly perPerson: RateLimit;

  constructor(env: Env) {
    this.perSocket = LIMITS.frames(env);
    this.perPerson = LIMITS.framesPerUser(env);
  }

  /** Counts one frame; answers the failure to send back when the socket or its person is over budget. */
  take(ws: WebSocket, principal: string, now = Date.now()): RateLimited | null {
    let socket = this.sockets.get(ws);
    if (!socket) this.sockets.set(ws, (socket = new TokenBucket(this.perSocket, now)));
    const socketWait = socket.take(this.perSocket, now);
    if (socketWait > 0) return new RateLimited(socketWait);
    let person = this.people.get(principal);
    if (!person) {
      this.forgetFullBuckets(now);
      this.people.set(principal, (person = new TokenBucket(this.perPerson, now)));
    }
    const personWait = person.take(this.perPerson, now);
    return personWait > 0 ? new RateLimited(personWait) : null;
  }

  /** Keeps the per-person map to people who sent lately; a full bucket is the same as none. */
  private forgetFullBuckets(now: number): void {
    if (this.people.size < 64) return;
    for (const [who, bucket] of this.people) if (bucket.fullAt(this.perPerson) <= now) this.people.delete(who);
  }
}
