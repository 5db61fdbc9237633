// The push API (`/api/push`): the VAPID key to subscribe with, a person's subscriptions (per browser,
// tied to the session that made them), what became of their pushes, and `act`, the door a service
// worker uses to answer an approval from a notification. `act` takes no bearer token: the action token
// (push/action-token.ts) is the proof, and the request then runs as that person through the chat's
// own room, like any `chat.approve` from a socket: the room checks the role again, records the audit
// line and settles the approval (first answer wins) before the host hears of it.
//
// The token is spent only by an answer the host took. It is claimed before the room is asked (two
// presses cannot both go through) and given back when the answer did not happen: the host was offline
// (the room does not keep an approval for later, unlike a message: it reopens the request and answers
// `host-offline`), it timed out, or the room refused. Then the same button works again later. A
// request settled elsewhere answers `request-not-found`, "already answered", and is never acted on.
//
// A terminal session's approval is answered the same way with `session.approve` (the choice the
// button names), through the host's Lobby as the same request on its socket: the role on the whole
// host, the audit line, the reply journal. The host decides who was first; a press after the terminal
// answered (the host's `accepted: false`) is refused like a chat's late press, `request-not-found` in
// words, so a button answers the same way whatever it approves, and the token stays spent (there is
// nothing left to answer).
import { Hono } from 'hono';
import { z } from 'zod';
import {
  AGENT_REQUEST_SCHEMAS,
  PUSH_REQUEST_PREFIX,
  ProtocolError,
  PushActRequestSchema,
  PushSubscribeRequestSchema,
  REQUEST_RULES,
  pushApprovePayload,
  pushSessionApprovePayload,
  type AgentRequestType,
  type PushActRequest,
  type PushActResult,
  type PushSubscriptionInfo,
  type Reply,
  type WireErrorCode,
} from '../../contracts/index.ts';
import { readView, roleIn } from '../auth/access.ts';
import { newId } from '../auth/opaque.ts';
import { roleAllows } from '../auth/roles.ts';
import { DELIVERIES_PAGE_MAX, deliveriesOf, putSubscription, releaseAction, removeSubscription, spendAction, subscriptionsOf } from '../db/push.ts';
import type { Env } from '../env.ts';
import type { Identity } from '../auth/tokens.ts';
import type { ClientRequest } from '../objects/client-sockets.ts';
import { lobbyOf, roomOf } from '../objects/stubs.ts';
import { readPushAction, type ChatPushAction, type SessionPushAction } from '../push/action-token.ts';
import { checkEndpoint } from '../push/endpoint.ts';
import { vapidKeysOf } from '../push/vapid.ts';
import { jsonBody, queryOf } from './body.ts';
import { statusOf } from './errors.ts';
import { requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

const DeliveriesQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(DELIVERIES_PAGE_MAX).default(50) });

