// The signed trust statements the relay keeps for hosts (src/contracts/trust.ts): grants an owner
// signed (in `grants.statement`), device vouches (in `devices.vouch`), and signed revocations
// (`trust_revocations`). The relay checks who posted each (their own device signed it) so a client
// hears at once when its signing is broken; whether a statement counts is each host's decision.
import { SignedTrustStatementSchema, type GrantStatement, type RevocationStatement, type Signed, type SignedTrustStatement } from '../../contracts/index.ts';

/**
 * The people whose devices a host may need to know: its owner, the people granted anything on it,
 * and the members of the teams granted anything on it.
 */
const PEOPLE_OF_HOST = `SELECT owner_id AS user_id FROM hosts WHERE id = ?1
  UNION SELECT subject_id FROM grants WHERE host_id = ?1 AND subject_type = 'user'
  UNION SELECT tm.user_id FROM grants g JOIN team_members tm ON g.subject_type = 'team' AND tm.team_id = g.subject_id WHERE g.host_id = ?1`;

function parsed(rows: { statement: string }[]): SignedTrustStatement[] {
  const out: SignedTrustStatement[] = [];
  for (const row of rows) {
    // Every row was checked against this schema before it was written; one that no longer parses
    // (a schema changed under it) is left out rather than sent for the host to refuse.
    const statement = SignedTrustStatementSchema.safeParse(JSON.parse(row.statement));
    if (statement.success) out.push(statement.data as SignedTrustStatement);
  }
  return out;
}

/**
 * Every current statement about a host, in the order a host can take them: the vouches of the
 * people it concerns (a grant's signer and a vouched device must be known first), the signed grants,
 * then the revocations (of its grants, and of those people's devices).
 */
export async function trustStatementsFor(d1: D1Database, hostId: string): Promise<SignedTrustStatement[]> {
  const [vouches, grants, revocations] = await d1.batch<{ statement: string }>([
    d1.prepare(`SELECT vouch AS statement FROM devices WHERE vouch IS NOT NULL AND user_id IN (${PEOPLE_OF_HOST}) ORDER BY created_at, id`).bind(hostId),
    d1.prepare('SELECT statement FROM grants WHERE host_id = ?1 AND statement IS NOT NULL ORDER BY created_at, id').bind(hostId),
    d1
      .prepare(`SELECT statement FROM trust_revocations WHERE host_id = ?1 OR (host_id IS NULL AND user_id IN (${PEOPLE_OF_HOST})) ORDER BY created_at, id`)
      .bind(hostId),
  ]);
  return [...parsed(vouches!.results), ...parsed(grants!.results), ...parsed(revocations!.results)];
}

/** The grant row an id names, whatever host it is on; null when none. */
export async function grantRowById(
  d1: D1Database,
  grantId: string,
): Promise<{ hostId: string; chatId: string; subjectType: string; subjectId: string } | null> {
  return d1
    .prepare('SELECT host_id AS hostId, chat_id AS chatId, subject_type AS subjectType, subject_id AS subjectId FROM grants WHERE id = ?')
    .bind(grantId)
    .first();
}

/**
 * Keeps a signed grant: the one grant of its (host, chat, subject), under the statement's id, with
 * its role and statement (a newer signed grant for the same subject and scope replaces the row, as it
 * supersedes the older one on the host). A team grant is kept only while the team's members are the
 * ones it names, in the same statement as the write, so a join or leave that lands after the caller
 * checked cannot slip in: then nothing is written and this answers `kept: false`.
 */
export async function putSignedGrant(
  d1: D1Database,
  signed: Signed<GrantStatement>,
  row: { chatId: string; subjectType: 'user' | 'team'; subjectId: string; createdBy: string; createdAt: number },
): Promise<{ kept: boolean }> {
  const { statement } = signed;
  const members = statement.subject.kind === 'team' ? [...new Set(statement.subject.members)] : null;
  // The team has exactly the named members: as many, and all of them among its own.
  const unchanged =
    members === null
      ? '1'
      : `(SELECT COUNT(*) FROM team_members WHERE team_id = ?10) = ?11
    AND (SELECT COUNT(*) FROM team_members WHERE team_id = ?10 AND user_id IN (SELECT value FROM json_each(?12))) = ?11`;
  const write = await d1
    .prepare(`INSERT INTO grants (id, host_id, chat_id, subject_type, subject_id, role, created_by, created_at, statement)
      SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE ${unchanged}
      ON CONFLICT (host_id, chat_id, subject_type, subject_id) DO UPDATE SET
        id = excluded.id, role = excluded.role, created_by = excluded.created_by, created_at = excluded.created_at, statement = excluded.statement`)
    .bind(
      statement.grantId,
      statement.hostId,
      row.chatId,
      row.subjectType,
      row.subjectId,
      statement.role,
      row.createdBy,
      row.createdAt,
      JSON.stringify(signed),
      ...(members === null ? [] : [row.subjectId, members.length, JSON.stringify(members)]),
    )
    .run();
  return { kept: write.meta.changes > 0 };
}

/** Keeps a signed revocation (once per signature). `userId`: the device's person for a device, the signer for a grant. */
export async function insertRevocation(d1: D1Database, signed: Signed<RevocationStatement>, userId: string, now: number): Promise<void> {
  const { statement } = signed;
  const target = statement.target.kind === 'grant' ? statement.target.grantId : statement.target.deviceId;
  await d1
    .prepare(`INSERT INTO trust_revocations (id, host_id, user_id, target_kind, target_id, statement, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
    .bind(signed.sig, statement.hostId, userId, statement.target.kind, target, JSON.stringify(signed), now)
    .run();
}
