// The chat index (`GET /api/chats`): every chat the signed-in person may see, across every host they
// reach, newest first, from the relay's D1 index (so hosts that are offline are listed too). A chat is
// seen by the host's owner, by a grant on its whole host, or by a grant on that chat, to the person
// or to a team of theirs. Roles come from the same rules as every frame (auth/access.ts).
import { Hono } from 'hono';
import { z } from 'zod';
import type { ChatInfo, IndexedChat } from '../../contracts/index.ts';
import { readView, roleIn } from '../auth/access.ts';
import { visibleChats } from '../db/chats.ts';
import type { Env } from '../env.ts';
import { queryOf } from './body.ts';
import { requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

const QuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(500).default(200) });

export const chatIndex = new Hono<App>()
  .use('*', requireUser)

  .get('/', queryOf(QuerySchema), async (c) => {
    const user = c.get('user');
    // Which rows may be seen is decided in SQL (so the limit counts only visible chats); the role
    // of each is then read per host with the frames' own rules.
    const results = await visibleChats(c.env.DB, user.userId, c.req.valid('query').limit);
    const hostIds = [...new Set(results.map((row) => row.hostId))];
    const views = new Map(await Promise.all(hostIds.map(async (hostId) => [hostId, await readView(c.env.DB, { kind: 'user', ...user }, hostId)] as const)));
    const chats: IndexedChat[] = [];
    for (const row of results) {
      const info = JSON.parse(row.info) as ChatInfo;
      const role = roleIn(views.get(row.hostId)!, info.chatId);
      if (role) chats.push({ hostId: row.hostId, hostName: row.hostName, role, info, updatedAt: row.updatedAt });
    }
    return c.json({ chats });
  });
