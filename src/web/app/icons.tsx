// Every icon the app draws, as inline SVG on a 24-unit grid in the current text colour: nothing to
// fetch, no icon font, and no reliance on the device having an emoji or symbol font (without one,
// Chromium draws emoji as empty boxes). An icon is decoration: the control it sits on carries the
// accessible name (its text or aria-label), so every icon is aria-hidden.
import type { ComponentChildren } from 'preact';

const SHAPES = {
  chats: <path d="M4 5h16v10H9l-5 4z" />,
  hosts: (
    <>
      <rect x="3" y="4" width="18" height="12" rx="1.5" />
      <path d="M8 20h8M12 16v4" />
    </>
  ),
  teams: (
    <>
      <circle cx="9" cy="8" r="3" />
      <circle cx="17" cy="9" r="2.5" />
      <path d="M3 19c0-3.3 2.7-5 6-5s6 1.7 6 5M15 14.5c3 0 6 1.3 6 4.5" />
    </>
  ),
  usage: <path d="M4 20V10M10 20V4M16 20v-7M21 20H3" />,
  settings: (
    <>
      <circle cx="12" cy="12" r="3" />
      <path d="M12 2.5v3M12 18.5v3M2.5 12h3M18.5 12h3M5.3 5.3l2.1 2.1M16.6 16.6l2.1 2.1M5.3 18.7l2.1-2.1M16.6 7.4l2.1-2.1" />
    </>
  ),
  attach: <path d="M21 11.5l-8.6 8.6a5.5 5.5 0 01-7.8-7.8l8.6-8.6a3.7 3.7 0 015.2 5.2l-8.6 8.6a1.8 1.8 0 01-2.6-2.6l7.9-7.9" />,
  close: <path d="M6 6l12 12M18 6L6 18" />,
  back: <path d="M19 12H5M11 6l-6 6 6 6" />,
  down: <path d="M12 5v14M6 13l6 6 6-6" />,
  star: <path d="M12 3.5l2.6 5.3 5.9.9-4.2 4.1 1 5.8-5.3-2.8-5.3 2.8 1-5.8-4.2-4.1 5.9-.9z" />,
  starFilled: <path fill="currentColor" d="M12 3.5l2.6 5.3 5.9.9-4.2 4.1 1 5.8-5.3-2.8-5.3 2.8 1-5.8-4.2-4.1 5.9-.9z" />,
  folder: <path d="M3 6.5A1.5 1.5 0 014.5 5h4.2l2 2.2h8.8A1.5 1.5 0 0121 8.7v9.8a1.5 1.5 0 01-1.5 1.5h-15A1.5 1.5 0 013 18.5z" />,
  file: (
    <>
      <path d="M14 3H7a1.5 1.5 0 00-1.5 1.5v15A1.5 1.5 0 007 21h10a1.5 1.5 0 001.5-1.5V7.5z" />
      <path d="M14 3v4.5h4.5" />
    </>
  ),
  more: (
    <>
      <circle cx="5" cy="12" r="1.2" fill="currentColor" />
      <circle cx="12" cy="12" r="1.2" fill="currentColor" />
      <circle cx="19" cy="12" r="1.2" fill="currentColor" />
    </>
  ),
  download: <path d="M12 4v11M7 10l5 5 5-5M5 20h14" />,
} satisfies Record<string, ComponentChildren>;

export type IconName = keyof typeof SHAPES;

/** One icon, `size` CSS pixels square (1em by default: it follows the text it sits beside). */
export function Icon({ name, size, class: className }: { name: IconName; size?: number; class?: string }) {
  const side = size ?? '1em';
  return (
    <svg
      class={`icon${className ? ` ${className}` : ''}`}
      viewBox="0 0 24 24"
      width={side}
      height={side}
      aria-hidden="true"
      focusable="false"
      fill="none"
      stroke="currentColor"
      stroke-width="1.8"
      stroke-linecap="round"
      stroke-linejoin="round"
    >
      {SHAPES[name]}
    </svg>
  );
}
