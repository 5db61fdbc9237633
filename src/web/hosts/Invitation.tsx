// An invitation link (/invitations/:token): what it is for, then accept. Signed in, accepting joins
// the team; signed out, a link made for an email makes that account here (name and password) and
// signs in; otherwise the person signs in first.
import { useEffect, useState } from 'preact/hooks';
import type { InvitationView } from '../../client/index.ts';
import { errorText } from '../app/errors.ts';
import { navigate } from '../app/router.ts';
import { SignIn } from '../app/SignIn.tsx';
import { api, markSignedIn, signedIn } from '../app/session.ts';
import './hosts.css';

export function InvitationPage({ token }: { token: string }) {
  const [view, setView] = useState<InvitationView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [haveAccount, setHaveAccount] = useState(false);
  useEffect(() => {
    api.invitation(token).then(setView, (f: unknown) => setError(errorText(f)));
  }, [token]);

  const accept = async (account?: { email: string; password: string; name: string }) => {
    setBusy(true);
    setError(null);
    try {
      const joined = await api.acceptInvitation(token, account);
      markSignedIn();
      navigate(joined.teamId ? `/teams/${encodeURIComponent(joined.teamId)}` : '/', { replace: true });
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  const what = view ? (
    <>
      Join <strong>{view.teamName ?? 'this relay'}</strong> as <strong>{view.role}</strong>
      {view.email ? <> (for {view.email})</> : null}.
    </>
  ) : null;
  return (
    <section class="page stack sign-in" aria-labelledby="invitation-title">
      <h1 id="invitation-title">Invitation</h1>
      {!view && !error && (
        <p class="loading" aria-busy="true">
          Reading the invitation…
        </p>
      )}
      {view && (
        <p>
          {what} <span class="muted small">Valid until {new Date(view.expiresAt).toLocaleDateString()}.</span>
        </p>
      )}
      {view && signedIn.value && (
        <div>
          <button type="button" class="primary" disabled={busy} onClick={() => void accept()}>
            Accept and join
          </button>
        </div>
      )}
      {view && !signedIn.value && view.email && !haveAccount && (
        <form
          class="card stack"
          onSubmit={(e) => {
            e.preventDefault();
            void accept({ email: view.email!, password, name: name.trim() });
          }}
        >
          <p class="small">Make your account on this relay:</p>
          <label>
            Email
            <input type="email" value={view.email} readOnly autoComplete="username" />
          </label>
          <label>
            Your name
            <input name="name" required maxLength={100} autoComplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Password
            <input
              type="password"
              name="new-password"
              required
              minLength={12}
              autoComplete="new-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" class="primary" disabled={busy}>
            Create account and join
          </button>
          <button type="button" class="link" onClick={() => setHaveAccount(true)}>
            I already have an account
          </button>
        </form>
      )}
      {view && !signedIn.value && (!view.email || haveAccount) && (
        <>
          <p class="small">Sign in, then accept.</p>
          <SignIn embedded />
        </>
      )}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
