// What the relay keeps in D1: who people are, which hosts they have, the index of chats across hosts,
// and the state the relay itself owns for a chat (bookmarks, visual records, approval and question
// state). A chat's thread is NOT here: it lives in its ChatRoom's own storage.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  email: text('email').unique(),
  /**
   * When someone proved they receive mail at `email`: an Access or OIDC sign-in whose provider vouched
   * for it (`email_verified`), or the owner's setup. Null for an address only typed in (a password
   * account made by accepting an invitation: the relay sends no mail, so nobody proved it). Grants by
   * email and Access/OIDC sign-ins reach only a verified address.
   */
  emailVerifiedAt: integer('email_verified_at'),
  name: text('name').notNull(),
  createdAt: integer('created_at').notNull(),
  /** `pbkdf2-sha256$<iterations>$<salt b64url>$<hash b64url>`; null for people who sign in only through Access or OIDC. */
  passwordHash: text('password_hash'),
  /** The relay's owner (made by the setup link or secret): may list and disable users. */
  isOwner: integer('is_owner', { mode: 'boolean' }).notNull().default(false),
  /** A disabled user's sessions stop working and their sockets close. */
  disabledAt: integer('disabled_at'),
});

/**
 * A signed-in device. Refresh tokens rotate within it (its "family"); a reused one revokes it. Every
 * access token names its session (`sid`), so revoking a session reaches its open sockets.
 */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** How it signed in: `password`, `access`, `oidc`, `setup`, `invitation`. */
    method: text('method').notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    revokedAt: integer('revoked_at'),
    /** Why it ended: `signed-out`, `revoked`, `refresh-reused`, `user-disabled`. */
    revokedWhy: text('revoked_why'),
    ip: text('ip'),
    userAgent: text('user_agent'),
  },
  (t) => [index('sessions_user').on(t.userId)],
);

/**
 * Refresh tokens, stored only as SHA-256 hashes. `usedAt` set = rotated; presenting it again is reuse,
 * unless it is the retry of a rotation whose answer was lost (auth/sessions.ts).
 */
export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id),
    createdAt: integer('created_at').notNull(),
    usedAt: integer('used_at'),
    /**
     * Set with `usedAt`: the random salt its successor was derived with (an HMAC keyed by this token),
     * so a retry presenting this token is answered with the same successor. Only a holder of this token
     * can derive it; the table alone (hashes and salts) cannot.
     */
    successorSalt: text('successor_salt'),
  },
  (t) => [index('refresh_tokens_session').on(t.sessionId)],
);

/** Single-use socket tickets for browsers (which cannot set headers on a WebSocket), hashed; deleted when used. */
export const socketTickets = sqliteTable('socket_tickets', {
  ticketHash: text('ticket_hash').primaryKey(),
  userId: text('user_id').notNull(),
  sessionId: text('session_id').notNull(),
  expiresAt: integer('expires_at').notNull(),
});

/** One-time codes: OIDC state (with the PKCE verifier and nonce) and the login code handed back to the app. */
export const authCodes = sqliteTable('auth_codes', {
  codeHash: text('code_hash').primaryKey(),
  /** `oidc-state` or `login`. */
  kind: text('kind').notNull(),
  /** JSON: what the code stands for (verifier, nonce, return address; or the user to sign in). */
  data: text('data').notNull(),
  expiresAt: integer('expires_at').notNull(),
});

export const hosts = sqliteTable(
  'hosts',
  {
    id: text('id').primaryKey(),
    ownerId: text('owner_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    /** Host software version from its last hello. */
    version: text('version'),
    createdAt: integer('created_at').notNull(),
    lastSeenAt: integer('last_seen_at'),
    /** The public half of the host's Ed25519 key, as a JWK (JSON); the relay keeps no secret of the host. */
    publicKey: text('public_key'),
    /** A revoked host cannot connect again; its link is closed. */
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('hosts_owner').on(t.ownerId)],
);

/**
 * Host link tokens already used, by their `jti`, kept until they expire (at most five minutes): each
 * opens the link once, so a token captured on the way (a log, a proxy) cannot displace the host.
 */
export const linkTokens = sqliteTable(
  'link_tokens',
  {
    hostId: text('host_id').notNull(),
    jti: text('jti').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.jti] }), index('link_tokens_expires').on(t.expiresAt)],
);

