// One team: its members and their roles (owners and admins change them and remove members; only
// owners make owners), invitation links with a role (optionally for one email), and leaving. A member
// who owns a host where the team's signed grant names other members than the team has now is told to
// sign it again there, with a link to that host's page; a member who owns none sees no such note.
import { useEffect, useState } from 'preact/hooks';
import { TEAM_ROLES, type Invitation, type TeamDetail, type TeamGrantsToSign } from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { useOutcome } from './outcome.ts';
import { navigate } from '../app/router.ts';
import { api, loadMe, me } from '../app/session.ts';
import './hosts.css';
import { Icon } from '../app/icons.tsx';

type TeamRole = (typeof TEAM_ROLES)[number];

export function invitationLink(token: string): string {
  return `${location.origin}/invitations/${encodeURIComponent(token)}`;
}

export function TeamPage({ teamId }: { teamId: string }) {
  const [team, setTeam] = useState<TeamDetail | null>(null);
  const { message, setMessage, failed, run } = useOutcome(() => reload());
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [inviteRole, setInviteRole] = useState<TeamRole>('member');
  const [inviteEmail, setInviteEmail] = useState('');
  const [toSign, setToSign] = useState<TeamGrantsToSign['hosts']>([]);
  const reload = () =>
    Promise.all([
      api.team(teamId).then(setTeam, failed),
      // Members change here, so the note is read again with the team.
      api.teamGrantsToSign(teamId).then(setToSign, () => setToSign([])),
    ]);
  useEffect(() => {
    void reload();
    void loadMe().catch(() => undefined);
  }, [teamId]);

  if (!team) {
    return (
      <section class="page">
        {message ? (
          <p class="notice error" role="alert">
            {message.text}
          </p>
        ) : (
          <p class="loading" aria-busy="true">
            Loading…
          </p>
        )}
      </section>
    );
  }
  const manages = team.role === 'owner' || team.role === 'admin';
  const myId = me.value?.id ?? api.userId;
  return (
    <section class="page stack" aria-labelledby="team-title">
      <a href="/teams" aria-label="Back to teams">
        <Icon name="back" /> Teams
      </a>
      <h1 id="team-title">{team.name}</h1>
      <p class="muted small">Your role: {team.role}</p>
      {toSign.length > 0 && (
        <div class="team-changed notice" role="status" data-testid="team-resign">
          <strong>Team changed: sign again</strong>
          <span class="muted small">
            This team's grant on hosts you own was signed over the members it had then: the machine still serves who left and not who joined until you sign it
            again on the host's page.
          </span>
          <ul class="list" aria-label="Hosts to sign again on">
            {toSign.map((host) => (
              <li key={host.hostId}>
                <a href={`/hosts/${encodeURIComponent(host.hostId)}`}>{host.hostName}</a>
                {host.grants > 1 ? <span class="muted small"> · {host.grants} grants</span> : null}
              </li>
            ))}
          </ul>
        </div>
      )}
      <div class="card">
        <h2 id="members-title">Members</h2>
        <ul class="list table-list" aria-labelledby="members-title">
          {team.members.map((member) => {
            const who = member.name || member.email || member.userId;
            return (
              <li key={member.userId}>
                <span class="grow">
                  {who} <span class="muted small">{member.email ?? ''}</span>
                </span>
                {manages && member.userId !== myId ? (
                  <>
                    <select
                      aria-label={`Role of ${who}`}
                      value={member.role}
                      onChange={(e) => {
                        const role = e.currentTarget.value as TeamRole;
                        void run(() => api.setMemberRole(team.id, member.userId, role), `${who} is now ${role}.`);
                      }}
                    >
                      {TEAM_ROLES.map((r) => (
                        <option key={r} value={r} disabled={r === 'owner' && team.role !== 'owner'}>
                          {r}
                        </option>
                      ))}
                    </select>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Remove ${who}`}
                      onClick={() => void run(() => api.removeMember(team.id, member.userId), `${who} was removed.`)}
                    >
                      Remove
                    </button>
                  </>
                ) : (
                  <span class="badge">{member.role}</span>
                )}
              </li>
            );
          })}
        </ul>
      </div>
      {manages && (
        <form
          class="card stack"
          aria-labelledby="invite-title"
          onSubmit={async (e) => {
            e.preventDefault();
            setMessage(null);
            try {
              setInvitation(await api.invite(team.id, { role: inviteRole, ...(inviteEmail.trim() ? { email: inviteEmail.trim() } : {}) }));
            } catch (failure) {
              setMessage({ ok: false, text: errorText(failure) });
            }
          }}
        >
          <h2 id="invite-title">Invite someone</h2>
          <label>
            Role
            <select value={inviteRole} onChange={(e) => setInviteRole(e.currentTarget.value as TeamRole)}>
              {TEAM_ROLES.map((r) => (
                <option key={r} value={r} disabled={r === 'owner' && team.role !== 'owner'}>
                  {r}
                </option>
              ))}
            </select>
          </label>
          <label>
            Their email (needed for someone without an account here)
            <input type="email" name="invite-email" value={inviteEmail} onInput={(e) => setInviteEmail(e.currentTarget.value)} />
          </label>
          <div>
            <button type="submit" class="primary">
              Make invitation link
            </button>
          </div>
          {invitation && (
            <div class="stack" role="status">
              <p class="small">Send this link (it works once, for 7 days{invitation.email ? `, for ${invitation.email}` : ''}):</p>
              <p class="invite-link" data-testid="invitation-link">
                {invitationLink(invitation.token)}
              </p>
              <div>
                <button type="button" onClick={() => void navigator.clipboard?.writeText(invitationLink(invitation.token))}>
                  Copy link
                </button>
              </div>
            </div>
          )}
        </form>
      )}
      {myId && (
        <div>
          <button
            type="button"
            class="danger"
            onClick={async () => {
              try {
                await api.removeMember(team.id, myId);
                navigate('/teams', { replace: true });
              } catch (failure) {
                setMessage({ ok: false, text: errorText(failure) });
              }
            }}
          >
            Leave team
          </button>
        </div>
      )}
      {message && (
        <p class={`notice ${message.ok ? 'ok' : 'error'}`} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
    </section>
  );
}
