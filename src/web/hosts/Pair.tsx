// Approving a host's pairing code: `tether host pair` shows a code and this page's address
// (/pair?code=…). Approving makes the machine a host of the signed-in person; denying ends its request.
// The approval is signed by this browser's device key (registered first), over the host key the relay
// holds for the code; the machine checks it and pins this person and device as its owner, and its
// terminal shows the device's short fingerprint (the one Settings → Devices shows).
import { useState } from 'preact/hooks';
import { UserCodeSchema, type PairedHost, type PairingStatement, type Signed } from '../../contracts/index.ts';
import { signPairingApproval } from '../../client/device-key.ts';
import { errorText } from '../app/errors.ts';
import { api, loadMe, thisDevice } from '../app/session.ts';
import { hostsChanged } from './host-list.ts';
import './hosts.css';

/** This device's signed approval of the pairing with `userCode`; undefined where the browser has no Ed25519 (the host then pins no owner). */
async function signedApproval(typed: string): Promise<Signed<PairingStatement> | undefined> {
  // Signed as the relay and the terminal write the code (ABCD-EFGH), whatever was typed.
  const code = UserCodeSchema.safeParse(typed);
  if (!code.success) return undefined;
  const userCode = code.data;
  // Loaded and registered once per session (session.ts); null where the browser has no Ed25519.
  const key = await thisDevice();
  if (!key) return undefined;
  const [pending, me] = await Promise.all([api.lookupPairing(userCode), loadMe()]);
  return signPairingApproval(key, { hostKey: pending.publicKey, userCode, userId: me.id, userName: me.name });
}

export function PairPage({ query }: { query: URLSearchParams }) {
  const [code, setCode] = useState(query.get('code') ?? '');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<{ paired: PairedHost } | { denied: string } | null>(null);

  const act = async (approve: boolean) => {
    setBusy(true);
    setError(null);
    try {
      if (approve) {
        const paired = await api.approvePairing(code.trim(), name.trim() || undefined, await signedApproval(code.trim()));
        setDone({ paired });
        void hostsChanged();
      } else {
        await api.denyPairing(code.trim());
        setDone({ denied: code.trim() });
      }
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  if (done) {
    return (
      <section class="page" aria-labelledby="pair-title">
        <h1 id="pair-title">{'paired' in done ? 'Host paired' : 'Pairing denied'}</h1>
        {'paired' in done ? (
          <p class="notice ok" role="status">
            <strong>{done.paired.name}</strong> is now your host. It connects in a moment.{' '}
            <a href={`/hosts/${encodeURIComponent(done.paired.hostId)}`}>Open it</a> or{' '}
            <a href={`/chats/new?host=${encodeURIComponent(done.paired.hostId)}`}>start a chat on it</a>.
          </p>
        ) : (
          <p class="notice" role="status">
            The request with code <code>{done.denied}</code> was refused; the machine is told so.
          </p>
        )}
        <p>
          <a href="/hosts">Back to hosts</a>
        </p>
      </section>
    );
  }

  return (
    <section class="page" aria-labelledby="pair-title">
      <h1 id="pair-title">Approve a host</h1>
      <p class="muted">Approve only a code shown by a machine you control: it will run agents for you.</p>
      <form
        class="card stack"
        onSubmit={(e) => {
          e.preventDefault();
          void act(true);
        }}
      >
        <label>
          Code shown by the host
          <input
            class="pair-code"
            name="code"
            required
            autoComplete="off"
            autoCapitalize="characters"
            spellcheck={false}
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
        </label>
        <label>
          Name (optional; the machine's own name otherwise)
          <input name="name" autoComplete="off" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <div class="row">
          <button type="submit" class="primary" disabled={busy || !code.trim()}>
            Approve
          </button>
          <button type="button" class="danger" disabled={busy || !code.trim()} onClick={() => void act(false)}>
            Deny
          </button>
        </div>
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
      </form>
    </section>
  );
}
