import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderInfoSchema } from '../../src/contracts/index.ts';
import { providersFrom, readHostConfig } from '../../src/host/config.ts';
import { DEFAULT_SCRIPT_PATH, loadScript, pickReply, split } from '../../src/host/providers/script.ts';
import { idle, openCore, TestClient, tempDir } from './harness.ts';

let data: ReturnType<typeof tempDir>;
beforeEach(() => {
  data = tempDir('tether-script-');
});
afterEach(() => data.cleanup());

describe('the script backend', () => {
  it('ships a default script that shows every step kind, picked by keyword', () => {
    const script = loadScript(DEFAULT_SCRIPT_PATH);
    const types = (text: string) => new Set(pickReply(script, text).map((step) => step.type));
    expect(types('please approve the tests')).toEqual(new Set(['thinking', 'text', 'approval', 'tool', 'cost']));
    expect(types('ask me a question')).toContain('question');
    expect(types('use a tool')).toContain('tool');
    expect(types('draw a visual')).toContain('visual');
    expect(types('stream a lot')).toContain('stream');
    expect(types('fail please')).toContain('fail');
    expect(types('hello')).toEqual(new Set(['thinking', 'text', 'cost']));
  });

  it('refuses a script that does not validate, naming the problem', () => {
    const file = path.join(data.dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ replies: [{ match: '(', steps: [{ type: 'dance' }] }] }));
    expect(() => loadScript(file)).toThrow(/bad\.json is not valid/);
  });

  it('answers as the agent kind the config maps it to', () => {
    const script = path.join(data.dir, 'mine.json');
    writeFileSync(script, JSON.stringify({ model: 'tiny', replies: [{ steps: [{ type: 'text', text: 'ok' }] }] }));
    const config = path.join(data.dir, 'config.json');
    writeFileSync(config, JSON.stringify({ providers: { codex: { backend: 'script', script: 'mine.json' }, claude: { backend: 'script' } } }));
    const { config: parsed, base } = readHostConfig(config);
    const providers = providersFrom(parsed, base, '1.2.3');
    expect(providers.map((p) => p.kind)).toEqual(['codex', 'claude']);
    const info = ProviderInfoSchema.parse(providers[0].info());
    expect(info).toMatchObject({ kind: 'codex', name: 'Codex (scripted)', defaultModel: 'tiny', version: '1.2.3' });
    expect(providers[0].normalizeSelection({ model: 'gpt-9', options: { effort: 'high' } })).toEqual({ model: 'tiny', options: {} });
  });

  it('splits text into pieces without breaking characters', () => {
    expect(split('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(split('a😀b', 3)).toEqual(['a', '😀', 'b']);
    expect(split('ab', 5)).toEqual(['a', 'b']);
    expect(split('', 3)).toEqual([]);
  });

  it("uses a connection's preferences for new chats, narrowed by the policy", async () => {
    const { HostPolicy } = await import('../../src/host/policy.ts');
    const core = await openCore(data.dir, { policy: new HostPolicy({ home: data.dir, modeCeiling: 'auto' }) });
    const client = new TestClient(core);
    await client.ok('chat.setPreferences', { runtimeMode: 'full-access', changedAt: 2 });
    await client.ok('chat.setPreferences', { runtimeMode: 'supervised', changedAt: 1 });
    expect((await client.ok('chat.create', { chatId: 'a' })).runtimeMode).toBe('auto');
    await client.ok('chat.setPreferences', { runtimeMode: 'supervised', changedAt: 3 });
    expect((await client.ok('chat.create', { chatId: 'b' })).runtimeMode).toBe('supervised');
    // Another connection has its own: none, so supervised.
    expect((await new TestClient(core).ok('chat.create', { chatId: 'c' })).runtimeMode).toBe('supervised');
    await client.ok('chat.send', { chatId: 'a', text: 'hi' });
    await idle(core, 'a');
    await core.close();
  });
});