/**
 * A host asking to be paired, like a TV app: it shows `userCode`, polls with `deviceCode` (kept hashed),
 * and a signed-in user approves the code, which creates the host with the public key it sent.
 */
export const pairings = sqliteTable('pairings', {
  deviceCodeHash: text('device_code_hash').primaryKey(),
  userCode: text('user_code').notNull().unique(),
  name: text('name').notNull(),
  publicKey: text('public_key').notNull(),
  /** `pending`, `approved`, `denied`, `claimed` (the host learnt its id). */
  state: text('state').notNull(),
  createdAt: integer('created_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
  approvedBy: text('approved_by'),
  hostId: text('host_id'),
  ip: text('ip'),
  /** The approving device's signed PairingStatement (JSON), passed to the host on its poll; null when the app signed none. */
  approval: text('approval'),
});

export const teams = sqliteTable('teams', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: integer('created_at').notNull(),
});

export const teamMembers = sqliteTable(
  'team_members',
  {
    teamId: text('team_id')
      .notNull()
      .references(() => teams.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** `owner`, `admin` or `member`: owners and admins invite and remove members. */
    role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.userId] }), index('team_members_user').on(t.userId)],
);

/** Single-use invitation links (hashed): into a team with a role, or (team null) just an account on this relay. */
export const invitations = sqliteTable('invitations', {
  tokenHash: text('token_hash').primaryKey(),
  id: text('id').notNull().unique(),
  teamId: text('team_id'),
  role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
  email: text('email'),
  createdBy: text('created_by').notNull(),
  createdAt: integer('created_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
  usedAt: integer('used_at'),
  usedBy: text('used_by'),
});

/**
 * A role a host's owner gave a user or a team, on the whole host (`chatId` = '') or on one chat.
 * The host's owner (hosts.ownerId) holds `owner` on it without a row.
 */
export const grants = sqliteTable(
  'grants',
  {
    id: text('id').primaryKey(),
    hostId: text('host_id')
      .notNull()
      .references(() => hosts.id),
    chatId: text('chat_id').notNull().default(''),
    subjectType: text('subject_type', { enum: ['user', 'team'] }).notNull(),
    subjectId: text('subject_id').notNull(),
    role: text('role', { enum: ['viewer', 'operator', 'owner'] }).notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: integer('created_at').notNull(),
    /**
     * The owner's signed GrantStatement (JSON) when the grant was made by a device that signs; the row's
     * id is then the statement's grantId. Carried to the host, which follows only what an owner signed.
     */
    statement: text('statement'),
  },
  (t) => [uniqueIndex('grants_subject').on(t.hostId, t.chatId, t.subjectType, t.subjectId), index('grants_by_subject').on(t.subjectType, t.subjectId)],
);

/**
 * What happened, for the host's owner: sign-ins, pairings, grant and team changes, and every request
 * that acts on a machine. Never message text or secrets.
 */
export const audit = sqliteTable(
  'audit',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    at: integer('at').notNull(),
    /** A user id, `host:<id>`, or null when nobody signed in (a failed sign-in). */
    actor: text('actor'),
    sessionId: text('session_id'),
    ip: text('ip'),
    /** `signin`, `signin-failed`, `pairing.approved`, `grant.created`, `chat.send` … */
    action: text('action').notNull(),
    hostId: text('host_id'),
    chatId: text('chat_id'),
    /** JSON with what else matters (never message text). */
    detail: text('detail'),
  },
  (t) => [
    index('audit_host').on(t.hostId, t.id),
    index('audit_actor').on(t.actor, t.id),
    // The daily sweep finds failed sign-ins by it (db/retention.ts).
    index('audit_action').on(t.action, t.id),
  ],
);

/** One row per chat the relay has seen: lists across hosts, and `chat.list` while a host is offline. */
export const chats = sqliteTable(
  'chats',
  {
    hostId: text('host_id')
      .notNull()
      .references(() => hosts.id),
    chatId: text('chat_id').notNull(),
    title: text('title'),
    status: text('status').notNull(),
    provider: text('provider').notNull(),
    /** The last ChatInfo the host reported, as JSON. */
    info: text('info').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.chatId] }), index('chats_updated').on(t.hostId, t.updatedAt)],
);

