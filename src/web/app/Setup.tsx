// The relay's first owner (/setup#secret=…[&pair=<code>]): the link `npm start` and `npm run deploy`
// print. The secret rides in the fragment, which no server log sees, and leaves the address bar at
// once. Making the account signs this browser in as the owner; with a host's pairing code in the
// link, the next step is approving that host (its approval signed by this browser's device key).
import { useEffect, useState } from 'preact/hooks';
import { errorText } from './errors.ts';
import { navigate } from './router.ts';
import { api, markSignedIn, signedIn } from './session.ts';

/** A host's pairing code as `tether host pair` shows it; anything else in the link is dropped. */
const PAIR_CODE = /^[2-9A-Z]{4}-[2-9A-Z]{4}$/;

/** What the link carried, read once when the page opens (and taken out of the address). */
function readLink(): { secret: string; pair: string | null } {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (location.hash) history.replaceState(null, '', location.pathname);
  const pair = fragment.get('pair');
  return { secret: fragment.get('secret') ?? '', pair: pair && PAIR_CODE.test(pair) ? pair : null };
}

export function SetupPage() {
  const [link] = useState(readLink);
  const [claimed, setClaimed] = useState<boolean | null>(null);
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.ownerClaimed().then(setClaimed, (f: unknown) => setError(errorText(f)));
  }, []);

  const next = link.pair ? `/pair?code=${encodeURIComponent(link.pair)}` : '/';
  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.claimOwner({ secret: link.secret, name: name.trim(), email: email.trim(), password });
      markSignedIn();
      navigate(next, { replace: true });
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  return (
    <section class="page stack sign-in" aria-labelledby="setup-title">
      <h1 id="setup-title">Create the owner account</h1>
      {claimed === null && !error && (
        <p class="loading" aria-busy="true">
          Asking the relay…
        </p>
      )}
      {claimed === true && (
        <div class="card stack">
          <p>This relay has its owner already; the setup link works only once.</p>
          {signedIn.value ? (
            <a class="button primary" href={next}>
              {link.pair ? 'Approve the host' : 'Open your chats'}
            </a>
          ) : (
            <a class="button primary" href="/">
              Sign in
            </a>
          )}
        </div>
      )}
      {claimed === false && !link.secret && (
        <p class="notice error" role="alert">
          This link has no setup secret: open the link <code>npm start</code> (or <code>npm run deploy</code>) printed.
        </p>
      )}
      {claimed === false && link.secret && (
        <form
          class="card stack"
          onSubmit={(e) => {
            e.preventDefault();
            void create();
          }}
        >
          <p class="small">
            This relay has no owner yet. The owner manages its people and pairs hosts
            {link.pair ? (
              <>
                ; next you approve the host waiting with code <strong>{link.pair}</strong>
              </>
            ) : null}
            .
          </p>
          <label>
            Your name
            <input name="name" required maxLength={100} autoComplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Email
            <input type="email" name="email" required autoComplete="username" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <label>
            Password (at least 10 characters)
            <input
              type="password"
              name="new-password"
              required
              minLength={10}
              autoComplete="new-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" class="primary" disabled={busy}>
            {link.pair ? 'Create and approve the host' : 'Create and sign in'}
          </button>
        </form>
      )}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
