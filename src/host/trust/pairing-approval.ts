// The pairing approval as this machine checks it before it pins its owner: signed by the approving
// device's key, over THIS host's public key and the code THIS terminal showed. A relay that swapped
// the host key, moved an approval from another pairing or signed one itself with a key of its own is
// caught here or, in the last case, by the person: the terminal shows the approver's name, device
// and a short fingerprint, which Settings shows for their own devices.
import {
  deviceIdOf,
  importDevicePublicKey,
  shortFingerprint,
  verifyStatement,
  type HostPublicKey,
  type PairingStatement,
  type Signed,
} from '../../contracts/index.ts';
import type { PinnedOwner } from './book.ts';

/** The owner the approval pins; throws with a person's message when it does not hold. */
export async function checkPairingApproval(approval: Signed<PairingStatement>, expected: { hostKey: HostPublicKey; userCode: string }): Promise<PinnedOwner> {
  const { statement } = approval;
  if (statement.hostKey.x !== expected.hostKey.x) throw new Error("The approval is for another host key than this machine's: the relay may have swapped it");
  if (statement.userCode !== expected.userCode) throw new Error('The approval is for another pairing code than the one shown here');
  if ((await deviceIdOf(statement.deviceKey)) !== statement.device) throw new Error("The approving device's id is not its key's thumbprint");
  if (!(await verifyStatement(await importDevicePublicKey(statement.deviceKey), approval))) throw new Error("The approval's signature does not verify");
  return { userId: statement.userId, name: statement.userName, device: { id: statement.device, publicKey: statement.deviceKey } };
}

/** What the terminal says about who approved, so a person can compare the fingerprint with Settings. */
export function approvedByLines(owner: PinnedOwner): string[] {
  const name = owner.name.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?').slice(0, 100);
  return [
    `Approved by ${name} (${owner.userId.replace(/[^\w.@:-]/g, '?').slice(0, 100)})`,
    `  from device ${shortFingerprint(owner.device.id)}: check that Settings → Devices shows this fingerprint for the device you approved with.`,
    'This machine now trusts that person as its owner (trust.json).',
  ];
}
