import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf, importDevicePublicKey, RequestSignatureSchema, verifyStatement } from '../../src/contracts/index.ts';
import { signRequest, vouchFor } from '../../src/client/device-key.ts';
import { loadOrCreateDeviceKey } from '../../src/client/device-key-file.ts';

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tether-device-'));
  dirs.push(dir);
  return path.join(dir, 'keys', 'device.json');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the SDK's device key file", () => {
  it('is made once, 0600 in a 0700 folder, and read back as the same device', async () => {
    const file = tempFile();
    const made = await loadOrCreateDeviceKey(file, 1234);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const again = await loadOrCreateDeviceKey(file);
    expect(again).toMatchObject({ id: made.id, publicKey: made.publicKey, created: 1234 });
    // Loaded keys cannot be written out again by anything in the process.
    expect(again.privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('jwk', again.privateKey)).rejects.toThrow();
  });

  it('signs requests and vouches that verify under its public key', async () => {
    const key = await loadOrCreateDeviceKey(tempFile());
    const frame = { id: 'r1', type: 'chat.send', payload: { chatId: 'c1', text: 'hi' } };
    const signed = RequestSignatureSchema.parse(await signRequest(key, frame, { hostId: 'h1', now: 99 }));
    expect(signed.statement).toMatchObject({
      hostId: 'h1',
      chatId: 'c1',
      type: 'chat.send',
      id: 'r1',
      at: 99,
      device: key.id,
      payload: await digestOf(frame.payload),
    });
    const publicKey = await importDevicePublicKey(key.publicKey);
    expect(await verifyStatement(publicKey, signed)).toBe(true);
    const other = await loadOrCreateDeviceKey(tempFile());
    const vouch = await vouchFor(key, 'user-1', { id: other.id, publicKey: other.publicKey, name: 'Phone' });
    expect(await verifyStatement(publicKey, vouch)).toBe(true);
    expect(await verifyStatement(await importDevicePublicKey(other.publicKey), vouch)).toBe(false);
  });

  it('two processes making a key at once end up with one key', async () => {
    const file = tempFile();
    const [a, b] = await Promise.all([loadOrCreateDeviceKey(file), loadOrCreateDeviceKey(file)]);
    expect(a.id).toBe(b.id);
    expect(JSON.parse(readFileSync(file, 'utf8')).id).toBe(a.id);
  });

  it('refuses a key file others may read, and one whose halves do not match', async () => {
    const file = tempFile();
    await loadOrCreateDeviceKey(file);
    chmodSync(file, 0o644);
    await expect(loadOrCreateDeviceKey(file)).rejects.toThrow(/readable by others \(mode 644\).*chmod 600/);
    chmodSync(file, 0o600);
    const body = JSON.parse(readFileSync(file, 'utf8'));
    const other = await loadOrCreateDeviceKey(tempFile());
    writeFileSync(file, JSON.stringify({ ...body, publicKey: other.publicKey }), { mode: 0o600 });
    await expect(loadOrCreateDeviceKey(file)).rejects.toThrow(/do not match/);
    writeFileSync(file, JSON.stringify({ ...body, privateKey: { ...body.privateKey, d: 'short' } }), { mode: 0o600 });
    await expect(loadOrCreateDeviceKey(file)).rejects.toThrow(/not a Tether device key/);
  });
});
