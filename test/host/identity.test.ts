import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { Outbox } from '../../src/host/link/outbox.ts';
import { RelayLink } from '../../src/host/link/relay-link.ts';
import { until } from './harness.ts';
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

  it('presents a fresh host JWT on every reconnect of the link', async () => {
    const key = await newHostKey();
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const seen: string[] = [];
    server.on('connection', (socket, request) => {
      seen.push(request.headers.authorization ?? '');
      if (seen.length === 1) socket.close(1011, 'drop the first one');
    });
    const outbox = Outbox.open(fresh());
    const link = new RelayLink({
      relayUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      hostId: 'h_link',
      outbox,
      version: 'test',
      token: hostTokenSigner({ hostId: 'h_link', privateJwk: key.privateJwk }),
      onRequest: async () => ({}),
      backoffBaseMs: 10,
      backoffMaxMs: 20,
    });
    try {
      link.start();
      await until(() => seen.length >= 2, 'a reconnect');
      const [first, second] = seen.map((h) => h.replace(/^Bearer /, ''));
      expect(first).not.toBe(second);
      const publicKey = await importJWK(key.publicJwk, 'EdDSA');
      for (const token of [first!, second!]) {
        expect((await jwtVerify(token, publicKey, { audience: HOST_TOKEN_AUDIENCE, subject: 'h_link' })).protectedHeader.kid).toBe('h_link');
      }
    } finally {
      await link.close();
      outbox.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('keeps a relay URL as its http(s) base', () => {
    expect(relayBase('wss://relay.example/')).toBe('https://relay.example');
    expect(relayBase('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787');
    expect(() => relayBase('ftp://x')).toThrow(/Not a relay URL/);
  });
});
