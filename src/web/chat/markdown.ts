// Agent text as HTML. The text is untrusted (a model wrote it, maybe after reading a hostile web page),
// so: raw HTML in it is shown as text, never parsed; images are links (loading them would tell a
// third party who reads the chat); links open apart with no referrer; and the result goes through
// DOMPurify anyway, in case marked lets something through.
//
// Parsing is the cost of a streaming reply, so results are kept per item: a thread's text only ever
// grows by appends, so an item id and a text length name one text exactly.
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => escapes[c]!);

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
    image: ({ href, text }: Tokens.Image) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
    code: ({ text, lang }: Tokens.Code) => {
      const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const label = language ? `<span class="code-lang">${escapeHtml(language)}</span>` : '<span class="code-lang"></span>';
      return (
        `<div class="code-block">${label}<button type="button" class="code-copy" aria-label="Copy code">Copy</button>` +
        `<pre><code${language ? ` class="language-${escapeHtml(language)}"` : ''}>${escapeHtml(text)}</code></pre></div>`
      );
    },
  },
});

const purify = DOMPurify(window);
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});
const PURIFY_OPTIONS = {
  FORBID_TAGS: ['img', 'style', 'form', 'input', 'textarea', 'select', 'iframe', 'video', 'audio', 'source', 'picture', 'svg', 'math'],
  FORBID_ATTR: ['style', 'id', 'name'],
  ALLOW_DATA_ATTR: false,
};

/** Markdown to safe HTML, uncached. */
export function markdownToHtml(text: string): string {
  const html = marked.parse(text, { async: false });
  return purify.sanitize(html, PURIFY_OPTIONS);
}

/**
 * The cache holds every rendered text of a long chat (a 5,000-item thread is a few MB of HTML) so a
 * row scrolled back into view never parses again; past this many characters the oldest go.
 */
const CACHE_CHARS = 8_000_000;
const cache = new Map<string, { length: number; html: string }>();
let cachedChars = 0;

function remember(key: string, length: number, html: string): void {
  const held = cache.get(key);
  if (held) {
    cache.delete(key);
    cachedChars -= held.html.length;
  }
  cache.set(key, { length, html });
  cachedChars += html.length;
  for (const [oldest, entry] of cache) {
    if (cachedChars <= CACHE_CHARS) break;
    cache.delete(oldest);
    cachedChars -= entry.html.length;
  }
}

/**
 * The HTML of an item's text, parsed once per (key, text length): `key` names an append-only text
 * (an item id, or an item id and a field).
 */
export function renderMarkdown(key: string, text: string): string {
  const held = cache.get(key);
  if (held && held.length === text.length) return held.html;
  const html = markdownToHtml(text);
  remember(key, text.length, html);
  return html;
}

// Pre-rendering: a row drawn while the person scrolls must not parse then (parsing and sanitizing a
// reply costs more than drawing it), so texts that arrive in bulk (a snapshot, an older page) are
// rendered ahead, in idle time, newest first (the person scrolls up from the end).
const ahead: Array<readonly [string, string]> = [];
const queued = new Set<string>();
let aheadScheduled = false;
type IdleDeadline = { timeRemaining(): number };
const whenIdle: (work: (deadline: IdleDeadline) => void) => void =
  typeof requestIdleCallback === 'function'
    ? (work) => {
        requestIdleCallback(work);
      }
    : (work) => {
        setTimeout(() => {
          const end = performance.now() + 8;
          work({ timeRemaining: () => end - performance.now() });
        }, 16);
      };

function renderAhead(deadline: IdleDeadline): void {
  while (ahead.length > 0 && deadline.timeRemaining() > 2) {
    const [key, text] = ahead.pop()!;
    queued.delete(key);
    renderMarkdown(key, text);
  }
  if (ahead.length > 0) whenIdle(renderAhead);
  else aheadScheduled = false;
}

/** Renders these texts (in thread order) in idle time unless already cached. */
export function prerenderMarkdown(texts: Iterable<readonly [key: string, text: string]>): void {
  for (const entry of texts) {
    if (queued.has(entry[0]) || cache.get(entry[0])?.length === entry[1].length) continue;
    queued.add(entry[0]);
    ahead.push(entry);
  }
  if (ahead.length > 0 && !aheadScheduled) {
    aheadScheduled = true;
    whenIdle(renderAhead);
  }
}
