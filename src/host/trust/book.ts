// What this machine trusts, built only from what it can check itself: the owner it pinned when it
// was paired (that person's device key, shown in the terminal), the devices each trusted person's
// devices vouched for (cross-signing), the grants an owner's device signed, and the revocations an
// owner (or the device's own person) signed. The relay carries these statements; it cannot make one.
//
// Rules, each checked when a statement is added (a statement that fails is refused and changes
// nothing):
// - a device counts when it is the pinned owner's, is named by an accepted grant (the owner saw it
//   as that person's first device), or is vouched for by a counting device of the same person;
// - a grant counts when a device of a person who is an owner of this host signed it, for this host;
// - a revocation counts when an owner signed it, or, for a device, a device of that device's person;
//   a revoked grant or device never counts again, whatever arrives later.
// Not yet (issue 15, for the next session): revoking an owner grant does not withdraw the grants that
// owner signed, and revoking a device does not withdraw the devices it vouched for.
import {
  deviceIdOf, importDevicePublicKey, verifyStatement, ACCESS_ROLES,
  type AccessRole, type DeviceId, type DevicePublicKey, type DeviceStatement, type GrantStatement, type RevocationStatement, type Signed,
} from '../../contracts/index.ts';

export interface PinnedOwner {
  userId: string;
  name: string;
  device: { id: DeviceId; publicKey: DevicePublicKey };
}

export interface TrustedDevice {
  id: DeviceId;
  userId: string;
  key: CryptoKey;
  /** How the host came to trust it. */
  via: 'pinned' | 'grant' | 'vouch';
}

export type Accepted = { ok: true } | { ok: false; message: string };

const refuse = (message: string): Accepted => ({ ok: false, message });

function roleRank(role: AccessRole): number {
  return ACCESS_ROLES.indexOf(role);
}

export class TrustBook {
  readonly hostId: string;
  readonly owner: PinnedOwner;
  private readonly devices = new Map<DeviceId, TrustedDevice>();
  private readonly revokedDevices = new Set<DeviceId>();
  private readonly grants = new Map<string, GrantStatement>();
  private readonly revokedGrants = new Set<string>();

  private constructor(hostId: string, owner: PinnedOwner) {
    this.hostId = hostId;
    this.owner = owner;
  }

  /** A book that trusts the pinned owner's device and nothing else yet. */
  static async open(hostId: string, owner: PinnedOwner): Promise<TrustBook> {
    if ((await deviceIdOf(owner.device.publicKey)) !== owner.device.id) throw new Error('The pinned owner\'s device id is not its key\'s thumbprint');
    const book = new TrustBook(hostId, owner);
    book.devices.set(owner.device.id, { id: owner.device.id, userId: owner.userId, key: await importDevicePublicKey(owner.device.publicKey), via: 'pinned' });
    return book;
  }

  /** A device this host follows to a person, or null (unknown or revoked). */
  device(id: string): TrustedDevice | null {
    return this.revokedDevices.has(id) ? null : this.devices.get(id) ?? null;
  }

  /**
   * The highest role `userId` holds here: on the whole host (`chatId` null), or on one chat, where
   * host-wide grants count too. The pinned owner is an owner whatever the grants say.
   */
  roleOf(userId: string, chatId: string | null): AccessRole | null {
    if (userId === this.owner.userId) return 'owner';
    let best: AccessRole | null = null;
    for (const grant of this.grants.values()) {
      if (this.revokedGrants.has(grant.grantId)) continue;
      if (grant.chatId !== null && grant.chatId !== chatId) continue;
      const holds = grant.subject.kind === 'user' ? grant.subject.userId === userId : grant.subject.members.includes(userId);
      if (holds && (best === null || roleRank(grant.role) > roleRank(best))) best = grant.role;
    }
    return best;
  }

  private isOwner(userId: string): boolean {
    return this.roleOf(userId, null) === 'owner';
  }

