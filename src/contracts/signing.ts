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

export * from './signing-core.ts';

// ---------------------------------------------------------------------------------------------
// Digests

/** A SHA-256 digest, 32 bytes of base64url. */
export const DigestSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'A digest is 32 bytes of base64url');
export type Digest = z.output<typeof DigestSchema>;

// ---------------------------------------------------------------------------------------------
// Device keys

/** The public half of a device's Ed25519 key, as a JWK (the host key's shape: a private part is refused, not stripped). */
export const DevicePublicKeySchema = HostPublicKeySchema;
export type DevicePublicKey = z.output<typeof DevicePublicKeySchema>;

/** A device is named by its key: the RFC 7638 thumbprint (SHA-256 of the canonical required members). */
export const DeviceIdSchema = DigestSchema;
export type DeviceId = z.output<typeof DeviceIdSchema>;

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
