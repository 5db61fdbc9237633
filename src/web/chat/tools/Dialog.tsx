// A modal dialog on the platform's <dialog>: showModal() keeps keyboard focus inside, Escape closes
// it, and focus returns to where it was. Closing (any way) calls onClose; the caller unmounts it.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { Icon } from '../../app/icons.tsx';

export function Dialog({ title, onClose, children, className = '' }: { title: string; onClose(): void; children: ComponentChildren; className?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const headingId = useId();
  useEffect(() => {
    const dialog = ref.current!;
    const returnTo = document.activeElement as HTMLElement | null;
    if (!dialog.open) dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      returnTo?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={`tool-dialog ${className}`}
      aria-labelledby={headingId}
      onClose={onClose}
      onClick={(event) => {
        if (event.target === ref.current) onClose();
      }}
    >
      <div class="tool-dialog-body">
        <header class="tool-dialog-head">
          <h2 id={headingId}>{title}</h2>
          <button type="button" class="link" aria-label="Close" onClick={onClose}>
            <Icon name="close" size={18} />
          </button>
        </header>
        {children}
      </div>
    </dialog>
  );
}
