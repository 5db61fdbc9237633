// Web Push in D1: people's subscriptions (one per browser endpoint, tied to the session that made it),
// who should hear of a chat, the turns a push already went out for, what each push did, and the
// action tokens already spent. Old deliveries, turns and spent tokens are pruned by the writes that
// add new ones, so no sweep of its own is needed.
import { and, desc, eq, gt, gte, inArray, isNull, lt, notInArray, or } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { higherRole, type AccessRole as Role, type PushDelivery, type PushNoticeKind, type PushSubscriptionInfo } from '../../contracts/index.ts';
import { grants, hosts, pushActions, pushDeliveries, pushSubscriptions, pushTurns, sessions, teamMembers, users } from './schema.ts';

/** A browser beyond this many per person replaces their oldest subscription. */
export const SUBSCRIPTIONS_PER_USER = 10;
/** Deliveries and turn records are kept this long. */
const KEEP_MS = 7 * 24 * 60 * 60 * 1000;
export const DELIVERIES_PAGE_MAX = 200;

export type SubscriptionRow = typeof pushSubscriptions.$inferSelect;

/** Makes or replaces the subscription of this endpoint for this person and session; answers its id. */
export async function putSubscription(d1: D1Database, row: Omit<SubscriptionRow, 'id'> & { id: string }, now: number): Promise<string> {
  const db = drizzle(d1);
  const [saved] = await db
    .insert(pushSubscriptions)
    .values(row)
    .onConflictDoUpdate({
      target: pushSubscriptions.endpoint,
      set: {
        userId: row.userId,
        sessionId: row.sessionId,
        p256dh: row.p256dh,
        auth: row.auth,
        vapidKey: row.vapidKey,
        userAgent: row.userAgent,
        relayOrigin: row.relayOrigin,
        createdAt: row.createdAt,
      },
    })
    .returning({ id: pushSubscriptions.id });
  // Subscriptions of this person's ended sessions can never be pushed to again; past the cap, the oldest go.
  const live = db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.userId, row.userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)));
  const newest = db
    .select({ id: pushSubscriptions.id })
    .from(pushSubscriptions)
    .where(eq(pushSubscriptions.userId, row.userId))
    .orderBy(desc(pushSubscriptions.createdAt))
    .limit(SUBSCRIPTIONS_PER_USER);
  await db
    .delete(pushSubscriptions)
    .where(and(eq(pushSubscriptions.userId, row.userId), or(notInArray(pushSubscriptions.sessionId, live), notInArray(pushSubscriptions.id, newest))));
  return saved!.id;
}

