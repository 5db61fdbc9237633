// Model ids as people say them, and ids of families not known shown as they are.
import { describe, expect, it } from 'vitest';
import { modelName } from '../../src/client/model-name.ts';

describe('modelName', () => {
  it.each([
    ['claude-opus-4-8', 'Claude Opus 4.8'],
    ['claude-sonnet-4-5-20250929', 'Claude Sonnet 4.5'],
    ['claude-haiku-4-5', 'Claude Haiku 4.5'],
    ['claude-3-5-haiku-20241022', 'Claude 3.5 Haiku'],
    ['claude-sonnet-4.5', 'Claude Sonnet 4.5'],
    ['claude-opus-4-1[1m]', 'Claude Opus 4.1'],
    ['gpt-5.1-codex-mini', 'GPT-5.1 Codex Mini'],
    ['gpt-5-codex', 'GPT-5 Codex'],
    ['gpt-4o', 'GPT-4o'],
    ['gpt-oss-120b', 'GPT-OSS 120b'],
    ['gemini-2.5-pro', 'Gemini 2.5 Pro'],
    ['gemini-3-flash-preview', 'Gemini 3 Flash Preview'],
    ['qwen3-coder-plus', 'Qwen3 Coder Plus'],
  ])('%s is "%s"', (id, name) => {
    expect(modelName(id)).toBe(name);
  });

  it.each(['scripted', 'o3', 'o4-mini', 'opus', 'default', 'anthropic/claude', 'my-local-model', ''])('%s (no known family) stays as it is', (id) => {
    expect(modelName(id)).toBe(id);
  });
});
