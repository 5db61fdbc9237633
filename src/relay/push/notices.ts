// When a chat pushes, and what the push says. A ChatRoom asks `noticeOf` for every item it stores,
// comparing the item with the version it held before (in memory, no I/O): a push goes out only on a
// transition, when an approval or question starts waiting (`needs-you`), stops waiting (`answered`:
// in the app, by another person, at the terminal, from a notification, or withdrawn) or a turn stops
// running (`turn-ended`). Streaming deltas, repeated upserts and whole-thread snapshots never push.
//
// `answered` exists so a notification never keeps offering Approve and Deny for a request that is
// settled: it replaces the asking notification (same tag) with a quiet one that says what happened,
// and goes only to the browsers that were pushed something of that turn (send.ts). It never alerts.
//
// The collapse rule: a turn buzzes once. The first notice of a turn (claimed in D1, one conditional
// insert) alerts; every later notice of the same turn (a second approval, the turn's end) goes out
// silently with the same tag and Topic, so it REPLACES the notification in place rather than being
// dropped. Replacing, not dropping, because the first notification would otherwise keep showing
// Approve and Deny after the approval was answered or the turn stopped; the replacement says what is
// true now ("Turn finished"), and a second approval of the turn still shows its own buttons. The
// Topic header (RFC 8030 §5.4) lets the push service keep only the newest of a turn's pushes for a
// browser that is offline. A question or approval outside any turn counts as a turn of its own.
//
// Terminal sessions (the CLI a person runs in their own terminal) push too: the Lobby keeps each
// session's waiting approvals (the host sends the whole list as `session.approvals`) and asks
// `sessionNoticesOf` what changed. A new approval is `needs-you` with the approval's own choices as
// its buttons; one gone from the list is `answered` ("No longer waiting", or "Expired" when it went
// at its expiry), replacing that approval's notification. Each approval is a turn of its own.
import { base64url } from 'jose';
import type { ApprovalChoice, ApprovalRequest, ChatApproveDecision, ChatItem, PushNoticeKind } from '../../contracts/index.ts';
import { isPending, isRequestItem, type RequestItem } from '../db/requests.ts';

export interface Notice {
  kind: PushNoticeKind;
  /** The turn it belongs to: one buzz per (chat, turnKey). */
  turnKey: string;
  body: string;
  /** An approval that a notification may answer: its request and the decisions it offers. */
  approval?: { requestId: string; itemId: string; decisions: ChatApproveDecision[]; allowAlwaysLabel?: string; toolName: string; input: unknown };
  /** A terminal session's approval that a notification may answer: its request and the choices the host offered. */
  sessionApproval?: { requestId: string; choices: ApprovalChoice[]; toolName: string; summary: string };
}

const ENDED: Record<string, string> = { done: 'Turn finished', aborted: 'Turn stopped', error: 'Turn failed' };

/** The notice an item's new version makes, given the version the room held before (if any); null for most. */
export function noticeOf(item: ChatItem, before: ChatItem | undefined): Notice | null {
  if (isRequestItem(item)) {
    const turnKey = item.turnId ?? `item:${item.id}`;
    const wasPending = before !== undefined && isRequestItem(before) && isPending(before);
    if (!isPending(item)) return wasPending ? { kind: 'answered', turnKey, body: settledText(item) } : null;
    if (wasPending) return null;
    if (item.kind === 'question') return { kind: 'needs-you', turnKey, body: 'A question is waiting for you' };
    // In the order the buttons appear: a browser may show only the first two (Chrome does), and Deny matters more than Always.
    const decisions: ChatApproveDecision[] = item.canAllowAlways ? ['allow', 'deny', 'allow-always'] : ['allow', 'deny'];
    return {
      kind: 'needs-you',
      turnKey,
      body: `Approval needed: ${item.toolName}`,
      approval: {
        requestId: item.requestId,
        itemId: item.id,
        decisions,
        toolName: item.toolName,
        input: item.input,
        ...(item.canAllowAlways && item.allowAlways ? { allowAlwaysLabel: item.allowAlways.label } : {}),
      },
    };
  }
  if (item.kind === 'turn') {
    if (item.state === 'running' || (before?.kind === 'turn' && before.state !== 'running')) return null;
    return { kind: 'turn-ended', turnKey: item.turnId ?? item.id, body: ENDED[item.state] ?? 'Turn ended' };
  }
  return null;
}

