// What a person's device signs, and how every side reads the same bytes out of it.
//
// A relay that is fully compromised must not be able to make a machine act. So a request that acts
// on a machine travels with a signature made by the asking person's device: a statement over the
// host, the chat, the request type, its id, a digest of its payload, the time and the device, and
// for an approval or answer also a digest of the exact request it settles (the tool and input as
// the host presented them), so a decision cannot be moved onto another call. The statement travels
// BESIDE the agent-contracts frame (`signature`, next to `id`, `type`, `payload`), never inside its
// payload: the agent-contracts shapes stay as they are, and a plain client that signs nothing still
// speaks the protocol.
//
// Bytes: every statement and every payload digest is taken over the RFC 8785 (JCS) canonical JSON
// of the value, UTF-8 encoded, so key order, whitespace and number spelling on the wire never
// matter, and a browser, the Worker and the host (three JSON implementations) agree byte for byte.
// Keys are Ed25519 through WebCrypto (Node 24, workerd, Chromium ≥ 137, Firefox, Safari), the
// same curve the host's own key uses; a browser keeps its private key non-extractable.
//
// Each kind of statement names itself (`kind`, with a version), so a signature made for one
// purpose (a device vouching for another, a pairing approval, a grant) never verifies as another.
import { z } from 'zod';
import { HostPublicKeySchema } from './keys.ts';
import { AccessRoleSchema } from './teams.ts';

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
        const keys = Object.keys(value).filter((key) => value[key] !== undefined).sort();
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
  return utf8.encode(canonicalJson(value));
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

/** A SHA-256 digest, 32 bytes of base64url. */
export const DigestSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'A digest is 32 bytes of base64url');
export type Digest = z.output<typeof DigestSchema>;

export async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<Digest> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
}

/** The SHA-256 of a JSON value's canonical form; an absent value (no payload) is hashed as null. */
export async function digestOf(value: unknown): Promise<Digest> {
  return sha256(canonicalBytes(value === undefined ? null : value));
}

// ---------------------------------------------------------------------------------------------
// Device keys

/** The public half of a device's Ed25519 key, as a JWK (the host key's shape: a private part is refused, not stripped). */
export const DevicePublicKeySchema = HostPublicKeySchema;
export type DevicePublicKey = z.output<typeof DevicePublicKeySchema>;

/** A device is named by its key: the RFC 7638 thumbprint (SHA-256 of the canonical required members). */
export const DeviceIdSchema = DigestSchema;
export type DeviceId = z.output<typeof DeviceIdSchema>;

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

export const DeviceNameSchema = z.string().trim().min(1).max(100);

/** A device as the relay lists it to its person. */
export const DeviceRecordSchema = z.object({
  id: DeviceIdSchema,
  name: DeviceNameSchema,
  publicKey: DevicePublicKeySchema,
  /** ms since the epoch. */
  created: z.int().nonnegative(),
  /** The device that vouched for this one (cross-signing), or null for a person's first device. */
  vouchedBy: DeviceIdSchema.nullable(),
  /** The vouching device's signed statement, which a host checks itself rather than trust the relay's word. */
  vouch: z.lazy(() => SignedDeviceSchema).nullable(),
  /** When it was revoked; a revoked device's signatures no longer count. */
  revoked: z.int().nonnegative().nullable(),
});
export type DeviceRecord = z.output<typeof DeviceRecordSchema>;

/** Devices beyond this many live ones per person are refused: revoke one first. */
export const DEVICES_PER_USER = 50;

/** `POST /api/devices`: a device registers its public key; a person's later device brings a vouch from an earlier one. */
export const DeviceRegisterRequestSchema = z.object({
  name: DeviceNameSchema,
  publicKey: DevicePublicKeySchema,
  vouch: z.lazy(() => SignedDeviceSchema).optional(),
});
export type DeviceRegisterRequest = z.input<typeof DeviceRegisterRequestSchema>;

export const DeviceRenameRequestSchema = z.object({ name: DeviceNameSchema });

/**
 * `POST /api/devices/:id/vouch`: cross-signing after the fact. A new device registered itself
 * unvouched (it waits, in Settings); an existing device of the same person signs the vouch for it as
 * it is listed (its key and name) and sends it here.
 */
export const DeviceVouchRequestSchema = z.object({ vouch: z.lazy(() => SignedDeviceSchema) });

export const DeviceListResultSchema = z.object({ devices: z.array(DeviceRecordSchema) });
export type DeviceListResult = z.output<typeof DeviceListResultSchema>;

// ---------------------------------------------------------------------------------------------
// Statements

const at = z.int().nonnegative();
const text = z.string().min(1).max(1_000);

