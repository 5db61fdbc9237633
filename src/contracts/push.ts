// Web Push: the relay's push API (`/api/push/*`) and the payload a service worker decrypts. The relay,
// the SDK's push helper and the service worker all read these shapes; none re-declares them.
import { z } from 'zod';
import { ApprovalChoiceSchema, SessionIdSchema } from './agent.ts';
import { ChatApproveDecisionSchema } from './chat.ts';
import { RequestSignatureSchema } from './signing.ts';

const base64url = (bytes: number, what: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, `${what} must be base64url`)
    .refine((value) => decodedLength(value) === bytes, `${what} must be ${bytes} bytes`);

/** The length of what a base64url string decodes to (padding allowed, as some browsers send it). */
function decodedLength(value: string): number {
  const plain = value.replace(/=+$/, '');
  return Math.floor((plain.length * 3) / 4);
}

/** `GET /api/push/key`: the VAPID public key to subscribe with (an uncompressed P-256 point, base64url); null when this relay has no push keys. */
export const PushKeySchema = z.object({ publicKey: z.string().nullable() });
export type PushKey = z.output<typeof PushKeySchema>;

/**
 * `POST /api/push/subscriptions`: what `PushSubscription.toJSON()` gives in a browser. Where the
 * endpoint may point is the relay's decision (https on a known push service), checked beside this.
 */
export const PushSubscribeRequestSchema = z.object({
  endpoint: z.url({ protocol: /^https?$/, error: 'endpoint must be an http(s) URL' }).max(2048),
  expirationTime: z.number().nullable().optional(),
  keys: z.object({
    /** The browser's ECDH public key: an uncompressed P-256 point. */
    p256dh: base64url(65, 'keys.p256dh'),
    /** The browser's auth secret. */
    auth: base64url(16, 'keys.auth'),
  }),
});
export type PushSubscribeRequest = z.input<typeof PushSubscribeRequestSchema>;

/** One of a person's subscriptions, as the API lists it. */
export const PushSubscriptionInfoSchema = z.object({
  id: z.string(),
  endpoint: z.string(),
  userAgent: z.string().nullable(),
  createdAt: z.number(),
  /** Made by the session asking. */
  current: z.boolean(),
});
export type PushSubscriptionInfo = z.output<typeof PushSubscriptionInfoSchema>;
/** `GET /api/push/subscriptions`: the person's subscriptions. */
export const PushSubscriptionListSchema = z.object({ subscriptions: z.array(PushSubscriptionInfoSchema) });

/**
 * `needs-you`: an approval or question waits. `answered`: it was answered (anywhere) or withdrawn, so
 * the notification that asked loses its buttons. `turn-ended`: the turn stopped running.
 * `team-changed`: to the host's owners, a team's membership changed and its signed grant on the host
 * names other members than the team has now, so an owner signs it again (the host's page).
 */
export const PushNoticeKindSchema = z.enum(['needs-you', 'answered', 'turn-ended', 'team-changed']);
export type PushNoticeKind = z.output<typeof PushNoticeKindSchema>;

/** `GET /api/push/deliveries`: what became of each push to one of the person's subscriptions, newest first. */
export const PushDeliverySchema = z.object({
  id: z.number(),
  subscriptionId: z.string(),
  hostId: z.string(),
  /** '' for a push about a terminal session. */
  chatId: z.string(),
  /** The terminal session whose approval it was about; null for a chat's push. */
  sessionId: z.string().nullable(),
  kind: PushNoticeKindSchema,
  /** Whether this push could alert; later pushes of the same turn replace it silently. */
  buzz: z.boolean(),
  /** The push service's HTTP status (201 accepted); null when no answer came. */
  status: z.number().nullable(),
  error: z.string().nullable(),
  /** The push service said the subscription is gone (404/410), so the relay removed it. */
  removed: z.boolean(),
  at: z.number(),
});
export type PushDelivery = z.output<typeof PushDeliverySchema>;

/** `GET /api/push/deliveries?limit=`: what became of the person's pushes, newest first. */
export const PushDeliveryListSchema = z.object({ deliveries: z.array(PushDeliverySchema) });

