// skills.list: the skills the chat's CLI would load for its folder and account. Claude Code's are
// read from its folders and checked against what the real `claude` itself lists in its init frame;
// Codex's come from the real `codex app-server`'s own `skills/list`.
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatSkill } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import { CLAUDE_BIN, claudeInitSkills } from './claude-scenario.ts';
import { openCore, TestClient, tempDir } from './harness.ts';

const CODEX_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/codex');

let data: ReturnType<typeof tempDir>;
let homes: ReturnType<typeof tempDir>;
let core: HostCore;
let client: TestClient;
let work = '';
let claudeEnv: Record<string, string> = {};

function skill(dir: string, name: string, description: string): void {
  mkdirSync(path.join(dir, name), { recursive: true });
  writeFileSync(path.join(dir, name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n\nDo the thing.\n`);
}

beforeAll(async () => {
  data = tempDir('tether-skills-');
  homes = tempDir('tether-skills-homes-');
  work = path.join(data.dir, 'work', 'app');
  mkdirSync(work, { recursive: true });
  const claudeConfig = path.join(homes.dir, 'claude');
  const codexHome = path.join(homes.dir, 'codex');
  claudeEnv = {
    CLAUDE_CONFIG_DIR: claudeConfig,
    HOME: homes.dir,
    ANTHROPIC_API_KEY: 'sk-none',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  skill(path.join(claudeConfig, 'skills'), 'tidy-notes', 'Tidies the notes.');
  skill(path.join(work, '.claude', 'skills'), 'ship-it', '"Ships it: carefully."');
  // A folder above the chat's: Claude Code reads project skills there too.
  skill(path.join(data.dir, 'work', '.claude', 'skills'), 'parent-skill', 'From the folder above.');
  skill(path.join(codexHome, 'skills'), 'fold-laundry', 'Folds it.');
  skill(path.join(work, '.agents', 'skills'), 'agent-skill', 'From .agents.');
  skill(path.join(work, '.codex', 'skills'), 'codex-skill', 'From .codex.');
  core = await openCore(data.dir, {
    providers: [
      new ClaudeProvider({ command: CLAUDE_BIN, env: claudeEnv }),
      new CodexProvider({ command: CODEX_BIN, home: codexHome, clientVersion: '0.0.0' }, { probe: false }),
    ],
    policy: new HostPolicy({ home: data.dir, roots: [path.join(data.dir, 'work')] }),
  });
  client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'cl', provider: 'claude', cwd: work });
  await client.ok('chat.create', { chatId: 'cx', provider: 'codex', cwd: work });
}, 30_000);

afterAll(async () => {
  await core?.close();
  data?.cleanup();
  homes?.cleanup();
});

describe('skills.list', { timeout: 60_000 }, () => {
  it("Claude Code: the user's and the project's (also from a folder above), as the CLI itself loads them", async () => {
    const { skills } = await client.ok<{ skills: ChatSkill[] }>('skills.list', { chatId: 'cl' });
    expect(skills).toEqual([
      { name: 'tidy-notes', description: 'Tidies the notes.', source: 'user' },
      { name: 'ship-it', description: 'Ships it: carefully.', source: 'project' },
      { name: 'parent-skill', description: 'From the folder above.', source: 'project' },
    ]);
    const loaded = await claudeInitSkills(work, claudeEnv);
    for (const { name } of skills) expect(loaded).toContain(name);
  });

  it("Codex: what its app-server lists for the folder: repo skills as the project's, the home's and its bundled ones as the user's", async () => {
    const { skills } = await client.ok<{ skills: ChatSkill[] }>('skills.list', { chatId: 'cx' });
    expect(
      skills
        .filter((s) => s.source === 'project')
        .map((s) => s.name)
        .sort(),
    ).toEqual(['agent-skill', 'codex-skill']);
    expect(skills.find((s) => s.name === 'fold-laundry')).toEqual({ name: 'fold-laundry', description: 'Folds it.', source: 'user' });
    expect(skills.length).toBeGreaterThan(3);
  });

  it('an unknown chat is chat-not-found', async () => {
    expect(await client.fails('skills.list', { chatId: 'nope' })).toBe('chat-not-found');
  });

  // The folder is judged again when skills are asked for: a chat folder that now leads outside the
  // host's roots (here replaced by a symlink) is refused, and nothing of where it leads is read.
  it("a chat whose folder now leads outside the roots is folder-denied, and that folder's skills are not read", async () => {
    const moved = path.join(data.dir, 'work', 'moved');
    mkdirSync(moved, { recursive: true });
    await client.ok('chat.create', { chatId: 'mv', provider: 'claude', cwd: moved });
    const outside = path.join(data.dir, 'outside');
    skill(path.join(outside, '.claude', 'skills'), 'private-skill', 'Not for the relay.');
    renameSync(moved, `${moved}.gone`);
    symlinkSync(outside, moved);
    const answer = await client.request('skills.list', { chatId: 'mv' });
    expect(answer).toMatchObject({ error: { code: 'folder-denied' } });
    expect(JSON.stringify(answer)).not.toContain('private-skill');
  });

  // A SKILL.md gives only its front matter's name and description: a file without one (a symlink to
  // a private file, say) shows its folder's name and nothing of its text.
  it('a SKILL.md without front matter gives its folder name only, never its text', async () => {
    const dir = path.join(data.dir, 'work', 'linked');
    const secret = path.join(data.dir, 'secret.txt');
    writeFileSync(secret, 'token=hunter2\n');
    mkdirSync(path.join(dir, '.claude', 'skills', 'odd'), { recursive: true });
    symlinkSync(secret, path.join(dir, '.claude', 'skills', 'odd', 'SKILL.md'));
    await client.ok('chat.create', { chatId: 'ln', provider: 'claude', cwd: dir });
    const { skills } = await client.ok<{ skills: ChatSkill[] }>('skills.list', { chatId: 'ln' });
    expect(skills.find((s) => s.name === 'odd')).toEqual({ name: 'odd', description: '', source: 'project' });
    expect(JSON.stringify(skills)).not.toContain('hunter2');
  });
});
