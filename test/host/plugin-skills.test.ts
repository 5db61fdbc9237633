// skills.list with Claude Code plugins: a local marketplace folder made by this test, added and
// installed with the real `claude plugin marketplace add` / `claude plugin install` (offline), and
// what skills.list answers checked against the skills the real CLI lists in its init frame: a
// plugin's skills as `<plugin>:<name>`, read where the CLI reads them (the marketplace folder, not
// its cache copy), gone when the chat's project switches the plugin off, and none from a plugin
// that is only in the marketplace but not installed.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatSkill } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import { CLAUDE_BIN, claudeInitSkills } from './claude-scenario.ts';
import { openCore, TestClient, tempDir } from './harness.ts';

const run = promisify(execFile);
let data: ReturnType<typeof tempDir>;
let core: HostCore;
let client: TestClient;
let env: Record<string, string> = {};
let work = '';
let quiet = '';
let market = '';

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function skill(pluginDir: string, name: string, description: string): void {
  write(path.join(pluginDir, 'skills', name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n\nDo it.\n`);
}

beforeAll(async () => {
  data = tempDir('tether-plugin-skills-');
  const home = path.join(data.dir, 'home');
  work = path.join(data.dir, 'work', 'app');
  quiet = path.join(data.dir, 'work', 'quiet');
  market = path.join(data.dir, 'market');
  mkdirSync(work, { recursive: true });
  env = {
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_API_KEY: 'sk-none',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  write(
    path.join(market, '.claude-plugin', 'marketplace.json'),
    JSON.stringify({
      name: 'local-market',
      owner: { name: 'Test' },
      plugins: [
        { name: 'tools', source: './plugins/tools', description: 'Test tools' },
        { name: 'spare', source: './plugins/spare', description: 'Never installed' },
      ],
    }),
  );
  for (const plugin of ['tools', 'spare'])
    write(path.join(market, 'plugins', plugin, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: plugin, version: '1.0.0', description: plugin }));
  skill(path.join(market, 'plugins', 'tools'), 'lint-fix', 'Fix the lint errors');
  skill(path.join(market, 'plugins', 'spare'), 'unused', 'Not installed');
  const cli = (...args: string[]) => run(CLAUDE_BIN, args, { cwd: data.dir, env: { ...process.env, ...env } });
  await cli('plugin', 'marketplace', 'add', market);
  await cli('plugin', 'install', 'tools@local-market');
  // Added after the install: the CLI reads a directory marketplace's plugin where it lives, so this counts.
  skill(path.join(market, 'plugins', 'tools'), 'release', 'Cut a release');
  // A project that switches the plugin off.
  write(path.join(quiet, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'tools@local-market': false } }));
  core = await openCore(data.dir, {
    providers: [new ClaudeProvider({ command: CLAUDE_BIN, env })],
    policy: new HostPolicy({ home: data.dir, roots: [path.join(data.dir, 'work')] }),
  });
  client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'app', provider: 'claude', cwd: work });
  await client.ok('chat.create', { chatId: 'quiet', provider: 'claude', cwd: quiet });
}, 60_000);

afterAll(async () => {
  await core?.close();
  data?.cleanup();
});

describe('skills.list with Claude Code plugins', { timeout: 60_000 }, () => {
  it("lists an installed plugin's skills as <plugin>:<name> with their descriptions, as the CLI itself loads them", async () => {
    const { skills } = await client.ok<{ skills: ChatSkill[] }>('skills.list', { chatId: 'app' });
    expect(skills).toEqual([
      { name: 'tools:lint-fix', description: 'Fix the lint errors', source: 'plugin' },
      { name: 'tools:release', description: 'Cut a release', source: 'plugin' },
    ]);
    const loaded = (await claudeInitSkills(work, env)).filter((name) => name.includes(':'));
    expect(loaded.sort()).toEqual(skills.map((s) => s.name).sort());
  });

  it('lists none of it where the project switched the plugin off, as the CLI loads none', async () => {
    const { skills } = await client.ok<{ skills: ChatSkill[] }>('skills.list', { chatId: 'quiet' });
    expect(skills.filter((s) => s.source === 'plugin')).toEqual([]);
    expect((await claudeInitSkills(quiet, env)).filter((name) => name.includes(':'))).toEqual([]);
  });
});
