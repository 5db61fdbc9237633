// The zod-free half of signing.ts: the canonical encoding, digests, device ids, and signing and
// verifying statements. Everything that signs imports it, and the service worker imports only this
// (and no schema), so it stays small: a schema module pulls the whole of zod into the bundle.
// signing.ts re-exports all of it, so the rest of the code base reads one vocabulary.
import type { Digest, DeviceId, DevicePublicKey, RequestStatement, Signed, Statement } from './signing.ts';
// ---------------------------------------------------------------------------------------------
// Canonical JSON (RFC 8785)

/** A value that has no canonical JSON: a number that is not finite, a lone surrogate, a cycle, a non-plain object. */
export class CanonicalEncodingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalEncodingError';
  }
}

/** Deeper than any real payload; past it a hostile one would exhaust the stack instead of getting an answer. */
export const CANONICAL_MAX_DEPTH = 512;

// In `u` mode a surrogate pair is one code point, so only a lone surrogate matches: I-JSON (RFC
// 7493, which JCS requires) forbids those, and two encoders would write them differently.
const LONE_SURROGATE = /\p{Cs}/u;

function canonicalString(value: string): string {
  if (LONE_SURROGATE.test(value)) throw new CanonicalEncodingError('A string holds a lone surrogate, which JSON cannot carry faithfully');
  // JSON.stringify escapes exactly what JCS §3.2.2.2 asks: `"` `\\`, \b \f \n \r \t, other controls
  // as lower-case \u00xx, and nothing else.
  return JSON.stringify(value);
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function writeCanonical(value: unknown, out: string[], depth: number, open: Set<object>): void {
  switch (typeof value) {
    case 'string':
      out.push(canonicalString(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalEncodingError(`${value} has no JSON form`);
      // ECMAScript's Number::toString is the serialization JCS §3.2.2.3 prescribes (-0 becomes 0).
      out.push(JSON.stringify(value));
      return;
    case 'object': {
      if (value === null) {
        out.push('null');
        return;
      }
      if (depth >= CANONICAL_MAX_DEPTH) throw new CanonicalEncodingError(`Nested deeper than ${CANONICAL_MAX_DEPTH} levels`);
      if (open.has(value)) throw new CanonicalEncodingError('A value refers to itself');
      open.add(value);
      if (Array.isArray(value)) {
        out.push('[');
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out.push(',');
          // JSON.stringify would write a hole or undefined as null: two values, one encoding. Refused.
          if (value[i] === undefined) throw new CanonicalEncodingError('An array holds undefined');
          writeCanonical(value[i], out, depth + 1, open);
        }
        out.push(']');
      } else {
        if (!isPlainObject(value)) throw new CanonicalEncodingError(`A ${value.constructor?.name ?? 'non-plain'} object has no canonical JSON`);
        // Default sort compares UTF-16 code units, which is JCS's order (§3.2.3). A property whose
        // value is undefined is absent, as on the wire.
        const keys = Object.keys(value)
          .filter((key) => value[key] !== undefined)
          .sort();
        out.push('{');
        keys.forEach((key, i) => {
          if (i > 0) out.push(',');
          out.push(canonicalString(key), ':');
          writeCanonical(value[key], out, depth + 1, open);
        });
        out.push('}');
      }
      open.delete(value);
      return;
    }
    default:
      throw new CanonicalEncodingError(`A ${typeof value} has no JSON form`);
  }
}

/** The RFC 8785 canonical JSON text of a JSON value. Throws CanonicalEncodingError for anything JSON cannot carry faithfully. */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  writeCanonical(value, out, 0, new Set());
  return out.join('');
}

const utf8 = new TextEncoder();

/** The canonical JSON's UTF-8 bytes: what is hashed and signed. */
export function canonicalBytes(value: unknown): Uint8Array<ArrayBuffer> {
  // encode always answers a fresh ArrayBuffer's bytes (the Encoding standard); the Workers types say
  // only ArrayBufferLike, which Web Crypto's BufferSource no longer takes.
  return utf8.encode(canonicalJson(value)) as Uint8Array<ArrayBuffer>;
}

// ---------------------------------------------------------------------------------------------
// Bytes as text

/** base64url without padding (RFC 4648 §5), as JWKs and JWTs write bytes. */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The bytes of unpadded base64url text; null when it is not that. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  // Only one spelling per byte string: unused low bits must be zero, or two texts would sign alike.
  return toBase64Url(bytes) === text ? bytes : null;
}

// ---------------------------------------------------------------------------------------------
// Digests

export async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<Digest> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
}

/** The SHA-256 of a JSON value's canonical form; an absent value (no payload) is hashed as null. */
export async function digestOf(value: unknown): Promise<Digest> {
  return sha256(canonicalBytes(value === undefined ? null : value));
}
// ---------------------------------------------------------------------------------------------
// Device keys

export const DEVICE_KEY_ALGORITHM = { name: 'Ed25519' } as const;

