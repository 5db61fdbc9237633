// The relay's HTTP API for an app: sign-in and the session's tokens, then typed calls for every /api
// route the web app uses. Bodies and answers are the zod shapes of src/contracts (checked on the way
// in, so a relay of another version fails loudly here rather than deep in a view); every failure is a
// ProtocolError with the relay's own `{code, message}`.
//
// The access token lives 10 minutes. `accessToken()` refreshes it when less than a minute is left, and
// `call` refreshes once and retries once on a 401 (the token may have expired in flight). Refreshes are
// single-flight: the refresh token rotates on every use, and presenting a used one ends the session.
import { z } from 'zod';
import {
  AuditPageSchema, DeviceListResultSchema, DeviceRecordSchema, GrantSchema, PairLookupResultSchema, HostSummarySchema, IndexedChatSchema, InvitationSchema, MeSchema, PairedHostSchema,
  ProtocolError, PushDeliverySchema, PushSubscriptionInfoSchema, SessionListSchema, SessionTokensSchema, SignInMethodsSchema, TeamDetailSchema, TeamGrantsToSignSchema, TeamMembersToSignSchema, TeamSummarySchema,
  type Me, type SessionSummary, type SignInMethods,
  type AuditPage, type Grant, type GrantCreateRequest, type HostSummary, type IndexedChat, type Invitation, type PairedHost,
  PeerDeviceListSchema, type PeerDevice, type RevocationStatement, type SignedGrantCreateRequest,
  type DeviceRecord, type DeviceRegisterRequest, type DeviceStatement, type PairLookupResult, type PairingStatement, type Signed, type PushDelivery, type PushSubscriptionInfo, type TeamDetail, type TeamGrantsToSign, type TeamMembersToSign, type TeamSummary, type WireErrorCode,
} from '../contracts/index.ts';
import { Backoff } from '../contracts/backoff.ts';
import { MemoryTokenStore, type SessionTokens, type TokenStore } from './tokens.ts';

export type { Me, SessionSummary, SignInMethods };

/** Refresh when the access token has less than this left. */
const REFRESH_BEFORE_MS = 60_000;
/** How many times one refresh is sent when its answer never comes (the first send included). */
const REFRESH_ATTEMPTS = 4;

export interface RelayApiOptions {
  tokens?: TokenStore;
  /** For tests and non-browser runtimes. */
  fetch?: typeof fetch;
}

// The shapes below are declared by the relay as plain TypeScript (http/teams.ts, http/visuals.ts); they
// have no contract schema yet, so they are typed here and not checked.
/** `GET /api/invitations/:token`: what an invitation is for, shown before accepting. */
export interface InvitationView {
  teamId: string | null;
  teamName: string | null;
  role: string;
  email: string | null;
  expiresAt: number;
}

/** An address that opens one visual's page or one attachment (`attachmentTicket`), with its ticket in it. */
export interface VisualTicket {
  /** The visual's page (or the attachment), with a short-lived ticket for that one thing only. */
  url: string;
  expiresAt: number;
}

const HostsSchema = z.object({ hosts: z.array(HostSummarySchema) });
const GrantsSchema = z.object({ grants: z.array(GrantSchema) });
const TeamsSchema = z.object({ teams: z.array(TeamSummarySchema) });
const ChatIndexSchema = z.object({ chats: z.array(IndexedChatSchema) });
const PushSubscriptionsSchema = z.object({ subscriptions: z.array(PushSubscriptionInfoSchema) });
const PushDeliveriesSchema = z.object({ deliveries: z.array(PushDeliverySchema) });

export class RelayApi {
  readonly baseUrl: string;
  private readonly tokens: TokenStore;
  private readonly fetcher: typeof fetch;
  private session: SessionTokens | null;
  private refreshing: Promise<SessionTokens> | null = null;
  private readonly signedOutListeners = new Set<(why: ProtocolError) => void>();

  /** `baseUrl`: the relay's origin; in the browser the app's own origin when omitted. */
  constructor(baseUrl?: string, options: RelayApiOptions = {}) {
    const origin = baseUrl ?? (globalThis as { location?: { origin: string } }).location?.origin;
    if (!origin) throw new ProtocolError('bad-request', 'RelayApi needs the relay URL outside a browser');
    this.baseUrl = origin.replace(/\/+$/, '');
    this.tokens = options.tokens ?? new MemoryTokenStore();
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
    this.session = this.tokens.load();
  }

  // ---- the session ----

  get signedIn(): boolean {
    return this.session !== null;
  }

  /** The signed-in user's id when the sign-in told it (a refresh does not). */
  get userId(): string | null {
    return this.session?.userId ?? null;
  }

