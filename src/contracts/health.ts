// The relay's health check, `GET /api/health`: what an operator (or `tether host doctor`, or a
// deploy script) reads to tell whether a deployment can serve. No secret and no user data in it.
import { z } from 'zod';

/**
 * Whether the relay's key secrets import (never their contents). `signing` (TETHER_SIGNING_KEYS) must
 * be ok for anyone to sign in; `push` (TETHER_VAPID_KEYS) is `off` when unset, which only means no
 * pushes, and `invalid` when set but broken, which fails every push subscription.
 */
export const KeysHealthSchema = z.object({
  signing: z.enum(['ok', 'missing', 'invalid']),
  push: z.enum(['ok', 'off', 'invalid']),
});
export type KeysHealth = z.output<typeof KeysHealthSchema>;

export const HealthSchema = z.object({
  /** D1 answered, every migration this build brings is applied, signing keys import and push keys are not broken (status 200; else 503). */
  ok: z.boolean(),
  /** The relay's version (package.json) and, when the deployment recorded it, the git commit it was built from. */
  version: z.string(),
  commit: z.string().nullable(),
  db: z.enum(['ok', 'unreachable']),
  migrations: z.object({
    /** The newest migration applied to D1 (its tag, e.g. `0003_push_origin`), or null when none is (or D1 was not reached). */
    applied: z.string().nullable(),
    /** The newest migration this build brings. */
    expected: z.string(),
    /** This build's migrations D1 does not have yet, oldest first; null when D1 was not reached. */
    pending: z.array(z.string()).nullable(),
  }),
  keys: KeysHealthSchema,
});
export type Health = z.output<typeof HealthSchema>;
