// The browser the end-to-end tests drive: Debian's Chromium (playwright's own download cannot work
// here). `npm test` calls this first; it installs the package when /usr/bin/chromium is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.TETHER_CHROMIUM ?? '/usr/bin/chromium';

export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  const root = process.getuid?.() === 0;
  const apt = (args: string[]) => {
    const [cmd, argv] = root ? ['apt-get', args] : ['sudo', ['-n', 'apt-get', ...args]];
    const run = spawnSync(cmd, argv, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (run.status !== 0) {
      throw new Error(
        `Chromium is needed by the browser tests and could not be installed (apt-get ${args.join(' ')} failed). ` +
          'Install it with: apt-get update && apt-get install -y chromium, or set TETHER_CHROMIUM to a Chromium binary.',
      );
    }
  };
  console.log('Installing Chromium for the browser tests (apt-get install chromium)…');
  apt(['update', '-qq']);
  apt(['install', '-y', '-qq', 'chromium']);
}

if (import.meta.url === `file://${process.argv[1]}`) ensureChromium();
