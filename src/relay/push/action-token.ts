// The token behind a notification's Approve and Deny buttons. A service worker holds no access token,
// so the push carries (encrypted to that one browser) a JWT signed with the relay's own keys that
// names exactly one thing it may do: this person, in the session that subscribed, on this host and
// chat, answering this request with one of these decisions, within PUSH_ACTION_SECONDS, once. Its
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

export interface PushAction {
  userId: string;
  sessionId: string;
  hostId: string;
  chatId: string;
  requestId: string;
  itemId: string;
  decisions: ChatApproveDecision[];
}

const ClaimsSchema = z.object({
  typ: z.literal('push-action'),
  sub: z.string().min(1),
  sid: z.string().min(1),
  jti: z.string().min(1),
  exp: z.number(),
  host: z.string().min(1),
  chat: z.string(),
  req: z.string().min(1),
  item: z.string().min(1),
  dec: z.array(ChatApproveDecisionSchema).min(1),
});

export async function mintPushAction(env: SigningKeysSource, action: PushAction): Promise<{ token: string; expiresAt: number }> {
  const claims = {
    typ: 'push-action', sid: action.sessionId, jti: newOpaqueToken(16),
    host: action.hostId, chat: action.chatId, req: action.requestId, item: action.itemId, dec: action.decisions,
  };
  const token = await signRelayJwt(env, claims, action.userId, AUDIENCE, PUSH_ACTION_SECONDS);
  return { token, expiresAt: Date.now() + PUSH_ACTION_SECONDS * 1000 };
}

/** What a valid, unexpired action token allows, with its id and expiry for spending it; `unauthorized` otherwise. */
export async function readPushAction(env: SigningKeysSource, token: string): Promise<PushAction & { jti: string; expiresAt: number }> {
  const claims = ClaimsSchema.safeParse(await verifyRelayJwt(env, token, AUDIENCE, 'action token'));
  if (!claims.success) throw new ProtocolError('unauthorized', 'invalid action token');
  const c = claims.data;
  return {
    userId: c.sub, sessionId: c.sid, hostId: c.host, chatId: c.chat, requestId: c.req, itemId: c.item, decisions: c.dec,
    jti: c.jti, expiresAt: c.exp * 1000,
  };
}
