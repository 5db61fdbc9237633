// The skills Claude Code loads for a chat, read from the folders it reads them from (2.1.197, checked
// against its init frame in test/host/skills.test.ts): the user's `<config>/skills/<name>/SKILL.md`,
// and the project's `.claude/skills/<name>/SKILL.md` in the chat's folder and every folder above it.
// The CLI's bundled skills live in no folder and are not listed. Enabled plugins' skills follow
// (`<plugin>:<name>`, plugin-skills.ts). A SKILL.md's front matter gives the name and description; a
// skill named twice keeps its first (user, then the nearest project).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatSkill } from '../../../contracts/index.ts';
import { pluginSkills } from './plugin-skills.ts';

/** At most this much of a SKILL.md is read: the front matter is at its top. */
const HEAD_BYTES = 16 * 1024;

export async function claudeSkills(config: string, cwd: string): Promise<ChatSkill[]> {
  const found: ChatSkill[] = [];
  const seen = new Set<string>();
  const take = (skills: ChatSkill[]) => {
    for (const skill of skills) if (!seen.has(skill.name)) seen.add(skill.name), found.push(skill);
  };
  take(await skillsIn(path.join(config, 'skills'), 'user'));
  for (let folder = path.resolve(cwd); ; folder = path.dirname(folder)) {
    const project = path.join(folder, '.claude', 'skills');
    if (project !== path.join(config, 'skills')) take(await skillsIn(project, 'project'));
    if (path.dirname(folder) === folder) break;
  }
  take(await pluginSkills(config, cwd));
  return found;
}

/** `<dir>/<name>/SKILL.md` for every folder in `dir` (symbolic links to folders too: the CLI follows them). */
export async function skillsIn(dir: string, source: ChatSkill['source']): Promise<ChatSkill[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    return [];
  }
  const skills: ChatSkill[] = [];
  for (const name of names) {
    let text: string;
    try {
      text = (await readFile(path.join(dir, name, 'SKILL.md'))).subarray(0, HEAD_BYTES).toString('utf8');
    } catch {
      continue;
    }
    const meta = frontMatter(text);
    skills.push({ name: meta.name || name, description: meta.description ?? '', source });
  }
  return skills;
}

/** The `name` and `description` of a YAML front matter (plain or quoted one-line values). */
export function frontMatter(text: string): { name?: string; description?: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!match) return {};
  const out: { name?: string; description?: string } = {};
  for (const line of match[1].split(/\r?\n/)) {
    const field = /^(name|description):\s*(.*)$/.exec(line);
    if (!field) continue;
    let value = field[2].trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1);
    out[field[1] as 'name' | 'description'] = value.slice(0, 1024);
  }
  return out;
}