  /** Verifies a statement under a counting device; answers the device or why not. */
  private async signer(by: DeviceId, signed: Signed<DeviceStatement | GrantStatement | RevocationStatement>): Promise<TrustedDevice | string> {
    const device = this.device(by);
    if (!device) return `The signing device ${by} is not one this host trusts`;
    return (await verifyStatement(device.key, signed)) ? device : 'The signature does not verify';
  }

  /** Cross-signing: a counting device of a person vouches for another device of theirs. */
  async addDevice(signed: Signed<DeviceStatement>): Promise<Accepted> {
    const { statement } = signed;
    if (this.revokedDevices.has(statement.device.id)) return refuse('That device was revoked');
    if ((await deviceIdOf(statement.device.publicKey)) !== statement.device.id) return refuse('The device id is not its key\'s thumbprint');
    const signer = await this.signer(statement.by, signed);
    if (typeof signer === 'string') return refuse(signer);
    if (signer.userId !== statement.userId) return refuse('A device vouches only for devices of its own person');
    if (!this.devices.has(statement.device.id)) {
      this.devices.set(statement.device.id, { id: statement.device.id, userId: statement.userId, key: await importDevicePublicKey(statement.device.publicKey), via: 'vouch' });
    }
    return { ok: true };
  }

  /** A grant signed by an owner's device, for this host; the people's first devices it names count from then on. */
  async addGrant(signed: Signed<GrantStatement>): Promise<Accepted> {
    const { statement } = signed;
    if (statement.hostId !== this.hostId) return refuse('That grant is for another host');
    if (this.revokedGrants.has(statement.grantId)) return refuse('That grant was revoked');
    if (this.grants.has(statement.grantId)) return { ok: true };
    const signer = await this.signer(statement.by, signed);
    if (typeof signer === 'string') return refuse(signer);
    if (!this.isOwner(signer.userId)) return refuse('Only an owner of this host signs grants');
    const people = statement.subject.kind === 'user' ? [statement.subject.userId] : statement.subject.members;
    const named: TrustedDevice[] = [];
    for (const device of statement.devices) {
      if (!people.includes(device.userId)) return refuse('The grant names a device of someone it does not grant');
      if ((await deviceIdOf(device.publicKey)) !== device.id) return refuse('A device id in the grant is not its key\'s thumbprint');
      const known = this.devices.get(device.id);
      if (known && known.userId !== device.userId) return refuse('A device in the grant belongs to someone else');
      if (!this.revokedDevices.has(device.id)) named.push({ id: device.id, userId: device.userId, key: await importDevicePublicKey(device.publicKey), via: 'grant' });
    }
    this.grants.set(statement.grantId, statement);
    for (const device of named) if (!this.devices.has(device.id)) this.devices.set(device.id, device);
    return { ok: true };
  }

  /** A revocation: of a grant by an owner; of a device by an owner or by a device of the same person. */
  async addRevocation(signed: Signed<RevocationStatement>): Promise<Accepted> {
    const { statement } = signed;
    if (statement.hostId !== null && statement.hostId !== this.hostId) return refuse('That revocation is for another host');
    const signer = await this.signer(statement.by, signed);
    if (typeof signer === 'string') return refuse(signer);
    const { target } = statement;
    if (target.kind === 'grant') {
      if (!this.isOwner(signer.userId)) return refuse('Only an owner of this host revokes grants');
      this.revokedGrants.add(target.grantId);
      return { ok: true };
    }
    const device = this.devices.get(target.deviceId);
    if (!this.isOwner(signer.userId) && device?.userId !== signer.userId) return refuse('A device is revoked by its own person or an owner of this host');
    if (target.deviceId === this.owner.device.id && signer.userId !== this.owner.userId) return refuse('The pinned owner\'s device is revoked only by the owner');
    this.revokedDevices.add(target.deviceId);
    return { ok: true };
  }
}