const APPROVAL_SETTLED: Record<string, string> = { allow: 'Approved', 'allow-always': 'Always allowed', deny: 'Denied', cancelled: 'No longer needed' };
const QUESTION_SETTLED: Record<string, string> = { answered: 'Question answered', dismissed: 'Question dismissed', cancelled: 'Question withdrawn' };

function settledText(item: RequestItem): string {
  if (item.kind === 'question') return QUESTION_SETTLED[item.state] ?? 'Question settled';
  return `${APPROVAL_SETTLED[item.decision] ?? 'Settled'}: ${item.toolName}`;
}

/** What the Lobby keeps of a terminal session's waiting approval: enough to say how it ended. */
export interface KeptApproval {
  requestId: string;
  toolName: string;
  expiresAt: number;
}

/**
 * An approval that leaves the list this long before its expiry (or later) counts as expired: the
 * host's timer and the relay's clock are not one clock, and an approval the host let go at its expiry
 * reaches the relay a moment after.
 */
const EXPIRY_SLACK_MS = 1_000;

/** The turn key of a terminal session's approval: each approval is a turn of its own, and buzzes once. */
export function sessionTurnKey(sessionId: string, requestId: string): string {
  return `${sessionId}\n${requestId}`;
}

/**
 * What a terminal session's new approvals list makes, against the list the Lobby kept: a `needs-you`
 * for each approval not kept before, an `answered` for each kept one that is gone, nothing for the
 * same list again. In the host's order, so a push leaves in the order the approvals came.
 */
export function sessionNoticesOf(sessionId: string, kept: readonly KeptApproval[], now: readonly ApprovalRequest[], at: number): Notice[] {
  const before = new Set(kept.map((approval) => approval.requestId));
  const still = new Set(now.map((approval) => approval.requestId));
  const notices: Notice[] = [];
  for (const approval of kept) {
    if (still.has(approval.requestId)) continue;
    const expired = at >= approval.expiresAt - EXPIRY_SLACK_MS;
    notices.push({
      kind: 'answered',
      turnKey: sessionTurnKey(sessionId, approval.requestId),
      body: `${expired ? 'Expired' : 'No longer waiting'}: ${approval.toolName}`,
    });
  }
  for (const approval of now) {
    if (before.has(approval.requestId)) continue;
    notices.push({
      kind: 'needs-you',
      turnKey: sessionTurnKey(sessionId, approval.requestId),
      body: `Approval needed: ${approval.toolName}`,
      sessionApproval: { requestId: approval.requestId, choices: buttonOrder(approval.choices), toolName: approval.toolName, summary: approval.summary },
    });
  }
  return notices;
}

const BUTTON_RANK: Record<ApprovalChoice['kind'], number> = { allow: 0, deny: 1, remember: 2 };

/** As a chat's: a browser may show only the first two buttons (Chrome does), and Deny matters more than remembering. */
function buttonOrder(choices: readonly ApprovalChoice[]): ApprovalChoice[] {
  return [...choices].sort((a, b) => BUTTON_RANK[a.kind] - BUTTON_RANK[b.kind]);
}

/**
 * The notification tag and the push Topic of a turn: the same for every push of one (chat, turn), at
 * most 32 characters of the URL-safe base64 alphabet as RFC 8030 asks of a Topic.
 */
export async function topicOf(hostId: string, chatId: string, turnKey: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${hostId}\n${chatId}\n${turnKey}`)));
  return base64url.encode(digest.subarray(0, 24));
}

/** Where the app shows a chat; the service worker opens it on a tap. */
export function chatPath(hostId: string, chatId: string): string {
  return `/hosts/${encodeURIComponent(hostId)}/chats/${encodeURIComponent(chatId)}`;
}

/** Where the app shows a host (its grants, to sign a team's again). */
export function hostPath(hostId: string): string {
  return `/hosts/${encodeURIComponent(hostId)}`;
}

/** Where the app shows a terminal session (src/web/app/routes.ts). */
export function sessionPath(hostId: string, sessionId: string): string {
  return `/hosts/${encodeURIComponent(hostId)}/sessions/${encodeURIComponent(sessionId)}`;
}
