// The models Claude Code offers, as the CLI names them (`--model` takes these aliases), and the one
// way a selection is made to fit them: an alias or a full model name becomes its slug, an unknown
// model becomes the default, an option value the model does not offer becomes its default, and
// options it does not have are dropped.
import { ModelCatalogDataSchema } from '../../../contracts/index.ts';
import type { ModelCatalogData, ModelInfo, ModelOptionDescriptor, ModelSelection } from '../../../contracts/index.ts';

const effort: ModelOptionDescriptor = {
  id: 'effort',
  label: 'Effort',
  type: 'select',
  choices: [
    { id: 'low', label: 'Low' },
    { id: 'medium', label: 'Medium' },
    { id: 'high', label: 'High' },
    { id: 'xhigh', label: 'Extra high' },
    { id: 'max', label: 'Max' },
  ],
  defaultChoice: 'high',
};

export const CLAUDE_MODELS: ModelCatalogData = ModelCatalogDataSchema.parse({
  updatedAt: '2026-11-30T00:00:00Z',
  defaultModel: 'opus',
  profiles: {
    standard: { options: [effort], contextWindowTokens: { '*': 200_000 } },
    small: { options: [], contextWindowTokens: { '*': 200_000 } },
  },
  models: [
    // The CLI's own default is the 1M-context variant (`claude-opus-4-8[1m]`); `--model opus` runs 200k.
    { slug: 'opus', name: 'Opus', profile: 'standard', aliases: ['claude-opus-4-8', 'claude-opus-4-8[1m]'] },
    { slug: 'sonnet', name: 'Sonnet', profile: 'standard', aliases: ['claude-sonnet-5'] },
    { slug: 'fable', name: 'Fable', profile: 'standard', aliases: ['claude-fable-5'] },
    { slug: 'haiku', name: 'Haiku', profile: 'small', aliases: ['claude-haiku-4-5'] },
  ],
});

/** What `provider.list` shows. */
export function modelInfos(catalog: ModelCatalogData): ModelInfo[] {
  return catalog.models.map((model) => ({
    slug: model.slug,
    name: model.name,
    legacy: model.legacy ?? false,
    isDefault: model.slug === catalog.defaultModel,
    options: catalog.profiles[model.profile]?.options ?? [],
    ...(model.badge ? { badge: model.badge } : {}),
  }));
}

export function normalizeSelection(catalog: ModelCatalogData, selection: ModelSelection | undefined): ModelSelection {
  const asked = selection?.model.toLowerCase();
  const model =
    catalog.models.find((m) => m.slug === asked || m.aliases?.some((a) => a.toLowerCase() === asked)) ??
    catalog.models.find((m) => m.slug === catalog.defaultModel)!;
  const options: ModelSelection['options'] = {};
  for (const option of catalog.profiles[model.profile]?.options ?? []) {
    const value = selection?.options[option.id];
    if (option.type === 'select') {
      options[option.id] = typeof value === 'string' && option.choices.some((c) => c.id === value) ? value : option.defaultChoice;
    } else {
      options[option.id] = typeof value === 'boolean' ? value : option.defaultValue;
    }
  }
  return { model: model.slug, options };
}
