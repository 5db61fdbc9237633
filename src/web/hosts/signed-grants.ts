// Grants from the host page, signed by this browser's device key when it has one (src/client/trust.ts):
// the relay keeps the statement beside its own grant and carries it to the host, which follows only
// what an owner signed. Without a key (no Ed25519 here) the relay's grant alone is made, as before, and
// a host that follows signatures does not know of it.
import { ProtocolError, type AccessRole, type Grant } from '../../contracts/index.ts';
import { resignTeamGrant, revokeGrantSigned, shareSigned } from '../../client/index.ts';
import { api, thisDevice } from '../app/session.ts';

type Subject = { type: 'user'; id: string } | { type: 'team'; id: string };

/** Gives `role` on the host (or one chat) to a person or team known by id; giving again changes the role. */
export async function giveRole(hostId: string, subject: Subject, role: AccessRole, chatId?: string): Promise<Grant> {
  const key = await thisDevice();
  if (!key) return api.grant(hostId, { subject, role, ...(chatId ? { chatId } : {}) });
  return shareSigned(api, key, hostId, { subject, role, ...(chatId ? { chatId } : {}) });
}

/**
 * Gives `role` to the person with this address. The relay alone knows who that is, so its grant is
 * made first, then signed for the person it names (the owner's device takes the relay's word for who
 * has the address, as it does for their keys: see shareSigned).
 */
export async function giveRoleByEmail(hostId: string, email: string, role: AccessRole): Promise<Grant> {
  const made = await api.grant(hostId, { subject: { type: 'user', email }, role });
  if (!(await thisDevice())) return made;
  return giveRole(hostId, { type: 'user', id: made.subject.id }, role, made.chatId ?? undefined);
}

/** Takes a grant back on the relay and, signed, on the host. */
export async function removeGrant(hostId: string, grantId: string): Promise<void> {
  const key = await thisDevice();
  if (key) await revokeGrantSigned(api, key, hostId, grantId);
  else await api.revokeGrant(hostId, grantId);
}

/**
 * A team's grant whose members changed since it was signed (`grant.resign`): signs it again with the
 * team's members as they are now, through the same path as giving it, so the host takes the new
 * statement in place of the old one (the joined are served, the left are not).
 */
export async function signAgain(grant: Grant): Promise<Grant> {
  const key = await thisDevice();
  if (!key) throw new ProtocolError('signature-required', 'This browser has no device key to sign with; sign again from one that has');
  return resignTeamGrant(api, key, grant);
}
