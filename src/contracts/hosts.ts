// The relay's host API: pairing a machine like a TV app, and listing, renaming and revoking hosts.
// The host (`tether host pair`) and the relay both speak these shapes over HTTP; neither re-declares them.
import { z } from 'zod';
import { HostPublicKeySchema } from './keys.ts';
import { SignedPairingSchema } from './signing.ts';

/** The host link's JWT audience: a host token opens the link and nothing else. */
export const HOST_TOKEN_AUDIENCE = 'tether-link';
/** How long a host token the host signs lives; the relay refuses any that claims to live longer than HOST_TOKEN_MAX_SECONDS. */
export const HOST_TOKEN_SECONDS = 60;
export const HOST_TOKEN_MAX_SECONDS = 5 * 60;

// The public half of a host's Ed25519 key, as a JWK: the shape every Ed25519 key of Tether has (keys.ts).
export { HostPublicKeySchema, type HostPublicKey } from './keys.ts';

export const HostNameSchema = z.string().trim().min(1).max(100);

/** `XXXX-XXXX` from an alphabet without look-alikes (no 0/O, 1/I/L, U/V). */
export const USER_CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTWXYZ';
export const UserCodeSchema = z
  .string()
  .max(40)
  .transform((raw, ctx) => {
    const plain = raw.toUpperCase().replace(/[^0-9A-Z]/g, '');
    if (plain.length !== 8 || [...plain].some((ch) => !USER_CODE_ALPHABET.includes(ch))) {
      ctx.addIssue({ code: 'custom', message: 'userCode must look like ABCD-EFGH' });
      return z.NEVER;
    }
    return `${plain.slice(0, 4)}-${plain.slice(4)}`;
  });

export const PairStartRequestSchema = z.object({ name: HostNameSchema, publicKey: HostPublicKeySchema });
export type PairStartRequest = z.input<typeof PairStartRequestSchema>;

export const PairStartResultSchema = z.object({
  /** Secret to the host: it polls with it. */
  deviceCode: z.string().min(1),
  /** Shown to a person, who approves it while signed in. */
  userCode: z.string().min(1),
  /** Where a person approves the code. */
  verificationUrl: z.string().min(1),
  expiresInMs: z.number().int().positive(),
  /** How often the host may poll. */
  intervalMs: z.number().int().positive(),
});
export type PairStartResult = z.output<typeof PairStartResultSchema>;

export const PairPollRequestSchema = z.object({ deviceCode: z.string().min(1).max(200) });

export const PairPollResultSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('pending') }),
  z.object({
    state: z.literal('approved'),
    hostId: z.string().min(1),
    relayUrl: z.string().min(1),
    /** The approving device's signed statement (issue 15), when the approver's app signed it; the host checks it and pins its owner. */
    approval: SignedPairingSchema.nullable().optional(),
  }),
]);
export type PairPollResult = z.output<typeof PairPollResultSchema>;

export const PairApproveRequestSchema = z.object({
  userCode: UserCodeSchema,
  name: HostNameSchema.optional(),
  /** The approval signed by the approving device (one of the person's registered devices), passed on to the host. */
  approval: SignedPairingSchema.optional(),
});

/** `POST /api/pair/lookup`: what a pending pairing is (its name and the host's key), for the approving device to sign. */
export const PairLookupRequestSchema = z.object({ userCode: UserCodeSchema });
export const PairLookupResultSchema = z.object({ name: z.string(), publicKey: HostPublicKeySchema });
export type PairLookupResult = z.output<typeof PairLookupResultSchema>;
export const PairDenyRequestSchema = z.object({ userCode: UserCodeSchema });

/** `npm start`'s own host: the setup secret stands in for a signed-in owner's approval. */
export const PairSetupRequestSchema = z.object({ secret: z.string().min(1).max(500), name: HostNameSchema, publicKey: HostPublicKeySchema });

/** What `POST /api/pair/approve` and `/api/pair/setup` answer. */
export const PairedHostSchema = z.object({ hostId: z.string().min(1), name: z.string(), relayUrl: z.string().min(1) });
export type PairedHost = z.output<typeof PairedHostSchema>;

/** One host as `GET /api/hosts` lists it for the person asking. */
export const HostSummarySchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  ownerId: z.string().min(1),
  /** The asker's role on the whole host; null when they hold roles on some of its chats only. */
  role: z.enum(['viewer', 'operator', 'owner']).nullable(),
  online: z.boolean(),
  lastSeenAt: z.number().nullable(),
  version: z.string().nullable(),
  createdAt: z.number(),
  /**
   * For the host's owner: how many signed team grants name members the team no longer has, so the
   * machine still serves who left and not who joined until an owner signs them again (the host's
   * page). Absent when none, and for anyone who is not the owner.
   */
  teamGrantsToSign: z.number().int().positive().optional(),
});
export type HostSummary = z.output<typeof HostSummarySchema>;
/** `GET /api/hosts`: the hosts a person owns or was granted. */
export const HostListSchema = z.object({ hosts: z.array(HostSummarySchema) });

export const HostRenameRequestSchema = z.object({ name: HostNameSchema });
