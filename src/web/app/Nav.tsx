// The app's sections: a tab bar at the bottom of a phone, a rail at the left of a desktop. Icons are
// inline SVG (no icon font, nothing to fetch, and no reliance on the system having emoji).
import type { ComponentChildren } from 'preact';

const ICONS: Record<string, ComponentChildren> = {
  chats: <path d="M4 5h16v10H9l-5 4z" />,
  hosts: <><rect x="3" y="4" width="18" height="12" rx="1.5" /><path d="M8 20h8M12 16v4" /></>,
  teams: <><circle cx="9" cy="8" r="3" /><circle cx="17" cy="9" r="2.5" /><path d="M3 19c0-3.3 2.7-5 6-5s6 1.7 6 5M15 14.5c3 0 6 1.3 6 4.5" /></>,
  settings: <><circle cx="12" cy="12" r="3" /><path d="M12 2.5v3M12 18.5v3M2.5 12h3M18.5 12h3M5.3 5.3l2.1 2.1M16.6 16.6l2.1 2.1M5.3 18.7l2.1-2.1M16.6 7.4l2.1-2.1" /></>,
};

const SECTIONS = [
  { id: 'chats', href: '/', label: 'Chats' },
  { id: 'hosts', href: '/hosts', label: 'Hosts' },
  { id: 'teams', href: '/teams', label: 'Teams' },
  { id: 'settings', href: '/settings', label: 'Settings' },
] as const;

export function Nav({ section }: { section: string }) {
  return (
    <nav class="nav" aria-label="Sections">
      <span class="brand" aria-hidden="true">Tether</span>
      {SECTIONS.map((s) => (
        <a key={s.id} href={s.href} aria-current={s.id === section ? 'page' : undefined}>
          <svg class="nav-icon" viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">{ICONS[s.id]}</svg>
          <span class="nav-label">{s.label}</span>
        </a>
      ))}
    </nav>
  );
}
