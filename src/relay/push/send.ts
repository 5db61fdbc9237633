// Sends one notice of a chat to every browser of every person who may see the chat, and records what
// each push service answered. Runs off the event's path (ChatRoom hands it to ctx.waitUntil) and never
// throws: a push that fails is a delivery record, not a failed event.
//
// Each push is encrypted to its browser with RFC 8291 (ECDH P-256, HKDF, aes128gcm records of RFC
// 8188) by @block65/webcrypto-web-push, which uses only WebCrypto and so runs on workerd; its own VAPID
// helper refuses plain-http endpoints, so the VAPID header is ours (vapid.ts, jose), which also lets a
// subscription keep the key it was made with. Approvals carry an action token only for people whose
// role may answer them (the registry's role for `chat.approve`, or `session.approve` for a terminal
// session's); viewers are told, not asked.
//
// A terminal session's push (chatId '', `sessionId` set) goes to the people with a role on the whole
// host: sessions are the host's, so a grant on one chat hears nothing of them.
//
// A team's change of members (pushTeamChanged) goes to the owners of each host where the team's
// signed grant no longer names its members: one push per browser of theirs per host and change.
import { encryptNotification } from '@block65/webcrypto-web-push';
import { PUSH_SHOWN_MAX_BYTES, REQUEST_RULES, canonicalJson, type PushNoticeKind, type PushPayload } from '../../contracts/index.ts';
import { roleAllows } from '../auth/roles.ts';
import { audienceOf, claimTurn, reachedThisTurn, recordDeliveries, type DeliveryRecord, type Recipient, type SubscriptionRow } from '../db/push.ts';
import { failureText } from '../db/failures.ts';
import { staleGrantsOfTeam } from '../db/grants.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import { mintPushAction } from './action-token.ts';
import { checkEndpoint } from './endpoint.ts';
import { chatPath, hostPath, sessionPath, topicOf, type Notice } from './notices.ts';
import { vapidAuthorization, vapidKeysOf, vapidSubject, type VapidKeys } from './vapid.ts';

/** How long a push service keeps a push for a browser that is offline. */
const TTL_SECONDS = 60 * 60;
const SEND_TIMEOUT_MS = 10_000;
const TITLE_MAX = 80;
/** The title of every push about a terminal session. */
export const SESSION_PUSH_TITLE = 'In your terminal';

/** What a push is about: one chat, or one terminal session of the host (then `chatId` is ''). */
export interface ChatPlace {
  hostId: string;
  chatId: string;
  sessionId?: string;
}

/** Whether this relay sends pushes at all (its VAPID keys are set); checked before any D1 work. */
export function pushConfigured(env: Env): boolean {
  return vapidKeysOf(env) !== null;
}

/** Each chat's notices still going out, so they leave in the order they happened (a room is one object, in one isolate). */
const sending = new Map<string, Promise<void>>();

/**
 * Pushes one notice of a chat after the chat's earlier ones: an approval's push still on its way must
 * not land after, and so over, the push of the turn's end that replaces it.
 */
export function queueNotice(env: Env, place: ChatPlace, notice: Notice, title: string | undefined): Promise<void> {
  const key = `${place.hostId}\n${place.chatId}\n${place.sessionId ?? ''}`;
  const next = (sending.get(key) ?? Promise.resolve()).then(() => sendNotice(env, place, notice, title));
  sending.set(key, next);
  void next.then(() => {
    if (sending.get(key) === next) sending.delete(key);
  });
  return next;
}

