// Teams: members with roles, single-use invitations (signed in: join; signed out: the account is made
// and signed in), and who may change whom.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { api, signIn, type Person } from './people.ts';

let n = 0;
const someone = (name: string) => signIn(`teams-${name}-${++n}`);

async function invite(by: Person, teamId: string, body: Record<string, unknown> = {}) {
  return api(by, 'POST', `/api/teams/${teamId}/invitations`, body);
}

describe('teams', () => {
  it('are made by a signed-in person, who owns them; members see them, outsiders do not', async () => {
    const olga = await someone('olga');
    const out = await someone('out');
    expect((await api(null, 'POST', '/api/teams', { name: 'x' })).status).toBe(401);
    expect((await api(olga, 'POST', '/api/teams', { name: '   ' })).body).toMatchObject({ code: 'bad-request' });
    const made = await api(olga, 'POST', '/api/teams', { name: ' Platform ' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: 'Platform', role: 'owner' });
    expect((await api(olga, 'GET', '/api/teams')).body.teams).toEqual([made.body]);
    const detail = await api(olga, 'GET', `/api/teams/${made.body.id}`);
    expect(detail.body.members).toEqual([
      { userId: olga.userId, name: olga.userId, email: `${olga.userId}@test.invalid`, role: 'owner', joinedAt: expect.any(Number) },
    ]);
    expect((await api(out, 'GET', `/api/teams/${made.body.id}`)).body.code).toBe('team-not-found');
    expect((await api(out, 'GET', '/api/teams')).body.teams).toEqual([]);
  });

  it('invitations are single-use links, made by owners and admins, that a signed-in person accepts to join', async () => {
    const olga = await someone('olga');
    const pat = await someone('pat');
    const quinn = await someone('quinn');
    const { body: t } = await api(olga, 'POST', '/api/teams', { name: 'core' });
    const link = await invite(olga, t.id, { role: 'admin' });
    expect(link.status).toBe(201);
    expect(link.body).toMatchObject({
      teamId: t.id,
      role: 'admin',
      email: null,
      acceptUrl: expect.stringContaining(`/api/invitations/${link.body.token}/accept`),
    });
    expect(link.body.expiresAt - Date.now()).toBeGreaterThan(7 * 24 * 3600_000 - 60_000);
    // Stored hashed: the token itself is nowhere in D1.
    expect(await env.DB.prepare('SELECT count(*) AS n FROM invitations WHERE token_hash = ?').bind(link.body.token).first('n')).toBe(0);

    expect((await api(null, 'GET', `/api/invitations/${link.body.token}`)).body).toMatchObject({ teamName: 'core', role: 'admin' });
    expect((await api(pat, 'POST', `/api/invitations/${link.body.token}/accept`)).body).toEqual({ userId: pat.userId, teamId: t.id, role: 'admin' });
    expect((await api(quinn, 'POST', `/api/invitations/${link.body.token}/accept`)).body.code).toBe('invitation-expired');
    expect((await api(quinn, 'POST', '/api/invitations/not-a-token/accept')).body.code).toBe('invitation-not-found');

    // An admin invites members and admins, not owners; a member invites nobody.
    expect((await invite(pat, t.id, { role: 'owner' })).status).toBe(403);
    const asMember = await invite(pat, t.id, { role: 'member' });
    await api(quinn, 'POST', `/api/invitations/${asMember.body.token}/accept`);
    expect((await invite(quinn, t.id)).status).toBe(403);
    const roles = (await api(olga, 'GET', `/api/teams/${t.id}`)).body.members.map((m: any) => [m.userId, m.role]);
    expect(roles).toEqual([
      [olga.userId, 'owner'],
      [pat.userId, 'admin'],
      [quinn.userId, 'member'],
    ]);
  });

  it('an invitation accepted signed out makes the account, joins the team and signs the person in', async () => {
    const olga = await someone('olga');
    const { body: t } = await api(olga, 'POST', '/api/teams', { name: 'newcomers' });
    const email = `rae-${n}@example.test`;
    const link = await invite(olga, t.id, { email });
    const accept = (body: unknown) => api(null, 'POST', `/api/invitations/${link.body.token}/accept`, body);

    expect((await accept({ email, password: 'short', name: 'Rae' })).body).toMatchObject({ code: 'bad-request', message: expect.stringContaining('password') });
    expect((await accept({ email: 'other@example.test', password: 'long enough pass', name: 'Rae' })).status).toBe(403);
    expect((await accept({ email: `${olga.userId}@test.invalid`, password: 'long enough pass', name: 'Rae' })).status).toBe(403);
    const joined = await accept({ email: email.toUpperCase(), password: 'long enough pass', name: 'Rae' });
    expect(joined.status).toBe(201);
    expect(joined.body).toMatchObject({ teamId: t.id, role: 'member', accessToken: expect.any(String), refreshToken: expect.any(String) });
    const rae: Person = { userId: joined.body.userId, token: joined.body.accessToken, sessionId: joined.body.sessionId };
    expect((await api(rae, 'GET', '/api/teams')).body.teams.map((team: any) => team.id)).toEqual([t.id]);
    const row = await env.DB.prepare('SELECT email, password_hash FROM users WHERE id = ?').bind(rae.userId).first<{ email: string; password_hash: string }>();
    expect(row!.email).toBe(email);
    expect(row!.password_hash).not.toContain('long enough pass');

    // An email that has an account must sign in first.
    const second = await invite(olga, t.id, { email });
    const taken = await api(null, 'POST', `/api/invitations/${second.body.token}/accept`, { email, password: 'long enough pass', name: 'Rae again' });
    expect(taken.body.code).toBe('email-taken');
    // …and the invitation is still good.
    expect((await api(null, 'GET', `/api/invitations/${second.body.token}`)).status).toBe(200);

    // A link made for nobody in particular never makes an account: it would let its holder claim any address.
    const open = await invite(olga, t.id);
    const claimed = await api(null, 'POST', `/api/invitations/${open.body.token}/accept`, {
      email: 'the-boss@example.test',
      password: 'long enough pass',
      name: 'Not the boss',
    });
    expect(claimed.status).toBe(401);
    expect(claimed.body.code).toBe('unauthorized');
    expect(await env.DB.prepare('SELECT count(*) AS n FROM users WHERE email = ?').bind('the-boss@example.test').first('n')).toBe(0);
    expect((await api(null, 'GET', `/api/invitations/${open.body.token}`)).status).toBe(200);
  });

  it('an invitation accepted signed out twice at the same moment makes one account and one membership', async () => {
    const olga = await someone('olga');
    const { body: t } = await api(olga, 'POST', '/api/teams', { name: 'rush' });
    const email = `twice-${n}@example.test`;
    const link = await invite(olga, t.id, { email });
    const accept = () => api(null, 'POST', `/api/invitations/${link.body.token}/accept`, { email, password: 'long enough pass', name: 'Twice' });
    const answers = await Promise.all([accept(), accept()]);
    const won = answers.filter((a) => a.status === 201);
    expect(won).toHaveLength(1);
    // The other lost the invitation, or (when the winner was quicker) found the account it made.
    expect(['invitation-expired', 'email-taken']).toContain(answers.find((a) => a.status !== 201)!.body.code);
    expect(await env.DB.prepare('SELECT count(*) AS n FROM users WHERE email = ?').bind(email).first('n')).toBe(1);
    expect(await env.DB.prepare('SELECT user_id FROM team_members WHERE team_id = ? AND user_id != ?').bind(t.id, olga.userId).all()).toMatchObject({
      results: [{ user_id: won[0]!.body.userId }],
    });
  });

  it('an expired invitation is refused', async () => {
    const olga = await someone('olga');
    const sam = await someone('sam');
    const { body: t } = await api(olga, 'POST', '/api/teams', { name: 'late' });
    const link = await invite(olga, t.id);
    await env.DB.prepare('UPDATE invitations SET expires_at = ? WHERE id = ?')
      .bind(Date.now() - 1, link.body.id)
      .run();
    expect((await api(sam, 'POST', `/api/invitations/${link.body.token}/accept`)).body.code).toBe('invitation-expired');
  });

  it('two owners leaving at the same moment cannot leave the team without an owner', async () => {
    const ann = await someone('ann');
    const bob = await someone('bob');
    const { body: t } = await api(ann, 'POST', '/api/teams', { name: 'pair' });
    const link = await invite(ann, t.id, { role: 'owner' });
    expect((await api(bob, 'POST', `/api/invitations/${link.body.token}/accept`)).status).toBe(200);
    const [a, b] = await Promise.all([
      api(ann, 'DELETE', `/api/teams/${t.id}/members/${ann.userId}`),
      api(bob, 'DELETE', `/api/teams/${t.id}/members/${bob.userId}`),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 403]);
    const owners = await env.DB.prepare("SELECT count(*) AS n FROM team_members WHERE team_id = ? AND role = 'owner'").bind(t.id).first('n');
    expect(owners).toBe(1);
  });

  it('owners and admins change roles and remove members; only owners touch owners, and a team keeps one', async () => {
    const olga = await someone('olga');
    const pat = await someone('pat');
    const quinn = await someone('quinn');
    const { body: t } = await api(olga, 'POST', '/api/teams', { name: 'roles' });
    for (const [who, role] of [
      [pat, 'admin'],
      [quinn, 'member'],
    ] as const) {
      const link = await invite(olga, t.id, { role });
      await api(who, 'POST', `/api/invitations/${link.body.token}/accept`);
    }
    const member = (id: string) => `/api/teams/${t.id}/members/${id}`;

    expect((await api(pat, 'PATCH', member(quinn.userId), { role: 'owner' })).status).toBe(403);
    expect((await api(pat, 'PATCH', member(olga.userId), { role: 'member' })).status).toBe(403);
    expect((await api(quinn, 'PATCH', member(pat.userId), { role: 'member' })).status).toBe(403);
    expect((await api(pat, 'PATCH', member(quinn.userId), { role: 'bogus' })).status).toBe(400);
    expect((await api(pat, 'PATCH', member(quinn.userId), { role: 'admin' })).body).toEqual({ teamId: t.id, userId: quinn.userId, role: 'admin' });
    expect((await api(olga, 'PATCH', member(olga.userId), { role: 'admin' })).body.message).toContain('one owner');
    expect((await api(olga, 'DELETE', member(olga.userId))).body.message).toContain('one owner');
    expect((await api(pat, 'DELETE', member(olga.userId))).status).toBe(403);

    expect((await api(pat, 'DELETE', member(quinn.userId))).body).toEqual({ removed: quinn.userId });
    expect((await api(quinn, 'GET', `/api/teams/${t.id}`)).body.code).toBe('team-not-found');
    // Anyone may leave.
    expect((await api(pat, 'DELETE', member(pat.userId))).status).toBe(200);
    expect((await api(olga, 'GET', `/api/teams/${t.id}`)).body.members.map((m: any) => m.userId)).toEqual([olga.userId]);
  });
});
