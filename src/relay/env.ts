import type { ChatRoom } from './objects/chat-room/chat-room.ts';
import type { HostLink } from './objects/host-link.ts';
import type { Lobby } from './objects/lobby.ts';
import type { RateGate } from './objects/rate-gate.ts';

export interface Env {
  DB: D1Database;
  HOST_LINK: DurableObjectNamespace<HostLink>;
  CHAT_ROOM: DurableObjectNamespace<ChatRoom>;
  LOBBY: DurableObjectNamespace<Lobby>;
  /** One token bucket per rate-limit key (src/relay/auth/rate-limit.ts). */
  RATE_GATE: DurableObjectNamespace<RateGate>;
  /**
   * Workers Analytics Engine (optional, `[[analytics_engine_datasets]] binding = "METRICS"`): each flush of
   * the relay's counters (src/relay/metrics) also goes there as data points. D1 keeps them either way.
   */
  METRICS?: AnalyticsEngineDataset;
  /**
   * The relay's signing keys (secret): a JSON array of private ES256 JWKs, each with a `kid`. The first
   * signs access tokens and tickets; all verify (rotate by prepending a key, drop the old one after
   * 10 minutes). `npm start` generates it into .dev.vars; a deployment: `wrangler secret put`.
   */
  TETHER_SIGNING_KEYS: string;
  /** Claims the relay's owner account once (`POST /api/auth/setup`); a secret. Unset: no setup possible. */
  TETHER_SETUP_SECRET?: string;
  HOST_TIMEOUT_MS?: string;
  /** The git commit this deployment was built from, when the deploy recorded it (a var); `GET /api/health` answers it. */
  TETHER_COMMIT?: string;
  /**
   * The web app's origins, comma-separated: they may frame visual pages (CSP frame-ancestors) and open
   * sockets (a socket request carrying any other `Origin` than these or the relay's own is refused).
   */
  APP_ORIGINS?: string;
  /**
   * Rate limits, each "max/perSeconds" (a bucket of `max` that refills fully in `perSeconds`). A request
   * over a limit gets 429 `rate-limited` with Retry-After; a frame gets a `rate-limited` reply.
   * RATE_SIGNIN: sign-in attempts per IP (default "10/60"); past RATE_SIGNIN_ACCOUNT on one email an attempt is only slowed. RATE_PAIRING: pairing starts
   * and approvals per IP and per user ("10/60"). RATE_TICKETS: socket tickets per session and per IP
   * ("60/60"). RATE_FRAMES: frames on one socket ("300/60"). RATE_FRAMES_USER: one person's frames
   * across their sockets on one lobby or chat ("600/60").
   */
  RATE_SIGNIN?: string;
  /** Password attempts on one account from anywhere before each is slowed, never refused (default "30/60"). */
  RATE_SIGNIN_ACCOUNT?: string;
  RATE_PAIRING?: string;
  RATE_TICKETS?: string;
  RATE_FRAMES?: string;
  RATE_FRAMES_USER?: string;
  /** Dropped frames on a host's link logged per window ("60/60"); see LIMITS.linkFrames. */
  RATE_LINK_FRAMES?: string;
  /**
   * Sign-in through Cloudflare Access (both set to turn it on): the team domain
   * (`https://<team>.cloudflareaccess.com`, whose keys are at /cdn-cgi/access/certs) and the Access
   * application's audience tag. The app trades the `Cf-Access-Jwt-Assertion` at POST /api/auth/access.
   */
  ACCESS_TEAM_DOMAIN?: string;
  ACCESS_AUD?: string;
  /**
   * Sign-in through an OIDC provider (issuer and client id set to turn it on; the secret only for a
   * confidential client). Register `<relay origin>/api/auth/oidc/callback` as the redirect URI. Only ID
   * tokens with `email_verified: true` sign in: accounts are found by email.
   */
  OIDC_ISSUER?: string;
  OIDC_CLIENT_ID?: string;
  OIDC_CLIENT_SECRET?: string;
  /**
   * Web Push (src/relay/push): TETHER_VAPID_KEYS (secret) is a JSON array of private ES256 JWKs; the
   * first is the key browsers subscribe with, every one still signs for the subscriptions made with it.
   * Unset: no pushes (GET /api/push/key answers a null key). `npm start` generates it into .dev.vars.
   * PUSH_SUBJECT: the VAPID contact the push services see (`mailto:` or `https:`).
   * PUSH_ENDPOINT_HOSTS: push service hosts beyond the browsers' own (comma-separated; subdomains too).
   * PUSH_ALLOW_LOOPBACK: "1" admits http endpoints on 127.0.0.1/localhost (local use and tests only).
   */
  TETHER_VAPID_KEYS?: string;
  PUSH_SUBJECT?: string;
  PUSH_ENDPOINT_HOSTS?: string;
  PUSH_ALLOW_LOOPBACK?: string;
}
