// Pairing a host like a TV app (`/api/pair/*`). The host sends its name and the public half of its
// key and gets a user code (shown to a person) and a device code (its own secret, kept here only
// hashed). A signed-in person approves the user code: that creates the host, owned by them, with that
// public key; the host's next poll learns its id. Codes live ten minutes. Starting is rate-limited per
// IP; wrong codes are capped per person, so a code cannot be guessed by trying.
import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import {
  HostPublicKeySchema,
  PairApproveRequestSchema,
  PairDenyRequestSchema,
  PairLookupRequestSchema,
  PairPollRequestSchema,
  PairSetupRequestSchema,
  PairStartRequestSchema,
  SignedPairingSchema,
  USER_CODE_ALPHABET,
  ProtocolError,
  deviceIdOf,
  importDevicePublicKey,
  verifyStatement,
  type PairLookupResult,
  type PairPollResult,
  type PairStartResult,
  type PairedHost,
  type PairingStatement,
  type Signed,
} from '../../contracts/index.ts';
import { hashOpaque, newId, newOpaqueToken } from '../auth/opaque.ts';
import { LIMITS, RateLimited, rateLimit, rateLimitedResponse } from '../auth/rate-limit.ts';
import { relayOwnerId, setupSecretMatches } from '../auth/setup-secret.ts';
import { record } from '../db/audit.ts';
import { deviceById } from '../db/devices.ts';
import { createHost, findHost, hostByPublicKey } from '../db/hosts.ts';
import {
  approvePairing,
  deleteExpiredPairings,
  denyPairing,
  findPairing,
  markPairingClaimed,
  pendingPairing,
  recentWrongCodes,
  startPairing,
} from '../db/pairings.ts';
import type { Env } from '../env.ts';
import { jsonBody } from './body.ts';
import { clientIp, requireUser, type SignedIn } from './identity.ts';

export const PAIRING_TTL_MS = 10 * 60_000;
export const PAIRING_POLL_MS = 2_000;
/** Wrong user codes one person may enter per window before every approval is refused for a while. */
export const WRONG_CODES_MAX = 5;
export const WRONG_CODES_WINDOW_MS = 10 * 60_000;
/** Expired pairings are kept this long (their poll answers `pairing-expired`), then deleted. */
const EXPIRED_KEPT_MS = 60 * 60_000;

type App = { Bindings: Env; Variables: { user: SignedIn } };

const origin = (c: Context) => new URL(c.req.url).origin;

/** 8 characters from the unambiguous alphabet, as `XXXX-XXXX`; unbiased (bytes past the last whole alphabet are redrawn). */
function newUserCode(): string {
  const n = USER_CODE_ALPHABET.length;
  const ceiling = 256 - (256 % n);
  let out = '';
  while (out.length < 8) {
    for (const byte of crypto.getRandomValues(new Uint8Array(16))) {
      if (byte < ceiling && out.length < 8) out += USER_CODE_ALPHABET[byte % n];
    }
  }
  return `${out.slice(0, 4)}-${out.slice(4)}`;
}

const newHostId = () => newId('h_');

function expired(c: Context): Response {
  return c.json({ code: 'pairing-expired', message: 'The pairing code expired; start pairing again' }, 410);
}

/**
 * Refuses every approval while the person has entered too many wrong codes lately. Checked before the
 * code is looked up, so that past the cap even a right guess learns nothing.
 */
async function checkWrongCodes(c: Context<App>): Promise<void> {
  const since = Date.now() - WRONG_CODES_WINDOW_MS;
  const wrong = await recentWrongCodes(c.env.DB, c.get('user').userId, since, WRONG_CODES_MAX);
  if (wrong.length >= WRONG_CODES_MAX) throw new RateLimited(wrong.at(-1)! + WRONG_CODES_WINDOW_MS - Date.now());
}

async function wrongCode(c: Context<App>, userCode: string): Promise<never> {
  const user = c.get('user');
  await record(c.env.DB, { actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), action: 'pairing.wrong-code', detail: { userCode } });
  throw new ProtocolError('pairing-not-found', 'No pending pairing has that code (codes expire after 10 minutes)');
}

const perPerson = rateLimit('pair-approve', LIMITS.pairing, (c) => {
  const ip = clientIp(c);
  return [`user:${(c as unknown as Context<App>).get('user').userId}`, ip && `ip:${ip}`];
});

