// A subagent's own work, read from Claude Code's transcript when the thread holds only its start:
// `<config>/projects/<cwd-slug>/<session>/subagents/agent-<id>.jsonl`, found by the `toolUseId`
// its `agent-<id>.meta.json` names (2.1.197). Its lines become thread items: the replies, the tool
// calls with their results, each under the subagent (`parentToolUseId`).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatItem } from '../../../contracts/index.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The subagent transcript of `toolUseId` in session `sessionId`, or null when the CLI kept none. */
export async function findSubagentFile(config: string, sessionId: string, toolUseId: string): Promise<string | null> {
  let projects: string[];
  try {
    projects = await readdir(path.join(config, 'projects'));
  } catch {
    return null;
  }
  for (const project of projects) {
    const folder = path.join(config, 'projects', project, sessionId, 'subagents');
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.endsWith('.meta.json')) continue;
      try {
        const meta = JSON.parse(await readFile(path.join(folder, name), 'utf8')) as { toolUseId?: unknown };
        if (meta.toolUseId === toolUseId) return path.join(folder, name.replace(/\.meta\.json$/, '.jsonl'));
      } catch {
        // a meta file being written: not this one
      }
    }
  }
  return null;
}

/** The items of a subagent transcript, in order. */
export function subagentItems(text: string, toolUseId: string): ChatItem[] {
  const items: ChatItem[] = [];
  const tools = new Map<string, Extract<ChatItem, { kind: 'tool' }>>();
  for (const line of text.split('\n')) {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObject(entry) || !isObject(entry.message)) continue;
    const at = typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) || 0 : 0;
    const uuid = typeof entry.uuid === 'string' ? entry.uuid : `line-${items.length}`;
    const content = entry.message.content;
    if (entry.type === 'assistant' && Array.isArray(content)) {
      content.forEach((block, i) => {
        if (!isObject(block)) return;
        if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          items.push({ id: `${uuid}-${i}`, kind: 'assistant', createdAt: at, turnId: null, text: block.text, streaming: false, parentToolUseId: toolUseId });
        } else if (block.type === 'tool_use' && typeof block.id === 'string') {
          const tool: Extract<ChatItem, { kind: 'tool' }> = {
            id: block.id,
            kind: 'tool',
            createdAt: at,
            turnId: null,
            toolUseId: block.id,
            name: typeof block.name === 'string' ? block.name : 'tool',
            input: block.input ?? {},
            output: null,
            state: 'running',
            parentToolUseId: toolUseId,
          };
          tools.set(block.id, tool);
          items.push(tool);
        }
      });
    } else if (entry.type === 'user') {
      if (typeof content === 'string') {
        items.push({ id: uuid, kind: 'user', createdAt: at, turnId: null, text: content });
        continue;
      }
      for (const block of Array.isArray(content) ? content : []) {
        if (!isObject(block) || block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') continue;
        const tool = tools.get(block.tool_use_id);
        if (!tool) continue;
        tool.output =
          typeof block.content === 'string'
            ? block.content
            : Array.isArray(block.content)
              ? block.content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).join('')
              : '';
        tool.state = block.is_error === true ? 'error' : 'done';
      }
    }
  }
  return items;
}
