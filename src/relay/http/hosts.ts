// A person's hosts (`/api/hosts`): those they own or were granted, with their role and whether each is
// online; its owner renames it or revokes it. Revoking is for good: the host's key opens nothing from
// then on, its open link closes at once, and every socket on the host is checked again.
import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { HostRenameRequestSchema, ProtocolError, type HostSummary } from '../../contracts/index.ts';
import { readView } from '../auth/access.ts';
import { hostsReachableBy, recheckHosts } from '../objects/revocations.ts';
import { record } from '../db/audit.ts';
import { teamGrantsToSign } from '../db/grants.ts';
import { liveHost, liveHostsAmong, renameHost, revokeHost } from '../db/hosts.ts';
import type { Env } from '../env.ts';
import { hostLinkOf } from '../objects/stubs.ts';
import { jsonBody } from './body.ts';
import { clientIp, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

/** The host of the route, once the caller is known to own it (ownedHost), for the route to change. */
type Owned = { Bindings: Env; Variables: { user: SignedIn; host: { id: string; name: string } } };

/** Checked before the body is read, so a caller who does not own the host learns nothing of its shape. */
const ownsHost = createMiddleware<Owned>(async (c, next) => {
  c.set('host', await ownedHost(c));
  await next();
});

// Mounted beside other /api/hosts sub-apps (grants, audit): each route asks for the user itself.
// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const hostsApi = new Hono<App>()

  .get('/', requireUser, async (c) => {
    const user = c.get('user');
    const ids = await hostsReachableBy(c.env.DB, user.userId);
    if (ids.length === 0) return c.json({ hosts: [] });
    const rows = await liveHostsAmong(c.env.DB, ids);
    const seen = await Promise.all(
      rows.map((row) =>
        Promise.all([
          readView(c.env.DB, { kind: 'user', ...user }, row.id),
          hostLinkOf(c.env, row.id)
            .isOnline()
            .catch(() => false),
        ]),
      ),
    );
    // Only those who may sign a grant again (owners of the whole host) are told one needs it.
    const toSign = await teamGrantsToSign(
      c.env.DB,
      rows.filter((_, i) => seen[i]![0].hostRole === 'owner').map((row) => row.id),
    );
    const hosts = rows.map((row, i): HostSummary => {
      const [view, online] = seen[i]!;
      return {
        id: row.id,
        name: row.name,
        ownerId: row.ownerId,
        role: view.hostRole,
        online,
        lastSeenAt: row.lastSeenAt,
        version: row.version,
        createdAt: row.createdAt,
        ...(toSign.has(row.id) ? { teamGrantsToSign: toSign.get(row.id) } : {}),
      };
    });
    return c.json({ hosts });
  })

  .patch('/:id', requireUser, ownsHost, jsonBody(HostRenameRequestSchema), async (c) => {
    const host = c.get('host');
    const { name } = c.req.valid('json');
    await renameHost(c.env.DB, host.id, name);
    const user = c.get('user');
    await record(c.env.DB, {
      actor: user.userId,
      sessionId: user.sessionId,
      ip: clientIp(c),
      action: 'host.renamed',
      hostId: host.id,
      detail: { from: host.name, to: name },
    });
    return c.json({ id: host.id, name });
  })

  .delete('/:id', requireUser, ownsHost, async (c) => {
    const host = c.get('host');
    const revokedAt = Date.now();
    // D1 first: from here on the door refuses the host's key, whatever happens to the calls below.
    await revokeHost(c.env.DB, host.id, revokedAt);
    await hostLinkOf(c.env, host.id).revoke();
    await recheckHosts(c.env, [host.id]);
    const user = c.get('user');
    await record(c.env.DB, {
      actor: user.userId,
      sessionId: user.sessionId,
      ip: clientIp(c),
      action: 'host.revoked',
      hostId: host.id,
      detail: { name: host.name },
    });
    return c.json({ id: host.id, revokedAt });
  });

/** The host, when the caller owns it; `host-not-found` when they cannot see it at all, `forbidden` when they see it but do not own it. */
async function ownedHost(c: Context<Owned>): Promise<{ id: string; name: string }> {
  const user = c.get('user');
  const hostId = c.req.param('id')!;
  const row = await liveHost(c.env.DB, hostId);
  if (row && row.ownerId === user.userId) return { id: row.id, name: row.name };
  if (row && (await hostsReachableBy(c.env.DB, user.userId)).includes(hostId)) {
    throw new ProtocolError('forbidden', "Only the host's owner may change it");
  }
  throw new ProtocolError('host-not-found', 'No such host');
}
