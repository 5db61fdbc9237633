// What this machine trusts, built only from what it can check itself: the owner it pinned when it
// was paired (that person's device key, shown in the terminal), devices its owner trusted on the
// machine itself (`tether host trust <code>`, recovery), the devices each trusted person's devices
// vouched for (cross-signing), the grants an owner's device signed, and the revocations an owner (or
// the device's own person) signed. The relay carries these statements; it cannot make one.
//
// Checked when a statement is added (one that fails is refused with `{code, message}` and changes
// nothing): its signature, by a device that counts at that moment; a grant signed by an owner of this
// host, for this host; a vouch by a device of the same person; a revocation by an owner, or, for a
// device, by a device of that device's person. A revoked grant or device never counts again.
//
// What counts is then derived from everything accepted, as the least fixed point from the roots
// (the pinned owner's device and the devices recovered on the machine):
// - a grant counts while one of the devices that signed it counts and that device's person is an
//   owner of this host (the pinned owner, or through a counting host-wide owner grant);
// - a device counts while it is a root, or is named (for its person) by a counting grant, or is
//   vouched for by a counting device of its person; and it was not revoked.
// So the cascades follow by themselves: revoking an owner's grant withdraws the grants that owner's
// devices signed, unless another counting owner signed the same grant too (a co-signature: the same
// grant id and terms, signed by another device); revoking a device withdraws the devices it vouched
// for (unless another counting device vouched for them, or a counting grant names them) and the
// grants it alone signed. A person re-signs from a device that still counts to keep them.
//
// A grant supersedes an earlier one for the same subject and scope (same chat or the whole host, same
// person or team) when it is newer (`at`): that is how an owner changes a role, and how a team's grant
// follows a membership change (an owner signs it again with the members as they are now; until then
// the host follows the members the last signed grant named, whatever the relay's team says). An older
// one arriving later is refused, so a relay cannot roll a change back by replaying.
import {
  canonicalJson,
  deviceIdOf,
  importDevicePublicKey,
  verifyStatement,
  ACCESS_ROLES,
  type AccessRole,
  type DeviceId,
  type DevicePublicKey,
  type DeviceStatement,
  type GrantStatement,
  type RevocationStatement,
  type Signed,
  type WireErrorCode,
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
  via: 'pinned' | 'recovered' | 'grant' | 'vouch';
}

/** A device of the owner trusted on the machine itself, by a code the person read from their app. */
export interface RecoveredDevice {
  userId: string;
  name: string;
  device: { id: DeviceId; publicKey: DevicePublicKey };
  /** When it was trusted, ms since the epoch. */
  at: number;
}

export type Accepted = { ok: true; changed: boolean } | { ok: false; code: WireErrorCode; message: string };

const refuse = (message: string, code: WireErrorCode = 'forbidden'): Accepted => ({ ok: false, code, message });
const accepted = (changed: boolean): Accepted => ({ ok: true, changed });

function roleRank(role: AccessRole): number {
  return ACCESS_ROLES.indexOf(role);
}

/** What makes two grants the same grant: everything but who signed it and when. */
function termsOf(grant: GrantStatement): string {
  const { by: _by, at: _at, ...terms } = grant;
  return canonicalJson(terms);
}

/** The subject and scope a grant speaks for; a newer grant for the same one supersedes it. */
function scopeOf(grant: GrantStatement): string {
  const subject = grant.subject.kind === 'user' ? `user:${grant.subject.userId}` : `team:${grant.subject.teamId}`;
  return `${grant.chatId ?? ''}\u0000${subject}`;
}

function peopleOf(grant: GrantStatement): string[] {
  return grant.subject.kind === 'user' ? [grant.subject.userId] : grant.subject.members;
}

interface HeldGrant {
  statement: GrantStatement;
  /** The devices that signed these terms (the first and any co-signers). */
  signers: Set<DeviceId>;
}

interface KnownKey {
  userId: string;
  key: CryptoKey;
}

export class TrustBook {
  readonly hostId: string;
  readonly owner: PinnedOwner;
  /** Every key a root, grant or vouch named, by id (whether or not it counts now), with its person. */
  private readonly keys = new Map<DeviceId, KnownKey>();
  private readonly recovered = new Map<DeviceId, RecoveredDevice>();
  /** Vouches by the device they vouch for: the person and the vouching devices. */
  private readonly vouches = new Map<DeviceId, { userId: string; by: Set<DeviceId> }>();
  private readonly grants = new Map<string, HeldGrant>();
  private readonly revokedDevices = new Set<DeviceId>();
  private readonly revokedGrants = new Set<string>();
  /** Grants a newer one for the same subject and scope replaced. */
  private readonly superseded = new Set<string>();
  // Derived by settle() after every change.
  private counting = new Map<DeviceId, TrustedDevice>();
  private countingGrants = new Set<string>();

  private constructor(hostId: string, owner: PinnedOwner) {
    this.hostId = hostId;
    this.owner = owner;
  }