/** A chat's approval a notification may answer (`chat.approve`): the decisions it offers. */
export const ChatPushActionSchema = z.object({
  requestId: z.string(),
  decisions: z.array(ChatApproveDecisionSchema).min(1),
  /** The label of `allow-always`, when offered. */
  allowAlwaysLabel: z.string().optional(),
  token: z.string(),
  expiresAt: z.number(),
  /**
   * The approval as the host presented it (its tool and input), so the service worker can sign an
   * answer naming exactly that request (settledRequestDigest) without asking anyone: a relay that
   * swapped it for another call's gets a signature the host refuses. Absent when the input is over
   * PUSH_SHOWN_MAX_BYTES (a push holds about 4 KB); such an approval is answered in the app, and a
   * button press goes unsigned (a host that requires signatures refuses it, and the notification says so).
   */
  shown: z.object({ toolName: z.string(), input: z.unknown() }).optional(),
});
export type ChatPushAction = z.output<typeof ChatPushActionSchema>;

/**
 * A terminal session's approval a notification may answer (`session.approve`): its buttons are the
 * approval's own choices, as the host offered them (in the notification's order).
 */
export const SessionPushActionSchema = z.object({
  requestId: z.string(),
  choices: z.array(ApprovalChoiceSchema).min(1),
  token: z.string(),
  expiresAt: z.number(),
  /**
   * The rest of the approval as the host presented it (its tool and summary), so the service worker
   * signs an answer naming exactly that approval with these choices (settledRequestDigest of a
   * `terminal-approval`): a relay that swapped the command or the buttons' words gets a signature the
   * host refuses. A push without room for it carries no buttons at all.
   */
  shown: z.object({ toolName: z.string(), summary: z.string() }),
});
export type SessionPushAction = z.output<typeof SessionPushActionSchema>;

/**
 * What the service worker decrypts. Kept small and free of message text: a title (the chat's title or
 * the host's name; "In your terminal" for a terminal session), a one-line summary, where to open, and
 * for an approval what the notification may offer with a single-use token that carries it out.
 */
export const PushPayloadSchema = z.object({
  v: z.literal(1),
  kind: PushNoticeKindSchema,
  title: z.string(),
  body: z.string(),
  hostId: z.string(),
  /** '' when the push is about a terminal session (`sessionId`). */
  chatId: z.string(),
  /** The terminal session the push is about; absent for a chat's push. */
  sessionId: SessionIdSchema.optional(),
  /** One per chat and turn (per terminal approval): a later push with the same tag replaces the notification. */
  tag: z.string(),
  /** False: show it without sound or vibration (this turn alerted already). */
  buzz: z.boolean(),
  /** The app's path that shows the chat (or the terminal session). */
  url: z.string(),
  at: z.number(),
  /** A chat's push offers a ChatPushAction, a terminal session's a SessionPushAction. */
  action: z.union([ChatPushActionSchema, SessionPushActionSchema]).optional(),
});
export type PushPayload = z.output<typeof PushPayloadSchema>;

/** The most canonical JSON of an approval's input a push carries (`action.shown`), or of a terminal approval's `choices`; the rest of a push is well under 2 KB. */
export const PUSH_SHOWN_MAX_BYTES = 1_536;

/**
 * `POST /api/push/act`: carries out one decision a notification offered: a chat's `decision`, or a
 * terminal session's `choiceId`, as its token says. No bearer token: the action token is the proof.
 */
export const PushActRequestSchema = z
  .object({
    token: z.string().min(1).max(4096),
    decision: ChatApproveDecisionSchema.optional(),
    choiceId: z.string().min(1).max(128).optional(),
    message: z.string().max(2000).optional(),
    /**
     * The device's signature of the `chat.approve` (or `session.approve`) it asks for (the service
     * worker signs with the browser's key): the relay carries it to the host beside the request, under
     * the statement's id, which starts with PUSH_REQUEST_PREFIX so the audit shows the answer came from
     * a notification.
     */
    signature: RequestSignatureSchema.optional(),
  })
  .refine((body) => (body.decision === undefined) !== (body.choiceId === undefined), {
    message: "decision or choiceId: exactly one (a chat's decision, or a terminal session's choice)",
  });
export type PushActRequest = z.input<typeof PushActRequestSchema>;

/**
 * What `POST /api/push/act` answers when the host took the answer. One already settled (elsewhere, in
 * the terminal, or expired) is refused with `request-not-found` instead, for a chat and a terminal alike.
 */
export const PushActResultSchema = z.object({
  ok: z.literal(true),
  requestId: z.string(),
  decision: ChatApproveDecisionSchema.optional(),
  choiceId: z.string().optional(),
});
export type PushActResult = z.output<typeof PushActResultSchema>;

export { PUSH_REQUEST_PREFIX, pushApprovePayload, pushSessionApprovePayload } from './push-action.ts';
