// Sign-in through any OpenID Connect provider: the authorization code flow with PKCE (S256), bound at
// both ends to the browser that started it.
//
//   start     the app makes a secret of its own (kept in its tab) and sends its challenge; the relay
//             makes a state, a nonce, a code verifier and a browser secret, keeps them (state hashed,
//             ten minutes, in auth_codes), sets the browser secret as an HttpOnly cookie on the
//             browser and sends it to the provider with the verifier's challenge;
//   callback  the provider sends the browser back with a code and the state; the state is taken once
//             and must come with the cookie of the browser it was started in (a link that carries
//             someone else's state or code into a victim's browser is refused), the code is traded at
//             the token endpoint together with the verifier (so a code stolen on the way back is worth
//             nothing), and the ID token is verified against the provider's published keys: issuer,
//             audience (our client id), nonce, expiry, `email_verified`;
//   login     the person's account is found or created by the verified email, and the browser goes
//             back to the app with a one-time login code (60 s) in the URL's fragment, which the app
//             exchanges for a session together with its own secret: a `#login=` code lifted from
//             another sign-in is worth nothing in a tab that did not start it. Tokens never travel in a URL.
import { jwtVerify } from 'jose';
import { z } from 'zod';
import { ProtocolError } from '../../contracts/index.ts';
import { consumeCode, deleteExpiredCodes, keepCode } from '../db/auth-codes.ts';
import { disabledAtOf } from '../db/users.ts';
import type { Env } from '../env.ts';
import { log } from '../log.ts';
import { PROVIDER_ALGORITHMS, canonicalIssuer, refusal, remoteKeys, userForEmail, type ProviderAccount } from './external.ts';
import { hashOpaque, newOpaqueToken } from './opaque.ts';

const STATE_MS = 10 * 60 * 1000;
const LOGIN_CODE_MS = 60 * 1000;

export function oidcConfigured(env: Env): boolean {
  return Boolean(env.OIDC_ISSUER?.trim() && env.OIDC_CLIENT_ID?.trim());
}

const DiscoverySchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  jwks_uri: z.url(),
  token_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});
type Discovery = z.output<typeof DiscoverySchema>;

const discoveries = new Map<string, Promise<Discovery>>();

/** The provider's metadata, fetched once per isolate; a failed fetch is forgotten so the next sign-in retries. */
function discover(issuer: string): Promise<Discovery> {
  let found = discoveries.get(issuer);
  if (!found) {
    found = (async () => {
      const res = await fetch(`${issuer}/.well-known/openid-configuration`, { headers: { Accept: 'application/json' } });
      if (!res.ok) throw new Error(`discovery answered ${res.status}`);
      const doc = DiscoverySchema.parse(await res.json());
      // The document must speak for the issuer we trust, or anyone serving it could name other endpoints.
      if (canonicalIssuer(doc.issuer) !== issuer) throw new Error(`discovery names another issuer: ${doc.issuer}`);
      return doc;
    })();
    discoveries.set(issuer, found);
    found.catch(() => discoveries.delete(issuer));
  }
  return found.catch((error: unknown) => {
    log.error('oidc discovery failed', { issuer, error: String(error) });
    throw new ProtocolError('internal', 'The sign-in provider could not be reached');
  });
}

