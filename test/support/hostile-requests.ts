// Hostile HTTP requests for the fuzz suite (test/relay/fuzz.test.ts), made from a seed like the frames
// of hostile-frames.ts: every route, odd ids in every path segment, odd credentials, upgrades, content
// types, origins and bodies (malformed JSON, binary, deep nesting, prototype keys, sizes around the
// limits). None is a valid request that changes anything.
import { ODD_CHAT_IDS, type Rng } from './hostile-frames.ts';

export const HTTP_ROUTES = [
  'GET /api/health',
  'POST /api/auth/signin',
  'POST /api/auth/refresh',
  'POST /api/auth/signout',
  'POST /api/auth/tickets',
  'GET /api/auth/sessions',
  'DELETE /api/auth/sessions/:id',
  'GET /api/auth/setup',
  'POST /api/auth/setup',
  'GET /api/auth/jwks',
  'GET /api/auth/methods',
  'POST /api/auth/access',
  'GET /api/auth/oidc/start',
  'GET /api/auth/oidc/callback',
  'POST /api/auth/oidc/exchange',
  'GET /api/me',
  'GET /api/users',
  'POST /api/users/:id/disable',
  'POST /api/users/:id/enable',
  'GET /api/relay/metrics',
  'POST /api/pair/start',
  'POST /api/pair/poll',
  'POST /api/pair/lookup',
  'POST /api/pair/approve',
  'POST /api/pair/deny',
  'POST /api/pair/setup',
  'GET /api/hosts',
  'PATCH /api/hosts/:id',
  'DELETE /api/hosts/:id',
  'GET /api/hosts/:id/grants',
  'GET /api/hosts/:id/grants/mine',
  'POST /api/hosts/:id/grants',
  'DELETE /api/hosts/:id/grants/:id',
  'GET /api/hosts/:id/audit',
  'GET /api/chats',
  'GET /api/teams',
  'POST /api/teams',
  'GET /api/teams/:id',
  'PATCH /api/teams/:id/members/:id',
  'DELETE /api/teams/:id/members/:id',
  'POST /api/teams/:id/invitations',
  'DELETE /api/teams/:id',
  'GET /api/invitations/:id',
  'POST /api/invitations/:id/accept',
  'GET /api/push/key',
  'GET /api/push/subscriptions',
  'POST /api/push/subscriptions',
  'DELETE /api/push/subscriptions/:id',
  'GET /api/push/deliveries',
  'POST /api/push/act',
  'GET /api/devices',
  'POST /api/devices',
  'PATCH /api/devices/:id',
  'DELETE /api/devices/:id',
  'GET /v1/visuals/:id/:id/:id',
  'POST /v1/visuals/:id/:id/:id/ticket',
  'GET /v1/attachments/:id/:id/:id',
  'POST /v1/attachments/:id/:id/:id/ticket',
  'GET /v1/hosts/:id/lobby',
  'GET /v1/hosts/:id/chats/:id',
  'GET /v1/hosts/:id/link',
  'GET /nowhere',
  'PUT /api/hosts',
];

/** An id as a path segment; none for one with a lone surrogate (no URL can carry it; '%ED%A0%80' stands for it). */
function encodable(id: string): string[] {
  try {
    return [encodeURIComponent(id)];
  } catch {
    return [];
  }
}

export interface HostileRequest {
  method: string;
  /** The route's shape (`GET /api/hosts/:id/grants`), for figures by route. */
  route: string;
  /** Path and query, to be put after the relay's origin. */
  path: string;
  headers: Record<string, string>;
  body: BodyInit | null;
  what: string;
}

/**
 * `count` hostile requests from `rng`, aimed at `hostId` and `chatId` among the odd ids; `intruderToken`
 * is a valid token of a person with no access. Made lazily: the bodies (some a megabyte) are made once.
 */
export function* hostileRequests(
  rng: Rng,
  count: number,
  opts: { hostId: string; chatId: string; intruderToken: string; subjectId: string },
): Generator<HostileRequest> {
  const auths = [null, `Bearer ${opts.intruderToken}`, 'Bearer not-a-token', 'Basic eDp5', `Bearer ${'x'.repeat(9000)}`, 'Bearer \u00e9'];
  const ids = [opts.hostId, opts.chatId, ...ODD_CHAT_IDS.flatMap(encodable), '%ED%A0%80', '%ZZ', '%', '..%2f..', 'a%00b', '%0d%0aSet-Cookie:x'];
  // Made once: building a megabyte per request would cost more than the request.
  const bodies: Array<BodyInit | null> = [
    null,
    '',
    '{',
    'null',
    '[]',
    '"x"',
    '{"a":',
    JSON.stringify({ email: 7, password: [] }),
    JSON.stringify({ refreshToken: { $ne: null } }),
    '['.repeat(20_000) + ']'.repeat(20_000),
    '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}',
    new Uint8Array([0xff, 0xfe, 0x00, 0x7b]),
    ...[255, 256, 257, 100_000].map((n) => JSON.stringify({ name: 'x'.repeat(n), role: 'owner', subject: { type: 'user', id: opts.subjectId } })),
    JSON.stringify({ code: '\ud800', deviceCode: null, hostId: [], subject: { type: 'team' }, role: 7 }),
    'x'.repeat(1024),
    'x'.repeat(1_048_576 + 1),
  ];
  for (let i = 0; i < count; i++) {
    const route = rng.pick(HTTP_ROUTES);
    const [method, shape] = route.split(' ') as [string, string];
    const path = shape.replace(/:id/g, () => rng.pick(ids));
    const headers: Record<string, string> = {};
    const auth = rng.pick(auths);
    if (auth) headers.Authorization = auth;
    if (rng.chance(0.2)) headers.Upgrade = 'websocket';
    if (rng.chance(0.5)) headers['Content-Type'] = rng.pick(['application/json', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data']);
    if (rng.chance(0.1)) headers.Origin = rng.pick(['https://evil.test', 'null', 'https://app.tether.test']);
    const body = method === 'GET' ? null : rng.pick(bodies);
    const what = `${method} ${path.slice(0, 80)} (${auth ? auth.slice(0, 12) : 'anonymous'}${headers.Upgrade ? ', upgrade' : ''})`;
    const query = rng.chance(0.1) ? '?since=-1&limit=1e99&cursor=%00' : '';
    yield { method, route, path: `${path}${query}`, headers, body, what };
  }
}
