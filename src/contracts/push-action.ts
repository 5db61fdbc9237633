// What a notification's answer is, with no schema (push.ts re-exports it): the service worker that
// signs it and the relay that carries it build the same `chat.approve` (or, for a terminal session,
// `session.approve`), and the worker imports only this, so zod stays out of sw.js.
import type { ChatApproveDecision } from './chat.ts';

/** The id of a `chat.approve` or `session.approve` made from a notification starts with this. */
export const PUSH_REQUEST_PREFIX = 'push-';

/** The `chat.approve` payload a notification's answer is, built alike by the worker that signs it and the relay that carries it. */
export function pushApprovePayload(action: { chatId: string; requestId: string }, decision: ChatApproveDecision, message?: string) {
  return { chatId: action.chatId, requestId: action.requestId, decision, ...(message ? { message } : {}) };
}

/** The `session.approve` payload a terminal session's notification answer is (ApprovalAnswerPayload), built alike by the worker and the relay. */
export function pushSessionApprovePayload(action: { sessionId: string; requestId: string }, choiceId: string) {
  return { sessionId: action.sessionId, requestId: action.requestId, choiceId };
}
