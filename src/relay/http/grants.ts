// Grants (`/api/hosts/:id/grants`): whoever holds `owner` on a host gives a user (by id or email) or a
// team a role on the whole host or on one chat, lists them, and takes them back. A grant that is
// removed or lowered reaches open sockets at once (recheckHosts): they close or go on with less.
//
// A device that signs sends the grant's GrantStatement with it (`signed`), and a RevocationStatement
// when taking it back: the relay checks that the statement says what the request says and that the
// caller's own device signed it, keeps it (db/trust.ts), and carries it to the host, which follows
// only what an owner of the host signed (src/host/trust/book.ts). Without a signature the relay's
// grant still rules the relay's own checks, and a host that requires signatures ignores it.
import { Hono } from 'hono';
import {
  ProtocolError,
  RevocationRequestSchema,
  resignOf,
  SignedGrantCreateRequestSchema,
  SignedGrantIdSchema,
  type GrantStatement,
  type TeamMembersToSign,
  type RevocationStatement,
  type Signed,
} from '../../contracts/index.ts';
import { reachesHost, readView } from '../auth/access.ts';
import { newId } from '../auth/opaque.ts';
import { recheckHosts } from '../objects/revocations.ts';
import { record } from '../db/audit.ts';
import { findGrant, grantsOnHost, grantsOnHostTo, putGrant, removeGrant, teamHoldsGrantOn } from '../db/grants.ts';
import { findTeam, membersOf, roleIn } from '../db/teams.ts';
import { grantRowById, insertRevocation, putSignedGrant } from '../db/trust.ts';
import { requireSignedBy } from '../auth/statements.ts';
import { deliverTrust } from '../objects/host-link.ts';
import { userExists, verifiedUserIdByEmail } from '../db/users.ts';
import type { Env } from '../env.ts';
import { jsonBody, optionalJsonBody } from './body.ts';
import { clientIp, requireHostOwner, requireUser, type SignedIn } from './identity.ts';

type App = { Bindings: Env; Variables: { user: SignedIn } };

// Chained, so the sub-app's type carries every route for the SDK's typed client (client/api.ts).
export const grantsApi = new Hono<App>()
  .use('*', requireUser)

  .get('/:id/grants', requireHostOwner, async (c) => {
    return c.json({ grants: await grantsOnHost(c.env.DB, c.req.param('id')) });
  })

  // What reaches the caller on this host (their own grants and their teams'), for anyone who holds a
  // role there: a team member sees that their team's grant waits for an owner to sign it again. Nothing
  // they could not see already (their grants, their teams' members).
  .get('/:id/grants/mine', async (c) => {
    const hostId = c.req.param('id');
    const user = c.get('user');
    if (!reachesHost(await readView(c.env.DB, { kind: 'user', ...user }, hostId))) throw new ProtocolError('forbidden', 'You hold no role on this host');
    return c.json({ grants: await grantsOnHostTo(c.env.DB, hostId, user.userId) });
  })

  // The member list an owner of the host signs a team's grant over. An owner need not belong to the team
  // (they may have left it, or a team admin made it): the statement must name the team's members as they
  // are now, so whoever owns the host reads them here, ids and names only, for a team that holds a grant
  // on this host (a new grant to a team one is not in is made first, then signed: client/trust.ts) or
  // that the caller belongs to. Anyone else is refused before the team is looked at.
  .get('/:id/grants/teams/:teamId/members', requireHostOwner, async (c) => {
    const hostId = c.req.param('id');
    const teamId = c.req.param('teamId');
    const [holds, role] = await Promise.all([teamHoldsGrantOn(c.env.DB, hostId, teamId), roleIn(c.env.DB, teamId, c.get('user').userId)]);
    if (!holds && !role) throw new ProtocolError('team-not-found', 'No such team holds a grant on this host (give it one, then sign it)');
    const members = (await membersOf(c.env.DB, teamId)).map((m) => ({ userId: m.userId, name: m.name }));
    return c.json({ teamId, members } satisfies TeamMembersToSign);
  })

  .post('/:id/grants', requireHostOwner, jsonBody(SignedGrantCreateRequestSchema), async (c) => {
    const hostId = c.req.param('id');
    const user = c.get('user');
    const body = c.req.valid('json');
    const subjectId = await subjectOf(c.env.DB, body.subject);
    const subject = { type: body.subject.type, id: subjectId };
    const chatId = body.chatId ?? '';
    const before = await findGrant(c.env.DB, hostId, chatId, subject);
    if (body.signed) {
      await checkSignedGrant(c.env.DB, user.userId, body.signed, { hostId, chatId: body.chatId ?? null, subject, role: body.role });
      const { kept } = await putSignedGrant(c.env.DB, body.signed, {
        chatId,
        subjectType: subject.type,
        subjectId,
        createdBy: user.userId,
        createdAt: Date.now(),
      });
      if (!kept) throw new ProtocolError('team-changed', 'The team changed while the grant was being kept: sign it again with the members as they are now');
      c.executionCtx.waitUntil(deliverTrust(c.env, [hostId], [body.signed]));
    } else {
      // One grant per (host, chat, subject): giving again changes its role.
      await putGrant(c.env.DB, {
        id: newId('g_'),
        hostId,
        chatId,
        subjectType: subject.type,
        subjectId,
        role: body.role,
        createdBy: user.userId,
        createdAt: Date.now(),
      });
    }
    const grant = (await findGrant(c.env.DB, hostId, chatId, subject))!;
    // Every change is rechecked, a raise too: a lowered role closes or narrows open sockets, and a
    // new or raised one must not wait for the objects' cached views to age out (a chat list filtered
    // by the old grant, pushes of the newly granted chats not heard for up to 2 s).
    await recheckHosts(c.env, [hostId]);
    c.executionCtx.waitUntil(
      record(c.env.DB, {
        actor: user.userId,
        sessionId: user.sessionId,
        ip: clientIp(c),
        action: before ? 'grant.changed' : 'grant.created',
        hostId,
        chatId: grant.chatId,
        detail: {
          grantId: grant.id,
          subjectType: body.subject.type,
          subjectId,
          role: body.role,
          signed: body.signed !== undefined,
          ...(before ? { was: before.role } : {}),
        },
      }),
    );
    return c.json(grant, before ? 200 : 201);
  })

  // A body is optional: the signed revocation of a device that signs.
  .delete('/:id/grants/:grantId', requireHostOwner, optionalJsonBody(RevocationRequestSchema), async (c) => {
    const hostId = c.req.param('id');
    const user = c.get('user');
    const grantId = c.req.param('grantId');
    const { revocation } = c.req.valid('json');
    if (revocation) {
      await checkGrantRevocation(c.env.DB, user.userId, revocation, hostId, grantId);
      await insertRevocation(c.env.DB, revocation, user.userId, Date.now());
    }
    const row = await removeGrant(c.env.DB, hostId, grantId);
    // A signed revocation of a grant the relay no longer holds still counts: the host may hold it.
    if (!row && !revocation) throw new ProtocolError('grant-not-found', 'No such grant on this host');
    if (row) await recheckHosts(c.env, [hostId]);
    if (revocation) c.executionCtx.waitUntil(deliverTrust(c.env, [hostId], [revocation]));
    c.executionCtx.waitUntil(
      record(c.env.DB, {
        actor: user.userId,
        sessionId: user.sessionId,
        ip: clientIp(c),
        action: 'grant.removed',
        hostId,
        chatId: row ? row.chatId || null : null,
        detail: row
          ? { grantId: row.id, subjectType: row.subjectType, subjectId: row.subjectId, role: row.role, signed: revocation !== undefined }
          : { grantId, signed: true },
      }),
    );
    return c.json({ removed: row?.id ?? grantId });
  });

