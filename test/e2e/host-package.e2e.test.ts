// The host as its own package, as a second machine gets it: `npm run build:host`'s tarball (one
// bundled file, no dependencies) installed with `npm install -g --offline` into an empty prefix,
// then that installed `tether` (run by a Node outside this repository's node_modules, with a PATH
// and HOME of its own) checks the relay with `host doctor`, pairs with `host pair` (the owner
// approves the code), starts, and answers the owner's lobby through the real relay.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHostPackage } from '../../scripts/build-host-package.ts';
import { HostProcess, Peer, RELAY_OWNER, relayUrl } from './peers.ts';
import { tempDir } from '../host/harness.ts';

const run = promisify(execFile);
let data: ReturnType<typeof tempDir>;
let tether: string;
let env: NodeJS.ProcessEnv;
const host = new HostProcess('packaged-host', RELAY_OWNER);

beforeAll(async () => {
  data = tempDir('tether-host-package-');
  const { tarball, version } = await buildHostPackage(data.dir);
  expect(path.basename(tarball)).toBe(`tether-host-${version}.tgz`);
  const prefix = path.join(data.dir, 'prefix');
  mkdirSync(prefix);
  // --offline: nothing may come from a registry; a dependency would fail the install.
  await run('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball], {
    env: { ...process.env, npm_config_cache: path.join(data.dir, 'npm-cache') },
  });
  tether = path.join(prefix, 'bin', 'tether');
  const home = path.join(data.dir, 'home');
  mkdirSync(home);
  // Node's own folder only (the real binary, not node_modules/.bin), and the system's.
  env = { PATH: `${path.dirname(realpathSync(process.execPath))}:/usr/bin:/bin`, HOME: home };
}, 120_000);

afterAll(async () => {
  await host.stop();
  data?.cleanup();
});

describe('the packaged host', () => {
  it("installs alone: one package, nothing of the relay's toolchain", () => {
    const installed = path.join(data.dir, 'prefix', 'lib', 'node_modules');
    expect(readdirSync(installed)).toEqual(['tether-host']);
    expect(readdirSync(path.join(installed, 'tether-host')).sort()).toEqual(['README.md', 'bin', 'package.json']);
    const pkg = JSON.parse(readFileSync(path.join(installed, 'tether-host', 'package.json'), 'utf8'));
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.bin).toEqual({ tether: './bin/tether.js' });
  });

  it('host doctor reaches the relay and names the agents it would serve', async () => {
    const { stdout } = await run(tether, ['host', 'doctor', '--relay', relayUrl(), '--data', host.dataDir, '--json'], { env });
    const report = JSON.parse(stdout);
    expect(report.relay).toEqual({ url: relayUrl(), reachable: true, status: 200 });
    expect(report.agents[0]).toMatchObject({ name: 'Demo agent (scripted)', served: true });
    expect(report.agents[0].from).toContain(path.join('node_modules', 'tether-host', 'bin', 'script.default.json'));
  });

  it("pairs, starts, and answers provider.list from the owner's lobby through the relay", { timeout: 120_000 }, async () => {
    host.tether = [tether];
    host.env = env;
    await host.start();
    expect(host.pairOutput).toContain(`Paired: this machine is host ${host.hostId}`);
    const lobby = await Peer.lobby(host.hostId, RELAY_OWNER);
    try {
      await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online', 60_000);
      const { providers } = (await lobby.socket.request('provider.list', {})) as { providers: Array<{ name: string }> };
      expect(providers[0]).toMatchObject({ name: 'Demo agent (scripted)', installed: true });
      const { stdout } = await run(tether, ['host', 'status', '--data', host.dataDir], { env });
      expect(stdout).toContain(`host      ${host.hostId} running`);
    } finally {
      lobby.close();
    }
  });
});
