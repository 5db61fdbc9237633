// What the relay keeps in D1: who people are, which hosts they have, the index of chats across hosts,
// and the state the relay itself owns for a chat (bookmarks, visual records, approval and question
// state). A chat's thread is NOT here: it lives in its ChatRoom's own storage.
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  email: text('email').unique(),
  name: text('name').notNull(),
  createdAt: integer('created_at').notNull(),
});

export const hosts = sqliteTable('hosts', {
  id: text('id').primaryKey(),
  ownerId: text('owner_id').notNull().references(() => users.id),
  name: text('name').notNull(),
  /** Host software version from its last hello. */
  version: text('version'),
  createdAt: integer('created_at').notNull(),
  lastSeenAt: integer('last_seen_at'),
}, (t) => [index('hosts_owner').on(t.ownerId)]);

/** One row per chat the relay has seen: lists across hosts, and `chat.list` while a host is offline. */
export const chats = sqliteTable('chats', {
  hostId: text('host_id').notNull().references(() => hosts.id),
  chatId: text('chat_id').notNull(),
  title: text('title'),
  status: text('status').notNull(),
  provider: text('provider').notNull(),
  /** The last ChatInfo the host reported, as JSON. */
  info: text('info').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [
  primaryKey({ columns: [t.hostId, t.chatId] }),
  index('chats_updated').on(t.hostId, t.updatedAt),
]);

export const bookmarks = sqliteTable('bookmarks', {
  hostId: text('host_id').notNull(),
  chatId: text('chat_id').notNull(),
  itemId: text('item_id').notNull(),
  name: text('name'),
  excerpt: text('excerpt').notNull(),
  createdAt: integer('created_at').notNull(),
}, (t) => [
  primaryKey({ columns: [t.hostId, t.chatId, t.itemId] }),
  index('bookmarks_chat').on(t.hostId, t.chatId, t.createdAt),
]);

/** Visual records as the host published them; the pages themselves sit in the ChatRoom's storage. */
export const visuals = sqliteTable('visuals', {
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
}, (t) => [
  primaryKey({ columns: [t.hostId, t.chatId, t.visualId] }),
  index('visuals_chat').on(t.hostId, t.chatId, t.at),
]);

/**
 * Every approval and question a chat raised. The first answer wins by a conditional update from
 * `pending`; `settledBy` is a user id, or `host` when the CLI's own prompt or a cancel settled it.
 */
export const requests = sqliteTable('requests', {
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
}, (t) => [
  primaryKey({ columns: [t.hostId, t.chatId, t.requestId] }),
  index('requests_pending').on(t.hostId, t.chatId, t.state),
]);
