// `@` file mentions and `$` skills in the composer. The word being typed at the caret decides what is
// suggested: files the chat has already touched (tool inputs, file changes, earlier mentions) for `@`,
// the chat's skills for `$`. On send, the mentions and skills named in the text travel beside it.
import { CHAT_SEND_LIMITS, type ChatItem } from '../../../contracts/index.ts';

export interface Token {
  trigger: '@' | '$';
  query: string;
  /** Where the token (its trigger) starts in the text. */
  start: number;
  end: number;
}

/** The `@word` or `$word` the caret is in or right after; null when none. */
export function tokenAt(text: string, caret: number): Token | null {
  let start = caret;
  while (start > 0 && !/\s/.test(text[start - 1]!)) start--;
  const trigger = text[start];
  if (trigger !== '@' && trigger !== '$') return null;
  let end = caret;
  while (end < text.length && !/\s/.test(text[end]!)) end++;
  return { trigger, query: text.slice(start + 1, caret), start, end };
}

/** Replaces the token with the picked value and a space; answers the text and where the caret goes. */
export function pick(text: string, token: Token, value: string): { text: string; caret: number } {
  const inserted = `${token.trigger}${value} `;
  return { text: text.slice(0, token.start) + inserted + text.slice(token.end).replace(/^\s/, ''), caret: token.start + inserted.length };
}

function pathsIn(value: unknown, into: Set<string>): void {
  if (typeof value !== 'object' || value === null) return;
  for (const key of ['file_path', 'path', 'notebook_path']) {
    const v = (value as Record<string, unknown>)[key];
    if (typeof v === 'string' && v.length > 0 && v.length < 512 && !v.includes('\n')) into.add(v);
  }
}

/** Files this chat has read, changed or mentioned, newest first. */
export function knownFiles(items: readonly ChatItem[]): string[] {
  const seen = new Set<string>();
  for (let i = items.length - 1; i >= 0 && seen.size < 500; i--) {
    const item = items[i]!;
    if (item.kind === 'tool') {
      pathsIn(item.input, seen);
      for (const change of item.changes ?? []) seen.add(change.path);
    } else if (item.kind === 'user') {
      for (const mention of item.mentions ?? []) seen.add(mention);
    }
  }
  return [...seen];
}

/** Up to `limit` candidates matching the query (prefix of a path segment first, then anywhere). */
export function suggest(candidates: readonly string[], query: string, limit = 8): string[] {
  const q = query.toLowerCase();
  const starts: string[] = [];
  const contains: string[] = [];
  for (const c of candidates) {
    const lower = c.toLowerCase();
    if (lower.startsWith(q) || lower.includes(`/${q}`)) starts.push(c);
    else if (lower.includes(q)) contains.push(c);
    if (starts.length >= limit) break;
  }
  return [...starts, ...contains].slice(0, limit);
}

/** The `@` mentions and known `$` skills the text names, within the send limits. */
export function namedIn(text: string, skills: readonly string[]): { mentions: string[]; skills: string[] } {
  const mentions = new Set<string>();
  const named = new Set<string>();
  for (const match of text.matchAll(/(?:^|\s)([@$])([^\s@$]+)/g)) {
    const [, trigger, value] = match;
    const clean = value!.replace(/[.,;:!?)]+$/, '');
    if (!clean) continue;
    if (trigger === '@') mentions.add(clean);
    else if (skills.includes(clean)) named.add(clean);
  }
  return {
    mentions: [...mentions].slice(0, CHAT_SEND_LIMITS.mentions),
    skills: [...named].slice(0, CHAT_SEND_LIMITS.skills),
  };
}
