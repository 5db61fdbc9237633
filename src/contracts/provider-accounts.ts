import { z } from 'zod';
import { AgentKindSchema } from './agent.ts';

// A slug, never a path: it names a folder and travels on command lines.
// The default account's id equals the CLI kind.
export const ProviderAccountIdSchema = z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/);
export type ProviderAccountId = z.output<typeof ProviderAccountIdSchema>;

export const ProviderAccountVariableSchema = z.object({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/),
  // A sensitive value never travels: the host sends "" with valueRedacted, and
  // saving that back keeps the stored secret.
  value: z.string(),
  sensitive: z.boolean(),
  valueRedacted: z.boolean().optional(),
});
export type ProviderAccountVariable = z.output<typeof ProviderAccountVariableSchema>;

export const ProviderAccountSchema = z.object({
  // A plain string, not AgentKind, so an account of a CLI this host does not
  // know still parses and is saved back unchanged.
  kind: z.string().min(1),
  label: z.string().optional(),
  color: z.string().optional(),
  // Absent = on.
  enabled: z.boolean().optional(),
  // Config folder, `~` allowed; absent on the default account.
  home: z.string().min(1).optional(),
  // Codex only: a login folder of its own sharing everything else with `home`.
  shadowHome: z.string().min(1).optional(),
  env: z.array(ProviderAccountVariableSchema).optional(),
});
export type ProviderAccount = z.output<typeof ProviderAccountSchema>;

export const ProviderAccountStateSchema = z.enum(['checking', 'disabled', 'not-found', 'signed-out', 'ready', 'folder-missing', 'unavailable', 'failed']);
export type ProviderAccountState = z.output<typeof ProviderAccountStateSchema>;

// What the CLI said when last asked; never stored.
export const ProviderAccountStatusSchema = z.object({
  id: ProviderAccountIdSchema,
  kind: z.string(),
  state: ProviderAccountStateSchema,
  email: z.string().nullable(),
  plan: z.string().nullable(),
  organization: z.string().nullable(),
  // Resolved folder; empty when the CLI has no folder variable.
  home: z.string(),
  message: z.string().nullable(),
  // 0 = never checked.
  checkedAt: z.number(),
  // Two accounts can take over each other's chats only when these are equal.
  transcripts: z.string().optional(),
});
export type ProviderAccountStatus = z.output<typeof ProviderAccountStatusSchema>;

export const ProviderAccountMapSchema = z.record(ProviderAccountIdSchema, ProviderAccountSchema);
export type ProviderAccountMap = z.output<typeof ProviderAccountMapSchema>;

export const ProviderAccountsSchema = z.object({
  accounts: ProviderAccountMapSchema,
  statuses: z.array(ProviderAccountStatusSchema),
  // False off macOS: no keychain to keep a secret in.
  secretsAvailable: z.boolean().optional(),
  loginCommands: z.partialRecord(AgentKindSchema, z.string()).optional(),
});
export type ProviderAccounts = z.output<typeof ProviderAccountsSchema>;

// The whole map: an id left out is removed (its folder stays on disk).
export const ProviderAccountsSavePayloadSchema = z.object({
  accounts: ProviderAccountMapSchema,
});
export type ProviderAccountsSavePayload = z.output<typeof ProviderAccountsSavePayloadSchema>;

export const ProviderAccountCreatePayloadSchema = z.object({
  kind: AgentKindSchema,
  label: z.string().trim().min(1).max(80),
  color: z.string().optional(),
});
export type ProviderAccountCreatePayload = z.output<typeof ProviderAccountCreatePayloadSchema>;

// The snapshot plus the id the host minted from the label.
export const ProviderAccountCreateResultSchema = ProviderAccountsSchema.extend({
  id: ProviderAccountIdSchema,
});
export type ProviderAccountCreateResult = z.output<typeof ProviderAccountCreateResultSchema>;

// Answers at once; the host re-asks the CLI for a while and reports through
// `accounts.changed`.
export const ProviderAccountWatchLoginPayloadSchema = z.object({
  id: ProviderAccountIdSchema,
});
export type ProviderAccountWatchLoginPayload = z.output<typeof ProviderAccountWatchLoginPayloadSchema>;
