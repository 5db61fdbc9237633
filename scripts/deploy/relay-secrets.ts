// The secrets a relay needs, how each is made (for a deploy and for `npm start`'s .dev.vars), and what
// a deploy keeps on this machine. Cloudflare never hands a secret back (`wrangler secret list` names
// them only), so a deploy that must print the owner's setup link again later keeps that one secret in
// a file of its own (0600, under .tether/, which git ignores) until the owner account is claimed; the
// signing and VAPID keys are never kept anywhere but on Cloudflare.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateSigningKey } from '../../src/relay/auth/keys.ts';

export const SIGNING_KEYS = 'TETHER_SIGNING_KEYS';
export const SETUP_SECRET = 'TETHER_SETUP_SECRET';
export const VAPID_KEYS = 'TETHER_VAPID_KEYS';

/** The keys the relay cannot do without or would orphan its users by replacing: made once, kept for good. */
export const KEY_SECRETS = [SIGNING_KEYS, VAPID_KEYS] as const;

/** A new value for one of the relay's secrets, in the shape src/relay expects. */
export async function newSecretValue(name: string): Promise<string> {
  switch (name) {
    // A JSON array of private ES256 JWKs with a kid: the first signs access tokens (src/relay/auth/keys.ts).
    case SIGNING_KEYS:
      return JSON.stringify([await generateSigningKey()]);
    // The same shape; browsers subscribe with the first key (src/relay/push/vapid.ts).
    case VAPID_KEYS:
      return JSON.stringify([await generateSigningKey(`vapid-${new Date().toISOString().slice(0, 10)}`)]);
    // Claims the owner account once; it rides in a link's fragment, so it is URL-safe.
    case SETUP_SECRET:
      return randomBytes(24).toString('base64url');
    default:
      throw new Error(`no generator for the secret ${name}`);
  }
}

/**
 * What the deploy keeps between runs for one Worker: its last URL, its D1 database (so a wrangler.toml
 * reset by `git checkout` or a pull, holding the placeholder id again, still finds it) and, until the
 * owner is claimed, the setup secret.
 */
export interface DeployState {
  url?: string;
  database?: { name: string; id: string };
  setupSecret?: string;
}

/** The deploy's file for a Worker: .tether/deploy/<worker>.json next to the config. */
export function stateFile(configPath: string, worker: string): string {
  return path.join(path.dirname(configPath), '.tether', 'deploy', `${worker}.json`);
}

export function readState(file: string): DeployState {
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as DeployState;
  } catch {
    return {};
  }
}

/** Writes the state readable by this user only; an empty state removes the file. */
export function writeState(file: string, state: DeployState): void {
  if (!state.url && !state.database && !state.setupSecret) {
    rmSync(file, { force: true });
    return;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  // writeFileSync's mode applies only to a new file; an older one is narrowed too.
  chmodSync(file, 0o600);
}