/** Pushes one notice of a chat; `title` is the chat's own title when it has one. */
async function sendNotice(env: Env, place: ChatPlace, notice: Notice, title: string | undefined): Promise<void> {
  const keys = vapidKeysOf(env);
  if (!keys) return;
  try {
    const now = Date.now();
    const { hostName, recipients: everyone } = await audienceOf(env.DB, place.hostId, place.chatId, now);
    if (everyone.length === 0) return;
    const { recipients, buzz } = await hearing(env, place, notice, everyone, now);
    if (recipients.length === 0) return;
    const { hostId, chatId, sessionId } = place;
    const base: Omit<PushPayload, 'action'> = {
      v: 1,
      kind: notice.kind,
      title: (title?.trim() || hostName || 'Tether').slice(0, TITLE_MAX),
      body: hostName ? `${notice.body} · ${hostName}` : notice.body,
      hostId,
      chatId,
      ...(sessionId !== undefined ? { sessionId } : {}),
      tag: await topicOf(hostId, chatId, notice.turnKey),
      buzz,
      url: sessionId !== undefined ? sessionPath(hostId, sessionId) : chatPath(hostId, chatId),
      at: now,
    };
    const shown = notice.approval ? shownOf(notice.approval) : undefined;
    // A terminal approval's choices and summary are the host's words: past a push's room they go
    // without buttons (answered on the session's page), since the signature must cover them.
    const sessionShown = notice.sessionApproval && { toolName: notice.sessionApproval.toolName, summary: notice.sessionApproval.summary };
    const choicesFit = notice.sessionApproval !== undefined && fits({ choices: notice.sessionApproval.choices, shown: sessionShown });
    const records = await Promise.all(
      recipients.flatMap((recipient) =>
        recipient.subscriptions.map(async (subscription) => {
          let payload: PushPayload = base;
          const asker = { userId: recipient.userId, sessionId: subscription.sessionId, hostId };
          if (notice.approval && roleAllows(recipient.role, REQUEST_RULES['chat.approve'].role)) {
            const { requestId, itemId, decisions, allowAlwaysLabel } = notice.approval;
            const action = await mintPushAction(env, { kind: 'chat', ...asker, chatId, requestId, itemId, decisions });
            payload = { ...base, action: { requestId, decisions, ...(allowAlwaysLabel ? { allowAlwaysLabel } : {}), ...action, ...(shown ? { shown } : {}) } };
          }
          if (notice.sessionApproval && sessionId !== undefined && choicesFit && roleAllows(recipient.role, REQUEST_RULES['session.approve'].role)) {
            const { requestId, choices } = notice.sessionApproval;
            const action = await mintPushAction(env, {
              kind: 'session',
              ...asker,
              terminalSessionId: sessionId,
              requestId,
              choiceIds: choices.map((c) => c.id),
            });
            payload = { ...base, action: { requestId, choices, ...action, shown: sessionShown! } };
          }
          const outcome = await push(env, await keys, subscription, payload, notice.kind);
          return {
            userId: recipient.userId,
            subscriptionId: subscription.id,
            hostId,
            chatId,
            sessionId: sessionId ?? null,
            kind: notice.kind,
            turnKey: notice.turnKey,
            buzz,
            at: Date.now(),
            ...outcome,
          };
        }),
      ),
    );
    await recordDeliveries(env.DB, records, now);
  } catch (error) {
    log.error('push not sent', { hostId: place.hostId, kind: notice.kind, error: failureText(error) });
  }
}

/**
 * After a team's members changed (one joined, left or was removed): pushes "Team changed: sign again"
 * to every browser of the owners (whole host) of each host where the team's signed grant now names
 * other members than the team has, opening that host's page. Once per change: the caller calls it
 * once for the change, whatever the number of hosts or members; a host whose grant is (again) in sync
 * or unsigned gets nothing. The tag is the host's and the team's, so a later change replaces the
 * notification. Never throws.
 */
export async function pushTeamChanged(env: Env, teamId: string, teamName: string): Promise<void> {
  const keys = vapidKeysOf(env);
  if (!keys) return;
  try {
    const now = Date.now();
    const hostsToSign = new Map((await staleGrantsOfTeam(env.DB, teamId)).map((grant) => [grant.hostId, grant.hostName]));
    const turnKey = `team-changed:${teamId}:${now}`;
    const records: DeliveryRecord[] = [];
    for (const [hostId, hostName] of hostsToSign) {
      const { recipients } = await audienceOf(env.DB, hostId, '', now);
      const payload: PushPayload = {
        v: 1,
        kind: 'team-changed',
        title: (teamName.trim() || 'Tether').slice(0, TITLE_MAX),
        body: `Team changed: sign again · ${hostName}`,
        hostId,
        chatId: '',
        tag: await topicOf(hostId, '', `team:${teamId}`),
        buzz: true,
        url: hostPath(hostId),
        at: now,
      };
      const owners = recipients.filter((recipient) => recipient.role === 'owner');
      records.push(
        ...(await Promise.all(
          owners.flatMap((owner) =>
            owner.subscriptions.map(async (subscription) => ({
              userId: owner.userId,
              subscriptionId: subscription.id,
              hostId,
              chatId: '',
              sessionId: null,
              kind: 'team-changed' as const,
              turnKey,
              buzz: true,
              at: Date.now(),
              ...(await push(env, await keys, subscription, payload, 'team-changed')),
            })),
          ),
        )),
      );
    }
    if (records.length > 0) await recordDeliveries(env.DB, records, now);
  } catch (error) {
    log.error('push not sent', { teamId, kind: 'team-changed', error: failureText(error) });
  }
}

