// A host's audit log (`GET /api/hosts/:id/audit?before=&limit=`), for whoever holds `owner` on the
// whole host: newest first, a page at a time; `next` is the `before` of the following page.
import { Hono } from 'hono';
import { AuditQuerySchema, ProtocolError } from '../../contracts/index.ts';
import { requireHostRole } from '../auth/access.ts';
import { hostAuditPage } from '../db/audit.ts';
import type { Env } from '../env.ts';
import { requireUser, type SignedIn } from './identity.ts';

export const auditApi = new Hono<{ Bindings: Env; Variables: { user: SignedIn } }>();
auditApi.use('*', requireUser);

auditApi.get('/:id/audit', async (c) => {
  const hostId = c.req.param('id');
  await requireHostRole(c.env.DB, c.get('user'), hostId, 'owner');
  const query = AuditQuerySchema.safeParse(c.req.query());
  if (!query.success) {
    const issue = query.error.issues[0];
    throw new ProtocolError('bad-request', `${issue?.path.join('.') || 'query'}: ${issue?.message ?? 'invalid'}`);
  }
  return c.json(await hostAuditPage(c.env.DB, hostId, query.data));
});
