// Agent discovery on a fake PATH and a fake home: each CLI present or not, signed in or not, and a
// host without `providers` in its config serving exactly the ones that can chat, by the executable
// found, with the scripted agent ("Demo agent (scripted)") only when there is none. The stand-in
// CLIs are shell scripts printing a version: nothing here needs a model, and one test links the
// pinned real Claude Code as a person's global install would.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderListResultSchema } from '../../src/contracts/index.ts';
import { planAgents } from '../../src/host/config.ts';
import { discoverAgents, personalPath, readSignIn } from '../../src/host/providers/discovery.ts';
import { startHost } from '../../src/host/index.ts';
import type { RunningHost } from '../../src/host/index.ts';
import { TestClient, tempDir } from './harness.ts';

const pinnedBin = path.resolve(import.meta.dirname, '../../node_modules/.bin');
let data: ReturnType<typeof tempDir>;
let n = 0;

beforeAll(() => {
  data = tempDir('tether-discovery-');
});
afterAll(() => data.cleanup());

/** A folder of stand-in CLIs: each prints `<version> (<name>)` to --version. */
function fakeBin(clis: Record<string, string>, name = `bin-${n++}`): string {
  const dir = path.join(data.dir, name);
  mkdirSync(dir, { recursive: true });
  for (const [command, version] of Object.entries(clis)) {
    writeFileSync(path.join(dir, command), `#!/bin/sh\necho "${version} (${command})"\n`);
    chmodSync(path.join(dir, command), 0o755);
  }
  return dir;
}