/**
 * The approval as the host presented it, for the service worker to sign over (PushPayload's
 * `action.shown`), when its input is small enough to ride in a push; undefined otherwise.
 */
function shownOf(approval: { toolName: string; input: unknown }): { toolName: string; input: unknown } | undefined {
  return fits(approval.input ?? null) ? { toolName: approval.toolName, input: approval.input ?? null } : undefined;
}

/** Whether a value's canonical JSON fits the room a push leaves for what the host said (PUSH_SHOWN_MAX_BYTES). */
function fits(value: unknown): boolean {
  try {
    return new TextEncoder().encode(canonicalJson(value)).length <= PUSH_SHOWN_MAX_BYTES;
  } catch {
    return false;
  }
}

/** Who of those who may see the chat hear this notice, and whether it may alert. */
async function hearing(env: Env, place: ChatPlace, notice: Notice, everyone: Recipient[], now: number): Promise<{ recipients: Recipient[]; buzz: boolean }> {
  if (notice.kind !== 'answered') {
    // Claimed only when someone will hear it: the first push anyone gets for a turn is the one that buzzes.
    return { recipients: everyone, buzz: await claimTurn(env.DB, place.hostId, place.chatId, notice.turnKey, now) };
  }
  // Only a browser that may be showing this turn's notification has one to replace; to any other an
  // "Approved" would come out of nowhere. It never alerts and never takes the turn's one buzz.
  const reached = await reachedThisTurn(env.DB, place.hostId, place.chatId, notice.turnKey);
  const recipients = everyone
    .map((recipient) => ({ ...recipient, subscriptions: recipient.subscriptions.filter((subscription) => reached.has(subscription.id)) }))
    .filter((recipient) => recipient.subscriptions.length > 0);
  return { recipients, buzz: false };
}

type Outcome = Pick<DeliveryRecord, 'status' | 'error' | 'removed'>;

/** One encrypted push to one browser's push service; what it answered. */
async function push(env: Env, keys: VapidKeys, subscription: SubscriptionRow, payload: PushPayload, kind: PushNoticeKind): Promise<Outcome> {
  const key = keys.byPublicKey.get(subscription.vapidKey);
  // The browser subscribed under a key no longer configured: no push service will take a push for it again.
  if (!key) return { status: null, error: 'subscribed under a VAPID key this relay no longer has', removed: true };
  try {
    checkEndpoint(env, subscription.endpoint);
  } catch (error) {
    return { status: null, error: error instanceof Error ? error.message : 'endpoint not allowed', removed: false };
  }
  try {
    const body = await encryptNotification(
      { endpoint: subscription.endpoint, expirationTime: null, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
      new TextEncoder().encode(JSON.stringify(payload)),
    );
    const res = await fetch(subscription.endpoint, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      headers: {
        Authorization: await vapidAuthorization(key, subscription.endpoint, vapidSubject(env, subscription.relayOrigin)),
        'Content-Encoding': 'aes128gcm',
        'Content-Type': 'application/octet-stream',
        TTL: String(TTL_SECONDS),
        Urgency: kind === 'needs-you' ? 'high' : 'normal',
        Topic: payload.tag,
      },
      body,
    });
    await res.body?.cancel();
    const ok = res.status >= 200 && res.status < 300;
    return { status: res.status, error: ok ? null : `push service answered ${res.status}`, removed: res.status === 404 || res.status === 410 };
  } catch (error) {
    return { status: null, error: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : 'push failed', removed: false };
  }
}
