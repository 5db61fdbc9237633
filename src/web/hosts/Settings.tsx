// Settings: who is signed in and signing out, the sessions of this account (revoke any), this
// person's device keys (this browser's registered on first view; name or revoke any), push
// notifications for this browser with what became of recent pushes, installing the app, and for the
// relay's owner its health and counters (RelayPanel.tsx).
import { useEffect, useState } from 'preact/hooks';
import { recoveryCodeOf, shortFingerprint, type DeviceRecord, type PushDelivery } from '../../contracts/index.ts';
import { revokeDeviceSigned, subscribeToPush, unsubscribeFromPush, type PushManagerLike, type SessionSummary } from '../../client/index.ts';
import { vouchFor, type DeviceKey } from '../../client/device-key.ts';
import { deviceLabel as deviceOf } from '../app/device-key.ts';
import { errorText } from '../app/errors.ts';
import { install, installPrompt, installed } from '../app/install.ts';
import { api, deviceRevoked, loadMe, me, thisDevice } from '../app/session.ts';
import { NOTIFICATION_NOTICE, type NotificationNotice } from '../sw/push.ts';
import { RelayPanel } from './RelayPanel.tsx';
import { ago, when } from './time.ts';
import './hosts.css';

export function SettingsPage() {
  useEffect(() => {
    void loadMe().catch(() => undefined);
  }, []);
  return (
    <section class="page stack" aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <div class="card stack">
        <h2>Account</h2>
        {me.value && (
          <p>
            {me.value.name} <span class="muted">{me.value.email ?? ''}</span>
            {me.value.isOwner ? <span class="badge">relay owner</span> : null}
          </p>
        )}
        <div>
          <button type="button" onClick={() => void api.signOut()}>
            Sign out
          </button>
        </div>
      </div>
      <Sessions />
      <Devices />
      <Push />
      <Install />
      {me.value?.isOwner && <RelayPanel />}
    </section>
  );
}

