// A chat's last line (ChatInfo.lastLine): what its row in a chat list shows of the conversation. It
// follows a person's message as it is accepted and an agent's reply as it completes; a subagent's
// reply, thinking, tools and notes leave it as it was. The words are made like a title's (title.ts:
// markup dropped, whitespace collapsed, cut after a whole word with an ellipsis), from the whole
// message on one line, so a list needs no thread and no client cuts text.
import { CHAT_LAST_LINE_LIMIT, type ChatItem, type ChatLastLine } from '../../contracts/index.ts';
import { LINE_BREAK, collapse, fitText, plainLine } from './title.ts';

/**
 * The last line `item` makes, given what the thread held under its id before (`before`), or null
 * when it makes none: a user message when it first appears, an agent's reply when it stops streaming.
 */
export function lastLineOf(item: ChatItem, before: ChatItem | undefined, now: number): ChatLastLine | null {
  if (item.kind === 'user' && before === undefined) return lineOf(item, item.createdAt);
  if (item.kind === 'assistant' && !item.streaming && (before === undefined || (before.kind === 'assistant' && before.streaming))) return lineOf(item, now);
  return null;
}

/** The newest last line in `items` (a fork's copied thread), timed by the item's own creation. */
export function lastLineIn(items: readonly ChatItem[]): ChatLastLine | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const line = lineOf(items[i]!, items[i]!.createdAt);
    if (line) return line;
  }
  return null;
}

function lineOf(item: ChatItem, at: number): ChatLastLine | null {
  if (item.kind === 'user') {
    const first = item.attachments?.[0];
    // A message of attachments only is shown by its first file, as its title would be.
    const text = oneLine(item.text) ?? (first ? fitText(collapse(first.name), CHAT_LAST_LINE_LIMIT) : null);
    return text ? { role: 'user', text, at } : null;
  }
  if (item.kind === 'assistant' && !item.parentToolUseId) {
    const text = oneLine(item.text);
    return text ? { role: 'assistant', text, at } : null;
  }
  return null;
}

/** A message's words on one line, read only as far as the limit needs (a reply can be long); null when it has none. */
function oneLine(text: string): string | null {
  const breaks = new RegExp(LINE_BREAK.source, 'g');
  let out = '';
  let from = 0;
  while (from <= text.length && out.length <= CHAT_LAST_LINE_LIMIT) {
    const found = breaks.exec(text);
    const end = found ? found.index : text.length;
    const plain = plainLine(text.slice(from, end));
    if (plain) out = out ? `${out} ${plain}` : plain;
    from = found ? end + found[0].length : text.length + 1;
  }
  return out ? fitText(out, CHAT_LAST_LINE_LIMIT) : null;
}
