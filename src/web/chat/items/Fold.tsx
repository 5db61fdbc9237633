// A folded part of an item (a thought, a tool call's details, a subagent's work): a labelled button
// that opens it. What is open is kept per item for the page's life, so a row that scrolls out of the
// list and back (the list is virtualized) comes back as the person left it. The body is drawn only
// while open: a folded item costs its head alone.
import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';

const opened = new Set<string>();

export function Fold({
  foldKey,
  label,
  head,
  aside,
  className = '',
  children,
}: {
  /** Names this fold across remounts (an item id, or an item id and a part). */
  foldKey: string;
  /** The button's accessible name. */
  label: string;
  head: ComponentChildren;
  /** Controls of their own beside the head (a button cannot hold another), e.g. a running subagent's Stop. */
  aside?: ComponentChildren;
  className?: string;
  children: () => ComponentChildren;
}) {
  const [open, setOpen] = useState(() => opened.has(foldKey));
  const bodyId = useId();
  const toggle = () => {
    const next = !open;
    if (next) opened.add(foldKey);
    else opened.delete(foldKey);
    setOpen(next);
  };
  return (
    <div class={`fold ${className}${open ? ' open' : ''}`}>
      <div class="fold-head">
        <button type="button" class="fold-toggle" aria-expanded={open} aria-controls={bodyId} aria-label={label} onClick={toggle}>
          <span class="fold-chevron" aria-hidden="true" />
          {head}
        </button>
        {aside}
      </div>
      <div id={bodyId} class="fold-body" hidden={!open}>
        {open ? children() : null}
      </div>
    </div>
  );
}