  /** Called when the session ends (signed out here, or a refresh the relay refused). */
  onSignedOut(listener: (why: ProtocolError) => void): () => void {
    this.signedOutListeners.add(listener);
    return () => this.signedOutListeners.delete(listener);
  }

  async signIn(email: string, password: string): Promise<SessionTokens> {
    return this.adopt(await this.checkedSend(SessionTokensSchema, 'POST', '/api/auth/signin', { email, password }));
  }

  /** Whether the relay's owner account was made already (the setup link works only until then). */
  async ownerClaimed(): Promise<boolean> {
    return (await this.send<{ claimed: boolean }>('GET', '/api/auth/setup')).claimed === true;
  }

  /** Makes the relay's owner account with the setup secret, and signs in as that owner. */
  async claimOwner(account: { secret: string; name: string; email: string; password: string }): Promise<SessionTokens> {
    return this.adopt(await this.checkedSend(SessionTokensSchema, 'POST', '/api/auth/setup', account));
  }

  /**
   * Finishes an OIDC sign-in: the app got `#login=<code>` back from the relay. `verifier` is the secret
   * whose challenge this app sent to `oidcStartUrl`; a code from a sign-in started anywhere else is refused.
   */
  async signInWithCode(code: string, verifier: string): Promise<SessionTokens> {
    return this.adopt(await this.checkedSend(SessionTokensSchema, 'POST', '/api/auth/oidc/exchange', { code, verifier }));
  }

  /** Behind Cloudflare Access: trades the assertion Access adds to this request for a session. */
  async signInWithAccess(): Promise<SessionTokens> {
    return this.adopt(await this.checkedSend(SessionTokensSchema, 'POST', '/api/auth/access'));
  }

  /**
   * Where the browser goes to start an OIDC sign-in; it comes back to `returnTo` with `#login=`.
   * `appChallenge` is `oidcBinding()`'s challenge: keep its verifier until the code comes back.
   */
  oidcStartUrl(returnTo: string, appChallenge: string): string {
    return `${this.baseUrl}/api/auth/oidc/start?return=${encodeURIComponent(returnTo)}&app_challenge=${appChallenge}`;
  }

  /** Takes a session made elsewhere (e.g. accepting an invitation signed out). */
  adopt(session: SessionTokens): SessionTokens {
    this.session = session;
    this.tokens.save(session);
    return session;
  }

  async signOut(): Promise<void> {
    try {
      if (this.session) await this.call('POST', '/api/auth/signout');
    } catch (error) {
      // Already ended there: signing out here still forgets it.
      if (!(error instanceof ProtocolError) || error.code !== 'unauthorized') throw error;
    } finally {
      this.ended(new ProtocolError('unauthorized', 'Signed out'));
    }
  }

  /** A valid access token, refreshed first when it is about to expire. */
  async accessToken(): Promise<string> {
    const session = this.session;
    if (!session) throw new ProtocolError('unauthorized', 'Not signed in');
    if (session.expiresAt - Date.now() > REFRESH_BEFORE_MS) return session.accessToken;
    return (await this.refresh(session.accessToken)).accessToken;
  }

  /**
   * Trades the refresh token for a new pair, once however many callers ask at the same time.
   * `stale`: the access token the caller found wanting; if another caller (or tab) replaced it
   * meanwhile, the newer one is the answer and nothing is refreshed.
   */
  refresh(stale?: string): Promise<SessionTokens> {
    this.refreshing ??= this.tokens.exclusive(async () => {
      const stored = this.tokens.load();
      if (!stored) throw this.ended(new ProtocolError('unauthorized', 'Not signed in'));
      const fresh = stored.accessToken !== stale && stored.expiresAt - Date.now() > REFRESH_BEFORE_MS;
      if (fresh) return this.session = stored;
      const next = await this.rotate(stored.refreshToken);
      return this.adopt({ ...next, ...(stored.userId ? { userId: stored.userId } : {}) });
    }).finally(() => { this.refreshing = null; });
    return this.refreshing;
  }

