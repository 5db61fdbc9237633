// One host: presence, its agents and what it allows (and how to change that on the machine), and for its owners rename, revoke, who may use it (grants to a person by email
// or to a team, as viewer, operator or owner) and its audit log.
import { useEffect, useState } from 'preact/hooks';
import {
  ACCESS_ROLES,
  type AuditPage,
  type Grant,
  type GrantResign,
  type HostPolicySummary,
  type HostSetup,
  type ProviderListResult,
  type TeamSummary,
} from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { useOutcome } from './outcome.ts';
import { giveRole, giveRoleByEmail, removeGrant, signAgain } from './signed-grants.ts';
import { navigate } from '../app/router.ts';
import { api, hostConnection } from '../app/session.ts';
import { hosts, hostsChanged, hostsError, isOnline, loadHosts } from './host-list.ts';
import { ago, when } from './time.ts';
import './hosts.css';
import { Icon } from '../app/icons.tsx';
import { TerminalSessionsCard } from '../sessions/SessionsCard.tsx';

type Role = (typeof ACCESS_ROLES)[number];
const ROLE_TEXT: Record<Role, string> = { viewer: 'Viewer (reads)', operator: 'Operator (chats)', owner: 'Owner (manages)' };

export function HostPage({ hostId }: { hostId: string }) {
  useEffect(() => {
    void loadHosts();
  }, []);
  const host = hosts.value?.find((h) => h.id === hostId);
  if (hostsError.value)
    return (
      <section class="page">
        <p class="notice error" role="alert">
          {hostsError.value}
        </p>
      </section>
    );
  if (!hosts.value)
    return (
      <p class="loading" aria-busy="true">
        Loading…
      </p>
    );
  if (!host)
    return (
      <section class="page">
        <h1>Host not found</h1>
        <p>
          It was revoked, or you no longer have access. <a href="/hosts">All hosts</a>
        </p>
      </section>
    );
  const online = isOnline(host);
  return (
    <section class="page stack" aria-labelledby="host-title">
      <a href="/hosts" aria-label="Back to hosts">
        <Icon name="back" /> Hosts
      </a>
      <div>
        <h1 id="host-title">{host.name}</h1>
        <p class="row muted" role="status">
          <span class={`dot${online ? ' online' : ''}`} aria-hidden="true" />
          <span data-testid="presence">{online ? 'Online' : 'Offline'}</span>
          {!online && host.lastSeenAt ? <span>· seen {ago(host.lastSeenAt)}</span> : null}
          {host.version ? <span>· {host.version}</span> : null}
          <span>· your role: {host.role ?? 'some chats'}</span>
        </p>
        {(host.role === 'owner' || host.role === 'operator') && (
          <a class="button" href={`/chats/new?host=${encodeURIComponent(host.id)}`}>
            Start a chat here
          </a>
        )}
      </div>
      {/* Its agents, folders and config carry the machine's paths: for those who may start chats (provider.list's role). */}
      {online && (host.role === 'owner' || host.role === 'operator') && <HostPolicyCard hostId={host.id} />}
      {online && host.role !== null && <TerminalSessionsCard hostId={host.id} />}
      {host.role !== 'owner' && <TeamsWaiting hostId={host.id} />}
      {host.role === 'owner' && (
        <>
          <Rename hostId={host.id} name={host.name} />
          <Grants hostId={host.id} />
          <Audit hostId={host.id} />
          <Revoke hostId={host.id} name={host.name} />
        </>
      )}
    </section>
  );
}

const MODE_TEXT: Record<HostPolicySummary['modeCeiling'], string> = {
  supervised: 'Supervised (asks before edits and commands)',
  'auto-accept-edits': 'Accept edits (asks before commands)',
  auto: 'Auto (asks only for risky actions)',
  'full-access': 'Full access (never asks)',
};

/**
 * What the host serves and allows, from its own `provider.list`: each agent (served or not, from which
 * executable, and why), the folders chats may work in, the widest mode, and how the machine's owner
 * changes them: on the machine, in its config file, since nothing on the relay can.
 */
