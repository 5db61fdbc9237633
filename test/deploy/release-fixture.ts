// The previous release's D1, as test/deploy/fixtures/release-0.1.0.sql holds it: what
// scripts/release-snapshot.ts made it from and the accounts in it, so the upgrade test can sign in.
import path from 'node:path';

/** The release that landed last: the relay self-hosters may be running, at migration 0003. */
export const RELEASE = { version: '0.1.0', commit: '4eb4aff' } as const;
export const RELEASE_MIGRATIONS = ['0000_init.sql', '0001_identity.sql', '0002_push.sql', '0003_push_origin.sql'];
export const RELEASE_FIXTURE = path.join(import.meta.dirname, 'fixtures', `release-${RELEASE.version}.sql`);

/** The relay's owner, claimed with the setup secret; signs in with a password. */
export const FIXTURE_OWNER = { email: 'owner@release.example', password: 'release-owner-password-0123', name: 'Release owner' };
/** A team member who joined by an invitation and also signs in through OIDC. */
export const FIXTURE_MEMBER = { email: 'alice@release.example', password: 'release-alice-password-0123', name: 'Alice' };
/** A member the owner disabled. */
export const FIXTURE_DISABLED = { email: 'carol@release.example', password: 'release-carol-password-0123', name: 'Carol' };
/** A person who only ever signed in through OIDC (no password). */
export const FIXTURE_OIDC_ONLY = { email: 'dana@release.example', name: 'Dana' };
/** The paired host and its chats. */
export const FIXTURE_HOST = { name: 'release-workstation', chats: ['release-chat', 'release-chat-waiting'] } as const;
