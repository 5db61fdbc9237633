// The relay's HTTP API for an app: sign-in and the session's tokens, then typed calls for every /api
// route the web app uses. The calls are hono's `hc` client over the relay's own route types (`AppType`,
// a type import: no relay code reaches the SDK or the web bundle), so a route's body, params and answer
// are declared once, where the route validates them (src/relay/http, schemas from src/contracts).
// Answers with a contract schema are checked on the way in as well, so a relay of another version
// fails loudly here rather than deep in a view; every failure is a ProtocolError with the relay's own
// `{code, message}`.
//
// The access token lives 10 minutes. `accessToken()` refreshes it when less than a minute is left, and
// a signed-in call refreshes once and retries once on a 401 (the token may have expired in flight).
// Refreshes are single-flight: the refresh token rotates on every use, and presenting a used one ends
// the session.
import { hc, type ClientResponse, type InferResponseType } from 'hono/client';
import type { SuccessStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import {
  AuditPageSchema,
  DeviceListResultSchema,
  DeviceRecordSchema,
  GrantListSchema,
  GrantSchema,
  HostListSchema,
  PairLookupResultSchema,
  IndexedChatListSchema,
  InvitationSchema,
  MeSchema,
  PairedHostSchema,
  ProtocolError,
  PushDeliveryListSchema,
  RelayMetricsSchema,
  type RelayMetrics,
  PushSubscriptionListSchema,
  SessionListSchema,
  SessionTokensSchema,
  SignInMethodsSchema,
  TeamDetailSchema,
  TeamGrantsToSignSchema,
  TeamListSchema,
  TeamMembersToSignSchema,
  TeamSummarySchema,
  type Me,
  type SessionSummary,
  type SignInMethods,
  type AuditPage,
  type Grant,
  type GrantCreateRequest,
  type HostSummary,
  type IndexedChat,
  type Invitation,
  type PairedHost,
  PeerDeviceListSchema,
  type PeerDevice,
  type RevocationStatement,
  type SignedGrantCreateRequest,
  type DeviceRecord,
  type DeviceRegisterRequest,
  type DeviceStatement,
  type PairLookupResult,
  type PairingStatement,
  type Signed,
  type PushDelivery,
  type PushSubscriptionInfo,
  type TeamDetail,
  type TeamGrantsToSign,
  type TeamMembersToSign,
  type TeamSummary,
  type WireErrorCode,
} from '../contracts/index.ts';
import { Backoff } from '../contracts/backoff.ts';
import type { AppType } from '../relay/index.ts';
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

type Relay = ReturnType<typeof hc<AppType>>;

/** `GET /api/invitations/:token`: what an invitation is for, shown before accepting. */
export type InvitationView = InferResponseType<Relay['api']['invitations'][':token']['$get'], 200>;

/** An address that opens one visual's page or one attachment (`attachmentTicket`), with its ticket in it. */
export type VisualTicket = InferResponseType<Relay['v1']['visuals'][':hostId'][':chatId'][':visualId']['ticket']['$post'], 200>;

/** What a route answers when it succeeds (its refusals are thrown as ProtocolErrors before anyone reads them). */
type Answer<R> = R extends ClientResponse<infer T, infer S, infer _F> ? ([Extract<S, SuccessStatusCode>] extends [never] ? never : T) : never;

/** The headers a typed call sends: the bearer token of a signed-in call. */
type Auth = { headers: Record<string, string> };

/** An id as a path segment: hc puts params into the path as they are. */
const seg = encodeURIComponent;

export class RelayApi {
  readonly baseUrl: string;
  private readonly tokens: TokenStore;
  private readonly fetcher: typeof fetch;
  /** The relay's routes, typed from the relay itself; every request goes through `transport`. */
  private readonly relay: Relay;
  /** The `METHOD /path` each answer came from, for the messages of a failed check. */
  private readonly asked = new WeakMap<Response, string>();
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
    this.relay = hc<AppType>(this.baseUrl, { fetch: (input: RequestInfo | URL, init?: RequestInit) => this.transport(String(input), init ?? {}) });
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
    return this.adopt(await this.shaped(SessionTokensSchema, this.relay.api.auth.signin.$post({ json: { email, password } })));
  }

  /** Whether the relay's owner account was made already (the setup link works only until then). */
  async ownerClaimed(): Promise<boolean> {
    return (await this.answer(this.relay.api.auth.setup.$get())).claimed === true;
  }

  /** Makes the relay's owner account with the setup secret, and signs in as that owner. */
  async claimOwner(account: { secret: string; name: string; email: string; password: string }): Promise<SessionTokens> {
    return this.adopt(await this.shaped(SessionTokensSchema, this.relay.api.auth.setup.$post({ json: account })));
  }

  /**
   * Finishes an OIDC sign-in: the app got `#login=<code>` back from the relay. `verifier` is the secret
   * whose challenge this app sent to `oidcStartUrl`; a code from a sign-in started anywhere else is refused.
   */
  async signInWithCode(code: string, verifier: string): Promise<SessionTokens> {
    return this.adopt(await this.shaped(SessionTokensSchema, this.relay.api.auth.oidc.exchange.$post({ json: { code, verifier } })));
  }

  /** Behind Cloudflare Access: trades the assertion Access adds to this request for a session. */
  async signInWithAccess(): Promise<SessionTokens> {
    return this.adopt(await this.shaped(SessionTokensSchema, this.relay.api.auth.access.$post()));
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
      if (this.session) await this.signedCall((auth) => this.relay.api.auth.signout.$post(undefined, auth));
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
    this.refreshing ??= this.tokens
      .exclusive(async () => {
        const stored = this.tokens.load();
        if (!stored) throw this.ended(new ProtocolError('unauthorized', 'Not signed in'));
        const fresh = stored.accessToken !== stale && stored.expiresAt - Date.now() > REFRESH_BEFORE_MS;
        if (fresh) return (this.session = stored);
        const next = await this.rotate(stored.refreshToken);
        return this.adopt({ ...next, ...(stored.userId ? { userId: stored.userId } : {}) });
      })
      .finally(() => {
        this.refreshing = null;
      });
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
        return await this.shaped(SessionTokensSchema, this.relay.api.auth.refresh.$post({ json: { refreshToken } }));
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
   * A signed-in call to any path, for a route the typed calls below do not cover: JSON in, JSON out
   * (typed by the caller), or a ProtocolError. Refreshes and retries as every signed-in call does.
   */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.signedCall(async (auth) => {
      const headers = { ...auth.headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
      return this.transport(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }) as unknown as Promise<
        ClientResponse<T, 200, 'json'>
      >;
    });
  }

  /**
   * A signed-in call made by `send` with the bearer token: a 401 refreshes the token once and sends
   * again (the token may have run out on the way).
   */
  private async signedCall<R extends ClientResponse<unknown, number, string>>(send: (auth: Auth) => Promise<R>): Promise<Answer<R>> {
    const token = await this.accessToken();
    try {
      return await this.answer(send(bearer(token)));
    } catch (error) {
      if (!(error instanceof ProtocolError) || error.code !== 'unauthorized') throw error;
      const next = await this.refresh(token);
      return this.answer(send(bearer(next.accessToken)));
    }
  }

  /** `signedCall` whose answer is checked against its contract schema, so a mismatch is a clear error. */
  private async checked<S extends z.ZodType>(schema: S, send: (auth: Auth) => Promise<ClientResponse<unknown, number, string>>): Promise<z.output<S>> {
    let from = '';
    const answer = await this.signedCall(async (auth) => {
      const res = await send(auth);
      from = this.asked.get(res as unknown as Response) ?? '';
      return res;
    });
    return shaped(schema, answer, from);
  }

  /** A call made before there is a session (sign-in, refresh), its answer checked against its contract schema. */
  private async shaped<S extends z.ZodType>(schema: S, sent: Promise<ClientResponse<unknown, number, string>>): Promise<z.output<S>> {
    const res = await sent;
    return shaped(schema, await this.answer(Promise.resolve(res)), this.asked.get(res as unknown as Response) ?? '');
  }

  /** The JSON of a successful answer (null when it is none: a check against a schema then says so). */
  private async answer<R extends ClientResponse<unknown, number, string>>(sent: Promise<R>): Promise<Answer<R>> {
    const res = await sent;
    return (await res.json().catch(() => null)) as Answer<R>;
  }

  /**
   * Every request of the client: sent with this API's fetch, its headers as a plain record; a relay
   * out of reach is `host-offline`, and a refusal becomes a ProtocolError with the relay's own code
   * and message (or one its status means).
   */
  private async transport(url: string, init: RequestInit): Promise<Response> {
    const method = init.method ?? 'GET';
    const given = new Headers(init.headers);
    const headers: Record<string, string> = {};
    const contentType = given.get('content-type');
    if (contentType) headers['Content-Type'] = contentType;
    const authorization = given.get('authorization');
    if (authorization) headers.Authorization = authorization;
    const asked = `${method} ${url.startsWith(this.baseUrl) ? url.slice(this.baseUrl.length) : url}`;
    let res: Response;
    try {
      res = await this.fetcher(url, { method, headers, body: init.body ?? undefined });
    } catch {
      throw new ProtocolError('host-offline', `Cannot reach the relay at ${this.baseUrl}`);
    }
    if (res.ok) {
      this.asked.set(res, asked);
      return res;
    }
    const answer = (await res.json().catch(() => null)) as { code?: unknown; message?: unknown } | null;
    const code = typeof answer?.code === 'string' ? (answer.code as WireErrorCode) : statusCode(res.status);
    throw new ProtocolError(code, typeof answer?.message === 'string' ? answer.message : `${asked} failed (${res.status})`);
  }

  // ---- who, and where ----

  me(): Promise<Me> {
    return this.checked(MeSchema, (auth) => this.relay.api.me.$get(undefined, auth));
  }

  async sessions(): Promise<SessionSummary[]> {
    return (await this.checked(SessionListSchema, (auth) => this.relay.api.auth.sessions.$get(undefined, auth))).sessions;
  }

  async revokeSession(sessionId: string): Promise<void> {
    await this.signedCall((auth) => this.relay.api.auth.sessions[':id'].$delete({ param: { id: seg(sessionId) } }, auth));
  }

  /** Which sign-in methods the relay offers (Access and OIDC only where configured). */
  signInMethods(): Promise<SignInMethods> {
    return this.shaped(SignInMethodsSchema, this.relay.api.auth.methods.$get());
  }

  /** The relay's counters, for its owner (`forbidden` for anyone else). */
  relayMetrics(): Promise<RelayMetrics> {
    return this.checked(RelayMetricsSchema, (auth) => this.relay.api.relay.metrics.$get(undefined, auth));
  }

  // ---- hosts and pairing ----

  async hosts(): Promise<HostSummary[]> {
    return (await this.checked(HostListSchema, (auth) => this.relay.api.hosts.$get(undefined, auth))).hosts;
  }

  renameHost(hostId: string, name: string): Promise<{ id: string; name: string }> {
    return this.signedCall((auth) => this.relay.api.hosts[':id'].$patch({ param: { id: seg(hostId) }, json: { name } }, auth));
  }

  revokeHost(hostId: string): Promise<{ id: string; revokedAt: number }> {
    return this.signedCall((auth) => this.relay.api.hosts[':id'].$delete({ param: { id: seg(hostId) } }, auth));
  }

  /** Approves the code a machine shows (`tether host pair`): the host becomes the caller's. */
  /** `approval`: the pairing statement this person's device signed, which the host checks and pins. */
  approvePairing(userCode: string, name?: string, approval?: Signed<PairingStatement>): Promise<PairedHost> {
    const json = { userCode, ...(name === undefined ? {} : { name }), ...(approval ? { approval } : {}) };
    return this.checked(PairedHostSchema, (auth) => this.relay.api.pair.approve.$post({ json }, auth));
  }

  /** The pending pairing's name and host key, for the approving device to sign. */
  lookupPairing(userCode: string): Promise<PairLookupResult> {
    return this.checked(PairLookupResultSchema, (auth) => this.relay.api.pair.lookup.$post({ json: { userCode } }, auth));
  }

  async denyPairing(userCode: string): Promise<void> {
    await this.signedCall((auth) => this.relay.api.pair.deny.$post({ json: { userCode } }, auth));
  }

  async grants(hostId: string): Promise<Grant[]> {
    return (await this.checked(GrantListSchema, (auth) => this.relay.api.hosts[':id'].grants.$get({ param: { id: seg(hostId) } }, auth))).grants;
  }

  /** The grants on a host that reach the caller (theirs and their teams'), for anyone with a role there. */
  async myGrants(hostId: string): Promise<Grant[]> {
    return (await this.checked(GrantListSchema, (auth) => this.relay.api.hosts[':id'].grants.mine.$get({ param: { id: seg(hostId) } }, auth))).grants;
  }

  /**
   * Gives a role (again: giving to the same subject and chat changes its role). With `signed`, the
   * owner's device signed it (src/client/trust.ts shareSigned) and the host follows it too.
   */
  grant(hostId: string, request: GrantCreateRequest | SignedGrantCreateRequest): Promise<Grant> {
    return this.checked(GrantSchema, (auth) => this.relay.api.hosts[':id'].grants.$post({ param: { id: seg(hostId) }, json: request }, auth));
  }

  /**
   * The members an owner of this host signs a team's grant over (ids and names), for a team that holds
   * a grant here or that the caller belongs to; `team-not-found` otherwise.
   */
  teamMembersToSign(hostId: string, teamId: string): Promise<TeamMembersToSign> {
    return this.checked(TeamMembersToSignSchema, (auth) =>
      this.relay.api.hosts[':id'].grants.teams[':teamId'].members.$get({ param: { id: seg(hostId), teamId: seg(teamId) } }, auth),
    );
  }

  /** Takes a grant back; with `revocation` (signed by this device) the host takes it back too. */
  async revokeGrant(hostId: string, grantId: string, revocation?: Signed<RevocationStatement>): Promise<void> {
    const param = { id: seg(hostId), grantId: seg(grantId) };
    await this.signedCall((auth) => this.relay.api.hosts[':id'].grants[':grantId'].$delete({ param, ...(revocation ? { json: { revocation } } : {}) }, auth));
  }

  audit(hostId: string, page: { before?: number; limit?: number } = {}): Promise<AuditPage> {
    const query = {
      ...(page.before === undefined ? {} : { before: String(page.before) }),
      ...(page.limit === undefined ? {} : { limit: String(page.limit) }),
    };
    return this.checked(AuditPageSchema, (auth) => this.relay.api.hosts[':id'].audit.$get({ param: { id: seg(hostId) }, query }, auth));
  }

  // ---- chats and visuals ----

  /** Every chat the person may see, across hosts (offline ones too), newest first. */
  async chats(limit?: number): Promise<IndexedChat[]> {
    const query = limit === undefined ? {} : { limit: String(limit) };
    return (await this.checked(IndexedChatListSchema, (auth) => this.relay.api.chats.$get({ query }, auth))).chats;
  }

  /** A one-minute address for a visual's sandboxed page. */
  visualTicket(hostId: string, chatId: string, visualId: string): Promise<VisualTicket> {
    const param = { hostId: seg(hostId), chatId: seg(chatId), visualId: seg(visualId) };
    return this.signedCall((auth) => this.relay.v1.visuals[':hostId'][':chatId'][':visualId'].ticket.$post({ param }, auth));
  }

  /** A five-minute address for one attachment of a chat (an image to show, or a file to download). */
  attachmentTicket(hostId: string, chatId: string, attachmentId: string): Promise<VisualTicket> {
    const param = { hostId: seg(hostId), chatId: seg(chatId), attachmentId: seg(attachmentId) };
    return this.signedCall((auth) => this.relay.v1.attachments[':hostId'][':chatId'][':attachmentId'].ticket.$post({ param }, auth));
  }

  // ---- device keys ----

  /** The person's devices (revoked ones too), oldest first. */
  async devices(): Promise<DeviceRecord[]> {
    return (await this.checked(DeviceListResultSchema, (auth) => this.relay.api.devices.$get(undefined, auth))).devices;
  }

  /** Registers a device's public key (the same key again answers the same device). */
  registerDevice(body: DeviceRegisterRequest): Promise<DeviceRecord> {
    return this.checked(DeviceRecordSchema, (auth) => this.relay.api.devices.$post({ json: body }, auth));
  }

  /** Cross-signing after the fact: `vouch` (signed by another device of the person) for a device that registered without one. */
  vouchDevice(deviceId: string, vouch: Signed<DeviceStatement>): Promise<DeviceRecord> {
    return this.checked(DeviceRecordSchema, (auth) => this.relay.api.devices[':id'].vouch.$post({ param: { id: seg(deviceId) }, json: { vouch } }, auth));
  }

  async renameDevice(deviceId: string, name: string): Promise<void> {
    await this.signedCall((auth) => this.relay.api.devices[':id'].$patch({ param: { id: seg(deviceId) }, json: { name } }, auth));
  }

  /** Revokes one of the person's devices; with `revocation` (signed by one of their devices) hosts follow it too. */
  async revokeDevice(deviceId: string, revocation?: Signed<RevocationStatement>): Promise<void> {
    const param = { id: seg(deviceId) };
    await this.signedCall((auth) => this.relay.api.devices[':id'].$delete({ param, ...(revocation ? { json: { revocation } } : {}) }, auth));
  }

  /** Another person's device keys (public halves and vouches), for a grant signed for them. */
  async peerDevices(userId: string): Promise<PeerDevice[]> {
    return (await this.checked(PeerDeviceListSchema, (auth) => this.relay.api.devices.of[':userId'].$get({ param: { userId: seg(userId) } }, auth))).devices;
  }

  // ---- push ----

  // Subscribing a browser (key, push manager, registration) is push.ts's subscribeToPush.
  async pushSubscriptions(): Promise<PushSubscriptionInfo[]> {
    return (await this.checked(PushSubscriptionListSchema, (auth) => this.relay.api.push.subscriptions.$get(undefined, auth))).subscriptions;
  }

  async unsubscribePush(subscriptionId: string): Promise<void> {
    await this.signedCall((auth) => this.relay.api.push.subscriptions[':id'].$delete({ param: { id: seg(subscriptionId) } }, auth));
  }

  /** What became of the person's pushes, newest first. */
  async pushDeliveries(limit?: number): Promise<PushDelivery[]> {
    const query = limit === undefined ? {} : { limit: String(limit) };
    return (await this.checked(PushDeliveryListSchema, (auth) => this.relay.api.push.deliveries.$get({ query }, auth))).deliveries;
  }

  // ---- teams and invitations ----

  async teams(): Promise<TeamSummary[]> {
    return (await this.checked(TeamListSchema, (auth) => this.relay.api.teams.$get(undefined, auth))).teams;
  }

  createTeam(name: string): Promise<TeamSummary> {
    return this.checked(TeamSummarySchema, (auth) => this.relay.api.teams.$post({ json: { name } }, auth));
  }

  team(teamId: string): Promise<TeamDetail> {
    return this.checked(TeamDetailSchema, (auth) => this.relay.api.teams[':id'].$get({ param: { id: seg(teamId) } }, auth));
  }

  /** The hosts the caller owns where this team's signed grant must be signed again (its members changed). */
  async teamGrantsToSign(teamId: string): Promise<TeamGrantsToSign['hosts']> {
    return (await this.checked(TeamGrantsToSignSchema, (auth) => this.relay.api.teams[':id']['grants-to-sign'].$get({ param: { id: seg(teamId) } }, auth)))
      .hosts;
  }

  setMemberRole(teamId: string, userId: string, role: TeamSummary['role']): Promise<{ teamId: string; userId: string; role: string }> {
    const param = { id: seg(teamId), userId: seg(userId) };
    return this.signedCall((auth) => this.relay.api.teams[':id'].members[':userId'].$patch({ param, json: { role } }, auth));
  }

  /** Removes a member, or leaves the team when `userId` is one's own. */
  async removeMember(teamId: string, userId: string): Promise<void> {
    await this.signedCall((auth) => this.relay.api.teams[':id'].members[':userId'].$delete({ param: { id: seg(teamId), userId: seg(userId) } }, auth));
  }

  invite(teamId: string, invitation: { role?: TeamSummary['role']; email?: string } = {}): Promise<Invitation> {
    return this.checked(InvitationSchema, (auth) => this.relay.api.teams[':id'].invitations.$post({ param: { id: seg(teamId) }, json: invitation }, auth));
  }

  /** What an invitation link is for; needs no sign-in. */
  invitation(token: string): Promise<InvitationView> {
    return this.answer(this.relay.api.invitations[':token'].$get({ param: { token: seg(token) } }));
  }

  /**
   * Accepts an invitation. Signed in: joins. Signed out, with an account: creates it, joins, and signs
   * in (the new session is adopted).
   */
  async acceptInvitation(
    token: string,
    account?: { email: string; password: string; name: string },
  ): Promise<{ userId: string; teamId: string | null; role: string }> {
    // The route reads its body only when signed out, so the body is not in its type: sent as JSON here.
    const accept = (auth: Auth, body: object) =>
      this.relay.api.invitations[':token'].accept.$post(
        { param: { token: seg(token) } },
        { headers: { ...auth.headers, 'Content-Type': 'application/json' }, init: { body: JSON.stringify(body) } },
      );
    if (this.signedIn) {
      const { userId, teamId, role } = await this.signedCall((auth) => accept(auth, {}));
      return { userId, teamId, role };
    }
    const joined = await this.answer(accept({ headers: {} }, account ?? {}));
    if ('accessToken' in joined) {
      this.adopt({
        sessionId: joined.sessionId,
        refreshToken: joined.refreshToken,
        accessToken: joined.accessToken,
        expiresAt: joined.expiresAt,
        userId: joined.userId,
      });
    }
    return { userId: joined.userId, teamId: joined.teamId, role: joined.role };
  }
}

/** The headers of a signed-in call. */
function bearer(token: string): Auth {
  return { headers: { Authorization: `Bearer ${token}` } };
}

function statusCode(status: number): WireErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 429) return 'rate-limited';
  if (status === 400) return 'bad-request';
  return 'internal';
}

/** An answer checked against its contract schema: a relay of another version fails loudly here, not deep in a view. */
function shaped<S extends z.ZodType>(schema: S, answer: unknown, asked: string): z.output<S> {
  const parsed = schema.safeParse(answer);
  if (!parsed.success) throw new ProtocolError('internal', `The relay answered ${asked} in an unexpected shape: ${z.prettifyError(parsed.error)}`);
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
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