/** A person's subscriptions that can still be pushed to (their session lives), newest first. */
export async function subscriptionsOf(d1: D1Database, userId: string, sessionId: string, now: number): Promise<PushSubscriptionInfo[]> {
  const rows = await drizzle(d1)
    .select({
      id: pushSubscriptions.id,
      endpoint: pushSubscriptions.endpoint,
      userAgent: pushSubscriptions.userAgent,
      createdAt: pushSubscriptions.createdAt,
      sessionId: pushSubscriptions.sessionId,
    })
    .from(pushSubscriptions)
    .innerJoin(sessions, eq(sessions.id, pushSubscriptions.sessionId))
    .where(and(eq(pushSubscriptions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .orderBy(desc(pushSubscriptions.createdAt));
  return rows.map(({ sessionId: of, ...row }) => ({ ...row, current: of === sessionId }));
}

/** Removes one of this person's subscriptions; false when they have none by that id. */
export async function removeSubscription(d1: D1Database, userId: string, id: string): Promise<boolean> {
  const gone = await drizzle(d1)
    .delete(pushSubscriptions)
    .where(and(eq(pushSubscriptions.id, id), eq(pushSubscriptions.userId, userId)))
    .returning({ id: pushSubscriptions.id });
  return gone.length === 1;
}

/** Someone who may see a chat, their role on it, and their subscriptions that can be pushed to now. */
export interface Recipient {
  userId: string;
  role: Role;
  subscriptions: SubscriptionRow[];
}

/**
 * Who should hear of a chat: the host's owner and everyone holding a grant on the whole host or on
 * this chat, directly or through a team, whose account is enabled; each with the subscriptions of
 * their live sessions. Nobody, for a revoked or unknown host. One round trip whatever the number of
 * people (no list of ids is bound: D1 takes at most 100 parameters a statement), asked only when a
 * chat starts waiting or a turn ends. `chatId` '' (a terminal session's push) matches only the grants
 * on the whole host: a session is the host's, not any chat's.
 */
export async function audienceOf(d1: D1Database, hostId: string, chatId: string, now: number): Promise<{ hostName: string; recipients: Recipient[] }> {
  const db = drizzle(d1);
  const onChat = and(eq(grants.hostId, hostId), or(eq(grants.chatId, ''), eq(grants.chatId, chatId)));
  const grantedTeams = db
    .select({ id: grants.subjectId })
    .from(grants)
    .where(and(onChat, eq(grants.subjectType, 'team')));
  const who = pushSubscriptions.userId;
  const [host, granted, members, rows] = await db.batch([
    db
      .select({ ownerId: hosts.ownerId, name: hosts.name })
      .from(hosts)
      .where(and(eq(hosts.id, hostId), isNull(hosts.revokedAt))),
    db.select({ subjectType: grants.subjectType, subjectId: grants.subjectId, role: grants.role }).from(grants).where(onChat),
    db.select({ teamId: teamMembers.teamId, userId: teamMembers.userId }).from(teamMembers).where(inArray(teamMembers.teamId, grantedTeams)),
    db
      .select({ subscription: pushSubscriptions })
      .from(pushSubscriptions)
      .innerJoin(sessions, and(eq(sessions.id, pushSubscriptions.sessionId), eq(sessions.userId, who)))
      .innerJoin(users, eq(users.id, who))
      .where(
        and(
          or(
            inArray(who, db.select({ id: hosts.ownerId }).from(hosts).where(eq(hosts.id, hostId))),
            inArray(
              who,
              db
                .select({ id: grants.subjectId })
                .from(grants)
                .where(and(onChat, eq(grants.subjectType, 'user'))),
            ),
            inArray(who, db.select({ id: teamMembers.userId }).from(teamMembers).where(inArray(teamMembers.teamId, grantedTeams))),
          ),
          isNull(sessions.revokedAt),
          gt(sessions.expiresAt, now),
          isNull(users.disabledAt),
        ),
      ),
  ]);
  if (!host[0]) return { hostName: '', recipients: [] };
  const roles = new Map<string, Role>([[host[0].ownerId, 'owner']]);
  const raise = (userId: string, role: Role) => {
    const held = roles.get(userId);
    roles.set(userId, held === undefined ? role : higherRole(held, role));
  };
  for (const grant of granted) {
    if (grant.subjectType === 'user') raise(grant.subjectId, grant.role);
    else for (const member of members) if (member.teamId === grant.subjectId) raise(member.userId, grant.role);
  }
  const recipients = new Map<string, Recipient>();
  for (const { subscription } of rows) {
    const userId = subscription.userId;
    const role = roles.get(userId);
    if (!role) continue;
    let recipient = recipients.get(userId);
    if (!recipient) recipients.set(userId, (recipient = { userId, role, subscriptions: [] }));
    recipient.subscriptions.push(subscription);
  }
  return { hostName: host[0].name, recipients: [...recipients.values()] };
}

/**
 * Records that a push goes out for this turn; true only for the first of the turn (the one that may
 * buzz). One conditional insert, so two notices racing for one turn cannot both be first.
 */
export async function claimTurn(d1: D1Database, hostId: string, chatId: string, turnKey: string, now: number): Promise<boolean> {
  const db = drizzle(d1);
  const [, claimed] = await db.batch([
    db.delete(pushTurns).where(lt(pushTurns.createdAt, now - KEEP_MS)),
    db.insert(pushTurns).values({ hostId, chatId, turnKey, createdAt: now }).onConflictDoNothing().returning({ turnKey: pushTurns.turnKey }),
  ]);
  return claimed.length === 1;
}

/**
 * The subscriptions a push of this turn reached (the push service took it): the browsers that may be
 * showing the turn's notification, and so the only ones to tell that its request was answered.
 */
export async function reachedThisTurn(d1: D1Database, hostId: string, chatId: string, turnKey: string): Promise<Set<string>> {
  const rows = await drizzle(d1)
    .selectDistinct({ id: pushDeliveries.subscriptionId })
    .from(pushDeliveries)
    .where(
      and(
        eq(pushDeliveries.hostId, hostId),
        eq(pushDeliveries.chatId, chatId),
        eq(pushDeliveries.turnKey, turnKey),
        gte(pushDeliveries.status, 200),
        lt(pushDeliveries.status, 300),
      ),
    );
  return new Set(rows.map((row) => row.id));
}

export interface DeliveryRecord {
  userId: string;
  subscriptionId: string;
  hostId: string;
  chatId: string;
  sessionId: string | null;
  kind: PushNoticeKind;
  turnKey: string;
  buzz: boolean;
  status: number | null;
  error: string | null;
  removed: boolean;
  at: number;
}

/** Writes what the pushes of one notice did and drops the subscriptions their push service called gone, in one round trip. */
export async function recordDeliveries(d1: D1Database, records: DeliveryRecord[], now: number): Promise<void> {
  const db = drizzle(d1);
  // A statement a record: D1 binds at most 100 parameters a statement, and a delivery row has 12.
  const writes = records.flatMap((record) => [
    db.insert(pushDeliveries).values(record),
    ...(record.removed ? [db.delete(pushSubscriptions).where(eq(pushSubscriptions.id, record.subscriptionId))] : []),
  ]);
  await db.batch([db.delete(pushDeliveries).where(lt(pushDeliveries.at, now - KEEP_MS)), ...writes]);
}

/** A person's most recent deliveries, newest first. */
export async function deliveriesOf(d1: D1Database, userId: string, limit: number): Promise<PushDelivery[]> {
  const rows = await drizzle(d1)
    .select()
    .from(pushDeliveries)
    .where(eq(pushDeliveries.userId, userId))
    .orderBy(desc(pushDeliveries.id))
    .limit(Math.min(Math.max(limit, 1), DELIVERIES_PAGE_MAX));
  return rows.map(({ userId: _, turnKey: __, ...row }) => row);
}

/**
 * Spends an action token: true the first time its id is presented, false ever after (until it has
 * expired anyway). Spent before the action is tried, so two presses cannot both go through; an action
 * that did not happen gives it back (`releaseAction`).
 */
export async function spendAction(d1: D1Database, jti: string, userId: string, expiresAt: number, now: number): Promise<boolean> {
  const db = drizzle(d1);
  const [, spent] = await db.batch([
    db.delete(pushActions).where(lt(pushActions.expiresAt, now)),
    db.insert(pushActions).values({ jti, userId, usedAt: now, expiresAt }).onConflictDoNothing().returning({ jti: pushActions.jti }),
  ]);
  return spent.length === 1;
}

/** Gives back a token spent for an action that did not happen (the host was away, the room refused): it works again. */
export async function releaseAction(d1: D1Database, jti: string): Promise<void> {
  await drizzle(d1).delete(pushActions).where(eq(pushActions.jti, jti));
}