/**
 * The device id of a public key. RFC 7638's input is the JSON of the required members in
 * lexicographic order with no whitespace, which is exactly their canonical JSON.
 */
export async function deviceIdOf(publicKey: DevicePublicKey): Promise<DeviceId> {
  return digestOf({ crv: publicKey.crv, kty: publicKey.kty, x: publicKey.x });
}

/** What a person compares by eye (a terminal, Settings): the id's first 16 characters in groups of four. */
export function shortFingerprint(deviceId: DeviceId): string {
  return deviceId.slice(0, 16).match(/.{4}/g)!.join('-');
}

/** A verifying key from a device's public JWK. */
export async function importDevicePublicKey(publicKey: DevicePublicKey): Promise<CryptoKey> {
  return crypto.subtle.importKey('jwk', { kty: publicKey.kty, crv: publicKey.crv, x: publicKey.x }, DEVICE_KEY_ALGORITHM, true, ['verify']);
}
// ---------------------------------------------------------------------------------------------
// Statements

/** Signs a statement with a device's private key. */
export async function signStatement<T extends Statement>(privateKey: CryptoKey, statement: T): Promise<Signed<T>> {
  const sig = await crypto.subtle.sign(DEVICE_KEY_ALGORITHM, privateKey, canonicalBytes(statement));
  return { statement, sig: toBase64Url(new Uint8Array(sig)) };
}

/** Whether `signed.sig` is the key's signature over the statement's canonical bytes. Never throws. */
export async function verifyStatement(publicKey: CryptoKey, signed: Signed<Statement>): Promise<boolean> {
  const sig = fromBase64Url(signed.sig);
  if (!sig || sig.length !== 64) return false;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = canonicalBytes(signed.statement);
  } catch {
    return false;
  }
  try {
    return await crypto.subtle.verify(DEVICE_KEY_ALGORITHM, publicKey, sig, bytes);
  } catch {
    return false;
  }
}
// ---------------------------------------------------------------------------------------------
// Requests

/** The chat a request names: its payload's `chatId` when it has one. */
export function chatIdOfPayload(payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
  const chatId = (payload as { chatId?: unknown }).chatId;
  return typeof chatId === 'string' && chatId.length > 0 ? chatId : null;
}

/**
 * What an approval or answer settles, as the host presented it: the request id and, for an
 * approval, the tool and its input; for a question, the questions asked. The client hashes the item
 * it showed, the host the request it holds; a decision moved onto another call no longer matches.
 */
export type SettledRequest =
  | { kind: 'approval'; requestId: string; toolName: string; input: unknown }
  | { kind: 'question'; requestId: string; questions: unknown }
  | TerminalApprovalShown;

/**
 * A terminal session's approval (`session.approve`) as the host presented it: the tool, the summary
 * of what it will do, and the choices with their words. A relay that showed another command, or put
 * "Deny" on the allow choice, gets a signature the host refuses.
 */
export interface TerminalApprovalShown {
  kind: 'terminal-approval';
  sessionId: string;
  requestId: string;
  toolName: string;
  summary: string;
  choices: readonly { id: string; kind: string; label: string }[];
}

/** What of a terminal's approval (ApprovalRequest) an answer names, the same for the host and every client. */
export function terminalApprovalShown(approval: {
  sessionId: string;
  requestId: string;
  toolName: string;
  summary: string;
  choices: readonly { id: string; kind: string; label: string }[];
}): TerminalApprovalShown {
  const { sessionId, requestId, toolName, summary, choices } = approval;
  return { kind: 'terminal-approval', sessionId, requestId, toolName, summary, choices };
}

export async function settledRequestDigest(request: SettledRequest): Promise<Digest> {
  switch (request.kind) {
    case 'approval':
      return digestOf({ kind: 'approval', requestId: request.requestId, toolName: request.toolName, input: request.input ?? null });
    case 'question':
      return digestOf({ kind: 'question', requestId: request.requestId, questions: request.questions });
    case 'terminal-approval': {
      // By id: a notification puts the buttons in its own order, the words stay the host's.
      const choices = request.choices.map(({ id, kind, label }) => ({ id, kind, label })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return digestOf({
        kind: 'terminal-approval',
        sessionId: request.sessionId,
        requestId: request.requestId,
        toolName: request.toolName,
        summary: request.summary,
        choices,
      });
    }
  }
}

/** The request frame as a device signs it. */
export interface SignableRequest {
  id: string;
  type: string;
  payload?: unknown;
}

/** The statement a device signs for `frame` on `hostId`. */
export async function requestStatement(
  frame: SignableRequest,
  context: { hostId: string; device: DeviceId; at: number; settles?: Digest },
): Promise<RequestStatement> {
  return {
    kind: 'tether.request/1',
    hostId: context.hostId,
    chatId: chatIdOfPayload(frame.payload),
    type: frame.type,
    id: frame.id,
    payload: await digestOf(frame.payload),
    at: context.at,
    device: context.device,
    ...(context.settles === undefined ? {} : { settles: context.settles }),
  };
}
