// The machine's check of a signed pairing approval before it pins its owner: this host's key, the
// code this terminal showed, the approving device's own signature. What it prints names the device by
// the short fingerprint a person compares with Settings, with nothing a hostile name could inject.
import { describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair, signPairingApproval } from '../../src/client/device-key.ts';
import { shortFingerprint, signStatement, type PairingStatement } from '../../src/contracts/index.ts';
import { newHostKey } from '../../src/host/host-token.ts';
import { approvedByLines, checkPairingApproval } from '../../src/host/trust/pairing-approval.ts';

describe('the pairing approval the host pins', () => {
  it('pins the approving person and device when it names this host key and code', async () => {
    const host = await newHostKey();
    const device = await deviceKeyOf(await newDeviceKeyPair(false), 0);
    const approval = await signPairingApproval(device, { hostKey: host.publicJwk, userCode: 'ABCD-EFGH', userId: 'u_ada', userName: 'Ada' });
    const owner = await checkPairingApproval(approval, { hostKey: host.publicJwk, userCode: 'ABCD-EFGH' });
    expect(owner).toEqual({ userId: 'u_ada', name: 'Ada', device: { id: device.id, publicKey: device.publicKey } });
    expect(approvedByLines(owner).join('\n')).toContain(`from device ${shortFingerprint(device.id)}:`);
  });

  it('refuses an approval for a swapped host key, another code, a forged signature or a device key that is not its id', async () => {
    const [host, other] = [await newHostKey(), await newHostKey()];
    const [device, relays] = [await deviceKeyOf(await newDeviceKeyPair(false), 0), await deviceKeyOf(await newDeviceKeyPair(false), 0)];
    const base = { hostKey: host.publicJwk, userCode: 'ABCD-EFGH', userId: 'u_ada', userName: 'Ada' };
    const expected = { hostKey: host.publicJwk, userCode: 'ABCD-EFGH' };
    await expect(checkPairingApproval(await signPairingApproval(device, { ...base, hostKey: other.publicJwk }), expected)).rejects.toThrow(/another host key/);
    await expect(checkPairingApproval(await signPairingApproval(device, { ...base, userCode: 'WXYZ-2345' }), expected)).rejects.toThrow(/another pairing code/);
    const good = await signPairingApproval(device, base);
    const forged = { statement: good.statement, sig: (await signStatement(relays.privateKey, good.statement)).sig };
    await expect(checkPairingApproval(forged, expected)).rejects.toThrow(/does not verify/);
    // The relay's own key under the person's device id: the id is the key's thumbprint, so it shows.
    const swapped = await signStatement(relays.privateKey, { ...good.statement, deviceKey: relays.publicKey } as PairingStatement);
    await expect(checkPairingApproval(swapped, expected)).rejects.toThrow(/thumbprint/);
  });

  it('prints a hostile name without its control characters', async () => {
    const device = await deviceKeyOf(await newDeviceKeyPair(false), 0);
    const text = approvedByLines({ userId: 'u_\u001b[2Jx', name: 'Ada\u001b[31m\u202e', device: { id: device.id, publicKey: device.publicKey } }).join('\n');
    expect(text).not.toMatch(/[\u001b\u202e]/);
  });
});