function settings(env: Env) {
  if (!oidcConfigured(env)) throw new Error('OIDC is not configured');
  return { issuer: canonicalIssuer(env.OIDC_ISSUER!), clientId: env.OIDC_CLIENT_ID!.trim(), clientSecret: env.OIDC_CLIENT_SECRET?.trim() || null };
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

async function challengeOf(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

const StateSchema = z.object({
  verifier: z.string(),
  nonce: z.string(),
  returnTo: z.string(),
  redirectUri: z.string(),
  /** SHA-256 of the browser secret set as a cookie at the start. */
  browser: z.string(),
  /** The app's challenge: the login code is traded only with the secret behind it. */
  appChallenge: z.string(),
});
const LoginSchema = z.object({ userId: z.string(), appChallenge: z.string() });

/** An app's challenge for its own secret: base64url of SHA-256, as PKCE's S256. */
export const AppChallengeSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "must be the base64url SHA-256 of the app's secret (43 characters)");

async function keep(db: D1Database, code: string, kind: string, data: unknown, ttlMs: number): Promise<void> {
  await keepCode(db, { codeHash: await hashOpaque(code), kind, data: JSON.stringify(data), expiresAt: Date.now() + ttlMs });
}

/** Takes a code once (a second taker finds nothing); null when unknown, of another kind, or expired. */
async function take(db: D1Database, code: string, kind: string): Promise<unknown> {
  const row = await consumeCode(db, await hashOpaque(code), kind);
  // Expired rows are swept here too, so the table holds only live codes and those not yet tried.
  await deleteExpiredCodes(db, Date.now());
  if (!row || row.expiresAt < Date.now()) return null;
  return JSON.parse(row.data);
}

export const OIDC_STATE_SECONDS = STATE_MS / 1000;

/**
 * Where the provider is asked to send the browser to, after `returnTo` (an app address) has been
 * checked by the caller, and the secret to set as this browser's cookie.
 */
export async function startSignIn(env: Env, redirectUri: string, returnTo: string, appChallenge: string): Promise<{ url: string; browser: string }> {
  const { issuer, clientId } = settings(env);
  const provider = await discover(issuer);
  const state = newOpaqueToken();
  const nonce = newOpaqueToken();
  const verifier = newOpaqueToken();
  const browser = newOpaqueToken();
  await keep(env.DB, state, 'oidc-state', { verifier, nonce, returnTo, redirectUri, browser: await hashOpaque(browser), appChallenge }, STATE_MS);
  const url = new URL(provider.authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('scope', 'openid email profile');
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  url.searchParams.set('code_challenge', await challengeOf(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { url: url.toString(), browser };
}

export type StartedSignIn = z.output<typeof StateSchema>;

/**
 * What a state was started for; consumes the state. Null when the state is unknown, used or expired;
 * `other-browser` when the browser bringing it back is not the one that started it (no cookie, or
 * another's): the state is spent either way, so a link carrying it works nowhere.
 */
export async function takeState(env: Env, state: string, browser: string | undefined): Promise<StartedSignIn | 'other-browser' | null> {
  const data = await take(env.DB, state, 'oidc-state');
  const parsed = StateSchema.safeParse(data);
  if (!parsed.success) return null;
  if (!browser || (await hashOpaque(browser)) !== parsed.data.browser) return 'other-browser';
  return parsed.data;
}

const TokenResponseSchema = z.object({ id_token: z.string().min(1) });

/** Trades the provider's code (with the verifier) for an ID token, verifies it, and answers the account it names. */
export async function finishSignIn(env: Env, code: string, started: StartedSignIn): Promise<ProviderAccount> {
  const { issuer, clientId, clientSecret } = settings(env);
  const provider = await discover(issuer);
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: started.redirectUri,
    client_id: clientId,
    code_verifier: started.verifier,
  });
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' };
  if (clientSecret) {
    // client_secret_basic is the spec's default; a provider that lists only client_secret_post gets that.
    const methods = provider.token_endpoint_auth_methods_supported;
    if (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) form.set('client_secret', clientSecret);
    else headers.Authorization = `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`;
  }
  const res = await fetch(provider.token_endpoint, { method: 'POST', headers, body: form });
  const body = (await res.json().catch(() => null)) as unknown;
  if (!res.ok) {
    const why = typeof body === 'object' && body !== null && 'error' in body ? String(body.error) : `status ${res.status}`;
    throw new ProtocolError('unauthorized', `The sign-in provider refused the code (${why})`);
  }
  const tokens = TokenResponseSchema.safeParse(body);
  if (!tokens.success) throw new ProtocolError('unauthorized', 'The sign-in provider sent no ID token');

  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(tokens.data.id_token, remoteKeys(provider.jwks_uri), {
      issuer: provider.issuer,
      audience: clientId,
      algorithms: PROVIDER_ALGORITHMS,
      requiredClaims: ['exp', 'iat', 'sub'],
    }));
  } catch (error) {
    throw refusal(error, 'ID token');
  }
  // The nonce ties the token to this browser's start: a token minted for another sign-in is refused.
  if (claims.nonce !== started.nonce) throw new ProtocolError('unauthorized', 'The ID token was not issued for this sign-in (nonce)');
  if (claims.azp !== undefined && claims.azp !== clientId) throw new ProtocolError('unauthorized', 'The ID token was issued to another client (azp)');
  if (typeof claims.email !== 'string' || !claims.email.includes('@'))
    throw new ProtocolError('unauthorized', 'The sign-in provider shared no email; allow the email scope');
  // Accounts are found by email, so an address the provider does not vouch for could sign in as anyone
  // (the owner included) with a provider that lets people type any email: only `email_verified: true` counts.
  if (claims.email_verified !== true) throw new ProtocolError('unauthorized', 'The sign-in provider has not verified this email (email_verified is not true)');
  return userForEmail(env.DB, claims.email, typeof claims.name === 'string' ? claims.name : null);
}

/** A one-time code the app that started the sign-in trades for a session: 60 s, once, with its secret. */
export async function issueLoginCode(env: Env, userId: string, started: StartedSignIn): Promise<string> {
  const code = newOpaqueToken();
  await keep(env.DB, code, 'login', { userId, appChallenge: started.appChallenge }, LOGIN_CODE_MS);
  return code;
}

/**
 * The account a login code was issued for; consumes it. `verifier` is the secret the app kept when it
 * started: a code brought into another tab (a link with `#login=`) has none that fits, and is spent.
 */
export async function takeLoginCode(env: Env, code: string, verifier: string): Promise<string> {
  const parsed = LoginSchema.safeParse(await take(env.DB, code, 'login'));
  if (!parsed.success) throw new ProtocolError('unauthorized', 'This login code is unknown, used or expired');
  if ((await challengeOf(verifier)) !== parsed.data.appChallenge) {
    throw new ProtocolError('unauthorized', "This login code was issued to a sign-in started elsewhere (the app's secret does not match)");
  }
  const user = await disabledAtOf(env.DB, parsed.data.userId);
  if (!user || user.disabledAt !== null) throw new ProtocolError('forbidden', 'This account is disabled');
  return parsed.data.userId;
}
