// An identity provider on loopback, with keys made for this run: what Cloudflare Access and an OIDC
// provider publish, enough for the relay to verify the real way (jose, published keys, PKCE).
//
//   GET  /cdn-cgi/access/certs                 the Access team's public keys (the team domain is this server's URL)
//   GET  /oidc/.well-known/openid-configuration discovery for the issuer `<url>/oidc`
//   GET  /oidc/authorize                       approves at once as the current person: back to redirect_uri with a code,
//                                              remembering the code_challenge, nonce and redirect_uri it came with
//   POST /oidc/token                           trades the code once, only for the client (Basic auth with its secret) and
//                                              only with the verifier whose S256 is the remembered challenge
//   GET  /oidc/jwks                            the OIDC issuer's public keys
//
// Test-only doors (the relay never calls them): `POST /test/mint` signs any claims with the published key
// or with a foreign one (Access assertions, forged tokens); `POST /test/next` sets who the next
// authorization signs in as and how the next ID token misbehaves.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type JWTPayload, type KeyObject } from 'jose';

export const IDP_CLIENT_ID = 'tether-e2e';
export const IDP_CLIENT_SECRET = 'tether-e2e-client-secret';
export const IDP_ACCESS_AUD = 'tether-e2e-access-audience';

/** What `POST /test/next` may set for the next sign-in. */
export interface NextSignIn {
  email?: string;
  /** Omitted: the claim is left out. */
  emailVerified?: boolean;
  name?: string;
  /** Sign the next ID token with a key nobody published. */
  foreignKey?: boolean;
}

/** What `POST /test/mint` takes. */
export interface MintRequest {
  claims: JWTPayload;
  foreignKey?: boolean;
  /** Seconds from now; negative for an expired token. Default 300. */
  expiresIn?: number;
}

interface Grant {
  challenge: string;
  nonce: string | undefined;
  redirectUri: string;
  who: NextSignIn;
}

interface Keys {
  publishedKey: KeyObject;
  publicJwk: JWK;
  foreignKey: KeyObject;
}

async function makeKeys(): Promise<Keys> {
  const published = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const publicJwk = { ...(await exportJWK(published.publicKey)), kid: 'idp-1', alg: 'RS256', use: 'sig' };
  return { publishedKey: published.privateKey as KeyObject, publicJwk, foreignKey: foreign.privateKey as KeyObject };
}

export class IdentityProvider {
  url = '';
  /** Codes handed out and not yet traded. */
  private readonly grants = new Map<string, Grant>();
  private next: NextSignIn = {};
  /** Every token request, and why it was refused (if it was): lets a test see the relay really traded the code. */
  readonly tokenRequests: { ok: boolean; error?: string }[] = [];
  private server: Server | null = null;
  private keys!: Keys;

  get issuer(): string {
    return `${this.url}/oidc`;
  }

  async start(): Promise<this> {
    this.keys = await makeKeys();
    this.server = createServer((req, res) => {
      this.route(req, res).catch((error: unknown) => json(res, 500, { error: 'server_error', error_description: String(error) }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  /** Signs claims as the IdP (with its published key) or as a stranger. */
  async mint({ claims, foreignKey = false, expiresIn = 300 }: MintRequest): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iat: now, exp: now + expiresIn, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'idp-1', typ: 'JWT' })
      .sign(foreignKey ? this.keys.foreignKey : this.keys.publishedKey);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'GET /cdn-cgi/access/certs':
      case 'GET /oidc/jwks':
        return json(res, 200, { keys: [this.keys.publicJwk] });
      case 'GET /oidc/.well-known/openid-configuration':
        return json(res, 200, {
          issuer: this.issuer,
          authorization_endpoint: `${this.issuer}/authorize`,
          token_endpoint: `${this.issuer}/token`,
          jwks_uri: `${this.issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
        });
      case 'GET /oidc/authorize':
        return this.authorize(url, res);
      case 'POST /oidc/token':
        return this.token(req, res);
      case 'POST /test/mint':
        return json(res, 200, { token: await this.mint(JSON.parse(await bodyOf(req)) as MintRequest) });
      case 'POST /test/next':
        this.next = JSON.parse(await bodyOf(req)) as NextSignIn;
        return json(res, 200, {});
      case 'GET /test/token-requests':
        return json(res, 200, { requests: this.tokenRequests });
      default:
        return json(res, 404, { error: 'not_found' });
    }
  }

  private authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri');
    if (q.get('client_id') !== IDP_CLIENT_ID || !redirectUri)
      return json(res, 400, { error: 'invalid_request', error_description: 'unknown client or no redirect_uri' });
    const back = new URL(redirectUri);
    back.searchParams.set('state', q.get('state') ?? '');
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
      back.searchParams.set('error', 'invalid_request');
    } else {
      const code = crypto.randomUUID();
      this.grants.set(code, { challenge: q.get('code_challenge')!, nonce: q.get('nonce') ?? undefined, redirectUri, who: this.next });
      this.next = {};
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { Location: back.toString() }).end();
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await bodyOf(req));
    const refuse = (error: string) => {
      this.tokenRequests.push({ ok: false, error });
      json(res, 400, { error });
    };
    const expected = `Basic ${Buffer.from(`${IDP_CLIENT_ID}:${IDP_CLIENT_SECRET}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return refuse('invalid_client');
    const code = form.get('code') ?? '';
    const grant = this.grants.get(code);
    this.grants.delete(code);
    if (form.get('grant_type') !== 'authorization_code' || !grant) return refuse('invalid_grant');
    if (form.get('redirect_uri') !== grant.redirectUri) return refuse('invalid_grant');
    const verifier = form.get('code_verifier') ?? '';
    if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return refuse('invalid_grant');
    const email = grant.who.email ?? 'person@example.com';
    const idToken = await this.mint({
      claims: {
        iss: this.issuer,
        aud: IDP_CLIENT_ID,
        sub: `sub-${email}`,
        email,
        nonce: grant.nonce,
        ...(grant.who.emailVerified === undefined ? {} : { email_verified: grant.who.emailVerified }),
        ...(grant.who.name ? { name: grant.who.name } : {}),
      },
      foreignKey: grant.who.foreignKey,
    });
    this.tokenRequests.push({ ok: true });
    json(res, 200, { access_token: crypto.randomUUID(), token_type: 'Bearer', expires_in: 300, id_token: idToken });
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
