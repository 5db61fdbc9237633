// The error codes a Tether peer may answer with. The agent-contracts host codes come first, unchanged;
// Tether widens the set (as the protocol allows a host to) with codes of the relay and its link.
import type { WireError } from './envelope.ts';

export const AGENT_ERROR_CODES = [
  'bad-request',
  'unknown-request',
  'internal',
  'chat-not-found',
  'chat-unreadable',
  'chat-busy',
  'chat-unsupported',
  'request-not-found',
  'history-expired',
  'invalid-attachments',
  'session-not-found',
  'subagent-not-found',
  'task-not-found',
  'turn-not-found',
  'item-not-found',
  'bookmark-not-found',
  'too-many-bookmarks',
  'transcript-missing',
  'transcript-format',
  'fork-failed',
  'visual-invalid',
  'visual-too-large',
  'refused-query',
  'stale-ui-query',
  'stale-ui-block',
  'account-unavailable',
  'account-incompatible',
  'invalid-account',
  'secrets-unavailable',
] as const;

export const TETHER_ERROR_CODES = [
  /** The host has no live link to the relay, and the request cannot wait for it. */
  'host-offline',
  /** The host did not answer in time; the request may still have run there. */
  'host-timeout',
  /** A frame larger than the relay or the host accepts. */
  'frame-too-large',
  /** No valid identity on the socket or request. */
  'unauthorized',
  /** An identity that may not do this. */
  'forbidden',
  /** Too many requests; the message says when to retry. */
  'rate-limited',
  /** The host's own policy refused the folder or the runtime mode, whatever the relay asked. */
  'folder-denied',
  'mode-denied',
  /** No such host (or none the caller may see). */
  'host-not-found',
  /**
   * No such route on the relay, a sign-in route this relay has not configured (Access, OIDC), or no
   * session of the caller's by that id: the HTTP API's 404 where no narrower code names the thing.
   */
  'not-found',
  /** No pairing with that code (or device code). */
  'pairing-not-found',
  /** The pairing's code expired before it was approved; the host starts over. */
  'pairing-expired',
  /** A person denied the pairing. */
  'pairing-denied',
  /** No such team, user, grant or invitation (or none the caller may see). */
  'team-not-found',
  'user-not-found',
  'grant-not-found',
  'invitation-not-found',
  /** The invitation was used already or ran out. */
  'invitation-expired',
  /**
   * A signed team grant names other members than the team has now: it changed while the owner's
   * device signed (someone joined or left). Sign again with the members as they are now.
   */
  'team-changed',
  /** An account with that email exists already. */
  'email-taken',
  /** No push subscription by that id among the caller's. */
  'subscription-not-found',
  /** No device by that id among the caller's. */
  'device-not-found',
  /** That device key is registered to someone else already. */
  'device-taken',
  /** The host requires a device's signature on this request, and it carried none. */
  'signature-required',
  /** A signature that does not verify, names another request, or comes from a device the host cannot follow to a person it trusts. */
  'signature-invalid',
  /** A signature made outside the host's freshness window. */
  'signature-expired',
  /** A signed request id the host has seen already. */
  'signature-replayed',
] as const;

export type WireErrorCode = (typeof AGENT_ERROR_CODES)[number] | (typeof TETHER_ERROR_CODES)[number];

/** A coded failure: thrown by handlers, answered on the wire as `{ code, message }`. */
export class ProtocolError extends Error {
  readonly code: WireErrorCode;
  constructor(code: WireErrorCode, message: string) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
  }
  toWire(): WireError {
    return { code: this.code, message: this.message };
  }
}

/** Any thrown value as a wire error; an uncoded one is `internal` and its text stays in the log. */
export function toWireError(error: unknown): WireError {
  if (error instanceof ProtocolError) return error.toWire();
  if (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    'message' in error &&
    typeof error.code === 'string' &&
    typeof error.message === 'string' &&
    error.code.length > 0 &&
    (AGENT_ERROR_CODES as readonly string[]).concat(TETHER_ERROR_CODES).includes(error.code)
  ) {
    return { code: error.code, message: error.message };
  }
  return { code: 'internal', message: 'Request failed' };
}
