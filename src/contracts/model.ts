import { z } from 'zod';
import { AgentKindSchema } from './agent.ts';

// A model as a client names it: a catalog slug or an alias (Claude Code's
// `claude-opus-4-8[1m]`). It ends up on a command line, so it never starts with
// anything but a letter or digit and has none of a shell's or a CLI's syntax.
export const MODEL_NAME_MAX = 128;
export const ModelNameSchema = z
  .string()
  .min(1)
  .max(MODEL_NAME_MAX)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/[\]-]*$/, 'Expected a model name: a letter or digit, then letters, digits or . _ : / [ ] -');

// Shape only: the host's catalog normalizes a selection (alias → slug, unknown
// model → default, bad option → its default, unknown options dropped).
export const ModelSelectionSchema = z.object({
  model: ModelNameSchema,
  options: z.record(z.string(), z.union([z.string(), z.boolean()])),
});
export type ModelSelection = z.output<typeof ModelSelectionSchema>;

export const ModelOptionChoiceSchema = z.object({
  id: z.string().min(1),
  label: z.string(),
  description: z.string().optional(),
});
export type ModelOptionChoice = z.output<typeof ModelOptionChoiceSchema>;

// `defaultChoice` is not checked against `choices`; the catalog owns that.
export const ModelSelectOptionSchema = z.object({
  id: z.string().min(1),
  label: z.string(),
  type: z.literal('select'),
  choices: z.array(ModelOptionChoiceSchema).min(1),
  defaultChoice: z.string(),
});
export type ModelSelectOption = z.output<typeof ModelSelectOptionSchema>;

export const ModelBooleanOptionSchema = z.object({
  id: z.string().min(1),
  label: z.string(),
  type: z.literal('boolean'),
  defaultValue: z.boolean(),
  description: z.string().optional(),
});
export type ModelBooleanOption = z.output<typeof ModelBooleanOptionSchema>;

export const ModelOptionDescriptorSchema = z.discriminatedUnion('type', [ModelSelectOptionSchema, ModelBooleanOptionSchema]);
export type ModelOptionDescriptor = z.output<typeof ModelOptionDescriptorSchema>;

export const ModelInfoSchema = z.object({
  slug: z.string().min(1),
  name: z.string(),
  legacy: z.boolean(),
  isDefault: z.boolean(),
  options: z.array(ModelOptionDescriptorSchema),
  badge: z.string().optional(),
});
export type ModelInfo = z.output<typeof ModelInfoSchema>;

// A slug ends up on a command line, so it never starts with a hyphen.
export const ModelSlugSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'Expected a model slug');
export type ModelSlug = z.output<typeof ModelSlugSchema>;

export const ModelCatalogProfileSchema = z.object({
  options: z.array(ModelOptionDescriptorSchema),
  // Keyed by `contextWindow` option value, or `*` when there is one size.
  contextWindowTokens: z.record(z.string(), z.int().positive()),
});
export type ModelCatalogProfile = z.output<typeof ModelCatalogProfileSchema>;

export const ModelCatalogEntrySchema = z.object({
  slug: ModelSlugSchema,
  name: z.string().min(1),
  profile: z.string().min(1),
  badge: z.string().optional(),
  aliases: z.array(z.string().min(1)).optional(),
  legacy: z.boolean().optional(),
});
export type ModelCatalogEntry = z.output<typeof ModelCatalogEntrySchema>;

// One provider's models as shipped, or a newer copy replacing it; `updatedAt`
// decides which wins. Slug and alias uniqueness is not checked.
export const ModelCatalogDataSchema = z
  .object({
    updatedAt: z.iso.datetime(),
    defaultModel: ModelSlugSchema,
    profiles: z.record(z.string(), ModelCatalogProfileSchema),
    models: z.array(ModelCatalogEntrySchema).min(1),
  })
  .refine((catalog) => catalog.models.every((model) => Object.hasOwn(catalog.profiles, model.profile)), {
    message: 'Every model needs a profile the catalog has',
    path: ['models'],
  })
  .refine((catalog) => catalog.models.some((model) => model.slug === catalog.defaultModel), {
    message: 'The default model has to be one of the models',
    path: ['defaultModel'],
  });