  /** A book that trusts the pinned owner's device and nothing else yet. */
  static async open(hostId: string, owner: PinnedOwner): Promise<TrustBook> {
    if ((await deviceIdOf(owner.device.publicKey)) !== owner.device.id) throw new Error("The pinned owner's device id is not its key's thumbprint");
    const book = new TrustBook(hostId, owner);
    book.keys.set(owner.device.id, { userId: owner.userId, key: await importDevicePublicKey(owner.device.publicKey) });
    book.settle();
    return book;
  }

  /** A device this host follows to a person now, or null (unknown, revoked, or withdrawn with what it hung on). */
  device(id: string): TrustedDevice | null {
    return this.counting.get(id) ?? null;
  }

  /** The devices that count now. */
  devices(): TrustedDevice[] {
    return [...this.counting.values()];
  }

  /**
   * The highest role `userId` holds here: on the whole host (`chatId` null), or on one chat, where
   * host-wide grants count too. The pinned owner is an owner whatever the grants say.
   */
  roleOf(userId: string, chatId: string | null): AccessRole | null {
    return this.roleUnder(userId, chatId, this.countingGrants);
  }

  private roleUnder(userId: string, chatId: string | null, counted: Set<string>): AccessRole | null {
    if (userId === this.owner.userId) return 'owner';
    let best: AccessRole | null = null;
    for (const grantId of counted) {
      const grant = this.grants.get(grantId)!.statement;
      if (grant.chatId !== null && grant.chatId !== chatId) continue;
      if (peopleOf(grant).includes(userId) && (best === null || roleRank(grant.role) > roleRank(best))) best = grant.role;
    }
    return best;
  }

  /** The people a counting grant (or the pinning) names: whom this host follows now. */
  people(): Set<string> {
    const out = new Set<string>([this.owner.userId]);
    for (const grantId of this.countingGrants) for (const person of peopleOf(this.grants.get(grantId)!.statement)) out.add(person);
    return out;
  }

  /** The least fixed point of what counts (see the header). Cheap: a host holds tens of statements. */
  private settle(): void {
    const devices = new Map<DeviceId, TrustedDevice>();
    const grants = new Set<string>();
    const root = (id: DeviceId, via: 'pinned' | 'recovered') => {
      const known = this.keys.get(id);
      if (known && !this.revokedDevices.has(id)) devices.set(id, { id, userId: known.userId, key: known.key, via });
    };
    root(this.owner.device.id, 'pinned');
    for (const id of this.recovered.keys()) if (!devices.has(id)) root(id, 'recovered');
    for (let changed = true; changed; ) {
      changed = false;
      for (const [grantId, held] of this.grants) {
        if (grants.has(grantId) || this.revokedGrants.has(grantId) || this.superseded.has(grantId)) continue;
        const signedByOwner = [...held.signers].some((by) => {
          const signer = devices.get(by);
          return signer !== undefined && this.roleUnder(signer.userId, null, grants) === 'owner';
        });
        if (!signedByOwner) continue;
        grants.add(grantId);
        changed = true;
        const people = peopleOf(held.statement);
        for (const named of held.statement.devices) {
          const known = this.keys.get(named.id);
          if (
            !devices.has(named.id) &&
            !this.revokedDevices.has(named.id) &&
            known?.userId === named.userId &&
            named.userId !== this.owner.userId &&
            people.includes(named.userId)
          ) {
            devices.set(named.id, { id: named.id, userId: named.userId, key: known.key, via: 'grant' });
          }
        }
      }
      for (const [id, vouch] of this.vouches) {
        if (devices.has(id) || this.revokedDevices.has(id)) continue;
        const known = this.keys.get(id);
        if (!known || known.userId !== vouch.userId) continue;
        if ([...vouch.by].some((by) => devices.get(by)?.userId === vouch.userId)) {
          devices.set(id, { id, userId: vouch.userId, key: known.key, via: 'vouch' });
          changed = true;
        }
      }
    }
    this.counting = devices;
    this.countingGrants = grants;
  }

  /** Verifies a statement under a device that counts now; answers the device or why not. */
  private async signer(by: DeviceId, signed: Signed<DeviceStatement | GrantStatement | RevocationStatement>): Promise<TrustedDevice | Accepted> {
    const device = this.device(by);
    if (!device) return refuse(`The signing device ${by} is not one this host trusts`, 'signature-invalid');
    return (await verifyStatement(device.key, signed)) ? device : refuse('The signature does not verify', 'signature-invalid');
  }

  /** Remembers a key for a person; refuses a key the book already follows to someone else. */
  private async learnKey(id: DeviceId, userId: string, publicKey: DevicePublicKey): Promise<KnownKey | Accepted> {
    if ((await deviceIdOf(publicKey)) !== id) return refuse("A device id is not its key's thumbprint", 'bad-request');
    const known = this.keys.get(id);
    if (known) return known.userId === userId ? known : refuse('That device belongs to someone else', 'bad-request');
    return { userId, key: await importDevicePublicKey(publicKey) };
  }