/** The id of a grant's subject, which must exist: a user by id or email, or a team. */
async function subjectOf(db: D1Database, subject: { type: 'user' | 'team'; id?: string; email?: string }): Promise<string> {
  if (subject.type === 'team') {
    const team = await findTeam(db, subject.id!);
    if (!team) throw new ProtocolError('team-not-found', 'No such team');
    return team.id;
  }
  if (subject.id !== undefined) {
    if (!(await userExists(db, subject.id))) throw new ProtocolError('user-not-found', 'No such user');
    return subject.id;
  }
  // Only an address someone proved: an account that merely typed it (an invitation anyone can make and
  // accept) must not receive what the owner meant for the person who reads that mailbox.
  const found = await verifiedUserIdByEmail(db, subject.email!);
  if (!found) throw new ProtocolError('user-not-found', 'No account has verified this email (grant by user id or through a team instead)');
  return found;
}

/**
 * A signed grant must say exactly what the request asks (host, chat, subject, role; for a team, the
 * members the team has now, so the host follows the same people the relay does), carry an id the
 * relay can keep, and be signed by the caller's own live device.
 */
async function checkSignedGrant(
  db: D1Database,
  userId: string,
  signed: Signed<GrantStatement>,
  asked: { hostId: string; chatId: string | null; subject: { type: 'user' | 'team'; id: string }; role: string },
): Promise<void> {
  const { statement } = signed;
  const mismatch = (what: string) => new ProtocolError('bad-request', `The signed grant names another ${what} than the request`);
  if (statement.hostId !== asked.hostId) throw mismatch('host');
  if (statement.chatId !== asked.chatId) throw mismatch('chat');
  if (statement.role !== asked.role) throw mismatch('role');
  if (statement.subject.kind !== asked.subject.type) throw mismatch('subject');
  if (statement.subject.kind === 'user' && statement.subject.userId !== asked.subject.id) throw mismatch('person');
  if (statement.subject.kind === 'team') {
    if (statement.subject.teamId !== asked.subject.id) throw mismatch('team');
    const drift = resignOf(
      statement.subject.members,
      (await membersOf(db, asked.subject.id)).map((m) => ({ userId: m.userId, name: m.name })),
      () => null,
    );
    if (drift) {
      throw new ProtocolError(
        'team-changed',
        `The signed team grant must name the team's members as they are now (${drift.joined.length} joined, ${drift.left.length} left since): sign it again`,
      );
    }
  }
  if (!SignedGrantIdSchema.safeParse(statement.grantId).success)
    throw new ProtocolError('bad-request', "signed.statement.grantId: a signed grant's id is g_ and 16 to 64 base64url characters");
  const existing = await grantRowById(db, statement.grantId);
  if (
    existing &&
    (existing.hostId !== asked.hostId ||
      existing.chatId !== (asked.chatId ?? '') ||
      existing.subjectType !== asked.subject.type ||
      existing.subjectId !== asked.subject.id)
  ) {
    throw new ProtocolError('bad-request', 'That grant id names another grant');
  }
  await requireSignedBy(db, userId, statement.by, signed);
}

/** A signed grant revocation names this host and this grant and was signed by the caller's own live device. */
async function checkGrantRevocation(db: D1Database, userId: string, signed: Signed<RevocationStatement>, hostId: string, grantId: string): Promise<void> {
  const { statement } = signed;
  if (statement.hostId !== hostId || statement.target.kind !== 'grant' || statement.target.grantId !== grantId) {
    throw new ProtocolError('bad-request', 'The signed revocation names another host or grant than the request');
  }
  await requireSignedBy(db, userId, statement.by, signed);
}