  /**
   * `POST /api/auth/refresh`, sent again with the same token when its answer never came (the relay
   * out of reach or failing on the way: a restart, a tunnel, a phone in a lift). The relay may have
   * rotated already; it answers a prompt retry from the same device with the same successor
   * (relay auth/sessions.ts), so the retries stay well inside its window. A refusal ends the session.
   */
  private async rotate(refreshToken: string): Promise<SessionTokens> {
    const backoff = new Backoff({ baseMs: 500, maxMs: 4_000 });
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.checkedSend(SessionTokensSchema, 'POST', '/api/auth/refresh', { refreshToken });
      } catch (error) {
        if (error instanceof ProtocolError && error.code === 'unauthorized') throw this.ended(error);
        const unanswered = error instanceof ProtocolError && (error.code === 'host-offline' || error.code === 'internal');
        if (!unanswered || attempt >= REFRESH_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, backoff.next()));
      }
    }
  }

  private ended(why: ProtocolError): ProtocolError {
    const had = this.session !== null || this.tokens.load() !== null;
    this.session = null;
    this.tokens.save(null);
    if (had) for (const listener of this.signedOutListeners) listener(why);
    return why;
  }

  /**
   * A signed-in call: JSON in, JSON out, or a ProtocolError. A 401 refreshes the token once and tries
   * again (the token may have run out on the way).
   */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const token = await this.accessToken();
    try {
      return await this.send<T>(method, path, body, token);
    } catch (error) {
      if (!(error instanceof ProtocolError) || error.code !== 'unauthorized') throw error;
      const next = await this.refresh(token);
      return this.send<T>(method, path, body, next.accessToken);
    }
  }

  private async send<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token) headers.Authorization = `Bearer ${token}`;
    let res: Response;
    try {
      res = await this.fetcher(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new ProtocolError('host-offline', `Cannot reach the relay at ${this.baseUrl}`);
    }
    const answer = await res.json().catch(() => null) as { code?: unknown; message?: unknown } | null;
    if (res.ok) return answer as T;
    const code = typeof answer?.code === 'string' ? answer.code as WireErrorCode : statusCode(res.status);
    throw new ProtocolError(code, typeof answer?.message === 'string' ? answer.message : `${method} ${path} failed (${res.status})`);
  }

  /** A call whose answer has a contract schema: checked, so a mismatch is a clear error. */
  private async checked<S extends z.ZodType>(schema: S, method: string, path: string, body?: unknown): Promise<z.output<S>> {
    return shaped(schema, await this.call<unknown>(method, path, body), method, path);
  }

  /** `checked` for the calls made before there is a session (sign-in, refresh, the sign-in methods). */
  private async checkedSend<S extends z.ZodType>(schema: S, method: string, path: string, body?: unknown): Promise<z.output<S>> {
    return shaped(schema, await this.send<unknown>(method, path, body), method, path);
  }

  // ---- who, and where ----

  me(): Promise<Me> {
    return this.checked(MeSchema, 'GET', '/api/me');
  }

  async sessions(): Promise<SessionSummary[]> {
    return (await this.checked(SessionListSchema, 'GET', '/api/auth/sessions')).sessions;
  }

  async revokeSession(sessionId: string): Promise<void> {
    await this.call('DELETE', `/api/auth/sessions/${encodeURIComponent(sessionId)}`);
  }

  /** Which sign-in methods the relay offers (Access and OIDC only where configured). */
  signInMethods(): Promise<SignInMethods> {
    return this.checkedSend(SignInMethodsSchema, 'GET', '/api/auth/methods');
  }

  // ---- hosts and pairing ----

  async hosts(): Promise<HostSummary[]> {
    return (await this.checked(HostsSchema, 'GET', '/api/hosts')).hosts;
  }

  renameHost(hostId: string, name: string): Promise<{ id: string; name: string }> {
    return this.call('PATCH', `/api/hosts/${encodeURIComponent(hostId)}`, { name });
  }

  revokeHost(hostId: string): Promise<{ id: string; revokedAt: number }> {
    return this.call('DELETE', `/api/hosts/${encodeURIComponent(hostId)}`);
  }

  /** Approves the code a machine shows (`tether host pair`): the host becomes the caller's. */
  /** `approval`: the pairing statement this person's device signed, which the host checks and pins. */
  approvePairing(userCode: string, name?: string, approval?: Signed<PairingStatement>): Promise<PairedHost> {
    return this.checked(PairedHostSchema, 'POST', '/api/pair/approve', { userCode, ...(name === undefined ? {} : { name }), ...(approval ? { approval } : {}) });
  }

  /** The pending pairing's name and host key, for the approving device to sign. */
  lookupPairing(userCode: string): Promise<PairLookupResult> {
    return this.checked(PairLookupResultSchema, 'POST', '/api/pair/lookup', { userCode });
  }

  async denyPairing(userCode: string): Promise<void> {
    await this.call('POST', '/api/pair/deny', { userCode });
  }

  async grants(hostId: string): Promise<Grant[]> {
    return (await this.checked(GrantsSchema, 'GET', `/api/hosts/${encodeURIComponent(hostId)}/grants`)).grants;
  }

  /** The grants on a host that reach the caller (theirs and their teams'), for anyone with a role there. */
  async myGrants(hostId: string): Promise<Grant[]> {
    return (await this.checked(GrantsSchema, 'GET', `/api/hosts/${encodeURIComponent(hostId)}/grants/mine`)).grants;
  }

  /**
   * Gives a role (again: giving to the same subject and chat changes its role). With `signed`, the
   * owner's device signed it (src/client/trust.ts shareSigned) and the host follows it too.
   */
  grant(hostId: string, request: GrantCreateRequest | SignedGrantCreateRequest): Promise<Grant> {
    return this.checked(GrantSchema, 'POST', `/api/hosts/${encodeURIComponent(hostId)}/grants`, request);
  }

  /**
   * The members an owner of this host signs a team's grant over (ids and names), for a team that holds
   * a grant here or that the caller belongs to; `team-not-found` otherwise.
   */
  teamMembersToSign(hostId: string, teamId: string): Promise<TeamMembersToSign> {
    return this.checked(TeamMembersToSignSchema, 'GET', `/api/hosts/${encodeURIComponent(hostId)}/grants/teams/${encodeURIComponent(teamId)}/members`);
  }

  /** Takes a grant back; with `revocation` (signed by this device) the host takes it back too. */
  async revokeGrant(hostId: string, grantId: string, revocation?: Signed<RevocationStatement>): Promise<void> {
    await this.call('DELETE', `/api/hosts/${encodeURIComponent(hostId)}/grants/${encodeURIComponent(grantId)}`, revocation ? { revocation } : undefined);
  }

  audit(hostId: string, page: { before?: number; limit?: number } = {}): Promise<AuditPage> {
    const query = new URLSearchParams();
    if (page.before !== undefined) query.set('before', String(page.before));
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    const suffix = query.size > 0 ? `?${query}` : '';
    return this.checked(AuditPageSchema, 'GET', `/api/hosts/${encodeURIComponent(hostId)}/audit${suffix}`);
  }

  // ---- chats and visuals ----

  /** Every chat the person may see, across hosts (offline ones too), newest first. */
  async chats(limit?: number): Promise<IndexedChat[]> {
    return (await this.checked(ChatIndexSchema, 'GET', `/api/chats${limit === undefined ? '' : `?limit=${limit}`}`)).chats;
  }

  /** A one-minute address for a visual's sandboxed page. */
  visualTicket(hostId: string, chatId: string, visualId: string): Promise<VisualTicket> {
    const path = [hostId, chatId, visualId].map(encodeURIComponent).join('/');
    return this.call('POST', `/v1/visuals/${path}/ticket`);
  }

  /** A five-minute address for one attachment of a chat (an image to show, or a file to download). */
  attachmentTicket(hostId: string, chatId: string, attachmentId: string): Promise<VisualTicket> {
    const path = [hostId, chatId, attachmentId].map(encodeURIComponent).join('/');
    return this.call('POST', `/v1/attachments/${path}/ticket`);
  }

  // ---- device keys ----

  /** The person's devices (revoked ones too), oldest first. */
  async devices(): Promise<DeviceRecord[]> {
    return (await this.checked(DeviceListResultSchema, 'GET', '/api/devices')).devices;
  }

  /** Registers a device's public key (the same key again answers the same device). */
  registerDevice(body: DeviceRegisterRequest): Promise<DeviceRecord> {
    return this.checked(DeviceRecordSchema, 'POST', '/api/devices', body);
  }

  /** Cross-signing after the fact: `vouch` (signed by another device of the person) for a device that registered without one. */
  vouchDevice(deviceId: string, vouch: Signed<DeviceStatement>): Promise<DeviceRecord> {
    return this.checked(DeviceRecordSchema, 'POST', `/api/devices/${encodeURIComponent(deviceId)}/vouch`, { vouch });
  }

  async renameDevice(deviceId: string, name: string): Promise<void> {
    await this.call('PATCH', `/api/devices/${encodeURIComponent(deviceId)}`, { name });
  }

  /** Revokes one of the person's devices; with `revocation` (signed by one of their devices) hosts follow it too. */
  async revokeDevice(deviceId: string, revocation?: Signed<RevocationStatement>): Promise<void> {
    await this.call('DELETE', `/api/devices/${encodeURIComponent(deviceId)}`, revocation ? { revocation } : undefined);
  }

  /** Another person's device keys (public halves and vouches), for a grant signed for them. */
  async peerDevices(userId: string): Promise<PeerDevice[]> {
    return (await this.checked(PeerDeviceListSchema, 'GET', `/api/devices/of/${encodeURIComponent(userId)}`)).devices;
  }

  // ---- push ----

  // Subscribing a browser (key, push manager, registration) is push.ts's subscribeToPush.
  async pushSubscriptions(): Promise<PushSubscriptionInfo[]> {
    return (await this.checked(PushSubscriptionsSchema, 'GET', '/api/push/subscriptions')).subscriptions;
  }

  async unsubscribePush(subscriptionId: string): Promise<void> {
    await this.call('DELETE', `/api/push/subscriptions/${encodeURIComponent(subscriptionId)}`);
  }

  /** What became of the person's pushes, newest first. */
  async pushDeliveries(limit?: number): Promise<PushDelivery[]> {
    return (await this.checked(PushDeliveriesSchema, 'GET', `/api/push/deliveries${limit === undefined ? '' : `?limit=${limit}`}`)).deliveries;
  }

  // ---- teams and invitations ----

  async teams(): Promise<TeamSummary[]> {
    return (await this.checked(TeamsSchema, 'GET', '/api/teams')).teams;
  }

  createTeam(name: string): Promise<TeamSummary> {
    return this.checked(TeamSummarySchema, 'POST', '/api/teams', { name });
  }

  team(teamId: string): Promise<TeamDetail> {
    return this.checked(TeamDetailSchema, 'GET', `/api/teams/${encodeURIComponent(teamId)}`);
  }

  /** The hosts the caller owns where this team's signed grant must be signed again (its members changed). */
  async teamGrantsToSign(teamId: string): Promise<TeamGrantsToSign['hosts']> {
    return (await this.checked(TeamGrantsToSignSchema, 'GET', `/api/teams/${encodeURIComponent(teamId)}/grants-to-sign`)).hosts;
  }

  setMemberRole(teamId: string, userId: string, role: TeamSummary['role']): Promise<{ teamId: string; userId: string; role: string }> {
    return this.call('PATCH', `/api/teams/${encodeURIComponent(teamId)}/members/${encodeURIComponent(userId)}`, { role });
  }

  /** Removes a member, or leaves the team when `userId` is one's own. */
  async removeMember(teamId: string, userId: string): Promise<void> {
    await this.call('DELETE', `/api/teams/${encodeURIComponent(teamId)}/members/${encodeURIComponent(userId)}`);
  }

  invite(teamId: string, invitation: { role?: TeamSummary['role']; email?: string } = {}): Promise<Invitation> {
    return this.checked(InvitationSchema, 'POST', `/api/teams/${encodeURIComponent(teamId)}/invitations`, invitation);
  }

  /** What an invitation link is for; needs no sign-in. */
  invitation(token: string): Promise<InvitationView> {
    return this.send('GET', `/api/invitations/${encodeURIComponent(token)}`);
  }

  /**
   * Accepts an invitation. Signed in: joins. Signed out, with an account: creates it, joins, and signs
   * in (the new session is adopted).
   */
  async acceptInvitation(token: string, account?: { email: string; password: string; name: string }): Promise<{ userId: string; teamId: string | null; role: string }> {
    const path = `/api/invitations/${encodeURIComponent(token)}/accept`;
    if (this.signedIn) return this.call('POST', path, {});
    const joined = await this.send<{ userId: string; teamId: string | null; role: string } & Partial<SessionTokens>>('POST', path, account ?? {});
    if (joined.accessToken && joined.refreshToken && joined.sessionId && joined.expiresAt) {
      this.adopt({ sessionId: joined.sessionId, refreshToken: joined.refreshToken, accessToken: joined.accessToken, expiresAt: joined.expiresAt, userId: joined.userId });
    }
    return { userId: joined.userId, teamId: joined.teamId, role: joined.role };
  }
}

function statusCode(status: number): WireErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 429) return 'rate-limited';
  if (status === 400) return 'bad-request';
  return 'internal';
}

/** An answer checked against its contract schema: a relay of another version fails loudly here, not deep in a view. */
function shaped<S extends z.ZodType>(schema: S, answer: unknown, method: string, path: string): z.output<S> {
  const parsed = schema.safeParse(answer);
  if (!parsed.success) throw new ProtocolError('internal', `The relay answered ${method} ${path} in an unexpected shape: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * The app's own half of an OIDC sign-in's binding: a random verifier the app keeps (a browser tab's
 * sessionStorage) and its S256 challenge, sent to `oidcStartUrl`. Only the holder of the verifier can
 * trade the login code that sign-in ends with.
 */
export async function oidcBinding(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