  /** Cross-signing: a counting device of a person vouches for another device of theirs. */
  async addDevice(signed: Signed<DeviceStatement>): Promise<Accepted> {
    const { statement } = signed;
    if (this.revokedDevices.has(statement.device.id)) return refuse('That device was revoked');
    const signer = await this.signer(statement.by, signed);
    if ('ok' in signer) return signer;
    if (signer.userId !== statement.userId) return refuse('A device vouches only for devices of its own person');
    const key = await this.learnKey(statement.device.id, statement.userId, statement.device.publicKey);
    if ('ok' in key) return key;
    const vouch = this.vouches.get(statement.device.id);
    if (vouch?.by.has(statement.by)) return accepted(false);
    this.keys.set(statement.device.id, key);
    if (vouch) vouch.by.add(statement.by);
    else this.vouches.set(statement.device.id, { userId: statement.userId, by: new Set([statement.by]) });
    this.settle();
    return accepted(true);
  }

  /** A grant signed by an owner's device, for this host; the people's devices it names count while it does. */
  async addGrant(signed: Signed<GrantStatement>): Promise<Accepted> {
    const { statement } = signed;
    if (statement.hostId !== this.hostId) return refuse('That grant is for another host', 'bad-request');
    if (this.revokedGrants.has(statement.grantId)) return refuse('That grant was revoked');
    if (this.superseded.has(statement.grantId)) return refuse('A newer grant for the same person and scope replaced that one');
    const held = this.grants.get(statement.grantId);
    if (held) {
      if (termsOf(held.statement) !== termsOf(statement)) return refuse('That grant id names another grant', 'bad-request');
      if (held.signers.has(statement.by)) return accepted(false);
    }
    const signer = await this.signer(statement.by, signed);
    if ('ok' in signer) return signer;
    if (this.roleOf(signer.userId, null) !== 'owner') return refuse('Only an owner of this host signs grants');
    const people = peopleOf(statement);
    const keys: [DeviceId, KnownKey][] = [];
    for (const device of statement.devices) {
      if (!people.includes(device.userId)) return refuse('The grant names a device of someone it does not grant', 'bad-request');
      // The pinned owner's devices come from the pinning, their own vouches and the machine: another
      // owner's grant cannot hand this host a key to act as them (a team grant naming them is fine;
      // what it says of their devices is not taken).
      if (device.userId === this.owner.userId) continue;
      const key = await this.learnKey(device.id, device.userId, device.publicKey);
      if ('ok' in key) return key;
      keys.push([device.id, key]);
    }
    if (held) {
      held.signers.add(statement.by); // a co-signature: another owner's device signed the same grant
    } else {
      const scope = scopeOf(statement);
      const rivals = [...this.grants.entries()].filter(([id, g]) => !this.superseded.has(id) && !this.revokedGrants.has(id) && scopeOf(g.statement) === scope);
      if (rivals.some(([, g]) => g.statement.at > statement.at)) return refuse('This host holds a newer grant for the same person and scope');
      for (const [id, g] of rivals) if (g.statement.at < statement.at) this.superseded.add(id);
      this.grants.set(statement.grantId, { statement, signers: new Set([statement.by]) });
    }
    for (const [id, key] of keys) if (!this.keys.has(id)) this.keys.set(id, key);
    this.settle();
    return accepted(true);
  }

  /** A revocation: of a grant by an owner; of a device by an owner or by a device of the same person. */
  async addRevocation(signed: Signed<RevocationStatement>): Promise<Accepted> {
    const { statement } = signed;
    if (statement.hostId !== null && statement.hostId !== this.hostId) return refuse('That revocation is for another host', 'bad-request');
    const { target } = statement;
    if (target.kind === 'grant' ? this.revokedGrants.has(target.grantId) : this.revokedDevices.has(target.deviceId)) return accepted(false);
    const signer = await this.signer(statement.by, signed);
    if ('ok' in signer) return signer;
    const owner = this.roleOf(signer.userId, null) === 'owner';
    if (target.kind === 'grant') {
      if (!owner) return refuse('Only an owner of this host revokes grants');
      this.revokedGrants.add(target.grantId);
    } else {
      const device = this.keys.get(target.deviceId);
      if (!owner && device?.userId !== signer.userId) return refuse('A device is revoked by its own person or an owner of this host');
      if (target.deviceId === this.owner.device.id && signer.userId !== this.owner.userId)
        return refuse("The pinned owner's device is revoked only by the owner");
      this.revokedDevices.add(target.deviceId);
    }
    this.settle();
    return accepted(true);
  }

  /**
   * Recovery on the machine: the person at it trusts a new device of the owner by the code their app
   * shows (trust/recover.ts checked the key against the code). It counts as the pinned device does,
   * unless revoked later.
   */
  async addRecovered(recovered: RecoveredDevice): Promise<Accepted> {
    if (recovered.userId !== this.owner.userId) return refuse("Only the owner's devices are trusted on the machine", 'bad-request');
    if (this.revokedDevices.has(recovered.device.id)) return refuse('That device was revoked');
    const key = await this.learnKey(recovered.device.id, recovered.userId, recovered.device.publicKey);
    if ('ok' in key) return key;
    if (this.recovered.has(recovered.device.id)) return accepted(false);
    this.keys.set(recovered.device.id, key);
    this.recovered.set(recovered.device.id, recovered);
    this.settle();
    return accepted(true);
  }
}