/** Past the cap on wrong codes, every approval is refused before its body or code is looked at. */
const underWrongCodeCap = createMiddleware<App>(async (c, next) => {
  try {
    await checkWrongCodes(c);
  } catch (error) {
    if (error instanceof RateLimited) return rateLimitedResponse(c, error);
    throw error;
  }
  await next();
});

/**
 * The relay checks a signed approval before it passes it on, so an app whose signing is broken hears
 * so at once; the host checks it again itself, trusting none of this. It must name this code and this
 * pairing's host key, and be signed by a live registered device of the person approving.
 */
async function checkApproval(d1: D1Database, userId: string, userCode: string, hostKeyJson: string, approval: Signed<PairingStatement>): Promise<void> {
  const { statement } = approval;
  const hostKey = HostPublicKeySchema.parse(JSON.parse(hostKeyJson));
  if (statement.userCode !== userCode || statement.userId !== userId || statement.hostKey.x !== hostKey.x) {
    throw new ProtocolError('signature-invalid', 'The signed approval names another pairing, host key or person');
  }
  if ((await deviceIdOf(statement.deviceKey)) !== statement.device)
    throw new ProtocolError('signature-invalid', "The approving device's id is not its key's thumbprint");
  const device = await deviceById(d1, statement.device);
  if (!device || device.userId !== userId || device.device.revoked !== null) {
    throw new ProtocolError('signature-invalid', 'The approving device is not a registered device of yours');
  }
  if (!(await verifyStatement(await importDevicePublicKey(statement.deviceKey), approval))) {
    throw new ProtocolError('signature-invalid', 'The signed approval does not verify');
  }
}

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const pairing = new Hono<App>()

  .post(
    '/start',
    rateLimit('pair-start', LIMITS.pairing, (c) => {
      const ip = clientIp(c);
      return [ip && `ip:${ip}`];
    }),
    jsonBody(PairStartRequestSchema),
    async (c) => {
      const body = c.req.valid('json');
      const now = Date.now();
      await deleteExpiredPairings(c.env.DB, now - EXPIRED_KEPT_MS);
      const deviceCode = newOpaqueToken();
      const deviceCodeHash = await hashOpaque(deviceCode);
      for (let attempt = 0; ; attempt++) {
        const userCode = newUserCode();
        const started = await startPairing(c.env.DB, {
          deviceCodeHash,
          userCode,
          name: body.name,
          publicKey: JSON.stringify(body.publicKey),
          createdAt: now,
          expiresAt: now + PAIRING_TTL_MS,
          ip: clientIp(c),
        });
        if (started) {
          return c.json({
            deviceCode,
            userCode,
            verificationUrl: `${origin(c)}/pair?code=${userCode}`,
            expiresInMs: PAIRING_TTL_MS,
            intervalMs: PAIRING_POLL_MS,
          } satisfies PairStartResult);
        }
        // 29^8 codes: a clash is all but impossible, and three in a row means something else is wrong.
        if (attempt >= 2) throw new Error('could not draw a free user code');
      }
    },
  )

  .post('/poll', jsonBody(PairPollRequestSchema), async (c) => {
    const { deviceCode } = c.req.valid('json');
    const deviceCodeHash = await hashOpaque(deviceCode);
    const row = await findPairing(c.env.DB, deviceCodeHash);
    if (!row) throw new ProtocolError('pairing-not-found', 'No pairing has that device code');
    if (row.state === 'denied') return c.json({ code: 'pairing-denied', message: 'The pairing was denied' }, 403);
    if ((row.state === 'approved' || row.state === 'claimed') && row.hostId) {
      // Answered again on every poll until it expires: a host whose answer got lost asks once more.
      if (row.state === 'approved') {
        await markPairingClaimed(c.env.DB, deviceCodeHash);
      }
      const approval = row.approval === null ? {} : { approval: SignedPairingSchema.parse(JSON.parse(row.approval)) };
      return c.json({ state: 'approved', hostId: row.hostId, relayUrl: origin(c), ...approval } satisfies PairPollResult);
    }
    if (row.expiresAt <= Date.now()) return expired(c);
    return c.json({ state: 'pending' } satisfies PairPollResult);
  })

  // What the approving device signs over: the pending pairing's host key (and its name, to show).
  .post('/lookup', requireUser, perPerson, underWrongCodeCap, jsonBody(PairLookupRequestSchema), async (c) => {
    const { userCode } = c.req.valid('json');
    const pending = await pendingPairing(c.env.DB, userCode, Date.now());
    if (!pending) return wrongCode(c, userCode);
    return c.json({ name: pending.name, publicKey: HostPublicKeySchema.parse(JSON.parse(pending.publicKey)) } satisfies PairLookupResult);
  })

  .post('/approve', requireUser, perPerson, underWrongCodeCap, jsonBody(PairApproveRequestSchema), async (c) => {
    const { userCode, name, approval } = c.req.valid('json');
    const user = c.get('user');
    const now = Date.now();
    const hostId = newHostId();
    if (approval) {
      const pending = await pendingPairing(c.env.DB, userCode, now);
      if (!pending) return wrongCode(c, userCode);
      await checkApproval(c.env.DB, user.userId, userCode, pending.publicKey, approval);
    }
    // One transaction: the host exists exactly when the pairing says it was approved.
    if (
      !(await approvePairing(c.env.DB, {
        userCode,
        ownerId: user.userId,
        hostId,
        name: name ?? null,
        now,
        approval: approval ? JSON.stringify(approval) : null,
      }))
    ) {
      return wrongCode(c, userCode);
    }
    const host = await findHost(c.env.DB, hostId);
    await record(c.env.DB, {
      actor: user.userId,
      sessionId: user.sessionId,
      ip: clientIp(c),
      action: 'pairing.approved',
      hostId,
      detail: { name: host!.name },
    });
    return c.json({ hostId, name: host!.name, relayUrl: origin(c) } satisfies PairedHost);
  })

  .post('/deny', requireUser, perPerson, underWrongCodeCap, jsonBody(PairDenyRequestSchema), async (c) => {
    const { userCode } = c.req.valid('json');
    const user = c.get('user');
    if (!(await denyPairing(c.env.DB, userCode, user.userId, Date.now()))) return wrongCode(c, userCode);
    await record(c.env.DB, { actor: user.userId, sessionId: user.sessionId, ip: clientIp(c), action: 'pairing.denied', detail: { userCode } });
    return c.json({ denied: true });
  })

  /**
   * A host with no person's approval (the benchmarks'): the setup secret stands in for the owner's
   * approval, and the host goes to the relay's owner (made here, without a password, if need be). No
   * device signed anything, so such a host pins no owner and can run only with signatures off; `npm
   * start`'s own host pairs the signed way instead (scripts/local-host.ts). Idempotent per key.
   *
   * It still works once the owner has claimed the account, on purpose: the bench asks
   * again on every start, and re-pair with a new key after a revoke or a wiped data folder. So whoever
   * holds the secret can add hosts under the owner (never sign in as them, never reach existing hosts);
   * a deployed relay that no longer needs it deletes the secret (`wrangler secret delete TETHER_SETUP_SECRET`),
   * which closes this route and owner setup alike.
   */
  .post(
    '/setup',
    rateLimit('pair-setup', LIMITS.pairing, (c) => {
      const ip = clientIp(c);
      return [ip && `ip:${ip}`];
    }),
    jsonBody(PairSetupRequestSchema),
    async (c) => {
      const body = c.req.valid('json');
      if (!(await setupSecretMatches(c.env, body.secret))) throw new ProtocolError('unauthorized', 'Wrong setup secret');
      const publicKey = JSON.stringify(body.publicKey);
      // Asked on every bench start: a key the relay knows answers its host (a relay whose state was wiped
      // meets it anew); a revoked one stays revoked.
      const known = await hostByPublicKey(c.env.DB, publicKey);
      if (known?.revokedAt != null) throw new ProtocolError('forbidden', 'The host with this key was revoked; pair again with a new key');
      if (known) return c.json({ hostId: known.id, name: known.name, relayUrl: origin(c) } satisfies PairedHost);
      const ownerId = await relayOwnerId(c.env.DB);
      const hostId = newHostId();
      await createHost(c.env.DB, { id: hostId, ownerId, name: body.name, createdAt: Date.now(), publicKey });
      await record(c.env.DB, { actor: ownerId, ip: clientIp(c), action: 'pairing.setup', hostId, detail: { name: body.name } });
      return c.json({ hostId, name: body.name, relayUrl: origin(c) } satisfies PairedHost);
    },
  );
