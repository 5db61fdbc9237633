// The skills of the Claude Code plugins a chat would load, found the way the pinned CLI (2.1.197)
// finds them, which was checked against its init frame (test/host/skills.test.ts, with a local
// marketplace made by `claude plugin marketplace add <folder>` and `claude plugin install`, offline):
//
// - a plugin is on when `enabledPlugins["<plugin>@<marketplace>"]` is true in the user's
//   `<config>/settings.json`, unless the chat folder's `.claude/settings.json` or
//   `.claude/settings.local.json` says false (the later file wins);
// - a plugin of a `directory` marketplace is read where the marketplace lives
//   (`plugins/known_marketplaces.json` → `installLocation`, plus the plugin's `source` in its
//   `.claude-plugin/marketplace.json`): the CLI loads it from there, not from its cache copy;
//   any other marketplace's plugin is read at the `installPath` the CLI recorded for it in
//   `plugins/installed_plugins.json` (its cache copy; a GitHub or git marketplace cannot be made
//   offline, so that case follows the CLI's own record without being checked against it);
// - its skills are `<plugin>/skills/<name>/SKILL.md`, named `<plugin>:<name>` (as the CLI lists them).
//
// Only the CLI's own files under the account's config folder (policy-checked with the account) and
// the chat's folder say where to look; only SKILL.md heads are read there.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatSkill } from '../../../contracts/index.ts';
import { skillsIn } from './skills.ts';

/** A settings or plugin-state file is small; a larger one is not the CLI's and is not read. */
const JSON_LIMIT = 1024 * 1024;

async function readJson(file: string): Promise<unknown> {
  try {
    const bytes = await readFile(file);
    if (bytes.length > JSON_LIMIT) return null;
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** `plugin@marketplace` keys switched on, user settings first, then the project's (which may switch one off). */
async function enabledPlugins(config: string, cwd: string): Promise<string[]> {
  const on = new Map<string, boolean>();
  for (const file of [path.join(config, 'settings.json'), path.join(cwd, '.claude', 'settings.json'), path.join(cwd, '.claude', 'settings.local.json')]) {
    for (const [key, value] of Object.entries(record(record(await readJson(file)).enabledPlugins))) {
      if (typeof value === 'boolean' && /^[^@\s]+@[^@\s]+$/.test(key)) on.set(key, value);
    }
  }
  return [...on].filter(([, value]) => value).map(([key]) => key);
}

/** Where the CLI loads one enabled plugin from, or null when it is not installed. */
async function pluginFolder(config: string, key: string): Promise<string | null> {
  const [plugin, market] = key.split('@') as [string, string];
  const known = record(record(await readJson(path.join(config, 'plugins', 'known_marketplaces.json')))[market]);
  const source = record(known.source);
  const location = typeof known.installLocation === 'string' ? known.installLocation : null;
  if (source.source === 'directory' && location) {
    const entries = record(await readJson(path.join(location, '.claude-plugin', 'marketplace.json'))).plugins;
    const entry = Array.isArray(entries) ? entries.map(record).find((e) => e.name === plugin) : undefined;
    if (entry && typeof entry.source === 'string') return path.resolve(location, entry.source);
    return null;
  }
  const installs = record(record(await readJson(path.join(config, 'plugins', 'installed_plugins.json'))).plugins)[key];
  const first = Array.isArray(installs) ? record(installs[0]) : {};
  return typeof first.installPath === 'string' ? first.installPath : null;
}

/** The skills of every plugin the chat's CLI would load, `<plugin>:<skill>`, in the order the settings name the plugins. */
export async function pluginSkills(config: string, cwd: string): Promise<ChatSkill[]> {
  const skills: ChatSkill[] = [];
  for (const key of await enabledPlugins(config, cwd)) {
    const folder = await pluginFolder(config, key);
    if (!folder) continue;
    const plugin = key.slice(0, key.indexOf('@'));
    for (const skill of await skillsIn(path.join(folder, 'skills'), 'plugin')) skills.push({ ...skill, name: `${plugin}:${skill.name}` });
  }
  return skills;
}
