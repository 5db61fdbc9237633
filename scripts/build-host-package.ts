// `npm run build:host`: the host as its own small package (packages/host), for a machine that only
// runs `tether` and never the relay. esbuild bundles bin/tether.js and everything it imports (the
// host, the contracts, commander, zod, ws, jose, the ACP SDK) into one ES module, so the package has
// no dependencies and installs with no registry at all; `npm pack` then makes the tarball.
//
//   node scripts/build-host-package.ts [--out <dir>]     → <dir>/tether-host-<version>.tgz
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');

export async function buildHostPackage(outDir: string): Promise<{ dir: string; tarball: string; version: string }> {
  const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const dir = path.join(outDir, 'tether-host');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'bin'), { recursive: true });
  cpSync(path.join(root, 'packages', 'host', 'README.md'), path.join(dir, 'README.md'));
  const pkg = JSON.parse(readFileSync(path.join(root, 'packages', 'host', 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
  await build({
    entryPoints: [path.join(root, 'bin', 'tether.js')],
    outfile: path.join(dir, 'bin', 'tether.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    logLevel: 'warning',
    // ws's optional native speedups: absent, it uses its own JavaScript.
    external: ['bufferutil', 'utf-8-validate'],
    define: { 'globalThis.TETHER_HOST_VERSION': JSON.stringify(version) },
    // The bundled CommonJS packages (ws, commander) call require for Node's own modules (the
    // entry's shebang line is kept above this by esbuild).
    banner: { js: "import { createRequire as __tetherRequire } from 'node:module';\nconst require = __tetherRequire(import.meta.url);" },
    legalComments: 'eof',
  });
  // The demo agent's script is read at run time, next to the module that names it.
  copyFileSync(path.join(root, 'src', 'host', 'providers', 'script.default.json'), path.join(dir, 'bin', 'script.default.json'));
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', outDir], { cwd: dir, encoding: 'utf8' }).trim().split('\n').at(-1)!;
  return { dir, tarball: path.join(outDir, packed), version };
}

if (import.meta.main) {
  const at = process.argv.indexOf('--out');
  const outDir = path.resolve(at > 0 ? process.argv[at + 1]! : path.join(root, 'dist'));
  mkdirSync(outDir, { recursive: true });
  const { tarball } = await buildHostPackage(outDir);
  console.log(tarball);
}
