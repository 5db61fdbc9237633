// Agent markdown drawn from markdown.ts (sanitized, cached per text). Code blocks carry a Copy button;
// its clicks are caught here once for the whole block rather than wired per button.
import { memo } from 'preact/compat';
import { renderMarkdown } from '../markdown.ts';

function copyCode(event: MouseEvent): void {
  const button = (event.target as Element | null)?.closest?.('button.code-copy');
  if (!button) return;
  const code = button.parentElement?.querySelector('code')?.textContent ?? '';
  void navigator.clipboard?.writeText(code).then(
    () => {
      button.textContent = 'Copied';
      setTimeout(() => {
        button.textContent = 'Copy';
      }, 1_500);
    },
    () => {
      button.textContent = 'Copy failed';
    },
  );
}

export const Markdown = memo(function Markdown({ cacheKey, text, className = '' }: { cacheKey: string; text: string; className?: string }) {
  return <div class={`markdown ${className}`} onClick={copyCode} dangerouslySetInnerHTML={{ __html: renderMarkdown(cacheKey, text) }} />;
});
