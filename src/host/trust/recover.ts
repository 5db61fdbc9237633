// Recovery on the machine: `tether host trust <code>` trusts a new device of this host's owner by the
// code the app shows for it (src/contracts/trust.ts recoveryCodeOf: the first 96 bits of the device
// key's thumbprint). The host asks its relay for the owner's device with that code, signing the ask
// with its own key, and takes the answer only when the key's own thumbprint starts with the code the
// person typed: the relay tells the host nothing it could not check but whose key it is, and it
// cannot find another key for those 96 bits. The device then counts for the pinned owner as the
// pinned device does (book.ts addRecovered), from the store (store.ts) the running host follows,
// and the host audit says who trusted what on the machine.
import { RecoveryLookupResultSchema, deviceIdOf, recoveryPrefixOf, shortFingerprint, type DeviceId } from '../../contracts/index.ts';
import { hostTokenSigner, type HostIdentity } from '../identity.ts';
import { relayBase } from '../pairing.ts';
import { HostAudit } from './audit.ts';
import type { RecoveredDevice } from './book.ts';
import { readPinnedOwner } from './pinned.ts';
import { appendTrust, readTrustFrom } from './store.ts';

export interface Recovered {
  recovered: RecoveredDevice;
  /** False when this machine trusted that device already (nothing written). */
  added: boolean;
}

/** Looks the code up, checks the key against it, and records it. Throws with a person's message. */
export async function recoverByCode(options: {
  dataDir: string;
  identity: HostIdentity;
  code: string;
  relayUrl?: string;
  fetch?: typeof fetch;
  now?: number;
}): Promise<Recovered> {
  const pinned = readPinnedOwner(options.dataDir);
  if (!pinned) throw new Error('This host pinned no owner (trust.json): there is no one to recover a device for. Pair it from a device that signs.');
  if (pinned.hostId !== options.identity.hostId)
    throw new Error(`trust.json pins an owner for host ${pinned.hostId}, not this host (${options.identity.hostId})`);
  const prefix = recoveryPrefixOf(options.code);
  if (!prefix) throw new Error('A recovery code is the 16 characters the app shows for the device, as four groups of four (abcd-efgh-ijkl-mnop)');

  const base = relayBase(options.relayUrl ?? options.identity.relayUrl);
  const token = await hostTokenSigner(options.identity)();
  const url = `${base}/v1/recovery/${encodeURIComponent(options.identity.hostId)}/${encodeURIComponent(options.code.trim())}`;
  const res = await (options.fetch ?? fetch)(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json().catch(() => null)) as { code?: unknown; message?: unknown } | null;
  if (!res.ok) throw new Error(`The relay found no device for that code: ${typeof body?.message === 'string' ? body.message : res.status}`);
  const found = RecoveryLookupResultSchema.safeParse(body);
  if (!found.success) throw new Error('The relay answered something that is not a device');
  const { device, userId, userName } = found.data;

  // What the relay cannot fake: the key must be the one the code names.
  const id: DeviceId = await deviceIdOf(device.publicKey);
  if (id !== device.id || !id.startsWith(prefix)) {
    throw new Error('The key the relay answered does not match the code: refused (the relay may be trying to substitute a key)');
  }
  if (userId !== pinned.owner.userId) throw new Error(`The relay says that device is ${userId}'s; this host's owner is ${pinned.owner.userId}`);

  const recovered: RecoveredDevice = {
    userId,
    name: userName || pinned.owner.name,
    device: { id, publicKey: { kty: device.publicKey.kty, crv: device.publicKey.crv, x: device.publicKey.x } },
    at: options.now ?? Date.now(),
  };
  const already = readTrustFrom(options.dataDir).entries.some((e) => 'recovered' in e && e.recovered.device.id === id);
  if (already) return { recovered, added: false };
  appendTrust(options.dataDir, { recovered });
  const audit = HostAudit.open(options.dataDir);
  try {
    audit.record({
      at: recovered.at,
      type: 'trust.recover',
      id,
      chatId: null,
      outcome: 'done',
      message: `Trusted on this machine by its code ${shortFingerprint(id)} as a device of the owner ${userId}`,
      userId,
      device: id,
      signedAt: null,
      payload: null,
      relaySays: null,
    });
  } finally {
    audit.close();
  }
  return { recovered, added: true };
}

/** What the terminal says, so the person can compare the fingerprint with the app. */
export function recoveredLines(result: Recovered): string[] {
  const { recovered } = result;
  const plain = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?').slice(0, 100);
  const who = `${plain(recovered.name)} (${plain(recovered.userId)})`;
  if (!result.added) return [`This machine trusts that device of ${who} already (fingerprint ${shortFingerprint(recovered.device.id)}).`];
  return [
    `Trusted a new device of ${who}, the owner of this host.`,
    `  device ${recovered.device.id}`,
    `  fingerprint ${shortFingerprint(recovered.device.id)}: it matches the code you typed; the app shows it in Settings → Devices.`,
    'Recorded in the host audit (tether host audit). A running host uses it at once.',
  ];
}