export type ModelCatalogData = z.output<typeof ModelCatalogDataSchema>;

// Narrowest first; the order is what `narrowerMode` compares.
export const MODE_ORDER = ['supervised', 'auto-accept-edits', 'auto', 'full-access'] as const;

export const RuntimeModeSchema = z.enum(MODE_ORDER);
export type RuntimeMode = z.output<typeof RuntimeModeSchema>;

/** The more restrictive of two modes, e.g. a chat's ask capped by a host ceiling. */
export function narrowerMode(a: RuntimeMode, b: RuntimeMode): RuntimeMode {
  return MODE_ORDER.indexOf(a) <= MODE_ORDER.indexOf(b) ? a : b;
}

// Clients draw a control only when its capability is there.
export const ProviderCapabilitiesSchema = z.object({
  chat: z.boolean(),
  terminal: z.boolean(),
  hooks: z.boolean(),
  streamsToolOutput: z.boolean(),
  diffs: z.enum(['unified', 'before-after', 'none']),
  attachments: z.boolean(),
  mentions: z.boolean(),
  denyReason: z.boolean(),
  allowAlways: z.boolean(),
  asyncQuestions: z.boolean(),
  compaction: z.enum(['native', 'prompt', 'none']),
  reportsCost: z.boolean(),
  reportsContextWindow: z.boolean(),
  reportsThinking: z.boolean(),
  slashCommands: z.boolean(),
});
export type ProviderCapabilities = z.output<typeof ProviderCapabilitiesSchema>;

export const ProviderInfoSchema = z.object({
  kind: AgentKindSchema,
  name: z.string(),
  installed: z.boolean(),
  version: z.string().nullable(),
  // Empty when not installed or when the CLI has no chat backend.
  models: z.array(ModelInfoSchema),
  defaultModel: z.string().nullable(),
  capabilities: ProviderCapabilitiesSchema,
  // Template with `{id}` and a standalone `{flags}` word; fill with resumeCommandFor.
  resumeCommand: z.string(),
});
export type ProviderInfo = z.output<typeof ProviderInfoSchema>;

// Tether addition (not in agent-contracts): what the host's own policy allows, so a client can show
// it and offer only what will be accepted. The host enforces it whatever a client sends.
export const HostPolicySummarySchema = z.object({
  // Folders chats may work in (and below), resolved.
  roots: z.array(z.string()),
  // Where a chat works when `chat.create` names no folder.
  defaultFolder: z.string(),
  // The widest runtime mode a chat may ask for.
  modeCeiling: RuntimeModeSchema,
  // The mode of a chat created without one.
  defaultMode: RuntimeModeSchema,
});
export type HostPolicySummary = z.output<typeof HostPolicySummarySchema>;

// Tether addition: how the host came to serve what it serves, and where its owner changes it (on
// the machine; nothing on the relay can). The same lines `tether host doctor` prints.
export const HostAgentLineSchema = z.object({
  kind: AgentKindSchema,
  name: z.string(),
  served: z.boolean(),
  // The executable (or script file) it runs; null when there is none.
  from: z.string().nullable(),
  version: z.string().nullable(),
  // Why it is served or not, one line.
  why: z.string(),
});
export type HostAgentLine = z.output<typeof HostAgentLineSchema>;

export const HostSetupSchema = z.object({
  // Every agent the host knows, served or not.
  agents: z.array(HostAgentLineSchema),
  // `config`: the config's own `providers`; `discovered`: the CLIs on the owner's PATH; `demo`: none found.
  source: z.enum(['config', 'discovered', 'demo']),
  // The config file the host reads (or would read: `exists` false), and its data folder.
  configFile: z.string(),
  configExists: z.boolean(),
  dataDir: z.string(),
});
export type HostSetup = z.output<typeof HostSetupSchema>;

export const ProviderListResultSchema = z.object({
  providers: z.array(ProviderInfoSchema),
  // Tether addition: the host's policy (absent from hosts before it).
  policy: HostPolicySummarySchema.optional(),
  // Tether addition: its agents and config (absent from hosts before it, and from hosts given providers directly).
  setup: HostSetupSchema.optional(),
});
export type ProviderListResult = z.output<typeof ProviderListResultSchema>;
