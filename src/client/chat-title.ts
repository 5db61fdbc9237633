// What a chat is called wherever a person sees or saves it (the chat list and its search, the chat's
// header, exported transcripts): the title the host gave it (its agent's, or the words of its first
// message), else its agent and the folder it works in; and that folder as a list row shows it.
import type { AgentKind, ChatInfo } from '../contracts/index.ts';

const PROVIDERS: Record<AgentKind, string> = { claude: 'Claude Code', codex: 'Codex', gemini: 'Gemini', copilot: 'Copilot', apple: 'Apple' };

/** An agent kind as people call it. */
export function providerName(kind: AgentKind): string {
  return PROVIDERS[kind] ?? kind;
}

/** The agent serving a chat as its host calls it ("Demo agent (scripted)" for the stand-in), else its kind's name. */
export function agentNameOf(info: Pick<ChatInfo, 'agentName' | 'provider'>): string {
  return info.agentName ?? providerName(info.provider);
}

/** The chat's title, else "<agent> in <folder>". */
export function chatTitle(info: Pick<ChatInfo, 'suggestedTitle' | 'provider' | 'cwd' | 'agentName'>): string {
  if (info.suggestedTitle) return info.suggestedTitle;
  const folder = folderParts(info.cwd).pop();
  return folder ? `${agentNameOf(info)} in ${folder}` : agentNameOf(info);
}

/**
 * A folder as a list row names it on a phone: its last two names ("projects/tether"), the whole path
 * when that is no longer (the full one goes in the row's `title`).
 */
export function shortFolder(cwd: string): string {
  const parts = folderParts(cwd);
  return parts.length > 2 ? parts.slice(-2).join('/') : cwd;
}

function folderParts(cwd: string): string[] {
  return cwd.split(/[\\/]/).filter(Boolean);
}
