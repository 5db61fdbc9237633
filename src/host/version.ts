// The host's version: the `version` of the package it runs from (this repository's, or the host
// package's when it is installed on its own, see packages/host).
import { readFileSync } from 'node:fs';

export const HOST_VERSION: string = readVersion();

function readVersion(): string {
  // A bundle defines it at build time; from source it is the repository's package.json.
  const built = (globalThis as { TETHER_HOST_VERSION?: unknown }).TETHER_HOST_VERSION;
  if (typeof built === 'string') return built;
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
