// A device's own key, whatever keeps it: the SDK in Node (a 0600 file, device-key-file.ts) or the web
// app (IndexedDB, non-extractable, src/web/app/device-key.ts). This module only makes keys and signs
// with them; the statements it signs are the contracts' (src/contracts/signing.ts). A request that
// acts on a machine is signed here and its signature sent beside the frame (`frame.signature`).
import { REQUEST_RULES, isRequestType, settledRequestDigest, type ChatItem, type SettledRequest } from '../contracts/index.ts';
import { signRequest, type DeviceKey } from './device-sign.ts';
import type { RequestSigner } from './socket.ts';

export * from './device-sign.ts';

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
  key: DeviceKey | PromiseLike<DeviceKey | null>,
  hostId: string,
  shown?: (frame: { type: string; payload: unknown }) => SettledRequest | null,
): RequestSigner {
  const signs = (type: string) => isRequestType(type) && REQUEST_RULES[type].actsOnMachine;
  return {
    signs,
    async sign(frame) {
      if (!signs(frame.type)) return undefined;
      // The settled request as shown NOW, before any await: the thread may move on meanwhile.
      const settled = REQUEST_RULES[frame.type as keyof typeof REQUEST_RULES].settles ? (shown?.(frame) ?? null) : null;
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
