// `provider.list` reports every agent CLI: the served ones as their providers describe themselves,
// the others as installed (or not) with their real versions, no models and `chat: false`. The CLIs
// are the pinned binaries in node_modules/.bin, linked into a folder of the test's PATH: a
// node_modules/.bin itself (first on PATH under npm and npx) is a project's copies, never looked in.
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderListResultSchema } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import { CLI_PROFILES, listProviders, versionIn } from '../../src/host/providers/roster.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

const bin = path.resolve(import.meta.dirname, '../../node_modules/.bin');
const pinned = (name: string) => (JSON.parse(readFileSync(path.join(bin, '..', name, 'package.json'), 'utf8')) as { version: string }).version;

let data: ReturnType<typeof tempDir>;
let core: HostCore;
let client: TestClient;
let savedPath: string | undefined;

beforeAll(async () => {
  data = tempDir('tether-provider-list-');
  const own = path.join(data.dir, 'own-bin');
  mkdirSync(own);
  for (const name of ['claude', 'codex', 'gemini', 'copilot']) symlinkSync(path.join(bin, name), path.join(own, name));
  savedPath = process.env.PATH;
  process.env.PATH = `${own}${path.delimiter}${savedPath}`;
  core = await openCore(data.dir);
  client = new TestClient(core);
});

afterAll(async () => {
  process.env.PATH = savedPath;
  await core?.close();
  data?.cleanup();
});

describe('provider.list', () => {
  it('lists the served provider first, then every other CLI as installed here with its real version and nothing to chat with', {
    timeout: 120_000,
  }, async () => {
    const first = ProviderListResultSchema.parse(await client.ok('provider.list', {}));
    expect(first.providers.map((p) => [p.kind, p.installed])).toEqual([
      ['claude', true],
      ['codex', true],
      ['gemini', true],
      ['copilot', true],
    ]);
    // A version a CLI is slow to print comes with a later list (the first one waits for it only briefly).
    let providers = first.providers;
    if (providers.some((p) => p.version === null)) {
      providers = await until(
        async () => {
          ({ providers } = ProviderListResultSchema.parse(await client.ok('provider.list', {})));
          return providers.every((p) => p.version !== null) && providers;
        },
        "every CLI's version listed",
        { ms: 100_000, every: 200, detail: () => JSON.stringify(providers.map((p) => [p.kind, p.version])) },
      );
    }
    expect(providers[0]).toMatchObject({ name: 'Claude Code (scripted)', installed: true });
    expect(providers[0]!.capabilities.chat).toBe(true);
    const versions = { codex: pinned('@openai/codex'), gemini: pinned('@google/gemini-cli'), copilot: pinned('@github/copilot') };
    for (const info of providers.slice(1)) {
      const kind = info.kind as 'codex' | 'gemini' | 'copilot';
      expect(info).toEqual({
        kind,
        name: CLI_PROFILES[kind].name,
        installed: true,
        version: versions[kind],
        models: [],
        defaultModel: null,
        capabilities: { ...CLI_PROFILES[kind].capabilities, chat: false },
        resumeCommand: CLI_PROFILES[kind].resumeCommand,
      });
    }
  });

  it('says not installed, version null, for a CLI its PATH does not have', async () => {
    const empty = path.join(data.dir, 'empty-bin');
    mkdirSync(empty);
    const saved = process.env.PATH;
    process.env.PATH = empty;
    try {
      const listed = await listProviders([]);
      expect(listed.map((p) => [p.kind, p.installed, p.version])).toEqual([
        ['claude', false, null],
        ['codex', false, null],
        ['gemini', false, null],
        ['copilot', false, null],
      ]);
    } finally {
      process.env.PATH = saved;
    }
  });

  it("never takes a node_modules/.bin copy for the person's CLI", async () => {
    const saved = process.env.PATH;
    process.env.PATH = bin;
    try {
      const listed = await listProviders([]);
      expect(listed.map((p) => [p.kind, p.installed])).toEqual([
        ['claude', false],
        ['codex', false],
        ['gemini', false],
        ['copilot', false],
      ]);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('a served provider speaks for its kind (Codex without its catalog probe: the default model only)', async () => {
    const codex = new CodexProvider({ command: path.join(bin, 'codex'), clientVersion: '0.0.0' }, { probe: false });
    const listed = await listProviders([codex]);
    expect(listed.map((p) => p.kind)).toEqual(['codex', 'claude', 'gemini', 'copilot']);
    expect(listed[0]).toMatchObject({ name: 'Codex', installed: true, defaultModel: 'default', capabilities: CLI_PROFILES.codex.capabilities });
    expect(listed[0]!.models.map((m) => m.slug)).toEqual(['default']);
  });

  it('reads the version out of what each CLI prints', () => {
    expect(versionIn("GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.")).toBe('1.0.102');
    expect(versionIn('2.1.197 (Claude Code)')).toBe('2.1.197');
    expect(versionIn('codex-cli 0.171.0')).toBe('0.171.0');
    expect(versionIn('0.61.0-nightly.20261130.abc')).toBe('0.61.0-nightly.20261130.abc');
    expect(versionIn('no version here')).toBeNull();
  });
});
