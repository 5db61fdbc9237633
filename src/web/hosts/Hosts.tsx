// The hosts this person reaches, with live presence, and the way to pair a new one: the machine runs
// `tether host pair <relay>` and shows a code (or a link to /pair?code=…), which is approved here.
import { useEffect, useState } from 'preact/hooks';
import { navigate } from '../app/router.ts';
import { hosts, hostsError, isOnline, loadHosts } from './host-list.ts';
import { ago } from './time.ts';
import './hosts.css';

export function HostsPage() {
  useEffect(() => {
    void loadHosts(true);
  }, []);
  const [code, setCode] = useState('');
  return (
    <section class="page" aria-labelledby="hosts-title">
      <h1 id="hosts-title">Hosts</h1>
      {hostsError.value && (
        <p class="notice error" role="alert">
          {hostsError.value}
        </p>
      )}
      {!hosts.value && !hostsError.value && (
        <p class="loading" aria-busy="true">
          Loading hosts…
        </p>
      )}
      {hosts.value?.length === 0 && <p class="muted">No hosts yet: pair your first machine below.</p>}
      <ul class="list" aria-label="Hosts">
        {hosts.value?.map((host) => {
          const online = isOnline(host);
          return (
            <li key={host.id}>
              <a class="host-row card" href={`/hosts/${encodeURIComponent(host.id)}`} data-online={online ? 'true' : 'false'}>
                <span class={`dot${online ? ' online' : ''}`} aria-hidden="true" />
                <span class="grow">
                  <span class="host-name">{host.name}</span>
                  <span class="muted small">
                    {online ? 'Online' : host.lastSeenAt ? `Offline, seen ${ago(host.lastSeenAt)}` : 'Offline'}
                    {host.role ? ` · ${host.role}` : ' · some chats'}
                    {host.version ? ` · ${host.version}` : ''}
                  </span>
                </span>
                {host.teamGrantsToSign && (
                  <span
                    class="badge attention"
                    title="A team changed since you signed its grant: the machine still serves who left and not who joined. Open the host to sign again."
                  >
                    {host.teamGrantsToSign === 1 ? 'Team changed: sign again' : `${host.teamGrantsToSign} teams changed: sign again`}
                  </span>
                )}
              </a>
            </li>
          );
        })}
      </ul>
      <h2 id="pair-title">Pair a host</h2>
      <form
        class="card stack"
        aria-labelledby="pair-title"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(`/pair?code=${encodeURIComponent(code.trim())}`);
        }}
      >
        <p class="muted small">
          On the machine, install the host (<code>npm install -g tether-host-&lt;version&gt;.tgz</code>, the package <code>npm run build:host</code> makes; no
          other dependencies), then run <code>tether host pair {location.origin}</code>; it shows a code like <code>ABCD-EFGH</code>. In a clone of this
          repository: <code>node_modules/.bin/node bin/tether.js host pair {location.origin}</code>.
        </p>
        <label>
          Code shown by the host
          <input
            name="code"
            required
            autoComplete="off"
            autoCapitalize="characters"
            spellcheck={false}
            placeholder="ABCD-EFGH"
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary">
          Continue
        </button>
      </form>
    </section>
  );
}
