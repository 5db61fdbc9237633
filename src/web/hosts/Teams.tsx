// The teams this person is in, and making a new one (its maker is its owner).
import { useEffect, useState } from 'preact/hooks';
import type { TeamSummary } from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { navigate } from '../app/router.ts';
import { api } from '../app/session.ts';
import './hosts.css';

export function TeamsPage() {
  const [teams, setTeams] = useState<TeamSummary[] | null>(null);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.teams().then(setTeams, (f: unknown) => setError(errorText(f)));
  }, []);
  return (
    <section class="page" aria-labelledby="teams-title">
      <h1 id="teams-title">Teams</h1>
      <p class="muted small">A team holds roles on hosts for all its members. Invite people by a link.</p>
      {!teams && !error && (
        <p class="loading" aria-busy="true">
          Loading teams…
        </p>
      )}
      {teams?.length === 0 && <p class="muted">You are in no team yet.</p>}
      <ul class="list" aria-label="Teams">
        {teams?.map((team) => (
          <li key={team.id}>
            <a class="host-row card" href={`/teams/${encodeURIComponent(team.id)}`}>
              <span class="grow">
                <span class="host-name">{team.name}</span>
                <span class="muted small">your role: {team.role}</span>
              </span>
            </a>
          </li>
        ))}
      </ul>
      <h2 id="new-team-title">New team</h2>
      <form
        class="card stack"
        aria-labelledby="new-team-title"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const team = await api.createTeam(name.trim());
            navigate(`/teams/${encodeURIComponent(team.id)}`);
          } catch (failure) {
            setError(errorText(failure));
          }
        }}
      >
        <label>
          Team name
          <input name="team-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <div>
          <button type="submit" class="primary" disabled={!name.trim()}>
            Create team
          </button>
        </div>
      </form>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