function Sessions() {
  const [sessions, setSessions] = useState<SessionSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = () => api.sessions().then(setSessions, (f: unknown) => setError(errorText(f)));
  useEffect(() => {
    void reload();
  }, []);
  return (
    <div class="card">
      <h2 id="sessions-title">Signed-in sessions</h2>
      {!sessions && !error && <p class="loading">Loading…</p>}
      <ul class="list table-list" aria-labelledby="sessions-title">
        {sessions?.map((session) => {
          const what = `${deviceOf(session.userAgent)} (${session.method})`;
          return (
            <li key={session.id} data-session={session.id} data-current={session.current ? 'true' : 'false'}>
              <span class="grow">
                {what} {session.current && <span class="badge">this device</span>}
                <br />
                <span class="muted small">
                  signed in {when(session.createdAt)} · last used {ago(session.lastUsedAt)}
                  {session.ip ? ` · ${session.ip}` : ''}
                </span>
              </span>
              {session.current ? (
                <button type="button" onClick={() => void api.signOut()}>
                  Sign out
                </button>
              ) : (
                <button
                  type="button"
                  class="danger"
                  aria-label={`Revoke the session on ${what}, signed in ${when(session.createdAt)}`}
                  onClick={async () => {
                    try {
                      await api.revokeSession(session.id);
                      await reload();
                    } catch (failure) {
                      setError(errorText(failure));
                    }
                  }}
                >
                  Revoke
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * A device's standing among the person's devices: the first one stands on its own (a host pins it at
 * pairing), a later one counts once another of the person's devices vouched for it (cross-signing);
 * until then it waits, and the machines that follow signatures refuse what it signs.
 */
function standing(device: DeviceRecord, devices: DeviceRecord[]): 'revoked' | 'first' | 'vouched' | 'waiting' {
  if (device.revoked !== null) return 'revoked';
  if (device.vouchedBy !== null) return 'vouched';
  return devices[0]?.id === device.id ? 'first' : 'waiting';
}

function Devices() {
  const [devices, setDevices] = useState<DeviceRecord[] | null>(null);
  const [key, setKey] = useState<DeviceKey | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const reload = () => api.devices().then(setDevices, (f: unknown) => setError(errorText(f)));
  useEffect(() => {
    // This browser's key is made (non-extractable, in IndexedDB) and registered once per session (session.ts).
    void (async () => {
      const held = await thisDevice();
      if (held) setKey(held);
      else setError('This browser cannot keep a device key (no Ed25519 or no IndexedDB here), so what it asks a machine to do goes unsigned.');
      await reload();
    })();
  }, []);
  const act = async (work: () => Promise<void>, done?: string) => {
    setError(null);
    setNotice(null);
    try {
      await work();
      if (done) setNotice(done);
      await reload();
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  const mine = key?.id ?? null;
  const nameOf = (id: string) => devices?.find((d) => d.id === id)?.name ?? shortFingerprint(id);
  const self = devices?.find((d) => d.id === mine);
  // This device may vouch for another only while it counts itself.
  const canVouch = key !== null && self !== undefined && devices !== null && ['first', 'vouched'].includes(standing(self, devices));
  return (
    <div class="card stack">
      <h2 id="devices-title">Devices</h2>
      <p class="muted small">
        Each browser or program you use has its own key; a machine checks that what it is asked to do was signed by one of them. A new device waits until one of
        your other devices vouches for it. Revoke a device you no longer have.
      </p>
      {!devices && !error && <p class="loading">Loading…</p>}
      {self && devices && standing(self, devices) === 'waiting' && (
        <p class="notice" role="status" data-testid="device-waiting">
          This browser waits for a vouch: open Settings on another of your devices and vouch for <strong>{self.name}</strong> (
          <code>{shortFingerprint(self.id)}</code>). Until then machines refuse what it signs.
        </p>
      )}
      <ul class="list table-list" aria-labelledby="devices-title">
        {devices?.map((device) => {
          const state = standing(device, devices);
          return (
            <li key={device.id} data-device={device.id} data-revoked={device.revoked === null ? 'false' : 'true'} data-standing={state}>
              <form
                class="grow"
                onSubmit={(e) => {
                  e.preventDefault();
                  const name = new FormData(e.currentTarget).get('name');
                  if (typeof name === 'string') void act(() => api.renameDevice(device.id, name));
                }}
              >
                <label class="small" for={`device-name-${device.id}`}>
                  Name
                </label>{' '}
                <input id={`device-name-${device.id}`} name="name" defaultValue={device.name} maxLength={100} required disabled={device.revoked !== null} />{' '}
                {device.revoked === null && <button type="submit">Save name</button>}
                {device.id === mine && <span class="badge">this device</span>}
                {state === 'waiting' && <span class="badge">waiting for a vouch</span>}
                <br />
                <span class="muted small">
                  <code>{shortFingerprint(device.id)}</code> · added {when(device.created)}
                  {state === 'first' ? ' · your first device' : ''}
                  {device.vouchedBy ? ` · vouched for by ${nameOf(device.vouchedBy)}` : ''}
                  {device.revoked !== null ? ` · revoked ${ago(device.revoked)}` : ''}
                </span>
              </form>
              {state === 'waiting' && canVouch && device.id !== mine && (
                <button
                  type="button"
                  class="primary"
                  aria-label={`Vouch for the device ${device.name}`}
                  onClick={() =>
                    void act(async () => {
                      // Signed over the key and name as listed: compare the fingerprint with the one the new device shows.
                      const who = me.value ?? (await loadMe());
                      await api.vouchDevice(device.id, await vouchFor(key!, who.id, { id: device.id, publicKey: device.publicKey, name: device.name }));
                    }, `${device.name} is now vouched for by this device.`)
                  }
                >
                  Vouch for it
                </button>
              )}
              {device.revoked === null && (
                <button
                  type="button"
                  class="danger"
                  aria-label={`Revoke the device ${device.name}`}
                  onClick={() =>
                    void act(async () => {
                      // Signed by this device, so the machines that follow signatures refuse the revoked one too.
                      if (key) await revokeDeviceSigned(api, key, device.id);
                      else await api.revokeDevice(device.id);
                      // This browser's own key: it never signs again; a new one is made and registered on the next load.
                      if (device.id === mine) deviceRevoked();
                    })
                  }
                >
                  Revoke
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {mine && (
        <div class="stack" data-testid="recovery">
          <h3 class="small" id="recovery-title">
            Recovery on a machine
          </h3>
          <p class="muted small">
            If a machine no longer trusts any device of yours (you lost the one that paired it), run this on the machine itself to trust this device:
          </p>
          <p>
            <code class="recovery-code" aria-labelledby="recovery-title">
              tether host trust {recoveryCodeOf(mine)}
            </code>
          </p>
        </div>
      )}
      {notice && (
        <p class="notice ok" role="status">
          {notice}
        </p>
      )}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

const KIND: Record<PushDelivery['kind'], string> = {
  'needs-you': 'Needs you',
  answered: 'Answered',
  'turn-ended': 'Turn ended',
  'team-changed': 'Team changed: sign again',
};

const pushSupported = () => 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

async function pushManager(): Promise<PushManagerLike> {
  return (await navigator.serviceWorker.ready).pushManager as unknown as PushManagerLike;
}

function Push() {
  const [on, setOn] = useState<boolean | null>(null);
  const [deliveries, setDeliveries] = useState<PushDelivery[] | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const reload = async () => {
    const [subscriptions, list] = await Promise.all([api.pushSubscriptions(), api.pushDeliveries(20)]);
    setDeliveries(list);
    const mine = pushSupported() ? await (await pushManager()).getSubscription() : null;
    setOn(Boolean(mine && subscriptions.some((s) => s.endpoint === mine.endpoint)));
  };
  useEffect(() => {
    reload().catch((f: unknown) => setMessage({ ok: false, text: errorText(f) }));
  }, []);
  // What this browser's service worker did with the last push while this page was open: the relay can
  // say a push was sent, only the browser can say it showed it (or why it would not).
  const [lastShown, setLastShown] = useState<(NotificationNotice & { at: number }) | null>(null);
  useEffect(() => {
    if (!('serviceWorker' in navigator)) return;
    const heard = (event: MessageEvent) => {
      const data = event.data as Partial<NotificationNotice> | null;
      if (data?.type === NOTIFICATION_NOTICE && typeof data.shown === 'boolean') setLastShown({ ...(data as NotificationNotice), at: Date.now() });
    };
    navigator.serviceWorker.addEventListener('message', heard);
    return () => navigator.serviceWorker.removeEventListener('message', heard);
  }, []);

  const toggle = async () => {
    setBusy(true);
    setMessage(null);
    try {
      if (on) {
        await unsubscribeFromPush(api, await pushManager());
        setMessage({ ok: true, text: 'Notifications are off for this browser.' });
      } else {
        const made = await subscribeToPush(api, await pushManager());
        setMessage(
          made
            ? { ok: true, text: 'Notifications are on for this browser.' }
            : { ok: false, text: 'This relay sends no push notifications (it has no VAPID keys).' },
        );
      }
      await reload();
    } catch (failure) {
      const denied = 'Notification' in window && Notification.permission === 'denied';
      setMessage({ ok: false, text: denied ? 'Notifications are blocked for this site in the browser settings.' : errorText(failure) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="card stack">
      <h2 id="push-title">Notifications</h2>
      <p class="muted small">A notification when a chat needs you (approve or deny right from it) and when a turn ends.</p>
      {pushSupported() ? (
        <div>
          <button type="button" class={on ? '' : 'primary'} disabled={busy || on === null} onClick={() => void toggle()}>
            {on ? 'Turn off notifications' : 'Turn on notifications'}
          </button>
        </div>
      ) : (
        <p class="notice">This browser has no push notifications{/iPhone|iPad/.test(navigator.userAgent) ? ': add Tether to your Home Screen first' : ''}.</p>
      )}
      {message && (
        <p class={`notice ${message.ok ? 'ok' : 'error'}`} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      {lastShown &&
        (lastShown.shown ? (
          <p class="muted small" data-testid="last-shown">
            This browser showed a notification at {new Date(lastShown.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}: {lastShown.body}
          </p>
        ) : (
          <p class="notice error" role="alert" data-testid="last-shown">
            This browser could not show a notification at {new Date(lastShown.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}:{' '}
            {lastShown.error}
          </p>
        ))}
      <h3 class="small" id="deliveries-title">
        Recent notifications
      </h3>
      {deliveries?.length === 0 && <p class="muted small">None sent yet.</p>}
      <ul class="list table-list" aria-labelledby="deliveries-title">
        {deliveries?.map((d) => (
          <li key={d.id}>
            <a
              class="grow"
              href={
                d.sessionId !== null
                  ? `/hosts/${encodeURIComponent(d.hostId)}/sessions/${encodeURIComponent(d.sessionId)}`
                  : d.chatId === ''
                    ? `/hosts/${encodeURIComponent(d.hostId)}`
                    : `/hosts/${encodeURIComponent(d.hostId)}/chats/${encodeURIComponent(d.chatId)}`
              }
            >
              {KIND[d.kind]}
            </a>
            <span class="muted small">
              {ago(d.at)} ·{' '}
              {d.removed
                ? 'subscription gone'
                : d.error
                  ? `failed: ${d.error}`
                  : d.status === null
                    ? 'no answer'
                    : d.status < 300
                      ? d.buzz
                        ? 'sent'
                        : 'sent silently'
                      : `refused (${d.status})`}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Install() {
  return (
    <div class="card stack">
      <h2>App</h2>
      {installed.value ? (
        <p class="small">Tether runs as an installed app here.</p>
      ) : installPrompt.value ? (
        <div>
          <button type="button" onClick={() => void install()}>
            Install Tether
          </button>
        </div>
      ) : (
        <p class="muted small">Install Tether from your browser's menu ("Install app" or "Add to Home Screen") to open it like an app, with notifications.</p>
      )}
    </div>
  );
}
