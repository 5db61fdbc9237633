// Signing in: a password form, plus Cloudflare Access and single sign-on (OIDC) where this relay has
// them. The relay's first owner is made on the app's /setup page (Setup.tsx; it needs the setup secret).
// An OIDC sign-in leaves the app and comes back with `#login=<code>` (or `#login-error=`). The tab
// that starts it keeps a secret (sessionStorage) whose challenge went with the start: only that tab
// can trade the code, so a link carrying someone else's `#login=` signs nobody in. And an app where
// someone is signed in never trades one at all: it says who is signed in instead of swapping people.
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { oidcBinding, type SignInMethods } from '../../client/index.ts';
import { errorText } from './errors.ts';
import { api, loadMe, markSignedIn } from './session.ts';

const redirectError = signal<string | null>(null);
/** Shown to a signed-in person when a sign-in link arrived: nobody was swapped. */
export const refusedSwap = signal<string | null>(null);

const VERIFIER_KEY = 'tether.oidc-verifier';

/** Finishes a sign-in that came back from the identity provider in the URL's fragment. */
export async function finishRedirectSignIn(): Promise<void> {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const code = fragment.get('login');
  const failed = fragment.get('login-error');
  if (!code && !failed) return;
  history.replaceState(null, '', location.pathname + location.search); // the code is single-use: out of the URL
  const verifier = sessionStorage.getItem(VERIFIER_KEY);
  sessionStorage.removeItem(VERIFIER_KEY);
  if (api.signedIn) {
    const who = await loadMe().then(
      (m) => m.email ?? m.name,
      () => 'someone',
    );
    refusedSwap.value = `A sign-in link was opened, but ${who} is signed in here: nobody was switched. To sign in as someone else, sign out first.`;
    return;
  }
  if (failed) return void (redirectError.value = failed);
  if (!verifier) return void (redirectError.value = 'This sign-in was not started in this tab; start it again here.');
  try {
    await api.signInWithCode(code!, verifier);
    markSignedIn();
  } catch (error) {
    redirectError.value = errorText(error);
  }
}

/** Leaves for the identity provider, keeping this tab's half of the binding. */
async function startSingleSignOn(): Promise<void> {
  const { verifier, challenge } = await oidcBinding();
  sessionStorage.setItem(VERIFIER_KEY, verifier);
  location.assign(api.oidcStartUrl(location.href.split('#')[0]!, challenge));
}

/** `embedded`: inside another page (an invitation), without the app's title. */
export function SignIn({ embedded = false }: { embedded?: boolean }) {
  const [methods, setMethods] = useState<SignInMethods>({ password: true, access: false, oidc: false });
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.signInMethods().then(setMethods, () => undefined);
  }, []);

  const run = async (how: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await how();
      markSignedIn();
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  const shown = error ?? redirectError.value;

  return (
    <div class={embedded ? 'stack' : 'sign-in'}>
      {!embedded && <h1 class="sign-in-title">Tether</h1>}
      {!embedded && <p class="muted">Your coding agents, from anywhere.</p>}
      {methods.password && (
        <form
          class="card stack"
          onSubmit={(e) => {
            e.preventDefault();
            void run(() => api.signIn(email.trim(), password));
          }}
        >
          <label>
            Email
            <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <label>
            Password
            <input
              type="password"
              name="password"
              autoComplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      )}
      {(methods.access || methods.oidc) && (
        <div class="stack">
          {methods.access && (
            <button type="button" disabled={busy} onClick={() => void run(() => api.signInWithAccess())}>
              Sign in with Cloudflare Access
            </button>
          )}
          {methods.oidc && (
            <button type="button" disabled={busy} onClick={() => void startSingleSignOn()}>
              Sign in with single sign-on
            </button>
          )}
        </div>
      )}
      {shown && (
        <p class="notice error" role="alert">
          {shown}
        </p>
      )}
      {!embedded && (
        <p class="muted small">
          Setting up a new relay? Its owner is made on <a href="/setup">the setup page</a>.
        </p>
      )}
    </div>
  );
}
