// The two ACP agents the host's tests drive for real (issue 19): OpenCode and Qwen Code. They are
// pinned here, not in package.json, because their lock entries cannot be complete from the registry
// this project is built from: both list per-platform optional packages (opencode-darwin-arm64,
// @teddyzhu/clipboard-darwin-arm64, …) that it does not serve, so npm leaves them out of the lock and
// `npm ci` then refuses the lock ("Missing: … from lock file"). `npm test` installs them into their own
// prefix when missing and links their commands into node_modules/.bin, where the tests look.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';

export const ACP_AGENTS = {
  'opencode-ai': { version: '1.18.33', bin: 'opencode' },
  '@qwen-code/qwen-code': { version: '0.24.4', bin: 'qwen' },
} as const;

const root = path.resolve(import.meta.dirname, '..');
const prefix = path.join(root, 'node_modules', '.acp-agents');

function installed(pkg: string, version: string): boolean {
  try {
    return (JSON.parse(readFileSync(path.join(prefix, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version === version;
  } catch {
    return false;
  }
}

export function ensureAcpAgents(): void {
  const missing = Object.entries(ACP_AGENTS).filter(([pkg, { version }]) => !installed(pkg, version));
  if (missing.length > 0) {
    console.log(`Installing the ACP agents the tests drive (${missing.map(([pkg, { version }]) => `${pkg}@${version}`).join(', ')})…`);
    mkdirSync(prefix, { recursive: true });
    const run = spawnSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-audit',
        '--no-fund',
        '--no-package-lock',
        '--loglevel=error',
        ...missing.map(([pkg, { version }]) => `${pkg}@${version}`),
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (run.status !== 0) throw new Error(`The ACP agents the tests need could not be installed (npm install exited ${run.status}).`);
  }
  for (const { bin } of Object.values(ACP_AGENTS)) {
    const link = path.join(root, 'node_modules', '.bin', bin);
    rmSync(link, { force: true });
    symlinkSync(path.join(prefix, 'node_modules', '.bin', bin), link);
    if (!existsSync(link)) throw new Error(`${bin} is not where the tests look (${link}).`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) ensureAcpAgents();
