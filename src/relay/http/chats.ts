// The chat index (`GET /api/chats`): every chat the signed-in person may see, across every host they
// reach, newest first, from the relay's D1 index (so hosts that are offline are listed too). A chat is
// seen by the host's owner, by a grant on its whole host, or by a grant on that chat, to the person
// or to a team of theirs. Roles come from the same rules as every frame (auth/access.ts).
import { Hono } from 'hono';
import { z } from 'zod';
import { ProtocolError, type ChatInfo, type IndexedChat } from '../../contracts/index.ts';
import { readView, roleIn } from '../auth/access.ts';
import type { Env } from '../env.ts';
import { requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

const QuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(500).default(200) });

export const chatIndex = new Hono<App>();
chatIndex.use('*', requireUser);

chatIndex.get('/', async (c) => {
  const user = c.get('user');
  const query = QuerySchema.safeParse(c.req.query());
  if (!query.success) throw new ProtocolError('bad-request', `limit: ${query.error.issues[0]?.message ?? 'invalid'}`);
  // Which rows may be seen is decided in SQL (so the limit counts only visible chats); the role
  // of each is then read per host with the frames' own rules.
  const { results } = await c.env.DB.prepare(
    `WITH mine AS (
       SELECT host_id, chat_id FROM grants WHERE (subject_type = 'user' AND subject_id = ?1)
         OR (subject_type = 'team' AND subject_id IN (SELECT team_id FROM team_members WHERE user_id = ?1))
     )
     SELECT c.host_id, h.name AS host_name, c.info, c.updated_at FROM chats c JOIN hosts h ON h.id = c.host_id
     WHERE h.revoked_at IS NULL AND (h.owner_id = ?1
       OR EXISTS (SELECT 1 FROM mine m WHERE m.host_id = c.host_id AND (m.chat_id = '' OR m.chat_id = c.chat_id)))
     ORDER BY c.updated_at DESC LIMIT ?2`,
  ).bind(user.userId, query.data.limit).all<{ host_id: string; host_name: string; info: string; updated_at: number }>();
  const hostIds = [...new Set(results.map((row) => row.host_id))];
  const views = new Map(await Promise.all(hostIds.map(async (hostId) => [hostId, await readView(c.env.DB, { kind: 'user', ...user }, hostId)] as const)));
  const chats: IndexedChat[] = [];
  for (const row of results) {
    const info = JSON.parse(row.info) as ChatInfo;
    const role = roleIn(views.get(row.host_id)!, info.chatId);
    if (role) chats.push({ hostId: row.host_id, hostName: row.host_name, role, info, updatedAt: row.updated_at });
  }
  return c.json({ chats });
});
