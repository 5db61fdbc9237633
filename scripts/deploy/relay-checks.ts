// After a deploy: which URL the relay answers at, whether it is healthy, and whether its owner
// account has been claimed (which decides whether the setup link is printed).

/**
 * The relay's URL among the targets `wrangler deploy` reports: a custom domain first (what the
 * self-hoster chose), then a route's host, then the workers.dev URL. Targets look like
 * `https://tether.me.workers.dev`, `tether.example.com (custom domain)` or `example.com/tether/*`
 * (a route: the relay then answers under that host).
 */
export function relayUrlFrom(targets: readonly string[]): string | null {
  const hostOf = (target: string) => target.split(' ')[0]!.replace(/\/\*?$/, '').replace(/\/.*$/, '');
  const custom = targets.find((target) => target.includes('(custom domain'));
  if (custom) return `https://${hostOf(custom)}`;
  const route = targets.find((target) => !/^https?:\/\//.test(target) && !target.startsWith('schedule:') && /^[\w*.-]+\.[\w-]+/.test(target));
  if (route && !hostOf(route).includes('*')) return `https://${hostOf(route)}`;
  const url = targets.find((target) => /^https?:\/\//.test(target));
  return url ? url.replace(/\/$/, '') : null;
}

export interface Health {
  /** The HTTP status, or null when nothing answered in time. */
  status: number | null;
  /** The body as the relay sent it (a small JSON object), or why nothing answered. */
  detail: string;
}

/**
 * GET /api/health, asked again until it answers 200 or `waitMs` runs out: a Worker just deployed to
 * a new workers.dev subdomain can take a little while to be reachable.
 */
export async function checkHealth(url: string, waitMs: number): Promise<Health> {
  const deadline = Date.now() + waitMs;
  let last: Health = { status: null, detail: 'no answer' };
  for (;;) {
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(10_000) });
      last = { status: res.status, detail: (await res.text()).trim().slice(0, 500) };
      if (res.ok) return last;
    } catch (error) {
      last = { status: null, detail: error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error) };
    }
    if (Date.now() >= deadline) return last;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

/** Whether the owner account is claimed (GET /api/auth/setup answers `{claimed}`); null when the relay did not say. */
export async function ownerClaimed(url: string): Promise<boolean | null> {
  try {
    const res = await fetch(`${url}/api/auth/setup`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return null;
    const body = await res.json() as { claimed?: unknown };
    return typeof body.claimed === 'boolean' ? body.claimed : null;
  } catch {
    return null;
  }
}

/** The one-time link that creates the owner account; the secret rides in the fragment, which no server sees. */
export function setupLink(url: string, secret: string): string {
  return `${url}/setup#secret=${encodeURIComponent(secret)}`;
}
