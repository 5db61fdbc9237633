import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MODE_ORDER,
  ModelCatalogDataSchema,
  ModelCatalogEntrySchema,
  ModelInfoSchema,
  ModelOptionDescriptorSchema,
  ModelSelectionSchema,
  narrowerMode,
  ProviderCapabilitiesSchema,
  ProviderInfoSchema,
  ProviderListResultSchema,
  RuntimeModeSchema,
} from '../../src/contracts/model.ts';

// The example from the providers-and-accounts page.
const CATALOG = {
  updatedAt: '2026-10-05T00:00:00Z',
  defaultModel: 'example-model',
  profiles: {
    standard: { options: [], contextWindowTokens: { '*': 32000 } },
  },
  models: [{ slug: 'example-model', name: 'Example model', profile: 'standard' }],
};

const messagesOf = (result: { error?: { issues: { message: string }[] } }) => result.error?.issues.map((issue) => issue.message) ?? [];

describe('ModelCatalogData', () => {
  it('accepts the documented example, and a selection of its default', () => {
    const catalog = ModelCatalogDataSchema.parse(CATALOG);
    expect(ModelSelectionSchema.parse({ model: catalog.defaultModel, options: {} })).toEqual({
      model: 'example-model',
      options: {},
    });
  });

  it('refuses a model whose profile the catalog lacks', () => {
    const result = ModelCatalogDataSchema.safeParse({
      ...CATALOG,
      models: [...CATALOG.models, { slug: 'other', name: 'Other', profile: 'missing' }],
    });
    expect(messagesOf(result)).toEqual(['Every model needs a profile the catalog has']);
  });

  it('does not take an inherited property for a profile', () => {
    const result = ModelCatalogDataSchema.safeParse({
      ...CATALOG,
      models: [{ slug: 'example-model', name: 'Example model', profile: 'toString' }],
    });
    expect(messagesOf(result)).toContain('Every model needs a profile the catalog has');
  });

  it('refuses a default model that is not in the list', () => {
    const result = ModelCatalogDataSchema.safeParse({ ...CATALOG, defaultModel: 'gone' });
    expect(messagesOf(result)).toEqual(['The default model has to be one of the models']);
  });

  it('needs at least one model and an ISO date-time', () => {
    expect(ModelCatalogDataSchema.safeParse({ ...CATALOG, models: [] }).success).toBe(false);
    expect(ModelCatalogDataSchema.safeParse({ ...CATALOG, updatedAt: '2026-10-05' }).success).toBe(false);
    expect(ModelCatalogDataSchema.safeParse({ ...CATALOG, updatedAt: 'yesterday' }).success).toBe(false);
  });

  it('needs positive integer context sizes', () => {
    const profiles = { standard: { options: [], contextWindowTokens: { '*': 0 } } };
    expect(ModelCatalogDataSchema.safeParse({ ...CATALOG, profiles }).success).toBe(false);
  });

  it('does not check slug uniqueness', () => {
    expect(ModelCatalogDataSchema.safeParse({ ...CATALOG, models: [CATALOG.models[0], CATALOG.models[0]] }).success).toBe(true);
  });
});

describe('model slugs', () => {
  const entry = (slug: string) => ({ slug, name: 'M', profile: 'standard' });

  it('accept lowercase letters, digits, dots, underscores and hyphens', () => {
    for (const slug of ['gpt-5.1', 'o3', 'claude_opus-4', '9lives']) {
      expect(ModelCatalogEntrySchema.safeParse(entry(slug)).success, slug).toBe(true);
    }
  });

  it('refuse a leading hyphen, capitals, spaces and the empty slug, saying why', () => {
    for (const slug of ['-rf', 'GPT', 'a b', '', '.hidden', 'a/b']) {
      expect(messagesOf(ModelCatalogEntrySchema.safeParse(entry(slug))), slug).toContain('Expected a model slug');
    }
  });

  it('refuse empty aliases', () => {
    expect(ModelCatalogEntrySchema.safeParse({ ...entry('m'), aliases: [''] }).success).toBe(false);
  });
});

