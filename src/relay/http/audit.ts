// A host's audit log (`GET /api/hosts/:id/audit?before=&limit=`), for whoever holds `owner` on the
// whole host: newest first, a page at a time; `next` is the `before` of the following page.
import { Hono } from 'hono';
import { AuditQuerySchema } from '../../contracts/index.ts';
import { hostAuditPage } from '../db/audit.ts';
import type { Env } from '../env.ts';
import { queryOf } from './body.ts';
import { requireHostOwner, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

export const auditApi = new Hono<App>()
  .use('*', requireUser)
  .get('/:id/audit', requireHostOwner, queryOf(AuditQuerySchema), async (c) => c.json(await hostAuditPage(c.env.DB, c.req.param('id'), c.req.valid('query'))));
