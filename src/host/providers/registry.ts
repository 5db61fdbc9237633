// The provider registry: every backend a host config can name, one entry each, in one list (the only
// place a provider is named). An entry is its folder's `entry.ts`: the config section it takes
// (`configSchema`, with its `backend`), the CLI it drives and the one kind it answers as (`kind`,
// `profile`: what provider.list says of it even where it is not served), and how to make the
// provider (`create`, and `discovered` for an executable found on PATH). The host config's schema
// (config.ts), the roster (roster.ts) and discovery (discovery.ts) read this list (provider-entry.ts
// says what an entry holds); a new CLI is a
// new folder and one line here (DEVELOPERS.md, "Adding a provider").
import { z } from 'zod';
import type { AgentKind } from '../../contracts/index.ts';
import { acpEntry } from './acp/entry.ts';
import { claudeEntry } from './claude/entry.ts';
import { codexEntry } from './codex/entry.ts';
import { copilotEntry } from './copilot/entry.ts';
import { geminiEntry } from './gemini/entry.ts';
import type { CliKind, CliProfile } from './provider.ts';
import type { ProviderEntry } from './provider-entry.ts';
import { scriptEntry } from './script-entry.ts';

/** Every provider, the CLIs in the order provider.list and discovery show them. */
export const PROVIDERS = [claudeEntry, codexEntry, geminiEntry, copilotEntry, acpEntry, scriptEntry] as const;

// A tuple of the entries' schemas, in order, as z.discriminatedUnion wants them typed.
type SchemasOf<T extends readonly unknown[]> = { -readonly [K in keyof T]: T[K] extends ProviderEntry<infer S> ? S : never };
type SectionSchemas = SchemasOf<typeof PROVIDERS>;

/** The same list, each entry as the base type (for lookups that do not need its own section's type). */
const ENTRIES: readonly ProviderEntry[] = PROVIDERS;

/** One section of the config's `providers`: whichever entry its `backend` names. */
export const ProviderSectionSchema = z.discriminatedUnion('backend', PROVIDERS.map((entry) => entry.configSchema) as unknown as SectionSchemas);
export type ProviderSection = z.output<typeof ProviderSectionSchema>;

/** The entry a section's `backend` names (the schema admitted only those). */
export function entryFor(backend: string): ProviderEntry {
  const entry = ENTRIES.find((candidate) => backendOf(candidate) === backend);
  if (!entry) throw new Error(`No provider has the backend ${backend}`);
  return entry;
}

/** The entry of a CLI by its kind. */
export function cliEntry(kind: CliKind): ProviderEntry {
  const entry = ENTRIES.find((candidate) => candidate.kind === kind && candidate.profile);
  if (!entry) throw new Error(`No provider drives the CLI ${kind}`);
  return entry;
}

/** The `backend` an entry's section names. */
export function backendOf(entry: ProviderEntry): string {
  return entry.configSchema.shape.backend.value;
}

/** Each CLI's profile, by kind, read from the entries. */
export const CLI_PROFILES: Readonly<Record<CliKind, CliProfile>> = Object.fromEntries(
  ENTRIES.flatMap((entry) => (entry.kind && entry.profile ? [[entry.kind, entry.profile]] : [])),
) as Record<CliKind, CliProfile>;

export const CLI_KINDS = Object.keys(CLI_PROFILES) as CliKind[];
