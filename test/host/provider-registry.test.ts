// The provider registry (src/host/providers/registry.ts): the host config, the roster and discovery
// read its one list, so what it holds is what they know, and nothing else.
import { describe, expect, it } from 'vitest';
import { HostConfigSchema, providersFrom } from '../../src/host/config.ts';
import { backendOf, CLI_KINDS, CLI_PROFILES, cliEntry, entryFor, PROVIDERS } from '../../src/host/providers/registry.ts';
import { unservedInfo } from '../../src/host/providers/roster.ts';

describe('the provider registry', () => {
  it('the config takes a section for every registered backend, and only those', () => {
    const backends = PROVIDERS.map((entry) => backendOf(entry));
    expect(backends).toEqual(['claude', 'codex', 'gemini', 'copilot', 'acp', 'script']);
    for (const entry of PROVIDERS) {
      const section = backendOf(entry) === 'acp' ? { backend: 'acp', name: 'OpenCode', command: 'opencode' } : { backend: backendOf(entry) };
      const slot = entry.kind ?? 'apple';
      expect(HostConfigSchema.safeParse({ providers: { [slot]: section } }).success, backendOf(entry)).toBe(true);
    }
    const unknown = HostConfigSchema.safeParse({ providers: { claude: { backend: 'cursor' } } });
    expect(unknown.success).toBe(false);
    expect(unknown.error?.issues[0]?.path).toEqual(['providers', 'claude', 'backend']);
  });

  it('each section is made by its own entry: a CLI answers only as its kind, the script and an ACP agent in any slot', () => {
    const config = HostConfigSchema.parse({
      providers: { gemini: { backend: 'script' }, apple: { backend: 'acp', name: 'Qwen Code', command: 'qwen', args: ['--acp'] } },
    });
    const providers = providersFrom(config, '/tmp', 'test');
    expect(providers.map((p) => [p.kind, p.info().name])).toEqual([
      ['gemini', 'Gemini CLI (scripted)'],
      ['apple', 'Qwen Code'],
    ]);
    const wrong = HostConfigSchema.parse({ providers: { claude: { backend: 'codex' } } });
    expect(() => providersFrom(wrong, '/tmp', 'test')).toThrow('The codex backend answers only as codex, not as claude');
  });

  it("the roster lists the CLIs the entries drive, each with its entry's profile", () => {
    expect(CLI_KINDS).toEqual(['claude', 'codex', 'gemini', 'copilot']);
    for (const kind of CLI_KINDS) {
      expect(cliEntry(kind).profile).toBe(CLI_PROFILES[kind]);
      expect(unservedInfo(kind, { installed: false, version: null })).toMatchObject({
        kind,
        name: CLI_PROFILES[kind].name,
        resumeCommand: CLI_PROFILES[kind].resumeCommand,
        capabilities: { chat: false },
      });
      expect(cliEntry(kind).discovered, kind).toBeTypeOf('function');
    }
    expect(() => entryFor('cursor')).toThrow('No provider has the backend cursor');
  });
});
