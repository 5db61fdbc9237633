// The Worker as `npm run deploy` would upload it, built without a Cloudflare account:
// `wrangler deploy --dry-run --outdir --env production` with
// the web app built from this tree as its assets. It must stay within the Workers limits of the FREE
// plan, since self-hosters may be on it. The limits, from developers.cloudflare.com/workers/platform/limits/:
// - Worker size: 3 MB after compression on Workers Free (10 MB on Paid); Cloudflare's docs are moving to a
//   single 64 MiB uncompressed limit on every plan (cloudflare-docs#31002), which wrangler 4.164 already
//   reports against (MAX_UNCOMPRESSED_SIZE_BYTES). Both are asserted: the compressed one is the stricter.
// - Static assets: 20,000 files per Worker version on Free (100,000 on Paid), 25 MiB per file.
// Sizes are measured the way wrangler does (its bundle reporter): the modules' bytes, and gzip of them
// all together at zlib's default level.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWeb } from '../../scripts/build-web.ts';
import { dryRunDeploy } from '../../scripts/local-relay.ts';

const MB = 1000 * 1000;
const MiB = 1024 * 1024;
const FREE_PLAN = {
  /** "3 MB" read as 3,000,000 bytes: the stricter reading (wrangler's own error says 3 MiB). */
  workerGzipBytes: 3 * MB,
  workerBytes: 64 * MiB,
  assetFiles: 20_000,
  assetBytes: 25 * MiB,
};

const root = path.resolve(import.meta.dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'tether-bundle-'));
const web = path.join(work, 'web');
const outDir = path.join(work, 'worker');
let output = '';

/** Every file under `dir`, with its path relative to it. */
function filesIn(dir: string): { name: string; bytes: number }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      return { name: path.relative(dir, file), bytes: statSync(file).size };
    });
}

beforeAll(() => {
  buildWeb({ quiet: true, outDir: web });
  output = dryRunDeploy(outDir, web, 'production');
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the deploy bundle (wrangler deploy --dry-run --env production)', () => {
  it("stays under the free plan's Worker size limits, measured as wrangler measures it", () => {
    expect(output).toContain('--dry-run: exiting now.');
    // The modules wrangler uploads: not its README, nor source maps (not uploaded unless upload_source_maps).
    const modules = filesIn(outDir).filter((file) => file.name !== 'README.md' && !file.name.endsWith('.map'));
    expect(modules.map((m) => m.name)).toContain('index.js');
    const all = Buffer.concat(modules.map((m) => readFileSync(path.join(outDir, m.name))));
    const bytes = all.length;
    const gzipBytes = gzipSync(all).length;
    console.log(
      `Worker bundle: ${modules.length} module(s), ${bytes} bytes (${(bytes / 1024).toFixed(2)} KiB), gzip ${gzipBytes} bytes (${(gzipBytes / 1024).toFixed(2)} KiB); ` +
        `free plan limits: ${FREE_PLAN.workerGzipBytes} bytes after gzip, ${FREE_PLAN.workerBytes} bytes uncompressed`,
    );
    // Our figures are wrangler's own ("Total Upload: <n> KiB / gzip: <n> KiB").
    const reported = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(output);
    expect(reported, output).not.toBeNull();
    expect(Number(reported![1])).toBeCloseTo(bytes / 1024, 2);
    expect(Number(reported![2])).toBeCloseTo(gzipBytes / 1024, 2);
    expect(gzipBytes).toBeLessThan(FREE_PLAN.workerGzipBytes);
    expect(bytes).toBeLessThan(FREE_PLAN.workerBytes);
  });

  it('binds what the relay needs: D1 and its four Durable Objects', () => {
    for (const binding of ['env.DB (tether)', 'env.HOST_LINK (HostLink)', 'env.CHAT_ROOM (ChatRoom)', 'env.LOBBY (Lobby)', 'env.RATE_GATE (RateGate)']) {
      expect(output).toContain(binding);
    }
  });

  it('holds only the relay and its runtime dependencies: no tests, scripts or dev tools', () => {
    const bundle = readFileSync(path.join(outDir, 'index.js'), 'utf8');
    // esbuild heads each bundled file with a `// <path>` line.
    const sources = new Set([...bundle.matchAll(/^\/\/ ((?:src|test|scripts|node_modules)\/\S+)$/gm)].map((m) => m[1]!));
    expect([...sources].some((file) => file.startsWith('src/relay/'))).toBe(true);
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const devTools = Object.keys(pkg.devDependencies).map((name) => `node_modules/${name}/`);
    const wrong = [...sources].filter((file) => file.startsWith('test/') || file.startsWith('scripts/') || devTools.some((dir) => file.startsWith(dir)));
    expect(wrong).toEqual([]);
  });

  it("ships the web app within the free plan's static asset limits", () => {
    const assets = filesIn(web);
    const largest = assets.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const total = assets.reduce((sum, file) => sum + file.bytes, 0);
    console.log(
      `Assets: ${assets.length} files, ${total} bytes in all, largest ${largest.name} ${largest.bytes} bytes; ` +
        `free plan limits: ${FREE_PLAN.assetFiles} files, ${FREE_PLAN.assetBytes} bytes per file`,
    );
    expect(assets.map((file) => file.name)).toEqual(expect.arrayContaining(['index.html', 'sw.js']));
    expect(assets.length).toBeLessThanOrEqual(FREE_PLAN.assetFiles);
    expect(largest.bytes).toBeLessThanOrEqual(FREE_PLAN.assetBytes);
  });
});
