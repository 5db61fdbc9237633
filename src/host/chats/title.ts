// A chat's title (ChatInfo.suggestedTitle: plain text, 1..SUGGESTED_TITLE_LIMIT) when nobody named
// it: the host words one from the chat's first message, and takes the agent's own name for the
// conversation when its CLI reports one (Codex thread names, ACP `session_info_update` titles), since
// that one was written by the model for this purpose. People search their chats by these words, so
// markup is dropped and a long line is cut after a whole word where it can be.
import { SUGGESTED_TITLE_LIMIT, clipText } from '../../contracts/index.ts';

const ELLIPSIS = '…';
export const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/;
// Escaped punctuation keeps its character: it is moved into the private use area while the markup is
// stripped (so `\*` is never read as emphasis), and moved back after.
const ESCAPE_BASE = 0xe000;

/** The title a chat gets from its first message, or null when the message has no words to give. */
export function titleFromMessage(text: string, attachments: readonly { name: string }[] = []): string | null {
  for (const line of text.split(LINE_BREAK)) {
    const plain = plainLine(line);
    if (plain) return fitText(plain, SUGGESTED_TITLE_LIMIT);
  }
  // A message of attachments only is called after its first file.
  const name = attachments.length > 0 ? collapse(attachments[0]!.name) : '';
  return name ? fitText(name, SUGGESTED_TITLE_LIMIT) : null;
}

/** An agent's own title for the conversation, made to fit; null when it holds nothing but space. */
export function titleFromAgent(title: string): string | null {
  const plain = collapse(title);
  return plain ? fitText(plain, SUGGESTED_TITLE_LIMIT) : null;
}

/** One line of Markdown as the words a person reads (also what a chat's last line is made of, last-line.ts). */
export function plainLine(line: string): string {
  let text = line.replace(/\\([!-/:-@[-`{-~])/g, (_, ch: string) => String.fromCharCode(ESCAPE_BASE + ch.charCodeAt(0)));
  // Fences and rules are markup only; block markers (headings, quotes, list items, task boxes) go.
  if (/^\s*(?:`{3,}|~{3,})/.test(text) || /^\s{0,3}(?:(?:\*\s*){3,}|(?:-\s*){3,}|(?:_\s*){3,})$/.test(text)) return '';
  text = text.replace(/^\s*(?:(?:#{1,6}|>|[-*+]|\d{1,9}[.)])(?:\s+|$)(?:\[[ xX]\]\s+)?)+/, '');
  text = text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images: their alt text
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1') // links: their text
    .replace(/<((?:https?|mailto):[^>\s]+)>/g, '$1') // autolinks
    .replace(/(`+)(.+?)\1/g, '$2') // inline code: its content
    .replace(/(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1/g, '$2') // strong, strikethrough
    .replace(/(^|[^\p{L}\p{N}])([*_])(?=\S)(.+?)(?<=\S)\2(?![\p{L}\p{N}])/gu, '$1$3') // emphasis, not snake_case
    .replace(/\s+#+\s*$/, ''); // a closing heading marker
  text = text.replace(/[\ue000-\ue07f]/g, (ch) => String.fromCharCode(ch.charCodeAt(0) - ESCAPE_BASE));
  return collapse(text);
}

/** Runs of white space and control characters become one space; none at either end. */
export function collapse(text: string): string {
  return text.replace(/[\s\p{Cc}]+/gu, ' ').trim();
}

/**
 * The line at most `limit` code units long: as it is, or cut (never inside a character a person sees
 * as one, see clipText), after a whole word where one ends in the latter half (else mid-word), and
 * marked with an ellipsis.
 */
export function fitText(title: string, limit: number): string | null {
  if (title.length <= limit) return title;
  let cut = clipText(title, limit - ELLIPSIS.length);
  // A cut that falls just before a space already ends on a whole word.
  const space = cut.lastIndexOf(' ');
  if (title[cut.length] !== ' ' && space >= Math.floor(limit / 2)) cut = cut.slice(0, space);
  cut = cut.replace(/[\s,;:.\-–—]+$/u, '');
  return cut ? `${cut}${ELLIPSIS}` : null;
}