export const bookmarks = sqliteTable(
  'bookmarks',
  {
    hostId: text('host_id').notNull(),
    chatId: text('chat_id').notNull(),
    itemId: text('item_id').notNull(),
    name: text('name'),
    excerpt: text('excerpt').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.chatId, t.itemId] }), index('bookmarks_chat').on(t.hostId, t.chatId, t.createdAt)],
);

/** Visual records as the host published them; the pages themselves sit in the ChatRoom's storage. */
export const visuals = sqliteTable(
  'visuals',
  {
    hostId: text('host_id').notNull(),
    chatId: text('chat_id').notNull(),
    visualId: text('visual_id').notNull(),
    title: text('title').notNull(),
    at: integer('at').notNull(),
    maxHeight: integer('max_height').notNull(),
    /** `[width, height][]` as JSON, or null when unmeasured. */
    heights: text('heights'),
    size: integer('size').notNull(),
    turnId: text('turn_id'),
    layout: text('layout'),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.chatId, t.visualId] }), index('visuals_chat').on(t.hostId, t.chatId, t.at)],
);

/**
 * Every approval and question a chat raised. The first answer wins by a conditional update from
 * `pending`; `settledBy` is a user id, or `host` when the CLI's own prompt or a cancel settled it.
 */
export const requests = sqliteTable(
  'requests',
  {
    hostId: text('host_id').notNull(),
    chatId: text('chat_id').notNull(),
    requestId: text('request_id').notNull(),
    itemId: text('item_id').notNull(),
    kind: text('kind', { enum: ['approval', 'question'] }).notNull(),
    state: text('state', { enum: ['pending', 'settled'] }).notNull(),
    createdAt: integer('created_at').notNull(),
    /** What settled it: the request type (`chat.approve` …) and its payload, or the host's final item state. */
    settledWith: text('settled_with'),
    settledBy: text('settled_by'),
    settledAt: integer('settled_at'),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.chatId, t.requestId] }), index('requests_pending').on(t.hostId, t.chatId, t.state)],
);

/**
 * A browser's Web Push subscription (RFC 8030), made by one signed-in session: pushes go to it only
 * while that session lives, and an action from its notification acts as that session. One row per
 * endpoint: the same browser subscribing again, or for another person, replaces it.
 */
export const pushSubscriptions = sqliteTable(
  'push_subscriptions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    sessionId: text('session_id').notNull(),
    /** The push service's URL for this browser: https on a known push service (src/relay/push/endpoint.ts). */
    endpoint: text('endpoint').notNull().unique(),
    /** The browser's ECDH P-256 public key and auth secret (base64url), for RFC 8291 encryption. */
    p256dh: text('p256dh').notNull(),
    auth: text('auth').notNull(),
    /** The VAPID public key the browser subscribed with (base64url): pushes are signed with its private half. */
    vapidKey: text('vapid_key').notNull(),
    userAgent: text('user_agent'),
    /**
     * The relay's origin as the browser reached it when subscribing: when it is https it is the VAPID
     * contact (`sub`) of this subscription's pushes, unless PUSH_SUBJECT names one.
     */
    relayOrigin: text('relay_origin'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('push_subscriptions_user').on(t.userId, t.createdAt)],
);

/**
 * The turns a push went out for: the first notice of a turn buzzes, every later one of the same turn
 * replaces it silently (src/relay/push/notices.ts). `turnKey` is the turn's id, or `item:<id>` for a
 * request raised outside a turn.
 */
export const pushTurns = sqliteTable(
  'push_turns',
  {
    hostId: text('host_id').notNull(),
    chatId: text('chat_id').notNull(),
    turnKey: text('turn_key').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.chatId, t.turnKey] }), index('push_turns_created').on(t.createdAt)],
);

