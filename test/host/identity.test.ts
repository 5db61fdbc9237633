import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { HOST_TOKEN_AUDIENCE } from '../../src/contracts/hosts.ts';
import { hostTokenSigner, identityFile, newHostKey, readHostIdentity, writeHostIdentity } from '../../src/host/identity.ts';
import { relayBase } from '../../src/host/pairing.ts';

const fresh = () => path.join(mkdtempSync(path.join(tmpdir(), 'tether-identity-')), 'data');

describe('host identity', () => {
  it('keeps the key in identity.json readable by its user alone, in a folder only they can enter', async () => {
    const dir = fresh();
    expect(readHostIdentity(dir)).toBeNull();
    const key = await newHostKey();
    writeHostIdentity(dir, { relayUrl: 'http://relay.test', hostId: 'h_1', ...key });
    expect(statSync(identityFile(dir)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readHostIdentity(dir)).toEqual({ relayUrl: 'http://relay.test', hostId: 'h_1', ...key });
    expect(key.publicJwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x: expect.any(String) });
    expect(key.publicJwk).not.toHaveProperty('d');
  });

  it('refuses a damaged identity file instead of taking the host for unpaired', () => {
    const dir = fresh();
    mkdirSync(dir, { recursive: true });
    writeFileSync(identityFile(dir), '{"hostId": 1}');
    expect(() => readHostIdentity(dir)).toThrow(/host identity .* is not valid/i);
  });

  it('signs a host JWT that the public key verifies, with the link claims, fresh on every call', async () => {
    const key = await newHostKey();
    const sign = hostTokenSigner({ hostId: 'h_abc', privateJwk: key.privateJwk });
    const [first, second] = [await sign(), await sign()];
    expect(first).not.toBe(second);
    expect(decodeProtectedHeader(first)).toMatchObject({ alg: 'EdDSA', kid: 'h_abc' });
    const publicKey = await importJWK(key.publicJwk, 'EdDSA');
    const { payload } = await jwtVerify(first, publicKey, { audience: HOST_TOKEN_AUDIENCE, algorithms: ['EdDSA'] });
    expect(payload.sub).toBe('h_abc');
    expect(payload.exp! - payload.iat!).toBe(60);
    expect(typeof payload.jti).toBe('string');
    const again = await jwtVerify(second, publicKey, { audience: HOST_TOKEN_AUDIENCE });
    expect(again.payload.jti).not.toBe(payload.jti);
    const other = await newHostKey();
    await expect(jwtVerify(first, await importJWK(other.publicJwk, 'EdDSA'))).rejects.toThrow(/signature/);
  });

  it('keeps a relay URL as its http(s) base', () => {
    expect(relayBase('wss://relay.example/')).toBe('https://relay.example');
    expect(relayBase('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787');
    expect(() => relayBase('ftp://x')).toThrow(/Not a relay URL/);
  });
});
