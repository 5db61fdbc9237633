// What a provider registers (registry.ts lists them): apart from the list, so that each entry can be
// typed here without importing the list that imports it.
import type { z } from 'zod';
import type { AgentKind } from '../../contracts/index.ts';
import type { CliKind, CliProfile, Provider } from './provider.ts';

/** What making a provider may need beyond its section. */
export interface ProviderContext {
  /** Where the config's relative paths start (the config file's folder). */
  base: string;
  /** The host's version, which ACP agents and Codex are told as the client's. */
  version: string;
}

export interface ProviderEntry<S extends z.ZodObject<{ backend: z.ZodLiteral<string> }> = z.ZodObject<{ backend: z.ZodLiteral<string> }>> {
  /** The CLI this entry drives, the one kind it answers as; null: it takes any kind's slot (an ACP agent, the script). */
  kind: CliKind | null;
  /** How Tether drives that CLI (null for an entry that is no one CLI). */
  profile: CliProfile | null;
  /** Its section of the config's `providers`, `backend` first. */
  configSchema: S;
  create(config: z.output<S>, kind: AgentKind, context: ProviderContext): Provider;
  /** What the host's banner says it runs from: its command or its script; null when the section names none. */
  from(config: z.output<S>, base: string): string | null;
  /** A provider for the executable discovery found on PATH (with no config); only a CLI's entry has one. */
  discovered?(command: string, context: Pick<ProviderContext, 'version'>): Provider;
}

/** Types an entry by its own schema (so `create` gets its section's fields). */
export function defineProvider<S extends z.ZodObject<{ backend: z.ZodLiteral<string> }>>(entry: ProviderEntry<S>): ProviderEntry<S> {
  return entry;
}