function HostPolicyCard({ hostId }: { hostId: string }) {
  const [catalog, setCatalog] = useState<ProviderListResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    hostConnection(hostId)
      .request('provider.list', {})
      .then(
        (result) => {
          if (live) setCatalog(result);
        },
        (failure: unknown) => {
          if (live) setError(errorText(failure));
        },
      );
    return () => {
      live = false;
    };
  }, [hostId]);
  if (error)
    return (
      <p class="notice error" role="alert">
        {error}
      </p>
    );
  if (!catalog)
    return (
      <p class="loading" aria-busy="true">
        Reading what this host serves…
      </p>
    );
  const { policy, setup } = catalog;
  const agents =
    setup?.agents ??
    catalog.providers.map((p) => ({
      kind: p.kind,
      name: p.name,
      served: p.installed,
      from: null,
      version: p.version,
      why: p.installed ? 'installed' : 'not installed',
    }));
  const served = agents.filter((a) => a.served);
  const others = agents.filter((a) => !a.served);
  return (
    <>
      <div class="card stack" aria-labelledby="agents-title" data-testid="host-agents">
        <h2 id="agents-title">Agents</h2>
        {setup?.source === 'demo' && (
          <p class="notice" role="status">
            No agent CLI that can chat was found on this machine, so it serves the scripted demo agent: its replies are made up, not a model's.
          </p>
        )}
        <ul class="list agent-list" aria-label="Agents this host serves">
          {served.map((agent) => (
            <li key={`${agent.kind}:${agent.name}`} class="agent-row" data-served="true">
              <span class="agent-name">
                <strong>{agent.name}</strong>
                {agent.version ? ` ${agent.version}` : ''} <span class="badge ok">served</span>
              </span>
              {agent.from && (
                <span class="muted small agent-from">
                  from <code>{agent.from}</code>
                </span>
              )}
              <span class="muted small">{agent.why}</span>
            </li>
          ))}
        </ul>
        {others.length > 0 && (
          <details>
            <summary>Not served ({others.length})</summary>
            <ul class="list agent-list" aria-label="Agents this host does not serve">
              {others.map((agent) => (
                <li key={`${agent.kind}:${agent.name}`} class="agent-row" data-served="false">
                  <span class="agent-name">{agent.name}</span>
                  <span class="muted small">{agent.why}</span>
                </li>
              ))}
            </ul>
          </details>
        )}
      </div>
      {policy && (
        <div class="card stack" aria-labelledby="allows-title" data-testid="host-policy">
          <h2 id="allows-title">What this host allows</h2>
          <p>
            Folders:{' '}
            {policy.roots.map((root, i) => (
              <span key={root}>
                {i > 0 ? ', ' : ''}
                <code>{root}</code>
              </span>
            ))}{' '}
            (a chat without a folder works in <code>{policy.defaultFolder}</code>)
          </p>
          <p>
            Widest runtime mode: <strong>{policy.modeCeiling}</strong>; a chat without a mode is {policy.defaultMode}.
          </p>
          <p class="muted small">{MODE_TEXT[policy.modeCeiling]} is the most a chat here may do unasked.</p>
        </div>
      )}
      {setup && <HowToChange setup={setup} policy={policy} />}
    </>
  );
}

