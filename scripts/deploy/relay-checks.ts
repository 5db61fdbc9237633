// After a deploy: which URL the relay answers at, whether it is healthy, and whether its owner
// account has been claimed (which decides whether the setup link is printed).
import { HealthSchema, type Health } from '../../src/contracts/health.ts';

/**
 * The relay's URL among the targets `wrangler deploy` reports: a custom domain first (what the
 * self-hoster chose), then a route's host, then the workers.dev URL. Targets look like
 * `https://tether.me.workers.dev`, `tether.example.com (custom domain)` or `example.com/tether/*`
 * (a route: the relay then answers under that host).
 */
export function relayUrlFrom(targets: readonly string[]): string | null {
  const hostOf = (target: string) =>
    target
      .split(' ')[0]!
      .replace(/\/\*?$/, '')
      .replace(/\/.*$/, '');
  const custom = targets.find((target) => target.includes('(custom domain'));
  if (custom) return `https://${hostOf(custom)}`;
  const route = targets.find((target) => !/^https?:\/\//.test(target) && !target.startsWith('schedule:') && /^[\w*.-]+\.[\w-]+/.test(target));
  if (route && !hostOf(route).includes('*')) return `https://${hostOf(route)}`;
  const url = targets.find((target) => /^https?:\/\//.test(target));
  return url ? url.replace(/\/$/, '') : null;
}

export interface HealthAnswer {
  /** The HTTP status, or null when nothing answered in time. */
  status: number | null;
  /** The body as the relay sent it (a small JSON object), or why nothing answered. */
  detail: string;
  /** The body read as the relay's health (src/contracts), or null when it is not one. */
  health: Health | null;
}

/**
 * GET /api/health, asked again until it answers 200 or `waitMs` runs out: a Worker just deployed to
 * a new workers.dev subdomain can take a little while to be reachable. The answer is read with the
 * contract's HealthSchema, so the deploy can say what is wrong in the relay's own terms.
 */
export async function checkHealth(url: string, waitMs: number): Promise<HealthAnswer> {
  const deadline = Date.now() + waitMs;
  let last: HealthAnswer = { status: null, detail: 'no answer', health: null };
  for (;;) {
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(10_000) });
      const body = (await res.text()).trim();
      last = { status: res.status, detail: body.slice(0, 500), health: healthIn(body) };
      // Missing migrations do not heal by waiting (the deploy applied them just before): no point asking again.
      if (res.ok || last.health?.migrations.pending?.length) return last;
    } catch (error) {
      last = {
        status: null,
        detail: error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error),
        health: null,
      };
    }
    if (Date.now() >= deadline) return last;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

function healthIn(body: string): Health | null {
  try {
    const parsed = HealthSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Why a relay that answered its health check is not healthy, in its own terms; null when it is. */
export function healthProblem(health: Health): string | null {
  if (health.db === 'unreachable') return 'the relay cannot reach its D1 database';
  const pending = health.migrations.pending ?? [];
  if (pending.length > 0)
    return `D1 lacks ${pending.length === 1 ? 'the migration' : 'the migrations'} ${pending.join(', ')} this build expects (applied up to ${health.migrations.applied ?? 'none'})`;
  if (health.keys.signing !== 'ok') return `its signing keys (TETHER_SIGNING_KEYS) are ${health.keys.signing}`;
  if (health.keys.push === 'invalid') return 'its push keys (TETHER_VAPID_KEYS) do not import';
  return health.ok ? null : 'the relay says it is not healthy';
}

/** Whether the owner account is claimed (GET /api/auth/setup answers `{claimed}`); null when the relay did not say. */
export async function ownerClaimed(url: string): Promise<boolean | null> {
  try {
    const res = await fetch(`${url}/api/auth/setup`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return null;
    const body = (await res.json()) as { claimed?: unknown };
    return typeof body.claimed === 'boolean' ? body.claimed : null;
  } catch {
    return null;
  }
}

/**
 * The one-time link that creates the owner account; the secret rides in the fragment, which no server
 * sees. With `pairCode` (`npm start`), the page then leads on to approving that host's pairing.
 */
export function setupLink(url: string, secret: string, pairCode?: string): string {
  return `${url}/setup#secret=${encodeURIComponent(secret)}${pairCode ? `&pair=${encodeURIComponent(pairCode)}` : ''}`;
}