describe('model options', () => {
  it('are a select with at least one choice, or a boolean', () => {
    const select = { id: 'effort', label: 'Effort', type: 'select', choices: [{ id: 'high', label: 'High' }], defaultChoice: 'high' };
    expect(ModelOptionDescriptorSchema.safeParse(select).success).toBe(true);
    expect(ModelOptionDescriptorSchema.safeParse({ ...select, choices: [] }).success).toBe(false);
    // defaultChoice is deliberately not checked against the choices.
    expect(ModelOptionDescriptorSchema.safeParse({ ...select, defaultChoice: 'nope' }).success).toBe(true);
    const toggle = { id: 'fast', label: 'Fast', type: 'boolean', defaultValue: false };
    expect(ModelOptionDescriptorSchema.safeParse(toggle).success).toBe(true);
    expect(ModelOptionDescriptorSchema.safeParse({ ...toggle, type: 'toggle' }).success).toBe(false);
    expect(ModelOptionDescriptorSchema.safeParse({ ...toggle, defaultValue: 'no' }).success).toBe(false);
  });

  it('selection options are strings or booleans', () => {
    expect(ModelSelectionSchema.safeParse({ model: 'm', options: { effort: 'high', fast: true } }).success).toBe(true);
    expect(ModelSelectionSchema.safeParse({ model: 'm', options: { effort: 3 } }).success).toBe(false);
    expect(ModelSelectionSchema.safeParse({ model: '', options: {} }).success).toBe(false);
    expect(ModelSelectionSchema.safeParse({ model: 'm' }).success).toBe(false);
  });
});

describe('runtime modes', () => {
  it('run from narrowest to widest', () => {
    expect(MODE_ORDER).toEqual(['supervised', 'auto-accept-edits', 'auto', 'full-access']);
    expect(RuntimeModeSchema.options).toEqual([...MODE_ORDER]);
    expect(RuntimeModeSchema.safeParse('bypass').success).toBe(false);
  });

  it('narrowerMode picks the more restrictive one', () => {
    expect(narrowerMode('full-access', 'auto')).toBe('auto');
    expect(narrowerMode('supervised', 'full-access')).toBe('supervised');
    expect(narrowerMode('auto-accept-edits', 'auto-accept-edits')).toBe('auto-accept-edits');
  });

  it('narrowerMode is symmetric and never wider than either side', () => {
    const mode = fc.constantFrom(...MODE_ORDER);
    fc.assert(
      fc.property(mode, mode, (a, b) => {
        const narrow = narrowerMode(a, b);
        expect(narrowerMode(b, a)).toBe(narrow);
        expect(MODE_ORDER.indexOf(narrow)).toBe(Math.min(MODE_ORDER.indexOf(a), MODE_ORDER.indexOf(b)));
      }),
    );
  });
});

describe('providers', () => {
  const capabilities = {
    chat: true,
    terminal: true,
    hooks: false,
    streamsToolOutput: true,
    diffs: 'unified',
    attachments: true,
    mentions: true,
    denyReason: true,
    allowAlways: true,
    asyncQuestions: false,
    compaction: 'native',
    reportsCost: true,
    reportsContextWindow: true,
    reportsThinking: true,
    slashCommands: true,
  };
  const provider = {
    kind: 'claude',
    name: 'Claude Code',
    installed: true,
    version: '2.0.0',
    models: [{ slug: 'example-model', name: 'Example', legacy: false, isDefault: true, options: [] }],
    defaultModel: 'example-model',
    capabilities,
    resumeCommand: 'claude {flags} --resume {id}',
  };

  it('describe an installed CLI and a missing one', () => {
    expect(ProviderListResultSchema.safeParse({ providers: [provider] }).success).toBe(true);
    const missing = { ...provider, installed: false, version: null, models: [], defaultModel: null };
    expect(ProviderInfoSchema.safeParse(missing).success).toBe(true);
  });

  it('need every capability and its closed values', () => {
    const { hooks: _, ...withoutHooks } = capabilities;
    expect(ProviderCapabilitiesSchema.safeParse(withoutHooks).success).toBe(false);
    expect(ProviderCapabilitiesSchema.safeParse({ ...capabilities, diffs: 'split' }).success).toBe(false);
    expect(ProviderCapabilitiesSchema.safeParse({ ...capabilities, compaction: 'auto' }).success).toBe(false);
  });

  it('need version present even when unknown', () => {
    const { version: _, ...withoutVersion } = provider;
    expect(ProviderInfoSchema.safeParse(withoutVersion).success).toBe(false);
  });

  it('model infos need slug, flags and options', () => {
    expect(ModelInfoSchema.safeParse({ ...provider.models[0], badge: 'New' }).success).toBe(true);
    expect(ModelInfoSchema.safeParse({ ...provider.models[0], slug: '' }).success).toBe(false);
    expect(ModelInfoSchema.safeParse({ ...provider.models[0], isDefault: undefined }).success).toBe(false);
  });
});
