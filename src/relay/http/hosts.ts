// A person's hosts (`/api/hosts`): those they own or were granted, with their role and whether each is
// online; its owner renames it or revokes it. Revoking is for good: the host's key opens nothing from
// then on, its open link closes at once, and every socket on the host is checked again.
import { Hono, type Context } from 'hono';
import { HostRenameRequestSchema, ProtocolError, type HostSummary } from '../../contracts/index.ts';
import { readView } from '../auth/access.ts';
import { hostsReachableBy, recheckHosts } from '../auth/revocations.ts';
import { record } from '../db/audit.ts';
import type { Env } from '../env.ts';
import { hostLinkOf } from '../objects/stubs.ts';
import { parseBody } from './body.ts';
import { clientIp, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

interface HostRow {
  id: string;
  owner_id: string;
  name: string;
  version: string | null;
  created_at: number;
  last_seen_at: number | null;
}

// Mounted beside other /api/hosts sub-apps (grants, audit): each route asks for the user itself.
export const hostsApi = new Hono<App>();

hostsApi.get('/', requireUser, async (c) => {
  const user = c.get('user');
  const ids = await hostsReachableBy(c.env.DB, user.userId);
  if (ids.length === 0) return c.json({ hosts: [] });
  const { results } = await c.env.DB.prepare(
    `SELECT id, owner_id, name, version, created_at, last_seen_at FROM hosts
     WHERE revoked_at IS NULL AND id IN (SELECT value FROM json_each(?)) ORDER BY created_at`,
  ).bind(JSON.stringify(ids)).all<HostRow>();
  const hosts = await Promise.all(results.map(async (row): Promise<HostSummary> => {
    const [view, online] = await Promise.all([
      readView(c.env.DB, { kind: 'user', ...user }, row.id),
      hostLinkOf(c.env, row.id).isOnline().catch(() => false),
    ]);
    return {
      id: row.id, name: row.name, ownerId: row.owner_id, role: view.hostRole, online,
      lastSeenAt: row.last_seen_at, version: row.version, createdAt: row.created_at,
    };
  }));
  return c.json({ hosts });
});

/** The host, when the caller owns it; `host-not-found` when they cannot see it at all, `forbidden` when they see it but do not own it. */
async function ownedHost(c: Context<App>): Promise<{ id: string; name: string }> {
  const user = c.get('user');
  const hostId = c.req.param('id')!;
  const row = await c.env.DB.prepare('SELECT id, owner_id, name FROM hosts WHERE id = ? AND revoked_at IS NULL')
    .bind(hostId).first<{ id: string; owner_id: string; name: string }>();
  if (row && row.owner_id === user.userId) return row;
  if (row && (await hostsReachableBy(c.env.DB, user.userId)).includes(hostId)) {
    throw new ProtocolError('forbidden', 'Only the host\'s owner may change it');
  }
  throw new ProtocolError('host-not-found', 'No such host');
}

hostsApi.patch('/:id', requireUser, async (c) => {
  const host = await ownedHost(c);
  const { name } = await parseBody(c, HostRenameRequestSchema);
  await c.env.DB.prepare('UPDATE hosts SET name = ? WHERE id = ?').bind(name, host.id).run();
  const user = c.get('user');
  await record(c.env, { actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), action: 'host.renamed', hostId: host.id, detail: { from: host.name, to: name } });
  return c.json({ id: host.id, name });
});

hostsApi.delete('/:id', requireUser, async (c) => {
  const host = await ownedHost(c);
  const revokedAt = Date.now();
  // D1 first: from here on the door refuses the host's key, whatever happens to the calls below.
  await c.env.DB.prepare('UPDATE hosts SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').bind(revokedAt, host.id).run();
  await hostLinkOf(c.env, host.id).revoke();
  await recheckHosts(c.env, [host.id]);
  const user = c.get('user');
  await record(c.env, { actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), action: 'host.revoked', hostId: host.id, detail: { name: host.name } });
  return c.json({ id: host.id, revokedAt });
});
