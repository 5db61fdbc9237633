// The chat index: one row per chat the relay has seen, with the host's last ChatInfo, so chats are
// listed across hosts and while a host is offline.
import { and, desc, eq, exists, isNull, or, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import type { ChatInfo } from '../../contracts/index.ts';
import { grantedTo } from './grants.ts';
import { chats, grants, hosts } from './schema.ts';

/** Writes the latest info of these chats (one statement each, one round trip). */
export async function indexChats(d1: D1Database, hostId: string, infos: ChatInfo[], now: number): Promise<void> {
  const db = drizzle(d1);
  const writes = infos.map((info) =>
    db
      .insert(chats)
      .values({
        hostId,
        chatId: info.chatId,
        title: info.suggestedTitle ?? null,
        status: info.status,
        provider: info.provider,
        info: JSON.stringify(info),
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: [chats.hostId, chats.chatId],
        set: {
          title: sql`excluded.title`,
          status: sql`excluded.status`,
          provider: sql`excluded.provider`,
          info: sql`excluded.info`,
          updatedAt: sql`excluded.updated_at`,
        },
      }),
  );
  const [first, ...rest] = writes;
  if (first) await db.batch([first, ...rest]);
}

/** The host's indexed chats, most recently updated first. */
export async function indexedChatInfos(d1: D1Database, hostId: string): Promise<ChatInfo[]> {
  const rows = await drizzle(d1).select({ info: chats.info }).from(chats).where(eq(chats.hostId, hostId)).orderBy(desc(chats.updatedAt));
  return rows.map((row) => JSON.parse(row.info) as ChatInfo);
}

export async function chatIdsOf(d1: D1Database, hostId: string): Promise<string[]> {
  const rows = await drizzle(d1).select({ chatId: chats.chatId }).from(chats).where(eq(chats.hostId, hostId));
  return rows.map((row) => row.chatId);
}

export async function forgetChat(d1: D1Database, hostId: string, chatId: string): Promise<void> {
  await drizzle(d1)
    .delete(chats)
    .where(and(eq(chats.hostId, hostId), eq(chats.chatId, chatId)));
}

/**
 * The newest `limit` chats on unrevoked hosts a person owns or holds a grant on (the whole host, or
 * that chat; to them or to a team of theirs). Decided here so the limit counts only visible chats.
 */
export async function visibleChats(d1: D1Database, userId: string, limit: number) {
  const db = drizzle(d1);
  const granted = db
    .select({ one: sql`1` })
    .from(grants)
    .where(and(eq(grants.hostId, chats.hostId), or(eq(grants.chatId, ''), eq(grants.chatId, chats.chatId)), grantedTo(db, userId)));
  return db
    .select({ hostId: chats.hostId, hostName: hosts.name, info: chats.info, updatedAt: chats.updatedAt })
    .from(chats)
    .innerJoin(hosts, eq(hosts.id, chats.hostId))
    .where(and(isNull(hosts.revokedAt), or(eq(hosts.ownerId, userId), exists(granted))))
    .orderBy(desc(chats.updatedAt))
    .limit(limit);
}
