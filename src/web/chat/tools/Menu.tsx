// A button that opens a short menu of actions (`role="menu"`), drawn in the top layer as a popover:
// the thread's rows are contained and scroll, so a menu drawn inside one would be cut at the thread's
// edge; in the top layer it is whole, placed by the button (below it, or above when there is no room
// below), within the window. Light dismiss and Escape come with the popover; arrows move between items,
// and focus goes back to the button when it closes.
import type { ComponentChildren } from 'preact';
import { useId, useRef } from 'preact/hooks';

export interface MenuItem {
  label: string;
  onSelect(): void;
}

/** Room kept between the menu and the window's edges, in pixels. */
const EDGE = 8;

export function Menu({ label, items, children, class: className }: { label: string; items: MenuItem[]; children: ComponentChildren; class?: string }) {
  const id = useId();
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const entries = () => [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? [])];

  const place = () => {
    const anchor = button.current?.getBoundingClientRect();
    const el = menu.current;
    if (!anchor || !el) return;
    const { width, height } = el.getBoundingClientRect();
    const below = anchor.bottom + height + EDGE <= window.innerHeight;
    const top = below ? anchor.bottom + 2 : Math.max(EDGE, anchor.top - height - 2);
    const left = Math.min(Math.max(EDGE, anchor.right - width), window.innerWidth - width - EDGE);
    el.style.top = `${top}px`;
    el.style.left = `${left}px`;
  };

  const onToggle = (event: Event) => {
    const open = (event as ToggleEvent).newState === 'open';
    button.current?.setAttribute('aria-expanded', String(open));
    if (open) {
      place();
      entries()[0]?.focus();
    } else if (menu.current?.contains(document.activeElement) || document.activeElement === document.body) {
      button.current?.focus();
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const list = entries();
    const at = list.indexOf(document.activeElement as HTMLButtonElement);
    const move = { ArrowDown: 1, ArrowUp: -1 }[event.key];
    if (move !== undefined) {
      event.preventDefault();
      list[(at + move + list.length) % list.length]?.focus();
    } else if (event.key === 'Home' || event.key === 'End') {
      event.preventDefault();
      list[event.key === 'Home' ? 0 : list.length - 1]?.focus();
    } else if (event.key === 'Tab') {
      menu.current?.hidePopover();
    }
  };

  const select = (item: MenuItem) => {
    menu.current?.hidePopover();
    item.onSelect();
  };

  return (
    <>
      <button ref={button} type="button" class={className} aria-label={label} aria-haspopup="menu" aria-expanded="false" aria-controls={id} popovertarget={id}>
        {children}
      </button>
      <div ref={menu} id={id} popover="auto" role="menu" aria-label={label} class="menu-popover" onToggle={onToggle} onKeyDown={onKeyDown}>
        {items.map((item) => (
          <button key={item.label} type="button" role="menuitem" tabIndex={-1} onClick={() => select(item)}>
            {item.label}
          </button>
        ))}
      </div>
    </>
  );
}
