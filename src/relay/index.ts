// The Tether relay: a hono app in front of three Durable Objects (HostLink, ChatRoom, Lobby) and D1.
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { routePath } from 'hono/route';
import { ProtocolError } from '../contracts/index.ts';
import { failureText } from './db/failures.ts';
import { sweep } from './db/retention.ts';
import type { Env } from './env.ts';
import { attachmentFiles } from './http/attachments.ts';
import { auditApi } from './http/audit.ts';
import { accounts, me } from './http/auth.ts';
import { chatIdInPath } from './http/chat-id.ts';
import { chatIndex } from './http/chats.ts';
import { devicesApi } from './http/devices.ts';
import { errorResponse } from './http/errors.ts';
import { external } from './http/external.ts';
import { grantsApi } from './http/grants.ts';
import { health } from './http/health.ts';
import { appOrigins } from './http/identity.ts';
import { hostsApi } from './http/hosts.ts';
import { recoveryApi } from './http/recovery.ts';
import { metricsApi } from './http/metrics.ts';
import { pairing } from './http/pairing.ts';
import { pushApi } from './http/push.ts';
import { sockets } from './http/sockets.ts';
import { teamsApi } from './http/teams.ts';
import { usersApi } from './http/users.ts';
import { visualPages } from './http/visuals.ts';
import { REQUEST_ID_HEADER, currentRid, httpRid, inScope, log } from './log.ts';
import { countError, writeDueCounts } from './metrics/worker-meter.ts';

const app = new Hono<{ Bindings: Env }>();

// Every request runs under its id (log.ts), answered in X-Request-Id for a person to quote, and ends
// in one line: the route's pattern, never its path, which may carry a secret (an invitation's token).
app.use('*', (c, next) =>
  inScope(httpRid(c.req.raw), async () => {
    const started = Date.now();
    await next();
    c.header(REQUEST_ID_HEADER, currentRid());
    log.info('request', { method: c.req.method, route: routePath(c), status: c.res.status, ms: Date.now() - started });
  }),
);

// This isolate's counts (errors answered) go to D1 when due, after the response (metrics/worker-meter.ts).
app.use('*', writeDueCounts);

// The web app on one of APP_ORIGINS calls the API from the browser (sign-in, tickets): only those origins may.
app.use(
  '/api/*',
  cors({
    origin: (origin, c) => (appOrigins(c.env).includes(origin) ? origin : null),
    allowHeaders: ['Authorization', 'Content-Type'],
    exposeHeaders: [REQUEST_ID_HEADER],
    allowMethods: ['GET', 'POST', 'PATCH', 'DELETE'],
    maxAge: 600,
  }),
);
// A chat id in a path is refused before a route uses it, as one in a frame is (http/chat-id.ts).
app.use('/v1/hosts/:hostId/chats/:chatId', chatIdInPath);
app.use('/v1/attachments/:hostId/:chatId/*', chatIdInPath);
app.use('/v1/visuals/:hostId/:chatId/*', chatIdInPath);
// Chained, so the app's type carries every sub-app's routes: `AppType`, which the SDK's `hc` client
// reads (client/api.ts, a type import only, so no relay code reaches the web bundle).
const routes = app
  .route('/api/health', health)
  .route('/api/auth', accounts)
  .route('/api/auth', external)
  .route('/api/me', me)
  .route('/api/users', usersApi)
  .route('/api/relay/metrics', metricsApi)
  .route('/api/pair', pairing)
  .route('/api/hosts', hostsApi)
  .route('/api/hosts', grantsApi)
  .route('/api/hosts', auditApi)
  .route('/api/chats', chatIndex)
  .route('/api', teamsApi)
  .route('/api/push', pushApi)
  .route('/api/devices', devicesApi)
  .route('/v1/visuals', visualPages)
  .route('/v1/attachments', attachmentFiles)
  .route('/v1/recovery', recoveryApi)
  .route('/v1/hosts', sockets);

/** Every route's path, method, input and answer, for `hc<AppType>` (src/client/api.ts). */
export type AppType = typeof routes;

app.notFound((c) => c.json({ code: 'not-found', message: 'No such route' }, 404));
app.onError((error, c) => {
  countError(error instanceof ProtocolError ? error.code : 'internal');
  if (error instanceof ProtocolError) return errorResponse(c, error);
  // D1's reason, not drizzle's message, which carries the statement's parameters (hashes, emails).
  log.error('unhandled', { route: routePath(c), error: failureText(error) });
  return c.json({ code: 'internal', message: 'Request failed' }, 500);
});

/**
 * The daily cron trigger (wrangler.toml `[triggers]`): the retention sweep (db/retention.ts), off
 * every request's path.
 */
async function scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
  ctx.waitUntil(
    sweep(env.DB, Date.now()).then(
      (swept) => log.info('retention sweep', { ...swept }),
      (error: unknown) => log.error('retention sweep failed', { error: failureText(error) }),
    ),
  );
}

// The hono app is the Worker's handler (tests call its `request`); the cron handler rides on it.
export default Object.assign(app, { scheduled });
export { ChatRoom } from './objects/chat-room/chat-room.ts';
export { HostLink } from './objects/host-link.ts';
export { Lobby } from './objects/lobby.ts';
export { RateGate } from './objects/rate-gate.ts';
