// What a person's device signs so that machines, not the relay, decide who may do what
// (src/contracts/trust.ts): a grant when an owner shares a host or a chat, a vouch for another device
// of the same person (cross-signing), and revocations of a grant or a device. Each helper signs with
// this device's key and posts the statement beside the relay's own API call; the relay checks the
// caller's device signed it, keeps it and carries it to the host, which checks it again itself.
import {
  ProtocolError,
  signStatement,
  toBase64Url,
  type AccessRole,
  type DeviceId,
  type DevicePublicKey,
  type DeviceRecord,
  type DeviceStatement,
  type Grant,
  type GrantStatement,
  type PeerDevice,
  type RevocationStatement,
  type Signed,
} from '../contracts/index.ts';
import type { RelayApi } from './api.ts';
import { vouchFor, type DeviceKey } from './device-key.ts';

/** A fresh id for a grant this device signs (the relay keeps it, so a revocation can name it). */
export function newGrantId(): string {
  return `g_${toBase64Url(crypto.getRandomValues(new Uint8Array(16)))}`;
}

export type SignedGrantSubject = GrantStatement['subject'];

/** A grant statement, signed by this (owner's) device. */
export async function signGrant(
  key: DeviceKey,
  grant: { hostId: string; chatId?: string | null; subject: SignedGrantSubject; role: AccessRole; devices: GrantStatement['devices']; grantId?: string },
  now = Date.now(),
): Promise<Signed<GrantStatement>> {
  return signStatement(key.privateKey, {
    kind: 'tether.grant/1',
    grantId: grant.grantId ?? newGrantId(),
    hostId: grant.hostId,
    chatId: grant.chatId ?? null,
    subject: grant.subject,
    role: grant.role,
    devices: grant.devices,
    at: now,
    by: key.id,
  });
}

/** A revocation of a grant on a host, or of a device (everywhere: `hostId` null), signed by this device. */
export async function signRevocation(
  key: DeviceKey,
  revocation: { hostId: string | null; target: RevocationStatement['target'] },
  now = Date.now(),
): Promise<Signed<RevocationStatement>> {
  return signStatement(key.privateKey, { kind: 'tether.revocation/1', hostId: revocation.hostId, target: revocation.target, at: now, by: key.id });
}

/**
 * The devices a grant names for these people: every live device the relay lists for each. A host
 * trusts them from the owner's signature, so this is where the owner's device takes the relay's word
 * about whose key is whose (compare fingerprints when it matters); the people's later devices reach
 * the host through their own vouches instead.
 */
async function devicesOfPeople(api: RelayApi, people: string[]): Promise<GrantStatement['devices']> {
  const out: GrantStatement['devices'] = [];
  for (const userId of people) {
    const devices: PeerDevice[] = await api.peerDevices(userId);
    for (const d of devices) if (d.revoked === null) out.push({ userId, id: d.id, publicKey: d.publicKey });
  }
  return out;
}

export interface ShareRequest {
  /** A person by id, or a team (whose members as they are now are named, and must be re-signed when they change). */
  subject: { type: 'user'; id: string } | { type: 'team'; id: string };
  role: AccessRole;
  /** One chat of the host; the whole host when absent. */
  chatId?: string;
}

/**
 * Shares a host (or one chat) and signs it with this owner's device: the relay's grant and the
 * statement the host follows, in one call. A team is named with its members now, which an owner of the
 * host reads whether or not they belong to it (membersToSign).
 */
export async function shareSigned(api: RelayApi, key: DeviceKey, hostId: string, share: ShareRequest, now = Date.now()): Promise<Grant> {
  let subject: SignedGrantSubject;
  let people: string[];
  if (share.subject.type === 'user') {
    subject = { kind: 'user', userId: share.subject.id };
    people = [share.subject.id];
  } else {
    people = await membersToSign(api, hostId, share);
    subject = { kind: 'team', teamId: share.subject.id, members: people };
  }
  const signed = await signGrant(key, { hostId, chatId: share.chatId ?? null, subject, role: share.role, devices: await devicesOfPeople(api, people) }, now);
  return api.grant(hostId, {
    subject: { type: share.subject.type, id: share.subject.id },
    role: share.role,
    ...(share.chatId ? { chatId: share.chatId } : {}),
    signed,
  });
}

/**
 * The team's members as they are now, read as an owner of the host. The relay lists them for a team
 * that holds a grant on the host or that the caller belongs to; for a team outside both (an owner
 * giving a first grant to a team they are not in) the relay's grant is made first, unsigned (as by
 * email in the web app: a host that follows signatures ignores it), and the list read then.
 */
async function membersToSign(api: RelayApi, hostId: string, share: ShareRequest): Promise<string[]> {
  const read = async () => (await api.teamMembersToSign(hostId, share.subject.id)).members.map((m) => m.userId);
  try {
    return await read();
  } catch (failure) {
    if (!(failure instanceof ProtocolError) || failure.code !== 'team-not-found') throw failure;
  }
  await api.grant(hostId, { subject: { type: 'team', id: share.subject.id }, role: share.role, ...(share.chatId ? { chatId: share.chatId } : {}) });
  return read();
}

/**
 * A team's membership changed: the host still follows the members the last signed grant named, so an
 * owner signs the grant again with the members the team has now (same scope and role, a later time;
 * the host takes it in place of the earlier one). Answers the new grant.
 */
export async function resignTeamGrant(api: RelayApi, key: DeviceKey, grant: Grant, now = Date.now()): Promise<Grant> {
  if (grant.subject.type !== 'team') throw new ProtocolError('bad-request', "Only a team's grant follows its members");
  return shareSigned(
    api,
    key,
    grant.hostId,
    { subject: { type: 'team', id: grant.subject.id }, role: grant.role, ...(grant.chatId ? { chatId: grant.chatId } : {}) },
    now,
  );
}

/** Takes a grant back on the relay and, through the revocation this owner's device signs, on the host. */
export async function revokeGrantSigned(api: RelayApi, key: DeviceKey, hostId: string, grantId: string, now = Date.now()): Promise<void> {
  await api.revokeGrant(hostId, grantId, await signRevocation(key, { hostId, target: { kind: 'grant', grantId } }, now));
}

/**
 * Cross-signing: `existing` (a device of the person, registered already) vouches for `added`, a new
 * device of theirs, which registers with the vouch. Hosts that know `existing` then trust `added`
 * without anyone else's word.
 */
export async function addDeviceByCrossSigning(
  api: RelayApi,
  existing: DeviceKey,
  added: { publicKey: DevicePublicKey; id: DeviceId },
  name: string,
  userId: string,
  now = Date.now(),
): Promise<DeviceRecord> {
  const vouch: Signed<DeviceStatement> = await vouchFor(existing, userId, { id: added.id, publicKey: added.publicKey, name }, now);
  return api.registerDevice({ name, publicKey: added.publicKey, vouch });
}

/** Revokes a device of this person everywhere, signed by `key` (another of their devices, or the device itself). */
export async function revokeDeviceSigned(api: RelayApi, key: DeviceKey, deviceId: DeviceId, now = Date.now()): Promise<void> {
  await api.revokeDevice(deviceId, await signRevocation(key, { hostId: null, target: { kind: 'device', deviceId } }, now));
}
