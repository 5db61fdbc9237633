// A device's own key, whatever keeps it: the SDK in Node (a 0600 file, device-key-file.ts) or the web
// app (IndexedDB, non-extractable, src/web/app/device-key.ts). This module only makes keys and signs
// with them; the statements it signs are the contracts' (src/contracts/signing.ts). A request that
// acts on a machine is signed here and its signature sent beside the frame (`frame.signature`).
import {
  DEVICE_KEY_ALGORITHM, REQUEST_RULES, deviceIdOf, isRequestType, requestStatement, settledRequestDigest, signStatement,
  type ChatItem, type SettledRequest,
  type DeviceId, type DevicePublicKey, type DeviceStatement, type Digest, type HostPublicKey, type PairingStatement, type RequestSignature,
  type Signed, type SignableRequest,
} from '../contracts/index.ts';
import type { RequestSigner } from './socket.ts';

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
  const jwk = await crypto.subtle.exportKey('jwk', publicKey) as JsonWebKey;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('Not an Ed25519 public key');
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
}

export async function deviceKeyOf(pair: CryptoKeyPair, created: number): Promise<DeviceKey> {
  const publicKey = await publicJwkOf(pair.publicKey);
  return { id: await deviceIdOf(publicKey), publicKey, created, privateKey: pair.privateKey };
}

/** The signature that travels beside `frame` to `hostId`. `settles`: for an approval or answer, settledRequestDigest of what was shown. */
export async function signRequest(
  key: DeviceKey, frame: SignableRequest, context: { hostId: string; settles?: Digest; now?: number },
): Promise<RequestSignature> {
  const statement = await requestStatement(frame, { hostId: context.hostId, device: key.id, at: context.now ?? Date.now(), settles: context.settles });
  return signStatement(key.privateKey, statement);
}

/**
 * What a client's sockets sign with (RelaySocket's `signer`): every request the registry says acts on
 * the machine, signed for `hostId`; an approval or answer also names the request it settles as this
 * client shows it (`shown`, e.g. `settledAmong` over the thread). Anything else goes unsigned, and is
 * known to at once (`signs`), without touching the key.
 *
 * `key` may still be loading (a browser reads it from IndexedDB): a signed request waits for it, and
 * goes unsigned when there is none (null: this browser has no Ed25519; a host that requires signatures
 * then refuses it with signature-required, which is the truth).
 */
export function requestSigner(
  key: DeviceKey | PromiseLike<DeviceKey | null>, hostId: string, shown?: (frame: { type: string; payload: unknown }) => SettledRequest | null,
): RequestSigner {
  const signs = (type: string) => isRequestType(type) && REQUEST_RULES[type].actsOnMachine;
  return {
    signs,
    async sign(frame) {
      if (!signs(frame.type)) return undefined;
      // The settled request as shown NOW, before any await: the thread may move on meanwhile.
      const settled = REQUEST_RULES[frame.type as keyof typeof REQUEST_RULES].settles ? shown?.(frame) ?? null : null;
      const held = await key;
      if (!held) return undefined;
      return signRequest(held, frame, { hostId, ...(settled ? { settles: await settledRequestDigest(settled) } : {}) });
    },
  };
}

/**
 * The waiting approval or question a settling request names among the items a client shows, the way
 * the host finds it among its own (host/trust/core-view.ts): by request id, or by item id for a dismissal.
 */
export function settledAmong(type: string, payload: unknown, items: readonly ChatItem[]): SettledRequest | null {
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as { requestId?: unknown; itemId?: unknown };
  const item = items.find((i) => (type === 'chat.dismiss' ? i.id === p.itemId : 'requestId' in i && i.requestId === p.requestId));
  if (item?.kind === 'approval') return { kind: 'approval', requestId: item.requestId, toolName: item.toolName, input: item.input };
  if (item?.kind === 'question') return { kind: 'question', requestId: item.requestId, questions: item.questions };
  return null;
}

/** Cross-signing: this device vouches that `device` is another device of the same person. */
export async function vouchFor(
  key: DeviceKey, userId: string, device: { id: DeviceId; publicKey: DevicePublicKey; name: string }, now = Date.now(),
): Promise<Signed<DeviceStatement>> {
  return signStatement(key.privateKey, { kind: 'tether.device/1', userId, device, at: now, by: key.id });
}

/** The approval of a host's pairing, signed by this device: the host pins this person and device as its owner. */
export async function signPairingApproval(
  key: DeviceKey, pairing: { hostKey: HostPublicKey; userCode: string; userId: string; userName: string }, now = Date.now(),
): Promise<Signed<PairingStatement>> {
  return signStatement(key.privateKey, {
    kind: 'tether.pairing/1',
    hostKey: { kty: pairing.hostKey.kty, crv: pairing.hostKey.crv, x: pairing.hostKey.x },
    userCode: pairing.userCode, userId: pairing.userId, userName: pairing.userName, at: now,
    device: key.id, deviceKey: key.publicKey,
  });
}