/** What a device signs for one request that acts on a machine. */
export const RequestStatementSchema = z.strictObject({
  kind: z.literal('tether.request/1'),
  hostId: text,
  /** The chat the request names (`payload.chatId`), or null for a host-wide request. */
  chatId: text.nullable(),
  type: text,
  /** The frame's id: the host remembers it, so a replayed statement is refused. */
  id: text,
  /** digestOf(payload). */
  payload: DigestSchema,
  /** When the device signed it, ms since the epoch; the host accepts it only within its freshness window. */
  at,
  device: DeviceIdSchema,
  /** For an approval or an answer: settledRequestDigest of the request as the host presented it. */
  settles: DigestSchema.optional(),
});
export type RequestStatement = z.output<typeof RequestStatementSchema>;

/** Cross-signing: an existing device of a person vouches for a new device of the same person. */
export const DeviceStatementSchema = z.strictObject({
  kind: z.literal('tether.device/1'),
  userId: text,
  device: z.strictObject({ id: DeviceIdSchema, publicKey: DevicePublicKeySchema, name: DeviceNameSchema }),
  at,
  /** The vouching device; it signs. */
  by: DeviceIdSchema,
});
export type DeviceStatement = z.output<typeof DeviceStatementSchema>;

/**
 * A person approving a host's pairing, signed by their device: the host pins that person and device
 * as its owner. The host is named by its own public key (the relay gives it an id only once it is
 * approved), so a relay that swapped the key the person approved is caught by the host.
 */
export const PairingStatementSchema = z.strictObject({
  kind: z.literal('tether.pairing/1'),
  hostKey: HostPublicKeySchema,
  userCode: text,
  userId: text,
  userName: z.string().max(200),
  at,
  /** The approving device: its id, and its public key, which the host pins. */
  device: DeviceIdSchema,
  deviceKey: DevicePublicKeySchema,
});
export type PairingStatement = z.output<typeof PairingStatementSchema>;

/** A grant an owner of the host signed: a person (or team) holds `role` on the host or one chat. */
export const GrantStatementSchema = z.strictObject({
  kind: z.literal('tether.grant/1'),
  grantId: text,
  hostId: text,
  chatId: text.nullable(),
  subject: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('user'), userId: text }),
    z.strictObject({ kind: z.literal('team'), teamId: text, members: z.array(text).max(1_000) }),
  ]),
  role: AccessRoleSchema,
  /**
   * The first devices of the people it names, as the owner saw them when granting: the host follows
   * each person's later devices from these through their own vouches, never from the relay's word.
   */
  devices: z.array(z.strictObject({ userId: text, id: DeviceIdSchema, publicKey: DevicePublicKeySchema })).max(1_000),
  at,
  /** The owner's device that signs. */
  by: DeviceIdSchema,
});
export type GrantStatement = z.output<typeof GrantStatementSchema>;

/** An owner withdrawing a grant, or a person (or a host owner) revoking a device. */
export const RevocationStatementSchema = z.strictObject({
  kind: z.literal('tether.revocation/1'),
  hostId: text.nullable(),
  target: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('grant'), grantId: text }),
    z.strictObject({ kind: z.literal('device'), deviceId: DeviceIdSchema }),
  ]),
  at,
  by: DeviceIdSchema,
});
export type RevocationStatement = z.output<typeof RevocationStatementSchema>;

export type Statement = RequestStatement | DeviceStatement | PairingStatement | GrantStatement | RevocationStatement;

/** An Ed25519 signature: 64 bytes of base64url. */
export const SignatureBytesSchema = z.string().regex(/^[A-Za-z0-9_-]{86}$/, 'A signature is 64 bytes of base64url');

/** A statement and its device's signature over the statement's canonical bytes. */
export function signedSchema<S extends z.ZodType<Statement>>(statement: S) {
  return z.strictObject({ statement, sig: SignatureBytesSchema });
}
export type Signed<T extends Statement> = { statement: T; sig: string };

/** What travels beside a request frame (`frame.signature`). */
export const RequestSignatureSchema = signedSchema(RequestStatementSchema);
export type RequestSignature = Signed<RequestStatement>;
export const SignedDeviceSchema = signedSchema(DeviceStatementSchema);
export const SignedPairingSchema = signedSchema(PairingStatementSchema);
export const SignedGrantSchema = signedSchema(GrantStatementSchema);
export const SignedRevocationSchema = signedSchema(RevocationStatementSchema);

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
  | { kind: 'question'; requestId: string; questions: unknown };

export async function settledRequestDigest(request: SettledRequest): Promise<Digest> {
  return digestOf(request.kind === 'approval'
    ? { kind: 'approval', requestId: request.requestId, toolName: request.toolName, input: request.input ?? null }
    : { kind: 'question', requestId: request.requestId, questions: request.questions });
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
