// An account never claims an address nobody verified. Anyone signed in can make a team, invite
// `ceo@corp` and accept it signed out: that makes a password account holding the address, but an
// unverified one (the relay sends no mail, so accepting an invitation proves nothing). Grants by email
// and Access/OIDC sign-ins reach only verified addresses; such a sign-in takes the address from the
// account that only typed it and gives the person who proved it an account of their own.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { userForEmail } from '../../src/relay/auth/external.ts';
import { hostToken } from './peers.ts';
import { api, signIn, signInWithPassword, type Person } from './people.ts';

let n = 0;
const unique = () => `${++n}-${crypto.randomUUID().slice(0, 6)}`;

/** An attacker who signs in, makes a team, invites `email` and accepts it signed out: a password account for that address. */
async function squat(email: string): Promise<{ attacker: Person; squatter: Person; teamId: string }> {
  const attacker = await signIn(`squatter-${unique()}`);
  const { body: team } = await api(attacker, 'POST', '/api/teams', { name: 'not the ceo' });
  const { body: invitation } = await api(attacker, 'POST', `/api/teams/${team.id}/invitations`, { email });
  const accepted = await api(null, 'POST', `/api/invitations/${invitation.token}/accept`, { email, password: 'attacker password 1', name: 'CEO' });
  expect(accepted.status).toBe(201);
  return { attacker, squatter: { userId: accepted.body.userId, token: accepted.body.accessToken, sessionId: accepted.body.sessionId }, teamId: team.id };
}

describe('verified addresses', () => {
  it('an account made by accepting an invitation holds its address unverified, and says so', async () => {
    const email = `ceo-${unique()}@corp.test`;
    const { squatter } = await squat(email);
    expect((await api(squatter, 'GET', '/api/me')).body).toMatchObject({ id: squatter.userId, email, emailVerified: false });
    const row = await env.DB.prepare('SELECT email_verified_at FROM users WHERE id = ?').bind(squatter.userId).first('email_verified_at');
    expect(row).toBeNull();
    // A person an identity provider vouched for is verified.
    const vouched = await signIn(`vouched-${unique()}`);
    expect((await api(vouched, 'GET', '/api/me')).body.emailVerified).toBe(true);
  });

  it("a grant by email never reaches an unverified holder of the address; by id it is the owner's explicit choice", async () => {
    const email = `cfo-${unique()}@corp.test`;
    const { squatter } = await squat(email);
    const owner = await signIn(`grant-owner-${unique()}`);
    const hostId = `h-verified-${unique()}`;
    await hostToken(hostId, owner.userId);
    const byEmail = await api(owner, 'POST', `/api/hosts/${hostId}/grants`, { subject: { type: 'user', email }, role: 'operator' });
    expect(byEmail.status).toBe(404);
    expect(byEmail.body).toMatchObject({ code: 'user-not-found', message: expect.stringContaining('verified') });
    expect((await api(owner, 'GET', `/api/hosts/${hostId}/grants`)).body.grants).toEqual([]);
    expect((await api(squatter, 'GET', '/api/hosts')).body.hosts ?? []).toEqual([]);
    // The same grant by the account's id is not a claim about an address: it is the owner's choice.
    expect((await api(owner, 'POST', `/api/hosts/${hostId}/grants`, { subject: { type: 'user', id: squatter.userId }, role: 'viewer' })).status).toBe(201);
  });

  it("an Access/OIDC sign-in for the address never lands in the squatter's account: it gets its own, and the squatter loses the address", async () => {
    const email = `cto-${unique()}@corp.test`;
    const { squatter, teamId } = await squat(email);
    const found = await userForEmail(env.DB, email.toUpperCase(), 'The CTO');
    expect(found.userId).not.toBe(squatter.userId);
    expect(found.releasedFrom).toBe(squatter.userId);
    const rows = await env.DB.prepare('SELECT id, email, email_verified_at FROM users WHERE id IN (?, ?)')
      .bind(found.userId, squatter.userId)
      .all<{ id: string; email: string | null; email_verified_at: number | null }>();
    const byId = new Map(rows.results.map((r) => [r.id, r]));
    expect(byId.get(found.userId)).toMatchObject({ email, email_verified_at: expect.any(Number) });
    expect(byId.get(squatter.userId)).toMatchObject({ email: null, email_verified_at: null });
    // The person who proved the address is in none of the attacker's teams.
    const member = await env.DB.prepare('SELECT count(*) AS n FROM team_members WHERE team_id = ? AND user_id = ?').bind(teamId, found.userId).first('n');
    expect(member).toBe(0);
    // The squatter's password no longer signs in to anything with that address.
    const password = await signInWithPassword(email, 'attacker password 1');
    expect(password.body.code).toBe('unauthorized');
    // The next sign-in is the same verified account, and a grant by email now reaches it.
    expect(await userForEmail(env.DB, email, null)).toEqual({ userId: found.userId, releasedFrom: null });
    const owner = await signIn(`grant-owner-${unique()}`);
    const hostId = `h-verified-${unique()}`;
    await hostToken(hostId, owner.userId);
    const granted = await api(owner, 'POST', `/api/hosts/${hostId}/grants`, { subject: { type: 'user', email }, role: 'viewer' });
    expect(granted.status).toBe(201);
    expect(granted.body.subject).toMatchObject({ type: 'user', id: found.userId });
  });

  it('once the address is verified, an invitation for it cannot make a second account', async () => {
    const email = `coo-${unique()}@corp.test`;
    const { userId } = await userForEmail(env.DB, email, null);
    const attacker = await signIn(`late-squatter-${unique()}`);
    const { body: team } = await api(attacker, 'POST', '/api/teams', { name: 'late' });
    const { body: invitation } = await api(attacker, 'POST', `/api/teams/${team.id}/invitations`, { email });
    const accepted = await api(null, 'POST', `/api/invitations/${invitation.token}/accept`, { email, password: 'attacker password 1', name: 'COO' });
    expect(accepted.body.code).toBe('email-taken');
    expect(await env.DB.prepare('SELECT count(*) AS n FROM users WHERE lower(email) = ?').bind(email).first('n')).toBe(1);
    expect(await userForEmail(env.DB, email, null)).toEqual({ userId, releasedFrom: null });
  });
});
