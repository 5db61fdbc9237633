// A device's own key pair and what it signs with it, with no schema: the service worker (sw.js) and
// the web app's key store import this and the zod-free signing half of the contracts
// (src/contracts/signing-core.ts) only, so neither brings zod in. device-key.ts re-exports it with the
// parts that need the request registry (requestSigner, settledAmong).
import { DEVICE_KEY_ALGORITHM, deviceIdOf, requestStatement, signStatement, type SignableRequest } from '../contracts/signing-core.ts';
import type { DeviceId, DevicePublicKey, DeviceStatement, Digest, PairingStatement, RequestSignature, Signed } from '../contracts/signing.ts';
import type { HostPublicKey } from '../contracts/keys.ts';

export interface DeviceKey {
  /** The public key's RFC 7638 thumbprint. */
  readonly id: DeviceId;
  readonly publicKey: DevicePublicKey;
  /** ms since the epoch. */
  readonly created: number;
  /** Signs only; non-extractable where the store allows (browsers). */
  readonly privateKey: CryptoKey;
}

/** A fresh Ed25519 key pair. `extractable` only where the private key must be written out (a file). */
export async function newDeviceKeyPair(extractable: boolean): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(DEVICE_KEY_ALGORITHM, extractable, ['sign', 'verify']) as Promise<CryptoKeyPair>;
}

/** The public JWK of a key pair, reduced to what a device record holds. */
export async function publicJwkOf(publicKey: CryptoKey): Promise<DevicePublicKey> {
  const jwk = (await crypto.subtle.exportKey('jwk', publicKey)) as JsonWebKey;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('Not an Ed25519 public key');
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
}

export async function deviceKeyOf(pair: CryptoKeyPair, created: number): Promise<DeviceKey> {
  const publicKey = await publicJwkOf(pair.publicKey);
  return { id: await deviceIdOf(publicKey), publicKey, created, privateKey: pair.privateKey };
}

/** The signature that travels beside `frame` to `hostId`. `settles`: for an approval or answer, settledRequestDigest of what was shown. */
export async function signRequest(
  key: DeviceKey,
  frame: SignableRequest,
  context: { hostId: string; settles?: Digest; now?: number },
): Promise<RequestSignature> {
  const statement = await requestStatement(frame, { hostId: context.hostId, device: key.id, at: context.now ?? Date.now(), settles: context.settles });
  return signStatement(key.privateKey, statement);
}

/** Cross-signing: this device vouches that `device` is another device of the same person. */
export async function vouchFor(
  key: DeviceKey,
  userId: string,
  device: { id: DeviceId; publicKey: DevicePublicKey; name: string },
  now = Date.now(),
): Promise<Signed<DeviceStatement>> {
  return signStatement(key.privateKey, { kind: 'tether.device/1', userId, device, at: now, by: key.id });
}

/** The approval of a host's pairing, signed by this device: the host pins this person and device as its owner. */
export async function signPairingApproval(
  key: DeviceKey,
  pairing: { hostKey: HostPublicKey; userCode: string; userId: string; userName: string },
  now = Date.now(),
): Promise<Signed<PairingStatement>> {
  return signStatement(key.privateKey, {
    kind: 'tether.pairing/1',
    hostKey: { kty: pairing.hostKey.kty, crv: pairing.hostKey.crv, x: pairing.hostKey.x },
    userCode: pairing.userCode,
    userId: pairing.userId,
    userName: pairing.userName,
    at: now,
    device: key.id,
    deviceKey: key.publicKey,
  });
}
