// The statements that tell a machine whom to trust, as clients post them to the relay and as the
// relay carries them to a host: grants an owner signed, device vouches (cross-signing), and
// revocations. The statements themselves are signing.ts's; this module is the traffic around them.
//
// The relay stores and forwards; it never makes one. A host checks each itself (src/host/trust/book.ts)
// and keeps what it accepted, so a relay that drops, reorders or replays statements can delay a
// change, never invent one. The relay sends a host every current statement about it when its link
// connects (`{ link: 'trust', all: true }`, LinkTrustSchema in link.ts) and each new one as it
// arrives (`all: false`).
//
// Team grants name the team's members as the owner saw them when signing. The relay's team
// membership (invitations, removals) does not change what a host believes: after a membership
// change an owner of the host signs the team's grant again (same scope, the new member list, a later
// `at`), which supersedes the earlier one on the host (see book.ts), and until then the host follows
// the members the last signed grant named. The grants list names that drift (`resign` on each signed
// team grant, teams.ts); `resignTeamGrant` in the SDK (src/client/trust.ts) signs again, and the web
// app's Host page offers it as "Sign again".
import { z } from 'zod';
import { GrantCreateRequestSchema } from './teams.ts';
import {
  DeviceRecordSchema,
  SignedDeviceSchema,
  SignedGrantSchema,
  SignedRevocationSchema,
  shortFingerprint,
  type DeviceId,
  type DeviceStatement,
  type GrantStatement,
  type RevocationStatement,
  type Signed,
} from './signing.ts';

/** Any statement a host's trust book takes: a grant, a device vouch or a revocation. */
export const SignedTrustStatementSchema = z.union([SignedGrantSchema, SignedDeviceSchema, SignedRevocationSchema]);
export type SignedTrustStatement = Signed<GrantStatement> | Signed<DeviceStatement> | Signed<RevocationStatement>;

/** At most this many statements in one link frame; a host's whole set is sent in as many frames as it takes. */
export const TRUST_STATEMENTS_PER_FRAME = 200;

/** A grant id a client chooses when it signs a grant (the relay keeps that id, so the revocation can name it). */
export const SignedGrantIdSchema = z.string().regex(/^g_[A-Za-z0-9_-]{16,64}$/, "A signed grant's id is g_ and 16 to 64 base64url characters");

/**
 * `POST /api/hosts/:id/grants` with the owner's signature: the body says the same as the statement
 * (host, chat, subject, role; for a team its members as the relay knows them now), and the grant
 * keeps the statement's id.
 */
export const SignedGrantCreateRequestSchema = GrantCreateRequestSchema.extend({
  signed: SignedGrantSchema.optional(),
});
export type SignedGrantCreateRequest = z.input<typeof SignedGrantCreateRequestSchema>;

/**
 * The body of `DELETE /api/hosts/:id/grants/:grantId` and `DELETE /api/devices/:id` when the caller
 * signs the revocation (an empty body revokes on the relay alone, which a host that requires
 * signatures does not follow).
 */
export const RevocationRequestSchema = z.object({ revocation: SignedRevocationSchema.optional() });
export type RevocationRequest = z.input<typeof RevocationRequestSchema>;

/**
 * `GET /api/users/:id/devices`: another person's device keys, which an owner names in the grant it
 * signs for them. Public keys and vouches only; the names people gave their devices stay theirs.
 */
export const PeerDeviceSchema = DeviceRecordSchema.pick({ id: true, publicKey: true, created: true, vouchedBy: true, vouch: true, revoked: true });
export type PeerDevice = z.output<typeof PeerDeviceSchema>;
export const PeerDeviceListSchema = z.object({ devices: z.array(PeerDeviceSchema) });

// ---------------------------------------------------------------------------------------------
// Recovery on the machine

/**
 * The code the app shows for a device so that its person can trust it on the machine itself
 * (`tether host trust <code>`): the device id's short fingerprint, 16 base64url characters of its
 * key's thumbprint (96 bits). The host asks the relay for the key and takes it only if the key's own
 * thumbprint starts with the code, so a relay cannot hand it another key: it would need a key whose
 * SHA-256 thumbprint matches 96 chosen bits.
 */
export function recoveryCodeOf(deviceId: DeviceId): string {
  return shortFingerprint(deviceId);
}

/**
 * The thumbprint prefix a typed code stands for, or null when it is not a code: the four groups as
 * shown (`abcd-efgh-ijkl-mnop`) or the 16 characters alone. base64url has a `-` of its own, so only
 * the three separators at their places are dropped.
 */
export function recoveryPrefixOf(code: string): string | null {
  const typed = code.trim();
  const plain =
    typed.length === 19 && typed[4] === '-' && typed[9] === '-' && typed[14] === '-'
      ? typed.slice(0, 4) + typed.slice(5, 9) + typed.slice(10, 14) + typed.slice(15)
      : typed;
  return /^[A-Za-z0-9_-]{16}$/.test(plain) ? plain : null;
}

/** `GET /v1/hosts/:hostId/recovery/:code` (host token): the host owner's device the code names, as the relay has it. */
export const RecoveryLookupResultSchema = z.object({
  userId: z.string().min(1),
  userName: z.string(),
  device: DeviceRecordSchema,
});
export type RecoveryLookupResult = z.output<typeof RecoveryLookupResultSchema>;