/** Where the owner changes the agents, folders and mode: the host's config file, then a restart. */
function HowToChange({ setup, policy }: { setup: HostSetup; policy: HostPolicySummary | undefined }) {
  const example = JSON.stringify({ policy: { roots: policy?.roots ?? ['~/code'], modeCeiling: policy?.modeCeiling ?? 'auto-accept-edits' } }, null, 2);
  const data = shellWord(setup.dataDir);
  return (
    <details class="card stack" data-testid="host-change">
      <summary>How to change these</summary>
      <p>On the machine itself (no one on the relay can change them), {setup.configExists ? 'edit' : 'create'} its config file:</p>
      <pre class="wrap">
        <code>{setup.configFile}</code>
      </pre>
      <p class="muted small">
        <code>policy.roots</code> lists the folders chats may work in, <code>policy.modeCeiling</code> the widest mode, and <code>providers</code> the agents to
        serve (without it the host serves every agent CLI it finds on its owner's PATH). For example:
      </p>
      <pre class="wrap">
        <code>{example}</code>
      </pre>
      <p>Then restart the host, and check what it will serve and why:</p>
      <pre class="wrap">
        <code>{`tether host start --data ${data}
tether host doctor --data ${data}`}</code>
      </pre>
      <p class="muted small">
        A host started by <code>npm start</code> restarts with <code>npm start</code>; one installed as a service with <code>tether host install</code>.
      </p>
    </details>
  );
}

/** A path as one shell word, quoted only when it needs it. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./~-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

function Rename({ hostId, name }: { hostId: string; name: string }) {
  const [value, setValue] = useState(name);
  const [state, setState] = useState<string | null>(null);
  return (
    <form
      class="card stack"
      aria-label="Rename host"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          await api.renameHost(hostId, value.trim());
          await hostsChanged();
          setState('Renamed.');
        } catch (failure) {
          setState(errorText(failure));
        }
      }}
    >
      <label>
        Name
        <input name="host-name" required maxLength={100} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <div class="row">
        <button type="submit" disabled={!value.trim() || value.trim() === name}>
          Rename
        </button>
        {state && (
          <span role="status" class="muted small">
            {state}
          </span>
        )}
      </div>
    </form>
  );
}

function Revoke({ hostId, name }: { hostId: string; name: string }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <div class="card stack">
      <h2>Revoke</h2>
      <p class="muted small">The machine is disconnected for good and its chats can no longer be reached. To use it again, pair it again.</p>
      {!asking ? (
        <div>
          <button type="button" class="danger" onClick={() => setAsking(true)}>
            Revoke this host
          </button>
        </div>
      ) : (
        <div class="row" role="group" aria-label="Confirm revoking">
          <span>Revoke {name}?</span>
          <button
            type="button"
            class="danger"
            onClick={async () => {
              try {
                await api.revokeHost(hostId);
                await hostsChanged();
                navigate('/hosts', { replace: true });
              } catch (failure) {
                setError(errorText(failure));
              }
            }}
          >
            Yes, revoke
          </button>
          <button type="button" onClick={() => setAsking(false)}>
            Cancel
          </button>
        </div>
      )}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

function Grants({ hostId }: { hostId: string }) {
  const [grants, setGrants] = useState<Grant[] | null>(null);
  const [teams, setTeams] = useState<TeamSummary[]>([]);
  const [kind, setKind] = useState<'user' | 'team'>('user');
  const [email, setEmail] = useState('');
  const [teamId, setTeamId] = useState('');
  const [role, setRole] = useState<Role>('operator');
  const { message, setMessage, failed, run } = useOutcome(() => reload());
  const reload = () => api.grants(hostId).then(setGrants, failed);
  useEffect(() => {
    void reload();
    api.teams().then(setTeams, () => undefined);
  }, [hostId]);
  const team = teamId || teams[0]?.id || '';

  return (
    <div class="card">
      <h2 id="grants-title">Who may use it</h2>
      {!grants && <p class="loading">Loading…</p>}
      {grants?.length === 0 && <p class="muted small">Only you. Give someone a role below.</p>}
      <ul class="list table-list" aria-labelledby="grants-title">
        {grants?.map((grant) => {
          const who = grant.subject.name ?? grant.subject.id;
          return (
            <li key={grant.id}>
              <span class="grow">
                {who}{' '}
                <span class="muted small">
                  {grant.subject.type === 'team' ? 'team' : 'person'}
                  {grant.chatId ? ` · one chat (${grant.chatId})` : ''}
                </span>
              </span>
              <select
                aria-label={`Role of ${who}`}
                value={grant.role}
                onChange={(e) => {
                  const next = e.currentTarget.value as Role;
                  void run(
                    () => giveRole(hostId, { type: grant.subject.type, id: grant.subject.id }, next, grant.chatId ?? undefined),
                    `${who} is now ${next}.`,
                  );
                }}
              >
                {ACCESS_ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
              <button
                type="button"
                class="danger"
                aria-label={`Remove ${who}`}
                onClick={() => void run(() => removeGrant(hostId, grant.id), `${who} no longer has access.`)}
              >
                Remove
              </button>
              {grant.resign && (
                <TeamChanged
                  resign={grant.resign}
                  who={who}
                  onSign={() => void run(() => signAgain(grant), `Signed again: the machine follows ${who} as it is now.`)}
                />
              )}
            </li>
          );
        })}
      </ul>
      <form
        class="stack"
        aria-label="Give a role"
        onSubmit={(e) => {
          e.preventDefault();
          void run(() => (kind === 'user' ? giveRoleByEmail(hostId, email.trim(), role) : giveRole(hostId, { type: 'team', id: team }, role)), 'Given.').then(
            () => setEmail(''),
          );
        }}
      >
        <h3 class="small">Give a role</h3>
        <label>
          To
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value as 'user' | 'team')}>
            <option value="user">A person (by email)</option>
            <option value="team" disabled={teams.length === 0}>
              A team{teams.length === 0 ? ' (you have none)' : ''}
            </option>
          </select>
        </label>
        {kind === 'user' ? (
          <label>
            Email
            <input type="email" name="grant-email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
        ) : (
          <label>
            Team
            <select value={team} onChange={(e) => setTeamId(e.currentTarget.value)}>
              {teams.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {ACCESS_ROLES.map((r) => (
              <option key={r} value={r}>
                {ROLE_TEXT[r]}
              </option>
            ))}
          </select>
        </label>
        <div>
          <button type="submit" class="primary">
            Give
          </button>
        </div>
      </form>
      {message && (
        <p class={`notice ${message.ok ? 'ok' : 'error'}`} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
    </div>
  );
}

/**
 * A signed team grant whose team changed since: the machine still follows the members the owner's
 * device signed (those who joined are refused there, those who left are still served) until an owner
 * signs it again. `onSign` is for owners; without it the state is shown alone.
 */
export function TeamChanged({ resign, who, onSign }: { resign: GrantResign; who: string; onSign?: () => void }) {
  const names = (people: GrantResign['joined']) => people.map((p) => p.name ?? p.userId).join(', ');
  return (
    <div class="team-changed notice" role="status" data-testid="team-changed">
      <span class="grow">
        Team changed: {resign.joined.length} joined, {resign.left.length} left — sign again
        {resign.joined.length > 0 && <span class="muted small">Joined, not yet served by the machine: {names(resign.joined)}</span>}
        {resign.left.length > 0 && <span class="muted small">Left, still served by the machine: {names(resign.left)}</span>}
      </span>
      {onSign && (
        <button type="button" class="primary" aria-label={`Sign again for ${who}`} onClick={onSign}>
          Sign again
        </button>
      )}
    </div>
  );
}

/**
 * For those who are not owners here: a team grant of theirs that waits for an owner to sign it again
 * (the relay counts them in, the machine does not yet). Shown, never signed, from here.
 */
function TeamsWaiting({ hostId }: { hostId: string }) {
  const [stale, setStale] = useState<Grant[]>([]);
  useEffect(() => {
    let live = true;
    api.myGrants(hostId).then(
      (grants) => {
        if (live) setStale(grants.filter((g) => g.resign));
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [hostId]);
  if (stale.length === 0) return null;
  return (
    <div class="card">
      <h2>Waiting for an owner</h2>
      <p class="muted small">An owner of this host signs a team's grant again when the team changes; until then the machine follows the team as it was.</p>
      <ul class="list table-list">
        {stale.map((grant) => {
          const who = grant.subject.name ?? grant.subject.id;
          return (
            <li key={grant.id}>
              <span class="grow">
                {who} <span class="muted small">team · {grant.role}</span>
              </span>
              <TeamChanged resign={grant.resign!} who={who} />
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function Audit({ hostId }: { hostId: string }) {
  const [page, setPage] = useState<AuditPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <details
      class="card"
      onToggle={(e) => {
        if ((e.currentTarget as HTMLDetailsElement).open && !page) api.audit(hostId, { limit: 50 }).then(setPage, (f: unknown) => setError(errorText(f)));
      }}
    >
      <summary>Audit log</summary>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      {page && page.entries.length === 0 && <p class="muted small">Nothing recorded yet.</p>}
      <ul class="list table-list audit">
        {page?.entries.map((entry) => (
          <li key={entry.id}>
            <span class="grow">
              <strong>{entry.action}</strong>
              {entry.chatId ? ` · ${entry.chatId}` : ''} <span class="muted">{entry.detail ? JSON.stringify(entry.detail) : ''}</span>
            </span>
            <span class="muted small">
              {when(entry.at)}
              {entry.actor ? ` · ${entry.actor}` : ''}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}