/** What each push did, for the person it was for: the push service's status, or why it never left. */
export const pushDeliveries = sqliteTable(
  'push_deliveries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: text('user_id').notNull(),
    subscriptionId: text('subscription_id').notNull(),
    hostId: text('host_id').notNull(),
    /** The chat the push was about; '' for a push about a terminal session (`sessionId`). */
    chatId: text('chat_id').notNull(),
    /** The terminal session whose approval the push was about (its `chatId` is ''); null for a chat's push. */
    sessionId: text('session_id'),
    /** `needs-you` (an approval or question waits), `answered` (it no longer does), `turn-ended`, or `team-changed` (a team grant on the host to sign again; `chatId` ''). */
    kind: text('kind', { enum: ['needs-you', 'answered', 'turn-ended', 'team-changed'] }).notNull(),
    turnKey: text('turn_key').notNull(),
    /** Whether this push was the one of its turn that may alert (sound, vibration). */
    buzz: integer('buzz', { mode: 'boolean' }).notNull(),
    /** The push service's HTTP status; null when the request never got one. */
    status: integer('status'),
    error: text('error'),
    /** The push service said the subscription is gone (404/410): it was removed. */
    removed: integer('removed', { mode: 'boolean' }).notNull().default(false),
    at: integer('at').notNull(),
  },
  (t) => [
    index('push_deliveries_user').on(t.userId, t.id),
    index('push_deliveries_at').on(t.at),
    // The browsers a turn's notification went to: only they are told when its request is answered.
    index('push_deliveries_turn').on(t.hostId, t.chatId, t.turnKey),
  ],
);

/** Action tokens (approve or deny from a notification) already used: each works once. Kept until they expire. */
export const pushActions = sqliteTable(
  'push_actions',
  {
    jti: text('jti').primaryKey(),
    userId: text('user_id').notNull(),
    usedAt: integer('used_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('push_actions_expires').on(t.expiresAt)],
);

/**
 * The relay's counters (src/relay/metrics): what happened, added up per hour. Each Durable Object (and
 * each Worker isolate) counts in memory and adds what it counted here at most once a minute, so a row
 * is the sum of many flushes. `hour` is the hour's start (ms); hour 0 holds the hours older than the
 * kept window, rolled up, so totals stay whole while the table stays small.
 */
export const relayCounters = sqliteTable(
  'relay_counters',
  {
    hour: integer('hour').notNull(),
    /** `events.in`, `events.delivered`, `errors.<code>` (RELAY_COUNTERS in src/contracts/metrics.ts). */
    name: text('name').notNull(),
    value: integer('value').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.name] })],
);

/**
 * What is connected now: one row per Durable Object with sockets open (a HostLink with its host, a
 * Lobby or ChatRoom with clients), written by that object when its count changes and renewed while it
 * has any. A row whose object died without saying so (a deploy drops every socket) runs out at
 * `expiresAt`; an object with no sockets has no row.
 */
export const relaySockets = sqliteTable('relay_sockets', {
  /** The Durable Object's id (hex). */
  objectId: text('object_id').primaryKey(),
  /** `host`, `lobby` or `chat`. */
  kind: text('kind', { enum: ['host', 'lobby', 'chat'] }).notNull(),
  sockets: integer('sockets').notNull(),
  expiresAt: integer('expires_at').notNull(),
});

/**
 * A person's device keys (issue 15): each client install makes its own Ed25519 key pair and registers
 * the public half here. The id is the key's RFC 7638 thumbprint, so one key is one row and belongs to
 * one person. A later device carries `vouch`, an earlier device's signed statement naming it (what a
 * host checks, never trusting this table's word). The relay never sees a private key; revoking a
 * device keeps its row, so a host that asks later learns it was revoked rather than that it vanished.
 */
export const devices = sqliteTable(
  'devices',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    /** The public JWK, as JSON (`{kty:'OKP', crv:'Ed25519', x}`). */
    publicKey: text('public_key').notNull(),
    createdAt: integer('created_at').notNull(),
    vouchedBy: text('vouched_by'),
    /** The signed DeviceStatement (JSON), or null for a person's first device. */
    vouch: text('vouch'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('devices_user').on(t.userId, t.createdAt)],
);

/**
 * Signed revocations (RevocationStatement JSON), kept for good and carried to the hosts they concern: a
 * grant's (`hostId` set) or a device's (`hostId` null; `userId` is the device's person, so each host
 * they reach hears it). Kept after the grant or device is gone, so a host that was away learns of it.
 */
export const trustRevocations = sqliteTable(
  'trust_revocations',
  {
    /** The signature: one row per signed statement. */
    id: text('id').primaryKey(),
    hostId: text('host_id'),
    userId: text('user_id').notNull(),
    targetKind: text('target_kind', { enum: ['grant', 'device'] }).notNull(),
    targetId: text('target_id').notNull(),
    statement: text('statement').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('trust_revocations_host').on(t.hostId), index('trust_revocations_user').on(t.userId)],
);