const ALREADY_ANSWERED = 'This approval was already answered';
const SETTLED_FIRST = 'This approval was already answered in the terminal (or elsewhere), or it expired, so nothing was answered';

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const pushApi = new Hono<App>()

  .get('/key', async (c) => {
    const keys = vapidKeysOf(c.env);
    return c.json({ publicKey: keys ? (await keys).current.publicKey : null });
  })

  .get('/subscriptions', requireUser, async (c) => {
    const { userId, sessionId } = c.get('user');
    return c.json({ subscriptions: await subscriptionsOf(c.env.DB, userId, sessionId, Date.now()) });
  })

  .post('/subscriptions', requireUser, jsonBody(PushSubscribeRequestSchema), async (c) => {
    const user = c.get('user');
    const body = c.req.valid('json');
    const keys = vapidKeysOf(c.env);
    if (!keys) throw new ProtocolError('bad-request', 'Push is not configured on this relay (TETHER_VAPID_KEYS)');
    checkEndpoint(c.env, body.endpoint);
    const now = Date.now();
    const userAgent = c.req.header('User-Agent')?.slice(0, 200) ?? null;
    const id = await putSubscription(
      c.env.DB,
      {
        id: newId('ps_'),
        userId: user.userId,
        sessionId: user.sessionId,
        endpoint: body.endpoint,
        p256dh: body.keys.p256dh,
        auth: body.keys.auth,
        vapidKey: (await keys).current.publicKey,
        userAgent,
        relayOrigin: new URL(c.req.url).origin,
        createdAt: now,
      },
      now,
    );
    const created: PushSubscriptionInfo = { id, endpoint: body.endpoint, userAgent, createdAt: now, current: true };
    return c.json(created, 201);
  })

  .delete('/subscriptions/:id', requireUser, async (c) => {
    if (!(await removeSubscription(c.env.DB, c.get('user').userId, c.req.param('id')))) {
      throw new ProtocolError('subscription-not-found', 'No such subscription of yours');
    }
    return c.json({ ok: true });
  })

  .get('/deliveries', requireUser, queryOf(DeliveriesQuerySchema), async (c) => {
    return c.json({ deliveries: await deliveriesOf(c.env.DB, c.get('user').userId, c.req.valid('query').limit) });
  })

  .post('/act', jsonBody(PushActRequestSchema), async (c) => {
    const body = c.req.valid('json');
    if (body.signature && !body.signature.statement.id.startsWith(PUSH_REQUEST_PREFIX)) {
      throw new ProtocolError('bad-request', `signature: a notification's answer is signed under an id starting ${PUSH_REQUEST_PREFIX}`);
    }
    const action = await readPushAction(c.env, body.token);
    const answer = action.kind === 'chat' ? chatAnswer(action, body) : sessionAnswer(action, body);
    // The role now, not when the push went out: a grant taken away since stops the button too.
    const identity = { kind: 'user' as const, userId: action.userId, sessionId: action.sessionId };
    const view = await readView(c.env.DB, identity, action.hostId);
    if (!view.live) throw new ProtocolError('unauthorized', 'The session this notification was sent to has ended; sign in again');
    const role = roleIn(view, action.kind === 'chat' ? action.chatId : undefined);
    const needed = REQUEST_RULES[answer.type].role;
    if (!role || !roleAllows(role, needed)) {
      throw new ProtocolError('forbidden', `${answer.type} needs the ${needed} role on this ${action.kind === 'chat' ? 'chat' : 'host'}`);
    }
    if (!(await spendAction(c.env.DB, action.jti, action.userId, action.expiresAt, Date.now()))) {
      throw new ProtocolError('request-not-found', ALREADY_ANSWERED);
    }
    const payload = AGENT_REQUEST_SCHEMAS[answer.type].payload.parse(answer.asked);
    // Signed by the person's browser: carried to the host beside the request, with the payload exactly
    // as signed, under the id the device signed (the host checks it; a replayed one is refused there).
    // Unsigned: the request id names the token. Either way the audit line shows it came from a notification.
    const signed = body.signature;
    const request: ClientRequest = signed
      ? { id: signed.statement.id, type: answer.type, payload, signed: { payload: answer.asked, signature: signed } }
      : { id: `${PUSH_REQUEST_PREFIX}${action.jti}`, type: answer.type, payload };
    let reply: Reply;
    try {
      reply = JSON.parse(await serve(c.env, action, identity, request)) as Reply;
    } catch (error) {
      await releaseAction(c.env.DB, action.jti);
      throw error;
    }
    if (reply.ok) return c.json(answer.result(reply.result));
    await releaseAction(c.env.DB, action.jti);
    const error = refusalOf(reply.error);
    return c.json(error, statusOf(error.code));
  });

/** What a button press asks of the host: the request, its payload as the device signed it, and what the route answers once the host took it. */
interface Answer {
  type: Extract<AgentRequestType, 'chat.approve' | 'session.approve'>;
  asked: unknown;
  result(hostResult: unknown): PushActResult;
}

function chatAnswer(action: ChatPushAction, body: PushActRequest): Answer {
  const decision = body.decision;
  if (decision === undefined || !action.decisions.includes(decision)) {
    throw new ProtocolError('bad-request', `decision: this notification offers ${action.decisions.join(', ')}`);
  }
  return {
    type: 'chat.approve',
    asked: pushApprovePayload(action, decision, body.message),
    result: () => ({ ok: true, requestId: action.requestId, decision }),
  };
}

function sessionAnswer(action: SessionPushAction, body: PushActRequest): Answer {
  const choiceId = body.choiceId;
  if (choiceId === undefined || !action.choiceIds.includes(choiceId)) {
    throw new ProtocolError('bad-request', `choiceId: this notification offers ${action.choiceIds.join(', ')}`);
  }
  return {
    type: 'session.approve',
    asked: pushSessionApprovePayload({ sessionId: action.terminalSessionId, requestId: action.requestId }, choiceId),
    result: (hostResult) => {
      const { accepted } = AGENT_REQUEST_SCHEMAS['session.approve'].result.parse(hostResult);
      if (!accepted) throw new ProtocolError('request-not-found', SETTLED_FIRST);
      return { ok: true, requestId: action.requestId, choiceId };
    },
  };
}

/** Serves the answer where a socket's would be: a chat's room, or the host's Lobby for a terminal session. */
function serve(env: Env, action: ChatPushAction | SessionPushAction, identity: Identity, request: ClientRequest): Promise<string> {
  return action.kind === 'chat'
    ? roomOf(env, action.hostId, action.chatId).serveForLobby(identity, request)
    : lobbyOf(env, action.hostId).serveForRoute(identity, request);
}

/** What the room's refusal means to someone pressing a notification's button. */
function refusalOf(error: { code: string; message: string }): { code: WireErrorCode; message: string } {
  const code = error.code as WireErrorCode;
  switch (code) {
    case 'request-not-found':
      return { code, message: ALREADY_ANSWERED };
    case 'host-offline':
      return { code, message: 'The host is offline, so nothing was answered' };
    case 'host-timeout':
      return { code, message: 'The host did not answer in time, so the approval may not have gone through' };
    default:
      return { code, message: error.message };
  }
}
