// The token behind a notification's Approve and Deny buttons. A service worker holds no access token,
// so the push carries (encrypted to that one browser) a JWT signed with the relay's own keys that
// names exactly one thing it may do: this person, in the session that subscribed, on this host and
// chat, answering this request with one of these decisions, within PUSH_ACTION_SECONDS, once (or, for
// an approval of a terminal session, on this host and session with one of these choices). Its
// audience is its own, so no other door takes it; `POST /api/push/act` spends it (db/push.ts) and
// checks the person's role again before anything reaches the host.
import { z } from 'zod';
import { ChatApproveDecisionSchema, ProtocolError, type ChatApproveDecision } from '../../contracts/index.ts';
import { signRelayJwt, verifyRelayJwt } from '../auth/tokens.ts';
import type { SigningKeysSource } from '../auth/keys.ts';
import { newOpaqueToken } from '../auth/opaque.ts';

const AUDIENCE = 'tether-push-action';
/** Long enough to read a notification and press a button; a later press opens the chat instead. */
export const PUSH_ACTION_SECONDS = 15 * 60;

/** Who acts, as which signed-in session, on which host and request. */
interface PushActionBase {
  userId: string;
  /** The person's signed-in session that subscribed (not a terminal session). */
  sessionId: string;
  hostId: string;
  requestId: string;
}

/** A chat's approval: `chat.approve` with one of `decisions`. */
export interface ChatPushAction extends PushActionBase {
  kind: 'chat';
  chatId: string;
  itemId: string;
  decisions: ChatApproveDecision[];
}

/** A terminal session's approval: `session.approve` with one of the approval's own choices. */
export interface SessionPushAction extends PushActionBase {
  kind: 'session';
  terminalSessionId: string;
  choiceIds: string[];
}

export type PushAction = ChatPushAction | SessionPushAction;

const CommonClaims = {
  sub: z.string().min(1),
  sid: z.string().min(1),
  jti: z.string().min(1),
  exp: z.number(),
  host: z.string().min(1),
  req: z.string().min(1),
};

const ClaimsSchema = z.discriminatedUnion('typ', [
  z.object({
    typ: z.literal('push-action'),
    ...CommonClaims,
    chat: z.string(),
    item: z.string().min(1),
    dec: z.array(ChatApproveDecisionSchema).min(1),
  }),
  z.object({
    typ: z.literal('push-session-action'),
    ...CommonClaims,
    term: z.string().min(1),
    cho: z.array(z.string().min(1)).min(1),
  }),
]);

export async function mintPushAction(env: SigningKeysSource, action: PushAction): Promise<{ token: string; expiresAt: number }> {
  const common = { sid: action.sessionId, jti: newOpaqueToken(16), host: action.hostId, req: action.requestId };
  const claims =
    action.kind === 'chat'
      ? { typ: 'push-action', ...common, chat: action.chatId, item: action.itemId, dec: action.decisions }
      : { typ: 'push-session-action', ...common, term: action.terminalSessionId, cho: action.choiceIds };
  const token = await signRelayJwt(env, claims, action.userId, AUDIENCE, PUSH_ACTION_SECONDS);
  return { token, expiresAt: Date.now() + PUSH_ACTION_SECONDS * 1000 };
}

/** What a valid, unexpired action token allows, with its id and expiry for spending it; `unauthorized` otherwise. */
export async function readPushAction(env: SigningKeysSource, token: string): Promise<PushAction & { jti: string; expiresAt: number }> {
  const claims = ClaimsSchema.safeParse(await verifyRelayJwt(env, token, AUDIENCE, 'action token'));
  if (!claims.success) throw new ProtocolError('unauthorized', 'invalid action token');
  const c = claims.data;
  const common = { userId: c.sub, sessionId: c.sid, hostId: c.host, requestId: c.req, jti: c.jti, expiresAt: c.exp * 1000 };
  return c.typ === 'push-action'
    ? { kind: 'chat', ...common, chatId: c.chat, itemId: c.item, decisions: c.dec }
    : { kind: 'session', ...common, terminalSessionId: c.term, choiceIds: c.cho };
}
