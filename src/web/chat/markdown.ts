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
      return `<div class="code-block">${label}<button type="button" class="code-copy" aria-label="Copy code">Copy</button>`
        + `<pre><code${language ? ` class="language-${escapeHtml(language)}"` : ''}>${escapeHtml(text)}</code></pre></div>`;
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

const CACHE_LIMIT = 1_500;
const cache = new Map<string, { length: number; html: string }>();

/**
 * The HTML of an item's text, parsed once per (key, text length): `key` names an append-only text
 * (an item id, or an item id and a field).
 */
export function renderMarkdown(key: string, text: string): string {
  const held = cache.get(key);
  if (held && held.length === text.length) return held.html;
  const html = markdownToHtml(text);
  cache.delete(key);
  cache.set(key, { length: text.length, html });
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  return html;
}