function home(files: Record<string, string> = {}): string {
  const dir = path.join(data.dir, `home-${n++}`);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

const ALL = { claude: '2.1.1', codex: '0.171.0', gemini: '0.61.0', copilot: '1.0.102' };

describe('agent discovery', () => {
  it('finds nothing on an empty PATH, and the host then serves only the demo agent, called what it is', async () => {
    const found = await discoverAgents({ env: { PATH: fakeBin({}) }, home: home() });
    expect(found.map((a) => [a.kind, a.executable, a.served])).toEqual([
      ['claude', null, false],
      ['codex', null, false],
      ['gemini', null, false],
      ['copilot', null, false],
    ]);
    expect(found[0]!.why).toBe('not on PATH (claude)');
    const plan = await planAgents({}, data.dir, '1.0.0', { found });
    expect(plan.source).toBe('demo');
    expect(plan.providers.map((p) => p.info().name)).toEqual(['Demo agent (scripted)']);
    expect(plan.agents[0]).toMatchObject({ name: 'Demo agent (scripted)', served: true, why: expect.stringContaining('no agent CLI that can chat') });
  });

  it("never takes a node_modules/.bin folder (npm and npx put the project's own copies first) for the person's PATH", async () => {
    const projectCopies = fakeBin(ALL, 'project/node_modules/.bin');
    const gyp = fakeBin(ALL, 'npm/node-gyp-bin');
    const own = fakeBin({ codex: '0.99.0' }, 'usr-bin');
    expect(personalPath([projectCopies, gyp, own].join(path.delimiter))).toBe(own);
    const found = await discoverAgents({
      env: { PATH: [projectCopies, gyp, own].join(path.delimiter) },
      home: home({ '.codex/auth.json': '{"OPENAI_API_KEY":"sk-x"}' }),
    });
    expect(found.map((a) => [a.kind, a.executable])).toEqual([
      ['claude', null],
      ['codex', path.join(own, 'codex')],
      ['gemini', null],
      ['copilot', null],
    ]);
    expect(found[1]!.version).toBe('0.99.0');
  });

  it('serves each CLI whose account is signed in, by its absolute path, and says why the others are not served', async () => {
    const bin = fakeBin(ALL);
    const signedIn = home({
      '.claude/.credentials.json': '{"claudeAiOauth":{"accessToken":"x"}}',
      '.codex/auth.json': '{"tokens":{"id_token":"x"}}',
      '.copilot/config.json':
        '// comment line\n{"last_logged_in_user":{"host":"https://github.com","login":"octo"},"logged_in_users":[{"host":"https://github.com","login":"octo"}]}',
    });
    const found = await discoverAgents({ env: { PATH: bin, GEMINI_API_KEY: 'k' }, home: signedIn });
    expect(found.map((a) => [a.kind, a.executable, a.version, a.signIn.state, a.served])).toEqual([
      ['claude', path.join(bin, 'claude'), '2.1.1', 'ready', true],
      ['codex', path.join(bin, 'codex'), '0.171.0', 'ready', true],
      ['gemini', path.join(bin, 'gemini'), '0.61.0', 'ready', true],
      ['copilot', path.join(bin, 'copilot'), '1.0.102', 'ready', true],
    ]);
    expect(found[3]!.signIn.how).toContain('octo');

    const signedOut = await discoverAgents({
      env: { PATH: bin },
      home: home({ '.gemini/settings.json': '{"security":{"auth":{"selectedType":"oauth-personal"}}}' }),
    });
    expect(signedOut.map((a) => [a.kind, a.signIn.state, a.served])).toEqual([
      ['claude', 'signed-out', false],
      ['codex', 'signed-out', false],
      ['gemini', 'signed-out', false],
      ['copilot', 'signed-out', false],
    ]);
    expect(signedOut[0]!.why).toContain('/login');
    expect(signedOut[1]!.why).toContain('codex login');
    expect(signedOut[2]!.why).toContain('2026-06-18');
    const plan = await planAgents({}, data.dir, '1.0.0', { found: signedOut });
    expect(plan.source).toBe('demo');
    expect(plan.agents.filter((a) => !a.served).map((a) => a.kind)).toEqual(['claude', 'codex', 'gemini', 'copilot']);
  });

  it("reads each CLI's other sign-ins: keys in variables, Vertex AI, its own model provider", () => {
    const empty = home();
    expect(readSignIn('claude', { ANTHROPIC_API_KEY: 'k' }, empty).state).toBe('ready');
    expect(readSignIn('claude', { CLAUDE_CODE_USE_BEDROCK: '1' }, empty).state).toBe('ready');
    expect(readSignIn('claude', { ANTHROPIC_API_KEY: '' }, empty).state).toBe('signed-out');
    const mac = home({ '.claude.json': '{"oauthAccount":{"emailAddress":"a@b.c"}}' });
    expect(readSignIn('claude', {}, mac, 'darwin')).toEqual({ state: 'ready', how: 'signed in as a@b.c (Keychain)' });
    expect(readSignIn('claude', {}, mac, 'linux').state).toBe('unknown');
    const ownDir = home({ 'cfg/.credentials.json': '{"claudeAiOauth":{}}' });
    expect(readSignIn('claude', { CLAUDE_CONFIG_DIR: path.join(ownDir, 'cfg') }, empty).state).toBe('ready');
    expect(readSignIn('codex', {}, home({ '.codex/config.toml': 'model_provider = "local"\n' })).state).toBe('ready');
    expect(readSignIn('codex', {}, home({ '.codex/auth.json': 'not json' })).state).toBe('signed-out');
    expect(readSignIn('gemini', { GOOGLE_GENAI_USE_VERTEXAI: 'true' }, empty).state).toBe('ready');
    expect(readSignIn('gemini', {}, home({ '.gemini/settings.json': '{"security":{"auth":{"selectedType":"vertex-ai"}}}' })).state).toBe('ready');
    expect(readSignIn('gemini', {}, home({ '.gemini/settings.json': '{"security":{"auth":{"selectedType":"gemini-api-key"}}}' })).state).toBe('signed-out');
    expect(readSignIn('copilot', { GH_TOKEN: 't' }, empty).state).toBe('ready');
    expect(readSignIn('copilot', { COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:1' }, empty).state).toBe('ready');
    expect(readSignIn('copilot', {}, home({ '.copilot/config.json': '{"logged_in_users":[]}' })).state).toBe('signed-out');
  });

  it("reads a real install's version from its package without starting it (the pinned Claude Code, linked as a global install would be)", async () => {
    const own = path.join(data.dir, 'global-bin');
    mkdirSync(own);
    symlinkSync(path.join(pinnedBin, 'claude'), path.join(own, 'claude'));
    const found = await discoverAgents({ env: { PATH: own, ANTHROPIC_API_KEY: 'sk-x' }, home: home() });
    expect(found[0]).toMatchObject({ kind: 'claude', executable: path.join(own, 'claude'), version: '2.1.197', served: true });
  });
});

describe('a host without providers in its config', () => {
  let running: RunningHost | undefined;
  afterAll(async () => running?.close());

  it('serves what discovery found, runs it from the path found, and lists the rest as not served', { timeout: 60_000 }, async () => {
    const bin = fakeBin({ claude: '3.4.5', gemini: '0.61.0' });
    const dataDir = path.join(data.dir, 'host');
    running = await startHost({
      dataDir,
      discovery: { env: { PATH: bin, ANTHROPIC_API_KEY: 'k' }, home: home() },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    expect(running.agents).toMatchObject({ source: 'discovered', configFile: null });
    expect([...running.core.providers.keys()]).toEqual(['claude']);
    const client = new TestClient(running.core);
    const { providers } = ProviderListResultSchema.parse(await client.ok('provider.list', {}));
    // The served Claude Code asked the stand-in on the fake PATH for its version: it runs that file.
    expect(providers[0]).toMatchObject({ kind: 'claude', name: 'Claude Code', installed: true, version: '3.4.5' });
    expect(providers[0]!.capabilities.chat).toBe(true);
    expect(running.agents!.agents.find((a) => a.kind === 'gemini')).toMatchObject({
      served: false,
      from: path.join(bin, 'gemini'),
      why: expect.stringContaining('GEMINI_API_KEY'),
    });
  });
});
